//! The CPU quota of the cgroup gpumeter runs in, in cores: cgroup v2 `cpu.max` (`max` or
//! `QUOTA PERIOD`), else v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us` (quota -1 = none). Every
//! ancestor up to the root may set a limit, so the tightest one along the path counts.
//!
//! Reads `<proc>/self/cgroup` and files under `<sys>/fs/cgroup`. Inside a container the cgroup
//! namespace makes its own cgroup look like the root (`0::/`), and `/sys/fs/cgroup` is that
//! cgroup, so the same walk finds the container's limit.

use std::path::{Path, PathBuf};

use super::system::read_capped;

const MAX_FILE_BYTES: u64 = 16 << 10;

/// The tightest CPU quota along our cgroup path, in cores; `None` when unlimited or unreadable.
pub(super) fn cpu_quota_cores(proc: &Path, sys: &Path) -> Option<f64> {
    let raw = read_capped(&proc.join("self/cgroup"), MAX_FILE_BYTES).ok()?;
    let text = String::from_utf8_lossy(&raw);
    let root = sys.join("fs/cgroup");
    let mut v2_path = None;
    let mut v1_path = None;
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if id == "0" && controllers.is_empty() {
            v2_path = Some(path.to_string());
        } else if controllers.split(',').any(|c| c == "cpu") {
            v1_path = Some((controllers.to_string(), path.to_string()));
        }
    }
    if let Some((controllers, path)) = v1_path {
        // The hierarchy is mounted as `cpu,cpuacct` or `cpu` (often both, one a symlink).
        for mount in [controllers.as_str(), "cpu,cpuacct", "cpu"] {
            let base = root.join(mount);
            if base.join("cpu.cfs_period_us").exists() {
                return tightest(&base, &path, v1_quota);
            }
        }
    }
    let path = v2_path?;
    let base = if root.join("cpu.max").exists() || root.join("cgroup.controllers").exists() {
        root
    } else {
        // Hybrid layouts mount the v2 tree at `unified`.
        root.join("unified")
    };
    tightest(&base, &path, v2_quota)
}

/// The smallest quota of `base/path` and each of its ancestors down to `base`.
fn tightest(base: &Path, path: &str, read: fn(&Path) -> Option<f64>) -> Option<f64> {
    let mut dir = PathBuf::from(base);
    let mut best = read(&dir);
    for part in path
        .split('/')
        .filter(|p| !p.is_empty() && *p != "." && *p != "..")
    {
        dir.push(part);
        if let Some(q) = read(&dir) {
            best = Some(best.map_or(q, |b: f64| b.min(q)));
        }
    }
    best
}

fn read_text(path: &Path) -> Option<String> {
    read_capped(path, MAX_FILE_BYTES)
        .ok()
        .map(|raw| String::from_utf8_lossy(&raw).trim().to_string())
}

/// `cpu.max`: `max 100000` (no limit) or `200000 100000` (2 cores).
fn v2_quota(dir: &Path) -> Option<f64> {
    let text = read_text(&dir.join("cpu.max"))?;
    let mut it = text.split_whitespace();
    let quota = it.next()?.parse::<f64>().ok()?;
    let period = it
        .next()
        .map_or(Some(100_000.0), |p| p.parse::<f64>().ok())?;
    cores(quota, period)
}

/// `cpu.cfs_quota_us` (-1 = no limit) over `cpu.cfs_period_us`.
fn v1_quota(dir: &Path) -> Option<f64> {
    let quota = read_text(&dir.join("cpu.cfs_quota_us"))?
        .parse::<f64>()
        .ok()?;
    let period = read_text(&dir.join("cpu.cfs_period_us"))?
        .parse::<f64>()
        .ok()?;
    cores(quota, period)
}

fn cores(quota: f64, period: f64) -> Option<f64> {
    (quota > 0.0 && period > 0.0 && quota.is_finite()).then(|| quota / period)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::host::fixture::Fixture;

    #[test]
    fn v2_takes_the_tightest_limit_along_the_path() {
        let f = Fixture::new();
        f.write("proc/self/cgroup", "0::/kubepods/pod1/ctr\n");
        f.write("sys/fs/cgroup/cgroup.controllers", "cpu memory\n");
        f.write("sys/fs/cgroup/cpu.max", "max 100000\n");
        f.write("sys/fs/cgroup/kubepods/pod1/cpu.max", "400000 100000\n");
        f.write("sys/fs/cgroup/kubepods/pod1/ctr/cpu.max", "250000 100000\n");
        let root = f.root();
        assert_eq!(
            cpu_quota_cores(&root.join("proc"), &root.join("sys")),
            Some(2.5)
        );
        f.write("sys/fs/cgroup/kubepods/pod1/ctr/cpu.max", "max 100000\n");
        assert_eq!(
            cpu_quota_cores(&root.join("proc"), &root.join("sys")),
            Some(4.0)
        );
    }

    #[test]
    fn v1_cfs_quota_and_unlimited() {
        let f = Fixture::new();
        f.write(
            "proc/self/cgroup",
            "4:memory:/docker/abc\n2:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n",
        );
        f.write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
        f.write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
        f.write(
            "sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us",
            "150000\n",
        );
        f.write(
            "sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us",
            "100000\n",
        );
        let root = f.root();
        assert_eq!(
            cpu_quota_cores(&root.join("proc"), &root.join("sys")),
            Some(1.5)
        );
        f.write(
            "sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us",
            "-1\n",
        );
        assert_eq!(cpu_quota_cores(&root.join("proc"), &root.join("sys")), None);
    }

    #[test]
    fn no_cgroup_file_means_unknown() {
        let f = Fixture::new();
        let root = f.root();
        assert_eq!(cpu_quota_cores(&root.join("proc"), &root.join("sys")), None);
    }
}
