//! How hard our cgroup presses on its budget, over the interval between two samples: CPU used
//! and throttling from `cpu.stat` (v2 `usage_usec`, `nr_periods`, `nr_throttled`,
//! `throttled_usec`; v1 `cpuacct.usage` in ns and `cpu.stat` with `throttled_time` in ns), the
//! memory in use and OOM kills (`memory.current` and `memory.events`; v1 `memory.usage_in_bytes`
//! and `memory.oom_control`), and pressure stall information (PSI: the cgroup's `cpu.pressure`
//! and `io.pressure` on v2, else the machine's `<proc>/pressure/*`) as the share of the
//! interval in which some task waited.
//!
//! A file that is absent leaves its fields `None` (old kernels have no PSI; v1 has no
//! `throttled_usec` but `throttled_time`). Counters that go backwards (a new cgroup) give no
//! rate that time.

use std::path::{Path, PathBuf};

use gpumeter_model::CgroupReading;

use super::cgroup::{CgroupDirs, read_text};

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
}

/// Where each counter lives, found once.
#[derive(Debug, Clone, Default)]
struct Files {
    cpu_stat: Option<PathBuf>,
    /// v1 only: `cpuacct.usage` (ns).
    cpuacct_usage: Option<PathBuf>,
    mem_current: Option<PathBuf>,
    mem_events: Option<PathBuf>,
    cpu_pressure: Option<PathBuf>,
    io_pressure: Option<PathBuf>,
}

/// The usage tracker; also reads the static limits each tick (they are a few small files).
#[derive(Debug)]
pub(super) struct CgroupTracker {
    dirs: Option<CgroupDirs>,
    files: Files,
    prev: Option<Counters>,
}

/// One tick's cgroup numbers plus the PSI shares.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct CgroupSample {
    pub(super) reading: CgroupReading,
    pub(super) quota_cores: Option<f64>,
    pub(super) cpu_pressure_pct: Option<f64>,
    pub(super) io_pressure_pct: Option<f64>,
}

impl CgroupTracker {
    pub(super) fn new(proc: &Path, sys: &Path) -> Self {
        let dirs = CgroupDirs::locate(proc, sys);
        let mut files = Files::default();
        if let Some(d) = &dirs {
            files.cpu_stat = d.file("cpu.stat", ("cpu", "cpu.stat"));
            files.cpuacct_usage = d.v1_file("cpuacct", "cpuacct.usage");
            files.mem_current = d.file("memory.current", ("memory", "memory.usage_in_bytes"));
            files.mem_events = d.file("memory.events", ("memory", "memory.oom_control"));
            files.cpu_pressure = d.v2_file("cpu.pressure");
            files.io_pressure = d.v2_file("io.pressure");
        }
        // Without a v2 cgroup's own PSI, the machine's.
        let machine = |name: &str| Some(proc.join("pressure").join(name)).filter(|p| p.exists());
        files.cpu_pressure = files.cpu_pressure.or_else(|| machine("cpu"));
        files.io_pressure = files.io_pressure.or_else(|| machine("io"));
        Self {
            dirs,
            files,
            prev: None,
        }
    }

    pub(super) fn update(&mut self, now_ms: i64) -> CgroupSample {
        let f = &self.files;
        let stat = f
            .cpu_stat
            .as_deref()
            .and_then(read_text)
            .unwrap_or_default();
        let field = |name: &str| -> Option<u64> {
            stat.lines().find_map(|l| {
                let (k, v) = l.split_once(' ')?;
                (k == name).then(|| v.trim().parse().ok()).flatten()
            })
        };
        let v1_ns = f.cpuacct_usage.is_some();
        let cur = Counters {
            at_ms: now_ms,
            usage_us: if v1_ns {
                f.cpuacct_usage
                    .as_deref()
                    .and_then(read_text)
                    .and_then(|t| t.parse::<u64>().ok())
                    .map(|ns| ns / 1000)
            } else {
                field("usage_usec")
            },
            periods: field("nr_periods"),
            throttled: field("nr_throttled"),
            throttled_us: field("throttled_usec").or(field("throttled_time").map(|ns| ns / 1000)),
            cpu_psi_us: f.cpu_pressure.as_deref().and_then(psi_some_total_us),
            io_psi_us: f.io_pressure.as_deref().and_then(psi_some_total_us),
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
        let dirs = self.dirs.as_ref();
        let mem_used = f
            .mem_current
            .as_deref()
            .and_then(read_text)
            .and_then(|t| t.parse::<u64>().ok());
        let oom_kills = f.mem_events.as_deref().and_then(read_text).and_then(|t| {
            t.lines().find_map(|l| {
                let (k, v) = l.split_once(' ')?;
                (k == "oom_kill").then(|| v.trim().parse().ok()).flatten()
            })
        });
        CgroupSample {
            reading: CgroupReading {
                cpuset_cpus: dirs.and_then(CgroupDirs::cpuset_cpus),
                cpu_used_cores: per_interval(|c| c.usage_us),
                cpu_throttled_pct: throttled_pct,
                cpu_throttled_time_pct: per_interval(|c| c.throttled_us)
                    .map(|s| (s * 100.0).min(100.0)),
                mem_limit_bytes: dirs.and_then(CgroupDirs::mem_limit_bytes),
                mem_used_bytes: mem_used,
                oom_kills,
            },
            quota_cores: dirs.and_then(CgroupDirs::cpu_quota_cores),
            cpu_pressure_pct: per_interval(|c| c.cpu_psi_us).map(|s| (s * 100.0).min(100.0)),
            io_pressure_pct: per_interval(|c| c.io_psi_us).map(|s| (s * 100.0).min(100.0)),
        }
    }
}

/// The `total=` of the `some` line of a PSI file, in microseconds.
fn psi_some_total_us(path: &Path) -> Option<u64> {
    let text = read_text(path)?;
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
        let mut t = tracker(&f);
        let first = t.update(0);
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
        let s = t.update(10_000);
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
