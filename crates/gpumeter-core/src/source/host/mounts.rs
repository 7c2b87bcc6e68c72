//! The network file systems mounted here, from `<proc>/self/mountinfo`: NFS, SMB, Lustre, Ceph,
//! GlusterFS, and the FUSE clients of object stores (gcsfuse, s3fs, Mountpoint for S3, goofys,
//! rclone, JuiceFS). An I/O-bound job whose workers wait in D state with the local disk quiet is
//! most often reading from one of these; the starved verdict names them. Read when first asked
//! and again after [`REFRESH_MS`] (mounts change rarely), at most [`MAX_MOUNTS`] kept.

use std::path::{Path, PathBuf};

use gpumeter_model::SharedStr;

use crate::sanitize::sanitize;

/// Mounts are read again after this long.
pub(super) const REFRESH_MS: i64 = 60_000;
/// Most mounts kept (a box with hundreds of automounts would otherwise fill the evidence).
pub(super) const MAX_MOUNTS: usize = 8;
/// Longest `fstype mountpoint` kept.
const MAX_CHARS: usize = 96;

/// File system types that live on the network (a FUSE client's type is `fuse.<name>`).
const NETWORK_FS: [&str; 10] = [
    "nfs",
    "nfs4",
    "cifs",
    "smb3",
    "lustre",
    "ceph",
    "glusterfs",
    "beegfs",
    "gpfs",
    "9p",
];
const NETWORK_FUSE: [&str; 8] = [
    "gcsfuse",
    "s3fs",
    "mountpoint-s3",
    "goofys",
    "rclone",
    "juicefs",
    "blobfuse2",
    "sshfs",
];

/// The mounts, re-read now and then.
#[derive(Debug)]
pub(super) struct Mounts {
    path: PathBuf,
    last: Vec<SharedStr>,
    read_at: Option<i64>,
}

impl Mounts {
    pub(super) fn new(proc: &Path) -> Self {
        Self {
            path: proc.join("self").join("mountinfo"),
            last: Vec::new(),
            read_at: None,
        }
    }

    /// The network mounts as `fstype mountpoint` (empty when none, or unreadable).
    pub(super) fn network(&mut self, now_ms: i64) -> Vec<SharedStr> {
        let due = self
            .read_at
            .is_none_or(|at| now_ms < at || now_ms - at >= REFRESH_MS);
        if due {
            self.last = std::fs::read_to_string(&self.path)
                .map(|text| parse(&text))
                .unwrap_or_default();
            self.read_at = Some(now_ms);
        }
        self.last.clone()
    }
}

/// The network mounts of a `mountinfo` text: `36 25 0:32 / /data rw - nfs4 srv:/x rw` gives
/// `nfs4 /data`. Mount points are octal-escaped by the kernel (`\040` for a space).
fn parse(text: &str) -> Vec<SharedStr> {
    let mut out: Vec<SharedStr> = Vec::new();
    for line in text.lines() {
        let Some((head, tail)) = line.split_once(" - ") else {
            continue;
        };
        let Some(point) = head.split(' ').nth(4) else {
            continue;
        };
        let Some(fstype) = tail.split(' ').next() else {
            continue;
        };
        let network = NETWORK_FS.contains(&fstype)
            || fstype
                .strip_prefix("fuse.")
                .is_some_and(|client| NETWORK_FUSE.contains(&client));
        if !network {
            continue;
        }
        let point = point.replace("\\040", " ");
        let entry: SharedStr = sanitize(&format!("{fstype} {point}"), MAX_CHARS).into();
        if !out.contains(&entry) {
            out.push(entry);
        }
        if out.len() == MAX_MOUNTS {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
22 1 259:2 / / rw,relatime - ext4 /dev/nvme0n1p2 rw
25 22 0:22 / /proc rw - proc proc rw
36 22 0:32 / /data rw,relatime - nfs4 fs-1.efs:/ rw,vers=4.1
37 22 0:33 / /gcs/my\\040bucket rw - fuse.gcsfuse my-bucket rw,user_id=0
38 22 0:34 / /home/u/.cache rw - fuse.portal portal rw
39 22 0:35 / /mnt/s3 rw - fuse.mountpoint-s3 mountpoint-s3 rw
bad line without the separator
";

    #[test]
    fn network_file_systems_are_named_and_local_ones_are_not() {
        let got: Vec<String> = parse(MOUNTINFO).iter().map(|m| m.to_string()).collect();
        assert_eq!(
            got,
            vec![
                "nfs4 /data",
                "fuse.gcsfuse /gcs/my bucket",
                "fuse.mountpoint-s3 /mnt/s3"
            ]
        );
    }

    #[test]
    fn the_list_is_capped_and_re_read_only_after_a_while() {
        let many: String = (0..20)
            .map(|i| format!("{i} 22 0:{i} / /n{i} rw - nfs x:/ rw\n"))
            .collect();
        assert_eq!(parse(&many).len(), MAX_MOUNTS);
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("self")).unwrap();
        let file = dir.path().join("self/mountinfo");
        std::fs::write(&file, MOUNTINFO).unwrap();
        let mut m = Mounts::new(dir.path());
        assert_eq!(m.network(0).len(), 3);
        std::fs::write(&file, "").unwrap();
        assert_eq!(m.network(1_000).len(), 3, "kept until the refresh");
        assert!(m.network(REFRESH_MS).is_empty());
        // Unreadable: none, never an error.
        std::fs::remove_file(&file).unwrap();
        assert!(m.network(3 * REFRESH_MS).is_empty());
    }
}
