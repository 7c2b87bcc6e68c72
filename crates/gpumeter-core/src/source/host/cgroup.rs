//! The cgroup gpumeter runs in: where its files are, and the limits it sets — the CPU quota in
//! cores (cgroup v2 `cpu.max` = `max` or `QUOTA PERIOD`, v1 `cpu.cfs_quota_us` /
//! `cpu.cfs_period_us` with -1 = none), the cpuset and the memory limit. Every ancestor up to
//! the root may set a limit, so the tightest one along the path counts.
//!
//! Reads `<proc>/self/cgroup` and files under `<sys>/fs/cgroup`. Inside a container the cgroup
//! namespace makes its own cgroup look like the root (`0::/`), and `/sys/fs/cgroup` is that
//! cgroup, so the same walk finds the container's limit. Without a cgroup namespace (older
//! docker on v1) the path names the host's cgroup while the mount shows only the container's
//! own: a path that does not exist under the mount falls back to the mount's root.

use std::path::{Path, PathBuf};

use super::nspid::count_cpu_list;
use super::system::read_capped;

const MAX_FILE_BYTES: u64 = 16 << 10;
/// v1 reports "no memory limit" as a huge number (the page-rounded `i64::MAX`).
const V1_UNLIMITED_BYTES: u64 = 1 << 62;

/// Our cgroup's directories: the unified (v2) one, or one per v1 controller.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct CgroupDirs {
    /// The v2 hierarchy's mount and our path in it.
    pub(super) v2: Option<(PathBuf, String)>,
    /// v1: (controller, mount, path) for the controllers we read.
    pub(super) v1: Vec<(String, PathBuf, String)>,
}

impl CgroupDirs {
    /// Reads `<proc>/self/cgroup`; `None` when unreadable.
    pub(super) fn locate(proc: &Path, sys: &Path) -> Option<CgroupDirs> {
        let raw = read_capped(&proc.join("self/cgroup"), MAX_FILE_BYTES).ok()?;
        let text = String::from_utf8_lossy(&raw);
        let root = sys.join("fs/cgroup");
        let mut dirs = CgroupDirs::default();
        for line in text.lines() {
            let mut parts = line.splitn(3, ':');
            let (Some(id), Some(controllers), Some(path)) =
                (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            if id == "0" && controllers.is_empty() {
                let base = if root.join("cgroup.controllers").exists() {
                    root.clone()
                } else {
                    // Hybrid layouts mount the v2 tree at `unified`.
                    root.join("unified")
                };
                dirs.v2 = Some((base, path.to_string()));
                continue;
            }
            for c in controllers.split(',') {
                if !["cpu", "cpuacct", "cpuset", "memory"].contains(&c) {
                    continue;
                }
                // A hierarchy is mounted as `cpu,cpuacct` or `cpu` (often both, one a symlink).
                let mount = [controllers, c, "cpu,cpuacct"]
                    .iter()
                    .map(|m| root.join(m))
                    .find(|m| m.is_dir());
                if let Some(mount) = mount {
                    dirs.v1.push((c.to_string(), mount, path.to_string()));
                }
            }
        }
        Some(dirs)
    }

    /// The v1 hierarchy of a controller, if mounted.
    fn v1(&self, controller: &str) -> Option<(&Path, &str)> {
        self.v1
            .iter()
            .find(|(c, _, _)| c == controller)
            .map(|(_, m, p)| (m.as_path(), p.as_str()))
    }

    /// Whether the v2 hierarchy holds the controller's files (its own tree, not hybrid's
    /// empty `unified`).
    fn v2_has(&self, file: &str) -> Option<(&Path, &str)> {
        let (base, path) = self.v2.as_ref()?;
        let dir = own_dir(base, path);
        (dir.join(file).exists() || base.join(file).exists()).then_some((base.as_path(), path))
    }

    /// Our file of a v1 controller (preferred: on hybrid layouts the v1 controllers are the
    /// real ones), else of the v2 tree; `None` when neither exists.
    pub(super) fn file(&self, v2_file: &str, v1: (&str, &str)) -> Option<PathBuf> {
        self.v1_file(v1.0, v1.1).or_else(|| self.v2_file(v2_file))
    }

    /// Our file in a v1 controller's hierarchy, when it exists.
    pub(super) fn v1_file(&self, controller: &str, file: &str) -> Option<PathBuf> {
        let (mount, path) = self.v1(controller)?;
        Some(own_dir(mount, path).join(file)).filter(|p| p.exists())
    }

    /// Our file in the v2 tree, when it exists.
    pub(super) fn v2_file(&self, file: &str) -> Option<PathBuf> {
        let (base, path) = self.v2.as_ref()?;
        Some(own_dir(base, path).join(file)).filter(|p| p.exists())
    }

    /// The tightest CPU quota along the path, in cores; `None` when unlimited or unknown.
    pub(super) fn cpu_quota_cores(&self) -> Option<f64> {
        if let Some((mount, path)) = self.v1("cpu")
            && mount.join("cpu.cfs_period_us").exists()
        {
            return tightest(mount, path, v1_quota);
        }
        let (base, path) = self.v2_has("cpu.max").or_else(|| {
            let (b, p) = self.v2.as_ref()?;
            Some((b.as_path(), p.as_str()))
        })?;
        tightest(base, path, v2_quota)
    }

    /// CPUs in our cpuset (`cpuset.cpus.effective`, v1 `cpuset.effective_cpus`, or
    /// `cpuset.cpus` on old v1 kernels).
    pub(super) fn cpuset_cpus(&self) -> Option<u32> {
        let file = self
            .file("cpuset.cpus.effective", ("cpuset", "cpuset.effective_cpus"))
            .or_else(|| self.v1_file("cpuset", "cpuset.cpus"))?;
        read_text(&file).as_deref().and_then(count_cpu_list)
    }

    /// The tightest memory limit along the path, in bytes; `None` when unlimited or unknown.
    pub(super) fn mem_limit_bytes(&self) -> Option<u64> {
        let read_v2 = |dir: &Path| -> Option<f64> {
            let t = read_text(&dir.join("memory.max"))?;
            t.parse::<u64>().ok().map(|b| b as f64)
        };
        let read_v1 = |dir: &Path| -> Option<f64> {
            let t = read_text(&dir.join("memory.limit_in_bytes"))?;
            t.parse::<u64>()
                .ok()
                .filter(|&b| b < V1_UNLIMITED_BYTES)
                .map(|b| b as f64)
        };
        let limit = if let Some((base, path)) = self.v2_has("memory.max") {
            tightest(base, path, read_v2)
        } else {
            let (mount, path) = self.v1("memory")?;
            tightest(mount, path, read_v1)
        };
        limit.map(|b| b as u64)
    }
}

/// `base/path` when it exists, else `base` (the mount shows only our own cgroup).
fn own_dir(base: &Path, path: &str) -> PathBuf {
    let mut dir = base.to_path_buf();
    for part in path
        .split('/')
        .filter(|p| !p.is_empty() && *p != "." && *p != "..")
    {
        dir.push(part);
    }
    if dir.is_dir() {
        dir
    } else {
        base.to_path_buf()
    }
}

/// The tightest CPU quota along our cgroup path, in cores; `None` when unlimited or unreadable.
pub(super) fn cpu_quota_cores(proc: &Path, sys: &Path) -> Option<f64> {
    CgroupDirs::locate(proc, sys)?.cpu_quota_cores()
}

/// The smallest value of `base/path` and each of its ancestors down to `base`.
fn tightest(base: &Path, path: &str, read: impl Fn(&Path) -> Option<f64>) -> Option<f64> {
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

pub(super) fn read_text(path: &Path) -> Option<String> {
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

    fn dirs(f: &Fixture) -> CgroupDirs {
        let root = f.root();
        CgroupDirs::locate(&root.join("proc"), &root.join("sys")).unwrap()
    }

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
        assert_eq!(
            CgroupDirs::locate(&root.join("proc"), &root.join("sys")),
            None
        );
    }

    #[test]
    fn v2_cpuset_and_memory_limit_in_a_cgroup_namespace() {
        let f = Fixture::new();
        f.write("proc/self/cgroup", "0::/\n");
        f.write("sys/fs/cgroup/cgroup.controllers", "cpuset cpu memory\n");
        f.write("sys/fs/cgroup/cpuset.cpus.effective", "8-15\n");
        f.write("sys/fs/cgroup/memory.max", "68719476736\n");
        let d = dirs(&f);
        assert_eq!(d.cpuset_cpus(), Some(8));
        assert_eq!(d.mem_limit_bytes(), Some(64 << 30));
        f.write("sys/fs/cgroup/memory.max", "max\n");
        assert_eq!(d.mem_limit_bytes(), None);
    }

    #[test]
    fn v1_without_a_cgroup_namespace_falls_back_to_the_mount_root() {
        let f = Fixture::new();
        // The path names the host's cgroup; the container's mount shows only its own.
        f.write(
            "proc/self/cgroup",
            "5:memory:/docker/abc\n3:cpuset:/docker/abc\n2:cpu,cpuacct:/docker/abc\n",
        );
        f.write("sys/fs/cgroup/cpuset/cpuset.effective_cpus", "0-3\n");
        f.write(
            "sys/fs/cgroup/memory/memory.limit_in_bytes",
            "9223372036854771712\n",
        );
        f.write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "400000\n");
        f.write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
        let d = dirs(&f);
        assert_eq!(d.cpuset_cpus(), Some(4));
        assert_eq!(d.mem_limit_bytes(), None, "v1's huge number is no limit");
        assert_eq!(d.cpu_quota_cores(), Some(4.0));
        f.write(
            "sys/fs/cgroup/memory/memory.limit_in_bytes",
            "17179869184\n",
        );
        assert_eq!(d.mem_limit_bytes(), Some(16 << 30));
    }
}
