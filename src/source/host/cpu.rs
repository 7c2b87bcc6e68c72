//! CPU busy and iowait shares from the jiffy counters in `/proc/stat` (whole machine and per
//! logical CPU), and the 1-minute load average (with the last pid given out, which `loadavg`
//! also names: see `births`). Reads only `<proc>/stat` and `<proc>/loadavg`, both kept open
//! (see `kept`).

use std::path::Path;

use procfs::prelude::*;
use procfs::{CpuTime, ExplicitSystemInfo, KernelStats, LoadAverage, ProcError, ProcResult};

use super::kept::KeptFile;

/// `<proc>/stat` and `<proc>/loadavg`, kept open, with the buffer they are read into.
#[derive(Debug)]
pub(super) struct CpuFiles {
    stat: KeptFile,
    loadavg: KeptFile,
    buf: Vec<u8>,
}

impl CpuFiles {
    pub(super) fn new(proc: &Path) -> Self {
        Self {
            stat: KeptFile::new(proc.join("stat")),
            loadavg: KeptFile::new(proc.join("loadavg")),
            buf: Vec::with_capacity(4096),
        }
    }

    /// Reads `<proc>/stat`.
    pub(super) fn kernel_stats(&mut self) -> ProcResult<KernelStats> {
        // The parser only keeps the tick rate for its `*_ms` helpers, which are not used here:
        // all arithmetic stays in jiffies, so the values below do not affect any result.
        let info = ExplicitSystemInfo {
            boot_time_secs: 0,
            ticks_per_second: 100,
            page_size: 4096,
            is_little_endian: cfg!(target_endian = "little"),
        };
        self.stat
            .read_into(&mut self.buf)
            .map_err(|e| ProcError::Io(e, Some(self.stat.path().to_path_buf())))?;
        KernelStats::from_read(self.buf.as_slice(), &info)
    }

    /// What `<proc>/loadavg` says (nothing, if it is unreadable).
    pub(super) fn load_avg(&mut self) -> LoadAvg {
        if self.loadavg.read_into(&mut self.buf).is_err() {
            return LoadAvg::default();
        }
        LoadAverage::from_read(self.buf.as_slice())
            .map(|l| LoadAvg {
                one_min: Some(f64::from(l.one)),
                last_pid: Some(l.latest_pid),
            })
            .unwrap_or_default()
    }
}

/// The parts of `<proc>/loadavg` a sample uses.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct LoadAvg {
    pub(super) one_min: Option<f64>,
    /// The last pid given out (in the reader's pid namespace).
    pub(super) last_pid: Option<u32>,
}

/// The counters one CPU line reduces to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Jiffies {
    /// All time accounted (guest time is already inside user time, so it is not added again).
    total: u64,
    idle: u64,
    iowait: u64,
}

impl Jiffies {
    fn from_cpu_time(t: &CpuTime) -> Self {
        let iowait = t.iowait.unwrap_or(0);
        let total = t
            .user
            .saturating_add(t.nice)
            .saturating_add(t.system)
            .saturating_add(t.idle)
            .saturating_add(iowait)
            .saturating_add(t.irq.unwrap_or(0))
            .saturating_add(t.softirq.unwrap_or(0))
            .saturating_add(t.steal.unwrap_or(0));
        Self {
            total,
            idle: t.idle,
            iowait,
        }
    }
}

/// Shares over one interval, in percent.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Shares {
    busy: f64,
    iowait: f64,
}

/// Busy and iowait shares between two readings of one CPU line; `None` when no time passed.
/// Counters that went backwards (iowait and idle can, on some kernels) count as zero.
fn shares(prev: &Jiffies, cur: &Jiffies) -> Option<Shares> {
    let total = cur.total.checked_sub(prev.total).filter(|&d| d > 0)?;
    let idle = cur.idle.saturating_sub(prev.idle);
    let iowait = cur.iowait.saturating_sub(prev.iowait);
    let busy = total.saturating_sub(idle).saturating_sub(iowait);
    let pct = |part: u64| (part as f64 * 100.0 / total as f64).clamp(0.0, 100.0);
    Some(Shares {
        busy: pct(busy),
        iowait: pct(iowait),
    })
}

/// What one sample says about the CPUs.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct CpuReading {
    pub(super) count: Option<u32>,
    pub(super) util_pct: Option<f64>,
    pub(super) iowait_pct: Option<f64>,
    /// Empty when unknown (first sample, or the set of online CPUs changed).
    pub(super) per_cpu_util_pct: Vec<f64>,
}

/// Remembers the previous counters.
#[derive(Debug, Default)]
pub(super) struct CpuTracker {
    prev: Option<(Jiffies, Vec<Jiffies>)>,
}

impl CpuTracker {
    /// Turns this sample's counters into shares over the interval since the previous one.
    /// `None` stats (unreadable file) forget the previous counters.
    pub(super) fn update(&mut self, stats: Option<&KernelStats>) -> CpuReading {
        let Some(stats) = stats else {
            self.prev = None;
            return CpuReading::default();
        };
        let total = Jiffies::from_cpu_time(&stats.total);
        let per_cpu: Vec<Jiffies> = stats.cpu_time.iter().map(Jiffies::from_cpu_time).collect();
        let mut reading = CpuReading {
            count: u32::try_from(per_cpu.len()).ok().filter(|&n| n > 0),
            ..CpuReading::default()
        };
        if let Some((prev_total, prev_per_cpu)) = &self.prev {
            if let Some(s) = shares(prev_total, &total) {
                reading.util_pct = Some(s.busy);
                reading.iowait_pct = Some(s.iowait);
            }
            // Offline CPUs vanish from /proc/stat; when the set changes, lines no longer pair up.
            if prev_per_cpu.len() == per_cpu.len() {
                let per: Option<Vec<f64>> = prev_per_cpu
                    .iter()
                    .zip(&per_cpu)
                    .map(|(p, c)| shares(p, c).map(|s| s.busy))
                    .collect();
                reading.per_cpu_util_pct = per.unwrap_or_default();
            }
        }
        self.prev = Some((total, per_cpu));
        reading
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn j(total: u64, idle: u64, iowait: u64) -> Jiffies {
        Jiffies {
            total,
            idle,
            iowait,
        }
    }

    #[test]
    fn shares_split_busy_idle_and_iowait() {
        let s = shares(&j(1000, 500, 100), &j(1400, 600, 200)).unwrap();
        // 400 jiffies: 100 idle, 100 iowait, 200 busy.
        assert_eq!(s.busy, 50.0);
        assert_eq!(s.iowait, 25.0);
    }

    #[test]
    fn no_elapsed_time_is_unknown_not_zero() {
        assert_eq!(shares(&j(1000, 500, 0), &j(1000, 500, 0)), None);
        assert_eq!(shares(&j(1000, 500, 0), &j(900, 400, 0)), None);
    }

    #[test]
    fn iowait_going_backwards_counts_as_zero() {
        let s = shares(&j(1000, 500, 100), &j(1100, 550, 90)).unwrap();
        assert_eq!(s.iowait, 0.0);
        assert_eq!(s.busy, 50.0);
    }

    #[test]
    fn guest_time_is_not_counted_twice() {
        let text = "cpu  100 0 50 800 50 0 0 0 40 0\ncpu0 100 0 50 800 50 0 0 0 40 0\n";
        let t = KernelStats::from_read(
            format!("{text}ctxt 1\nbtime 1\nprocesses 1\n").as_bytes(),
            &ExplicitSystemInfo {
                boot_time_secs: 0,
                ticks_per_second: 100,
                page_size: 4096,
                is_little_endian: true,
            },
        )
        .unwrap();
        assert_eq!(Jiffies::from_cpu_time(&t.total).total, 1000);
    }
}
