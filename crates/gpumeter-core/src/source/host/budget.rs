//! How many cores this process may really use: the CPUs online, narrowed by its affinity
//! (`Cpus_allowed_list` of `<proc>/self/status`), its cgroup's cpuset and its CPU quota. This
//! is the number `os.cpu_count()` gets wrong inside a container; the starved verdict and
//! `gpumeter check` both use it. Reads a handful of small files; never fails (unknowns are
//! `None`).

use std::path::Path;

use super::cgroup::{CgroupDirs, read_text};
use super::nspid::{count_cpu_list, parse_status};
use super::system::read_capped;

/// The CPU budget and where each limit comes from.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuBudget {
    /// Logical CPUs online (`<sys>/devices/system/cpu/online`, else the `cpuN` lines of
    /// `<proc>/stat`).
    pub online: Option<u32>,
    /// CPUs this process's affinity allows.
    pub affinity: Option<u32>,
    /// CPUs in its cgroup's cpuset.
    pub cpuset: Option<u32>,
    /// Its cgroup's CPU quota in cores (the tightest along the path); `None`: unlimited.
    pub quota_cores: Option<f64>,
}

/// Which limit decides the usable cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuLimit {
    /// The logical CPUs online.
    Online,
    /// The process's CPU affinity (`taskset`).
    Affinity,
    /// Its cgroup's cpuset.
    Cpuset,
    /// Its cgroup's CPU quota (fractional cores).
    Quota,
}

impl CpuLimit {
    /// What to call it in a message.
    pub fn describe(self) -> &'static str {
        match self {
            CpuLimit::Online => "the CPUs online",
            CpuLimit::Affinity => "the CPU affinity (taskset)",
            CpuLimit::Cpuset => "the cgroup cpuset",
            CpuLimit::Quota => "the cgroup CPU quota",
        }
    }
}

impl CpuBudget {
    /// The live machine's budget for this process.
    pub fn read() -> CpuBudget {
        Self::read_at(Path::new("/proc"), Path::new("/sys"))
    }

    /// The budget read from another proc and sys tree (fixtures, `/host/proc`).
    pub fn read_at(proc: &Path, sys: &Path) -> CpuBudget {
        let dirs = CgroupDirs::locate(proc, sys);
        CpuBudget {
            online: online_cpus(proc, sys),
            affinity: read_capped(&proc.join("self/status"), 64 << 10)
                .ok()
                .and_then(|raw| parse_status(&raw).cpus_allowed),
            cpuset: dirs.as_ref().and_then(CgroupDirs::cpuset_cpus),
            quota_cores: dirs.as_ref().and_then(CgroupDirs::cpu_quota_cores),
        }
    }

    /// The cores it may use (the tightest limit) and which limit that is; `None` when nothing
    /// is known.
    pub fn usable(&self) -> Option<(f64, CpuLimit)> {
        [
            (self.online.map(f64::from), CpuLimit::Online),
            (self.affinity.map(f64::from), CpuLimit::Affinity),
            (self.cpuset.map(f64::from), CpuLimit::Cpuset),
            (self.quota_cores, CpuLimit::Quota),
        ]
        .into_iter()
        .filter_map(|(v, l)| v.filter(|v| *v > 0.0).map(|v| (v, l)))
        // The first of equal limits wins: "online" when nothing narrows it.
        .reduce(|best, c| if c.0 < best.0 { c } else { best })
    }

    /// The usable cores alone.
    pub fn usable_cores(&self) -> Option<f64> {
        self.usable().map(|(c, _)| c)
    }
}

/// Logical CPUs online.
pub(super) fn online_cpus(proc: &Path, sys: &Path) -> Option<u32> {
    read_text(&sys.join("devices/system/cpu/online"))
        .as_deref()
        .and_then(count_cpu_list)
        .or_else(|| {
            let stat = read_capped(&proc.join("stat"), 1 << 20).ok()?;
            let n = String::from_utf8_lossy(&stat)
                .lines()
                .filter(|l| {
                    l.strip_prefix("cpu")
                        .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
                })
                .count();
            u32::try_from(n).ok().filter(|&n| n > 0)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::host::fixture::Fixture;

    fn budget(f: &Fixture) -> CpuBudget {
        CpuBudget::read_at(&f.root().join("proc"), &f.root().join("sys"))
    }

    #[test]
    fn a_quota_of_four_cores_on_a_64_core_host() {
        let f = Fixture::new();
        f.write("sys/devices/system/cpu/online", "0-63\n");
        f.write("proc/self/status", "Name:\tx\nCpus_allowed_list:\t0-63\n");
        f.write("proc/self/cgroup", "0::/\n");
        f.write("sys/fs/cgroup/cgroup.controllers", "cpu cpuset\n");
        f.write("sys/fs/cgroup/cpu.max", "400000 100000\n");
        f.write("sys/fs/cgroup/cpuset.cpus.effective", "0-63\n");
        let b = budget(&f);
        assert_eq!(b.online, Some(64));
        assert_eq!(b.affinity, Some(64));
        assert_eq!(b.cpuset, Some(64));
        assert_eq!(b.quota_cores, Some(4.0));
        assert_eq!(b.usable(), Some((4.0, CpuLimit::Quota)));
    }

    #[test]
    fn affinity_or_cpuset_can_be_the_tightest() {
        let f = Fixture::new();
        f.write("proc/self/status", "Cpus_allowed_list:\t0-1\n");
        // The fixture's /proc/stat has two CPUs and no sysfs: online comes from it.
        let b = budget(&f);
        assert_eq!(b.online, Some(2));
        assert_eq!(b.usable(), Some((2.0, CpuLimit::Online)));
        f.write("sys/devices/system/cpu/online", "0-15\n");
        f.write("proc/self/cgroup", "3:cpuset:/\n");
        f.write("sys/fs/cgroup/cpuset/cpuset.effective_cpus", "0-5\n");
        let b = budget(&f);
        assert_eq!(b.cpuset, Some(6));
        assert_eq!(b.usable(), Some((2.0, CpuLimit::Affinity)));
        assert_eq!(CpuBudget::default().usable(), None);
    }

    #[test]
    fn the_live_machine_gives_a_positive_budget() {
        let b = CpuBudget::read();
        let cores = b.usable_cores().expect("this machine has CPUs");
        assert!(cores > 0.0 && cores <= f64::from(b.online.unwrap()));
    }
}
