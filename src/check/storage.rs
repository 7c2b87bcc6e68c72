//! The storage family: where the data directory lives (a network file system is named as such,
//! from `/proc/self/mountinfo`) and how fast it reads, against what one GPU's input pipeline
//! typically needs. The probe itself is in `probe`.

use std::path::Path;

use super::facts::{Facts, Mount};
use super::verdict::{Family, Level, Verdict};
use gpumeter_core::units::rate;

/// Sequential read per GPU an image/video training pipeline typically needs.
pub const SEQ_PER_GPU: f64 = 200e6;
/// Small random reads per second per GPU a many-small-files dataset typically needs.
pub const IOPS_PER_GPU: f64 = 1000.0;

/// File systems whose data comes over the network.
const NETWORK_FS: &[&str] = &[
    "nfs",
    "nfs4",
    "cifs",
    "smb3",
    "smbfs",
    "ceph",
    "glusterfs",
    "lustre",
    "gpfs",
    "beegfs",
    "9p",
    "afs",
    "davfs",
    "sshfs",
    "fuse.sshfs",
    "fuse.s3fs",
    "fuse.gcsfuse",
    "fuse.goofys",
    "fuse.juicefs",
    "fuse.rclone",
    "fuse.mountpoint-s3",
    "fuse.blobfuse",
    "fuse.blobfuse2",
    "fuse.geesefs",
];

pub fn is_network(fs_type: &str) -> bool {
    NETWORK_FS.contains(&fs_type)
}

fn v(id: &'static str, level: Level, s: String) -> Verdict {
    Verdict::new(Family::Storage, id, level, s)
}

pub fn check(facts: &Facts) -> Vec<Verdict> {
    let Some(s) = &facts.storage else {
        return vec![v(
            "storage.probe",
            Level::Skip,
            "storage not probed: pass --data PATH (the dataset's directory)".into(),
        )];
    };
    let gpus = facts.nvml.as_ref().map_or(1, |i| i.gpus.len().max(1));
    let path = s.path.display();
    let mut out = vec![match &s.mount {
        None => v("storage.fs", Level::Skip, format!("{path}: its mount is not in /proc/self/mountinfo")),
        Some(Mount { point, fs_type, source }) if is_network(fs_type) => v(
            "storage.fs",
            Level::Warn,
            format!("{path} is on a network file system: {fs_type} from {source} (mounted at {})", point.display()),
        )
        .fix("every epoch crosses the network: copy the dataset to local NVMe first (or cache it there)"),
        Some(Mount { point, fs_type, source }) => v("storage.fs", Level::Ok, format!("{path} is on {fs_type} ({source} at {})", point.display())),
    }];
    out.push(match &s.probe {
        Err(why) => v("storage.probe", Level::Warn, format!("could not probe {path}: {why}")).fix("check the path exists and is readable"),
        Ok(p) => {
            let need_seq = SEQ_PER_GPU * gpus as f64;
            let need_iops = IOPS_PER_GPU * gpus as f64;
            let what = if p.existing_files { "existing files" } else { "a temporary file" };
            let cached = if p.uncached { "" } else { " (the page cache could not be dropped: may be the cache's speed)" };
            let iops = p.random_iops.map_or_else(|| "random reads N/A".to_string(), |i| format!("{i:.0} random 4 KiB reads/s"));
            let text = format!("{path}: {} sequential, {iops}, reading {what}{cached}", rate(p.seq_bytes_per_s));
            let slow_seq = p.seq_bytes_per_s < need_seq;
            let slow_iops = p.random_iops.is_some_and(|i| i < need_iops);
            if slow_seq || slow_iops {
                v(
                    "storage.probe",
                    Level::Warn,
                    format!("{text}; {gpus} GPUs typically need ≥ {} and ≥ {need_iops:.0} reads/s", rate(need_seq)),
                )
                .fix("the input pipeline may wait on the disk: stage the data on local NVMe, or pack small files into shards (WebDataset, TFRecord)")
            } else {
                v("storage.probe", Level::Ok, text)
            }
        }
    });
    out
}

/// The mount holding `path`: the mountinfo entry with the longest mount point that is a
/// prefix of it. Mount points are octal-escaped in mountinfo (`\040` for a space).
pub fn mount_of(mountinfo: &str, path: &Path) -> Option<Mount> {
    let mut best: Option<Mount> = None;
    for line in mountinfo.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let Some(dash) = fields.iter().position(|f| *f == "-") else {
            continue;
        };
        let (Some(point), Some(fs_type), Some(source)) =
            (fields.get(4), fields.get(dash + 1), fields.get(dash + 2))
        else {
            continue;
        };
        let point = unescape(point);
        if !path.starts_with(Path::new(&point)) {
            continue;
        }
        // Later lines overmount earlier ones at the same point.
        if best
            .as_ref()
            .is_none_or(|b| point.len() >= b.point.as_os_str().len())
        {
            best = Some(Mount {
                point: point.into(),
                fs_type: gpumeter_core::sanitize::sanitize(fs_type, 40),
                source: gpumeter_core::sanitize::sanitize(&unescape(source), 120),
            });
        }
    }
    best
}

fn unescape(s: &str) -> String {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let code = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
            out.push(code);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
22 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw
30 22 0:40 / /mnt/data rw,relatime shared:2 - nfs4 fs-1.example:/export rw,vers=4.1
31 22 0:41 / /mnt/my\\040data rw - fuse.s3fs s3fs rw
32 30 259:5 / /mnt/data/local rw - xfs /dev/nvme1n1 rw
";

    #[test]
    fn the_longest_mount_point_wins_and_network_fs_are_named() {
        let m = mount_of(MOUNTINFO, Path::new("/mnt/data/imagenet")).unwrap();
        assert_eq!(
            (m.fs_type.as_str(), m.source.as_str()),
            ("nfs4", "fs-1.example:/export")
        );
        assert!(is_network(&m.fs_type));
        let m = mount_of(MOUNTINFO, Path::new("/mnt/data/local/x")).unwrap();
        assert_eq!(m.fs_type, "xfs");
        assert!(!is_network(&m.fs_type));
        let m = mount_of(MOUNTINFO, Path::new("/mnt/my data/x")).unwrap();
        assert_eq!(m.fs_type, "fuse.s3fs");
        assert!(is_network(&m.fs_type));
        assert_eq!(
            mount_of(MOUNTINFO, Path::new("/home")).unwrap().fs_type,
            "ext4"
        );
        // `/mnt/database` is not under `/mnt/data`.
        assert_eq!(
            mount_of(MOUNTINFO, Path::new("/mnt/database"))
                .unwrap()
                .fs_type,
            "ext4"
        );
        assert_eq!(mount_of("garbage\n", Path::new("/")), None);
    }
}
