//! Which processes here hold an NVIDIA GPU open: the `/proc/<pid>/fd/*` links that point at
//! `<dev>/nvidia<N>` (not `nvidiactl` or `nvidia-uvm`, which every CUDA process opens), and,
//! as a weaker hint where the fds cannot be read, a CUDA driver library in `/proc/<pid>/maps`.
//! Only read when the driver names PIDs this /proc does not have (gpumeter in a container).
//!
//! Device node → NVML index: a container sees only its own nodes (`/dev/nvidia2` for the host's
//! third GPU) while NVML numbers its GPUs from 0, both in PCI order; so a node's index is its
//! position among the `nvidia<N>` nodes present in the device directory (identity on a host,
//! where all are present). The device directory is `/dev`, or `GPUMETER_DEV_DIR` for tests.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::system::read_capped;

/// Most bytes of a maps file read for the CUDA hint.
const MAX_MAPS_BYTES: u64 = 1 << 20;
/// Most fds looked at per process (a server may hold millions).
const MAX_FDS: usize = 65_536;

/// What a scan found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Holders {
    /// pid → NVML indices of the GPUs it holds open.
    pub(super) gpus: BTreeMap<u32, BTreeSet<u32>>,
    /// Pids whose fds could not be read but whose maps show the CUDA driver.
    pub(super) cuda_hint: BTreeSet<u32>,
    /// Pids whose fds could not be read (permissions).
    pub(super) denied: usize,
}

/// The device directory and its GPU nodes in index order.
#[derive(Debug, Clone)]
pub(super) struct DevDir {
    dir: PathBuf,
    /// Minor numbers present, sorted: position = NVML index.
    minors: Vec<u32>,
}

impl DevDir {
    /// Lists `nvidia<N>` in `dir` (canonicalised, since fd links are absolute paths).
    pub(super) fn open(dir: &Path) -> DevDir {
        let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        let mut minors: Vec<u32> = std::fs::read_dir(&dir)
            .map(|rd| {
                rd.filter_map(|e| minor_of(e.ok()?.file_name().to_str()?))
                    .collect()
            })
            .unwrap_or_default();
        minors.sort_unstable();
        DevDir { dir, minors }
    }

    /// The NVML index of a node's minor number.
    fn index(&self, minor: u32) -> u32 {
        match self.minors.binary_search(&minor) {
            Ok(pos) => u32::try_from(pos).unwrap_or(minor),
            Err(_) => minor,
        }
    }

    /// The index of the GPU an fd link points at, if it is one of ours.
    fn gpu_of(&self, target: &Path) -> Option<u32> {
        if target.parent()? != self.dir {
            return None;
        }
        minor_of(target.file_name()?.to_str()?).map(|m| self.index(m))
    }
}

/// `nvidia3` → 3; `nvidiactl`, `nvidia-uvm` → none.
fn minor_of(name: &str) -> Option<u32> {
    let digits = name.strip_prefix("nvidia")?;
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// The GPUs each of `pids` holds open.
pub(super) fn scan(proc: &Path, dev: &DevDir, pids: impl IntoIterator<Item = u32>) -> Holders {
    let mut out = Holders::default();
    for pid in pids {
        let dir = proc.join(pid.to_string());
        match std::fs::read_dir(dir.join("fd")) {
            Ok(rd) => {
                let held: BTreeSet<u32> = rd
                    .take(MAX_FDS)
                    .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
                    .filter_map(|t| dev.gpu_of(&t))
                    .collect();
                if !held.is_empty() {
                    out.gpus.insert(pid, held);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                out.denied += 1;
                if maps_cuda(&dir) {
                    out.cuda_hint.insert(pid);
                }
            }
            Err(_) => {}
        }
    }
    out
}

/// Whether the process maps the CUDA driver (or the UVM library).
fn maps_cuda(dir: &Path) -> bool {
    read_capped(&dir.join("maps"), MAX_MAPS_BYTES).is_ok_and(|raw| {
        String::from_utf8_lossy(&raw)
            .lines()
            .any(|l| l.contains("libcuda.so") || l.contains("libnvidia-uvm"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn device_node_names() {
        assert_eq!(minor_of("nvidia0"), Some(0));
        assert_eq!(minor_of("nvidia12"), Some(12));
        assert_eq!(minor_of("nvidiactl"), None);
        assert_eq!(minor_of("nvidia-uvm"), None);
        assert_eq!(minor_of("nvidia"), None);
    }

    #[test]
    fn fd_links_name_the_gpus_a_process_holds_by_their_index_here() {
        let tmp = tempfile::tempdir().unwrap();
        let dev = tmp.path().join("dev");
        std::fs::create_dir_all(&dev).unwrap();
        // The container sees the host's GPUs 2 and 3 only: they are NVML's 0 and 1.
        for n in ["nvidia2", "nvidia3", "nvidiactl", "nvidia-uvm"] {
            std::fs::write(dev.join(n), "").unwrap();
        }
        let fd = tmp.path().join("proc/7/fd");
        std::fs::create_dir_all(&fd).unwrap();
        symlink(dev.join("nvidiactl"), fd.join("3")).unwrap();
        symlink(dev.join("nvidia3"), fd.join("4")).unwrap();
        symlink(dev.join("nvidia-uvm"), fd.join("5")).unwrap();
        symlink("/etc/passwd", fd.join("6")).unwrap();
        std::fs::create_dir_all(tmp.path().join("proc/8/fd")).unwrap();
        let devdir = DevDir::open(&dev);
        let h = scan(&tmp.path().join("proc"), &devdir, [7, 8, 9]);
        assert_eq!(h.gpus, BTreeMap::from([(7, BTreeSet::from([1]))]));
        assert_eq!(h.denied, 0);
        // On a host every node is present: the minor is the index.
        std::fs::write(dev.join("nvidia0"), "").unwrap();
        std::fs::write(dev.join("nvidia1"), "").unwrap();
        let h = scan(&tmp.path().join("proc"), &DevDir::open(&dev), [7]);
        assert_eq!(h.gpus[&7], BTreeSet::from([3]));
    }
}
