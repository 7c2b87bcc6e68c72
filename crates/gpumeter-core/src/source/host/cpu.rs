//! CPU busy and iowait shares from the jiffy counters in `/proc/stat` (whole machine and per
//! logical CPU), and the 1-minute load average (with the last pid given out, which `loadavg`
//! also names: see `births`). Reads only `<proc>/stat` and `<proc>/loadavg`, both kept open
//! (see `kept`).
//!
//! `/proc/stat` is parsed here, not with procfs' `KernelStats`: that makes a `String` of every
//! line, the `intr` line included (tens of kilobytes on a many-core box with hundreds of
//! interrupts), every tick. This reads the `cpu` lines, which lead the file, and finds `btime`
//! past the rest without parsing it.

use std::path::Path;

use procfs::{ProcError, ProcResult};

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
    pub(super) fn kernel_stats(&mut self) -> ProcResult<CpuCounters> {
        self.stat
            .read_into(&mut self.buf)
            .map_err(|e| ProcError::Io(e, Some(self.stat.path().to_path_buf())))?;
        parse_stat(&self.buf).ok_or_else(|| ProcError::Incomplete(Some(self.stat.path().into())))
    }

    /// What `<proc>/loadavg` says (nothing, if it is unreadable).
    pub(super) fn load_avg(&mut self) -> LoadAvg {
        if self.loadavg.read_into(&mut self.buf).is_err() {
            return LoadAvg::default();
        }
        parse_loadavg(&self.buf)
    }
}

/// `0.52 0.58 0.59 2/345 12345`: the 1-minute average and the last pid; a field that does not
/// read is unknown, the other still counts.
fn parse_loadavg(text: &[u8]) -> LoadAvg {
    let mut fields = text
        .split(|&b| b == b' ' || b == b'\n')
        .filter(|f| !f.is_empty());
    let one_min = fields
        .next()
        .and_then(|f| std::str::from_utf8(f).ok())
        .and_then(|f| f.parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v >= 0.0);
    let last_pid = fields
        .nth(3)
        .and_then(number)
        .and_then(|p| u32::try_from(p).ok());
    LoadAvg { one_min, last_pid }
}

/// The parts of `<proc>/loadavg` a sample uses.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct LoadAvg {
    pub(super) one_min: Option<f64>,
    /// The last pid given out (in the reader's pid namespace).
    pub(super) last_pid: Option<u32>,
}

/// The counters one CPU line reduces to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Jiffies {
    /// All time accounted (guest time is already inside user time, so it is not added again).
    total: u64,
    idle: u64,
    iowait: u64,
}

impl Jiffies {
    /// One `cpu` line's counters after its name: user nice system idle iowait irq softirq
    /// steal guest guest_nice (older kernels stop early: the missing ones are 0). `None`
    /// without the first four, or with a field that is not a number.
    fn parse(fields: &[u8]) -> Option<Self> {
        let mut sum: u64 = 0;
        let (mut idle, mut iowait) = (0, 0);
        let mut count = 0;
        for field in fields.split(|&b| b == b' ').filter(|f| !f.is_empty()) {
            let value = number(field)?;
            match count {
                3 => idle = value,
                4 => iowait = value,
                _ => {}
            }
            // Guest time is already inside user time: not added again.
            if count < 8 {
                sum = sum.saturating_add(value);
            }
            count += 1;
        }
        (count >= 4).then_some(Self {
            total: sum,
            idle,
            iowait,
        })
    }
}

/// What a sample uses of `<proc>/stat`.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct CpuCounters {
    /// The `cpu` line: all CPUs together.
    total: Jiffies,
    /// The `cpuN` lines, one per online CPU, in the file's order.
    per_cpu: Vec<Jiffies>,
    /// Boot time, seconds since the epoch (`None`: no readable `btime` line).
    pub(super) btime: Option<u64>,
}

/// An unsigned decimal, nothing else.
fn number(text: &[u8]) -> Option<u64> {
    if text.is_empty() {
        return None;
    }
    text.iter().try_fold(0u64, |n, &b| {
        b.is_ascii_digit()
            .then(|| n.checked_mul(10)?.checked_add(u64::from(b - b'0')))
            .flatten()
    })
}

/// `<proc>/stat`'s `cpu` lines and `btime`; `None` without a readable `cpu` line.
fn parse_stat(text: &[u8]) -> Option<CpuCounters> {
    let mut total = None;
    let mut per_cpu = Vec::new();
    let mut rest = text;
    while let Some(line) = rest.strip_prefix(b"cpu") {
        let end = memchr::memchr(b'\n', line).unwrap_or(line.len());
        let (head, tail) = line.split_at(end);
        rest = tail.get(1..).unwrap_or_default();
        match head.split_first() {
            Some((b' ', fields)) => total = Some(Jiffies::parse(fields)?),
            Some((d, _)) if d.is_ascii_digit() => {
                let name_end = head.iter().position(|&b| b == b' ')?;
                per_cpu.push(Jiffies::parse(&head[name_end..])?);
            }
            _ => {}
        }
    }
    // Past `intr` (the long line) without splitting it: one search for the line.
    let btime = memchr::memmem::find(rest, b"btime ").and_then(|at| {
        let line = &rest[at + b"btime ".len()..];
        let end = memchr::memchr(b'\n', line).unwrap_or(line.len());
        number(&line[..end])
    });
    Some(CpuCounters {
        total: total?,
        per_cpu,
        btime,
    })
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
    pub(super) fn update(&mut self, stats: Option<CpuCounters>) -> CpuReading {
        let Some(CpuCounters { total, per_cpu, .. }) = stats else {
            self.prev = None;
            return CpuReading::default();
        };
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
        let text = b"cpu  100 0 50 800 50 0 0 0 40 0\ncpu0 100 0 50 800 50 0 0 0 40 0\nbtime 1\n";
        let t = parse_stat(text).unwrap();
        assert_eq!(t.total, j(1000, 800, 50));
        assert_eq!(t.per_cpu, vec![j(1000, 800, 50)]);
    }

    #[test]
    fn the_cpu_lines_and_btime_past_a_long_intr_line() {
        let intr: String = (0..5_000).map(|i| format!(" {i}")).collect();
        let text = format!(
            "cpu  10 1 2 30 4 5 6 7 0 0\ncpu0 5 1 1 15 2 0 6 0 0 0\ncpu1 5 0 1 15 2 5 0 7 0 0\n\
             intr 99{intr}\nctxt 12\nbtime 1764633600\nprocesses 7\nprocs_running 1\n"
        );
        let t = parse_stat(text.as_bytes()).unwrap();
        assert_eq!(t.total, j(65, 30, 4));
        assert_eq!(t.per_cpu, vec![j(30, 15, 2), j(35, 15, 2)]);
        assert_eq!(t.btime, Some(1_764_633_600));
    }

    #[test]
    fn old_kernels_short_lines_and_junk() {
        // Before iowait (2.4): four fields; the rest count as 0.
        let t = parse_stat(b"cpu 1 2 3 4\ncpu0 1 2 3 4\n").unwrap();
        assert_eq!(t.total, j(10, 4, 0));
        assert_eq!(t.btime, None);
        // No `cpu` line, a short one, or a field that is not a number: no counters.
        assert_eq!(parse_stat(b"intr 1\nbtime 5\n"), None);
        assert_eq!(parse_stat(b"cpu 1 2 3\n"), None);
        assert_eq!(parse_stat(b"cpu 1 2 x 4\n"), None);
        assert_eq!(parse_stat(b"cpu 1 2 3 4\ncpu0 1 -2 3 4\n"), None);
        assert_eq!(parse_stat(b""), None);
        // A huge counter does not wrap.
        assert_eq!(parse_stat(b"cpu 99999999999999999999 0 0 0\n"), None);
    }

    #[test]
    fn loadavg_gives_the_one_minute_average_and_the_last_pid() {
        let l = parse_loadavg(b"0.52 0.58 0.59 2/345 12345\n");
        assert_eq!(l.one_min, Some(0.52));
        assert_eq!(l.last_pid, Some(12_345));
        let l = parse_loadavg(b"x 0.58 0.59 2/345 77\n");
        assert_eq!((l.one_min, l.last_pid), (None, Some(77)));
        let l = parse_loadavg(b"1.5 0.58 0.59\n");
        assert_eq!((l.one_min, l.last_pid), (Some(1.5), None));
        assert_eq!(
            parse_loadavg(b"-1 0 0 1/1 99999999999\n"),
            LoadAvg::default()
        );
        assert_eq!(parse_loadavg(b""), LoadAvg::default());
    }

    /// The same counters as procfs' parser on this machine's /proc/stat (one read, both).
    #[test]
    fn the_same_counters_as_procfs_on_this_machine() {
        use procfs::prelude::*;
        use procfs::{ExplicitSystemInfo, KernelStats};
        let Ok(text) = std::fs::read("/proc/stat") else {
            eprintln!("skipped: no /proc/stat here");
            return;
        };
        let info = ExplicitSystemInfo {
            boot_time_secs: 0,
            ticks_per_second: 100,
            page_size: 4096,
            is_little_endian: cfg!(target_endian = "little"),
        };
        let theirs = KernelStats::from_read(text.as_slice(), &info).unwrap();
        let ours = parse_stat(&text).unwrap();
        let jiffies = |t: &procfs::CpuTime| {
            let parts = [t.iowait, t.irq, t.softirq, t.steal];
            let total = [t.user, t.nice, t.system, t.idle]
                .into_iter()
                .chain(parts.into_iter().map(|p| p.unwrap_or(0)))
                .sum();
            j(total, t.idle, t.iowait.unwrap_or(0))
        };
        assert_eq!(ours.total, jiffies(&theirs.total));
        let per: Vec<Jiffies> = theirs.cpu_time.iter().map(jiffies).collect();
        assert_eq!(ours.per_cpu, per);
        assert_eq!(ours.btime, Some(theirs.btime));

        let text = std::fs::read("/proc/loadavg").unwrap();
        let theirs = procfs::LoadAverage::from_read(text.as_slice()).unwrap();
        let ours = parse_loadavg(&text);
        assert!((ours.one_min.unwrap() - f64::from(theirs.one)).abs() < 1e-6);
        assert_eq!(ours.last_pid, Some(theirs.latest_pid));
    }
}
