//! How hard our cgroup presses on its budget, over the interval between two samples: CPU used
//! and throttling from `cpu.stat` (v2 `usage_usec`, `nr_periods`, `nr_throttled`,
//! `throttled_usec`; v1 `cpuacct.usage` in ns and `cpu.stat` with `throttled_time` in ns), the
//! memory in use and OOM kills (`memory.current` and `memory.events`; v1 `memory.usage_in_bytes`
//! and `memory.oom_control`), and pressure stall information (PSI: the cgroup's `cpu.pressure`
//! `io.pressure` and `memory.pressure` on v2, else the machine's `<proc>/pressure/*`) as the share of the
//! interval in which some task waited.
//!
//! The counter files stay open between ticks (see `kept`); the limits (quota, cpuset, memory
//! limit: a dozen small files along the cgroup path) are read again every [`LIMITS_MS`], as
//! they change only when someone resizes the container.
//!
//! A file that is absent leaves its fields `None` (old kernels have no PSI; v1 has no
//! `throttled_usec` but `throttled_time`). Counters that go backwards (a new cgroup) give no
//! rate that time.

use std::path::Path;

use gpumeter_model::CgroupReading;

use super::cgroup::CgroupDirs;
use super::kept::KeptFile;

/// Longest time the cgroup's limits are kept before they are read again.
pub(super) const LIMITS_MS: i64 = 10_000;

/// Counters at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Counters {
    at_ms: i64,
    usage_us: Option<u64>,
    periods: Option<u64>,
    throttled: Option<u64>,
    throttled_us: Option<u64>,
    cpu_psi_us: Option<u64>,
    io_psi_us: Option<u64>,
    mem_psi_us: Option<u64>,
}

/// Where each counter lives, found once, kept open.
#[derive(Debug, Default)]
struct Files {
    cpu_stat: Option<KeptFile>,
    /// v1 only: `cpuacct.usage` (ns).
    cpuacct_usage: Option<KeptFile>,
    mem_current: Option<KeptFile>,
    mem_events: Option<KeptFile>,
    cpu_pressure: Option<KeptFile>,
    io_pressure: Option<KeptFile>,
    mem_pressure: Option<KeptFile>,
}

/// The cgroup's limits, as last read.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Limits {
    cpuset_cpus: Option<u32>,
    mem_limit_bytes: Option<u64>,
    quota_cores: Option<f64>,
}

/// The usage tracker; also reads the limits, every [`LIMITS_MS`].
#[derive(Debug)]
pub(super) struct CgroupTracker {
    dirs: Option<CgroupDirs>,
    files: Files,
    prev: Option<Counters>,
    /// The limits and when they were read.
    limits: Option<(i64, Limits)>,
    buf: Vec<u8>,
}

/// The file's text (`None`: absent or unreadable).
fn text<'b>(file: &mut Option<KeptFile>, buf: &'b mut Vec<u8>) -> Option<&'b str> {
    file.as_mut()?.text(buf)
}

/// The value of the `name value` line of a flat-keyed file.
fn keyed(text: &str, name: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == name).then(|| v.trim().parse().ok()).flatten()
    })
}

/// One tick's cgroup numbers plus the PSI shares.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct CgroupSample {
    pub(super) reading: CgroupReading,
    pub(super) quota_cores: Option<f64>,
    pub(super) cpu_pressure_pct: Option<f64>,
    pub(super) io_pressure_pct: Option<f64>,
    pub(super) mem_pressure_pct: Option<f64>,
}

impl CgroupTracker {
    pub(super) fn new(proc: &Path, sys: &Path) -> Self {
        let dirs = CgroupDirs::locate(proc, sys);
        let (mut cpu_pressure, mut io_pressure, mut mem_pressure) = (None, None, None);
        let mut files = Files::default();
        if let Some(d) = &dirs {
            files.cpu_stat = d.file("cpu.stat", ("cpu", "cpu.stat")).map(KeptFile::new);
            files.cpuacct_usage = d.v1_file("cpuacct", "cpuacct.usage").map(KeptFile::new);
            files.mem_current = d
                .file("memory.current", ("memory", "memory.usage_in_bytes"))
                .map(KeptFile::new);
            files.mem_events = d
                .file("memory.events", ("memory", "memory.oom_control"))
                .map(KeptFile::new);
            cpu_pressure = d.v2_file("cpu.pressure");
            io_pressure = d.v2_file("io.pressure");
            mem_pressure = d.v2_file("memory.pressure");
        }
        // Without a v2 cgroup's own PSI, the machine's.
        let machine = |name: &str| Some(proc.join("pressure").join(name)).filter(|p| p.exists());
        files.cpu_pressure = cpu_pressure.or_else(|| machine("cpu")).map(KeptFile::new);
        files.io_pressure = io_pressure.or_else(|| machine("io")).map(KeptFile::new);
        files.mem_pressure = mem_pressure
            .or_else(|| machine("memory"))
            .map(KeptFile::new);
        Self {
            dirs,
            files,
            prev: None,
            limits: None,
            buf: Vec::with_capacity(512),
        }
    }

    /// The limits, read again when [`LIMITS_MS`] have passed (or the clock stepped back).
    fn limits(&mut self, now_ms: i64) -> Limits {
        if let Some((at, limits)) = self.limits
            && now_ms >= at
            && now_ms - at < LIMITS_MS
        {
            return limits;
        }
        let dirs = self.dirs.as_ref();
        let limits = Limits {
            cpuset_cpus: dirs.and_then(CgroupDirs::cpuset_cpus),
            mem_limit_bytes: dirs.and_then(CgroupDirs::mem_limit_bytes),
            quota_cores: dirs.and_then(CgroupDirs::cpu_quota_cores),
        };
        self.limits = Some((now_ms, limits));
        limits
    }

    pub(super) fn update(&mut self, now_ms: i64) -> CgroupSample {
        let limits = self.limits(now_ms);
        let (f, buf) = (&mut self.files, &mut self.buf);
        let (periods, throttled, throttled_us, stat_usage_us) = match text(&mut f.cpu_stat, buf) {
            Some(stat) => (
                keyed(stat, "nr_periods"),
                keyed(stat, "nr_throttled"),
                keyed(stat, "throttled_usec").or(keyed(stat, "throttled_time").map(|ns| ns / 1000)),
                keyed(stat, "usage_usec"),
            ),
            None => (None, None, None, None),
        };
        let usage_us = if f.cpuacct_usage.is_some() {
            text(&mut f.cpuacct_usage, buf)
                .and_then(|t| t.trim().parse::<u64>().ok())
                .map(|ns| ns / 1000)
        } else {
            stat_usage_us
        };
        let cur = Counters {
            at_ms: now_ms,
            usage_us,
            periods,
            throttled,
            throttled_us,
            cpu_psi_us: text(&mut f.cpu_pressure, buf).and_then(psi_some_total_us),
            io_psi_us: text(&mut f.io_pressure, buf).and_then(psi_some_total_us),
            mem_psi_us: text(&mut f.mem_pressure, buf).and_then(psi_some_total_us),
        };
        let prev = self.prev.replace(cur);
        let dt_us = prev
            .filter(|p| now_ms > p.at_ms)
            .map(|p| (now_ms - p.at_ms) as f64 * 1000.0);
        let delta = |get: fn(&Counters) -> Option<u64>| -> Option<f64> {
            let (a, b) = (get(&prev?)?, get(&cur)?);
            (b >= a).then(|| (b - a) as f64)
        };
        let per_interval = |get: fn(&Counters) -> Option<u64>| -> Option<f64> {
            Some((delta(get)? / dt_us?).max(0.0))
        };
        let throttled_pct = match (delta(|c| c.periods), delta(|c| c.throttled)) {
            (Some(p), Some(t)) if p > 0.0 => Some((t / p * 100.0).min(100.0)),
            (Some(_), Some(_)) => Some(0.0),
            _ => None,
        };
        let mem_used = text(&mut f.mem_current, buf).and_then(|t| t.trim().parse::<u64>().ok());
        let oom_kills = text(&mut f.mem_events, buf).and_then(|t| keyed(t, "oom_kill"));
        CgroupSample {
            reading: CgroupReading {
                cpuset_cpus: limits.cpuset_cpus,
                cpu_used_cores: per_interval(|c| c.usage_us),
                cpu_throttled_pct: throttled_pct,
                cpu_throttled_time_pct: per_interval(|c| c.throttled_us)
                    .map(|s| (s * 100.0).min(100.0)),
                mem_limit_bytes: limits.mem_limit_bytes,
                mem_used_bytes: mem_used,
                oom_kills,
            },
            quota_cores: limits.quota_cores,
            cpu_pressure_pct: per_interval(|c| c.cpu_psi_us).map(|s| (s * 100.0).min(100.0)),
            io_pressure_pct: per_interval(|c| c.io_psi_us).map(|s| (s * 100.0).min(100.0)),
            mem_pressure_pct: per_interval(|c| c.mem_psi_us).map(|s| (s * 100.0).min(100.0)),
        }
    }
}

/// The `total=` of the `some` line of a PSI file, in microseconds.
fn psi_some_total_us(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("some "))?;
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix("total="))
        .and_then(|v| v.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::host::fixture::Fixture;

    fn tracker(f: &Fixture) -> CgroupTracker {
        CgroupTracker::new(&f.root().join("proc"), &f.root().join("sys"))
    }

    #[test]
    fn v2_throttling_usage_memory_and_psi_over_the_interval() {
        let f = Fixture::new();
        f.write("proc/self/cgroup", "0::/\n");
        f.write("sys/fs/cgroup/cgroup.controllers", "cpu memory\n");
        f.write("sys/fs/cgroup/cpu.max", "400000 100000\n");
        let stat = |usage: u64, periods: u64, throttled: u64, t_us: u64| {
            format!(
                "usage_usec {usage}\nuser_usec 1\nsystem_usec 1\nnr_periods {periods}\n\
                 nr_throttled {throttled}\nthrottled_usec {t_us}\n"
            )
        };
        f.write("sys/fs/cgroup/cpu.stat", stat(1_000_000, 100, 0, 0));
        f.write("sys/fs/cgroup/memory.max", "8589934592\n");
        f.write("sys/fs/cgroup/memory.current", "4294967296\n");
        f.write(
            "sys/fs/cgroup/memory.events",
            "low 0\nhigh 0\nmax 3\noom 2\noom_kill 2\n",
        );
        f.write(
            "sys/fs/cgroup/cpu.pressure",
            "some avg10=0.00 avg60=0.00 avg300=0.00 total=1000000\n\
             full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
        );
        f.write(
            "sys/fs/cgroup/memory.pressure",
            "some avg10=0.00 avg60=0.00 avg300=0.00 total=500000\n",
        );
        let mut t = tracker(&f);
        let first = t.update(0);
        assert_eq!(first.mem_pressure_pct, None, "no interval yet");
        assert_eq!(first.quota_cores, Some(4.0));
        assert_eq!(first.reading.cpu_throttled_pct, None, "no interval yet");
        assert_eq!(first.reading.mem_limit_bytes, Some(8 << 30));
        assert_eq!(first.reading.oom_kills, Some(2));
        assert_eq!(first.io_pressure_pct, None, "no io.pressure here");
        // 10 s later: 40 core-seconds used, 38 of 100 periods throttled for 2 s in all.
        f.write(
            "sys/fs/cgroup/cpu.stat",
            stat(41_000_000, 200, 38, 2_000_000),
        );
        f.write(
            "sys/fs/cgroup/cpu.pressure",
            "some avg10=0.00 avg60=0.00 avg300=0.00 total=4000000\n",
        );
        // 2.5 s of the 10 s some task waited for memory (reclaim, swap-in).
        f.write(
            "sys/fs/cgroup/memory.pressure",
            "some avg10=0.00 avg60=0.00 avg300=0.00 total=3000000\n",
        );
        let s = t.update(10_000);
        assert!((s.mem_pressure_pct.unwrap() - 25.0).abs() < 1e-9);
        assert!((s.reading.cpu_used_cores.unwrap() - 4.0).abs() < 1e-9);
        assert!((s.reading.cpu_throttled_pct.unwrap() - 38.0).abs() < 1e-9);
        assert!((s.reading.cpu_throttled_time_pct.unwrap() - 20.0).abs() < 1e-9);
        assert!((s.cpu_pressure_pct.unwrap() - 30.0).abs() < 1e-9);
        assert_eq!(s.reading.mem_used_bytes, Some(4 << 30));
    }

    #[test]
    fn v1_counters_in_nanoseconds_and_the_machines_psi() {
        let f = Fixture::new();
        f.write(
            "proc/self/cgroup",
            "4:memory:/\n3:cpuset:/\n2:cpu,cpuacct:/\n",
        );
        let dir = "sys/fs/cgroup/cpu,cpuacct";
        f.write(&format!("{dir}/cpu.cfs_quota_us"), "800000\n");
        f.write(&format!("{dir}/cpu.cfs_period_us"), "100000\n");
        f.write(
            &format!("{dir}/cpu.stat"),
            "nr_periods 10\nnr_throttled 0\nthrottled_time 0\n",
        );
        f.write(&format!("{dir}/cpuacct.usage"), "0\n");
        f.write(
            "sys/fs/cgroup/memory/memory.oom_control",
            "oom_kill_disable 0\nunder_oom 0\noom_kill 5\n",
        );
        f.write("sys/fs/cgroup/memory/memory.usage_in_bytes", "1024\n");
        f.write(
            "proc/pressure/io",
            "some avg10=1.00 avg60=1.00 avg300=1.00 total=0\n",
        );
        let mut t = tracker(&f);
        t.update(0);
        f.write(
            &format!("{dir}/cpu.stat"),
            "nr_periods 60\nnr_throttled 50\nthrottled_time 3000000000\n",
        );
        f.write(&format!("{dir}/cpuacct.usage"), "40000000000\n");
        f.write(
            "proc/pressure/io",
            "some avg10=1.00 avg60=1.00 avg300=1.00 total=2500000\n",
        );
        let s = t.update(5_000);
        assert_eq!(s.quota_cores, Some(8.0));
        assert!((s.reading.cpu_used_cores.unwrap() - 8.0).abs() < 1e-9);
        assert!((s.reading.cpu_throttled_pct.unwrap() - 100.0).abs() < 1e-9);
        assert!((s.reading.cpu_throttled_time_pct.unwrap() - 60.0).abs() < 1e-9);
        assert_eq!(s.reading.oom_kills, Some(5));
        assert_eq!(s.reading.mem_used_bytes, Some(1024));
        assert!((s.io_pressure_pct.unwrap() - 50.0).abs() < 1e-9);
        assert_eq!(s.cpu_pressure_pct, None, "no cpu PSI file");
        assert_eq!(
            s.mem_pressure_pct, None,
            "no memory PSI file: unknown, not 0"
        );
    }

    #[test]
    fn limits_are_read_again_every_limits_ms_counters_every_tick() {
        let f = Fixture::new();
        f.write("proc/self/cgroup", "0::/\n");
        f.write("sys/fs/cgroup/cgroup.controllers", "cpu memory\n");
        f.write("sys/fs/cgroup/cpu.max", "400000 100000\n");
        f.write("sys/fs/cgroup/memory.current", "100\n");
        let mut t = tracker(&f);
        assert_eq!(t.update(0).quota_cores, Some(4.0));
        // The container is resized: seen at the next read of the limits, not before.
        f.write("sys/fs/cgroup/cpu.max", "200000 100000\n");
        f.write("sys/fs/cgroup/memory.current", "200\n");
        let s = t.update(LIMITS_MS - 1_000);
        assert_eq!(s.quota_cores, Some(4.0));
        assert_eq!(s.reading.mem_used_bytes, Some(200), "counters every tick");
        assert_eq!(t.update(LIMITS_MS).quota_cores, Some(2.0));
        // A clock stepping back reads them again.
        f.write("sys/fs/cgroup/cpu.max", "max 100000\n");
        assert_eq!(t.update(1_000).quota_cores, None);
    }

    #[test]
    fn nothing_readable_leaves_everything_unknown() {
        let f = Fixture::new();
        let mut t = tracker(&f);
        t.update(0);
        let s = t.update(1_000);
        assert_eq!(s, CgroupSample::default());
    }
}
