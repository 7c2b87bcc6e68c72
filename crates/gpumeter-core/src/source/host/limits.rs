//! What this process may use of the host, as a job started here would get it: CPUs online, the
//! CPUs its affinity allows (`Cpus_allowed_list`), the cgroup CPU quota (see `cgroup`), total
//! memory and the cgroup memory limit (v2 `memory.max`, v1 `memory.limit_in_bytes`, tightest
//! along the cgroup path). "Usable cores" is the affinity's count capped by the quota.
//!
//! Reads `<proc>/self/{status,cgroup}`, `<proc>/meminfo`, `<sys>/devices/system/cpu/online`
//! and `<sys>/fs/cgroup`; nothing is written.

use std::path::{Path, PathBuf};

use super::system::read_capped;

const MAX_FILE_BYTES: u64 = 64 << 10;
/// v1 reports "no limit" as a huge number near 2^63.
const V1_UNLIMITED: u64 = 1 << 62;

/// This process's share of the host.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostLimits {
    /// Logical CPUs online (`<sys>/devices/system/cpu/online`); `None` when unreadable.
    pub cpus_online: Option<u32>,
    /// CPUs the affinity allows, by number.
    pub affinity: Option<Vec<u32>>,
    /// Cgroup CPU quota in cores (`None`: unlimited or unknown).
    pub quota_cores: Option<f64>,
    /// `MemTotal` of `<proc>/meminfo`, in bytes; `None` when unreadable.
    pub mem_total_bytes: Option<u64>,
    /// Cgroup memory limit (`None`: unlimited or unknown).
    pub mem_limit_bytes: Option<u64>,
}

impl HostLimits {
    /// Reads the limits under a proc and a sys root (`/proc`, `/sys`, or fixture trees).
    pub fn read(proc: &Path, sys: &Path) -> HostLimits {
        let text = |p: PathBuf| {
            read_capped(&p, MAX_FILE_BYTES)
                .ok()
                .map(|raw| String::from_utf8_lossy(&raw).into_owned())
        };
        let status = text(proc.join("self/status"));
        let affinity = status.as_deref().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .and_then(|v| parse_cpu_list(v.trim()))
        });
        let meminfo = text(proc.join("meminfo"));
        HostLimits {
            cpus_online: text(sys.join("devices/system/cpu/online"))
                .and_then(|s| parse_cpu_list(s.trim()))
                .and_then(|c| u32::try_from(c.len()).ok()),
            affinity,
            quota_cores: super::cgroup::cpu_quota_cores(proc, sys),
            mem_total_bytes: meminfo.as_deref().and_then(|m| {
                m.lines()
                    .find_map(|l| l.strip_prefix("MemTotal:"))
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                    .map(|kb| kb * 1024)
            }),
            mem_limit_bytes: memory_limit(proc, sys),
        }
    }

    /// Usable cores: the affinity's CPUs (else those online), capped by the quota.
    pub fn usable_cores(&self) -> Option<f64> {
        let cpus = self
            .affinity
            .as_ref()
            .map(|a| a.len() as f64)
            .or(self.cpus_online.map(f64::from));
        match (cpus, self.quota_cores) {
            (Some(c), Some(q)) => Some(c.min(q)),
            (c, q) => c.or(q),
        }
    }
}

/// `0-3,8,10-11` → [0, 1, 2, 3, 8, 10, 11]; `None` when malformed (or absurdly large).
pub fn parse_cpu_list(text: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.parse::<u32>().ok()?, b.parse::<u32>().ok()?),
            None => {
                let n = part.parse::<u32>().ok()?;
                (n, n)
            }
        };
        if b < a || b - a > 1 << 16 {
            return None;
        }
        out.extend(a..=b);
    }
    Some(out)
}

/// The tightest cgroup memory limit along our cgroup path.
fn memory_limit(proc: &Path, sys: &Path) -> Option<u64> {
    let raw = read_capped(&proc.join("self/cgroup"), MAX_FILE_BYTES).ok()?;
    let text = String::from_utf8_lossy(&raw);
    let root = sys.join("fs/cgroup");
    let read = |p: PathBuf| {
        read_capped(&p, MAX_FILE_BYTES)
            .ok()
            .and_then(|r| String::from_utf8_lossy(&r).trim().parse::<u64>().ok())
    };
    let walk = |base: PathBuf, path: &str, file: &str| {
        let mut dir = base;
        let mut best = read(dir.join(file));
        for part in path.split('/').filter(|p| !p.is_empty() && *p != "..") {
            dir.push(part);
            if let Some(v) = read(dir.join(file)) {
                best = Some(best.map_or(v, |b: u64| b.min(v)));
            }
        }
        best
    };
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if controllers.split(',').any(|c| c == "memory") {
            return walk(root.join("memory"), path, "memory.limit_in_bytes")
                .filter(|&v| v < V1_UNLIMITED);
        }
        if id == "0" && controllers.is_empty() {
            // `max` does not parse: unlimited at that level.
            return walk(root.clone(), path, "memory.max");
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::fixture::Fixture;
    use super::*;

    #[test]
    fn cpu_lists_parse() {
        assert_eq!(
            parse_cpu_list("0-3,8,10-11"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        assert_eq!(parse_cpu_list(""), Some(vec![]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("x"), None);
    }

    #[test]
    fn affinity_quota_and_memory_limit_come_from_the_fixture() {
        let f = Fixture::new();
        f.write(
            "proc/self/status",
            "Name:\tgpumeter\nCpus_allowed_list:\t0-15\n",
        );
        f.write(
            "proc/meminfo",
            "MemTotal:       263921548 kB\nMemFree: 1 kB\n",
        );
        f.write("proc/self/cgroup", "0::/kubepods/pod1\n");
        f.write("sys/devices/system/cpu/online", "0-207\n");
        f.write("sys/fs/cgroup/cgroup.controllers", "cpu memory\n");
        f.write("sys/fs/cgroup/kubepods/pod1/cpu.max", "600000 100000\n");
        f.write("sys/fs/cgroup/memory.max", "max\n");
        f.write("sys/fs/cgroup/kubepods/pod1/memory.max", "68719476736\n");
        let root = f.root();
        let l = HostLimits::read(&root.join("proc"), &root.join("sys"));
        assert_eq!(l.cpus_online, Some(208));
        assert_eq!(l.affinity.as_ref().map(Vec::len), Some(16));
        assert_eq!(l.quota_cores, Some(6.0));
        assert_eq!(l.usable_cores(), Some(6.0));
        assert_eq!(l.mem_total_bytes, Some(263_921_548 * 1024));
        assert_eq!(l.mem_limit_bytes, Some(64 << 30));
    }

    #[test]
    fn v1_unlimited_memory_and_missing_files_are_none() {
        let f = Fixture::new();
        f.write("proc/self/cgroup", "5:memory:/docker/abc\n");
        f.write(
            "sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes",
            "9223372036854771712\n",
        );
        let root = f.root();
        let l = HostLimits::read(&root.join("proc"), &root.join("sys"));
        assert_eq!(l.mem_limit_bytes, None);
        assert_eq!(l.affinity, None);
        assert_eq!(l.usable_cores(), None);
    }
}
