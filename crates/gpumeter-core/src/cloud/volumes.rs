//! The attached disks that keep billing while the instance is stopped, from sysfs (no
//! network): each `/sys/block/<dev>` whose `device/model` names a cloud's network volume, with
//! its size (`size`, in 512-byte sectors whatever the disk's own block size). The directory is a
//! parameter so tests read fixture trees.
//!
//! What each provider's disks call themselves (the model string their virtual hardware gives):
//! - AWS: EBS volumes "Amazon Elastic Block Store" (they bill when stopped); the instance store
//!   "Amazon EC2 NVMe Instance Storage" (gone when stopped, no bill).
//! - GCP: persistent disks "PersistentDisk" (SCSI) or "nvme_card-pd" (NVMe); local SSDs
//!   ("EphemeralDisk", "nvme_card") do not bill on.
//! - Azure: managed disks "Virtual Disk" (Hyper-V SCSI), except the temporary resource disk,
//!   which Azure attaches at SCSI target 1 (`1:0:1:0`) and which is not billed; local NVMe
//!   ("Microsoft NVMe Direct Disk") is not billed either.
//!
//! The model does not tell the volume's type (gp2 or gp3, balanced or SSD): the catalog prices
//! each provider's default and says which.

use std::path::Path;

use super::Provider;

/// Where Linux lists the block devices.
pub const BLOCK_ROOT: &str = "/sys/block";

/// Bytes in the GiB the clouds bill storage by (their "GB-month" is a GiB-month).
const GIB: u64 = 1 << 30;

/// A network volume attached to this machine, which bills while the instance is stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Volume {
    /// `nvme1n1`, `sda`.
    pub device: String,
    /// The cloud the volume belongs to (by its model string).
    pub provider: Provider,
    /// Its size in bytes (`/sys/block/<dev>/size` × 512).
    pub bytes: u64,
}

impl Volume {
    /// Whole GiB, as the volume was bought (rounded, never below 1).
    pub fn gb(&self) -> u64 {
        (self.bytes.saturating_add(GIB / 2) / GIB).max(1)
    }
}

/// What the model string says of a disk: whose volume it is, or `None` (not billed while
/// stopped, or not a cloud's).
fn persistent(model: &str, scsi_target: Option<&str>) -> Option<Provider> {
    match model {
        "Amazon Elastic Block Store" => Some(Provider::Aws),
        "PersistentDisk" | "nvme_card-pd" => Some(Provider::Gcp),
        // Azure's temporary disk has the same model; its place on the bus tells it apart.
        "Virtual Disk" if scsi_target != Some("1") => Some(Provider::Azure),
        _ => None,
    }
}

/// The volumes under `root` (a `/sys/block`) that bill while stopped, by device name. A
/// missing or unreadable tree is none, never an error.
pub fn scan(root: &Path) -> Vec<Volume> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut out: Vec<Volume> = entries
        .flatten()
        .filter_map(|e| {
            let device = e.file_name().to_string_lossy().into_owned();
            let dir = e.path();
            let model = std::fs::read_to_string(dir.join("device/model")).ok()?;
            // `device` links to the SCSI address `host:channel:target:lun` on Hyper-V.
            let address = std::fs::read_link(dir.join("device"))
                .ok()
                .and_then(|l| l.file_name().map(|n| n.to_string_lossy().into_owned()));
            let target = address.as_deref().and_then(|a| a.split(':').nth(2));
            let provider = persistent(model.trim(), target)?;
            let sectors: u64 = std::fs::read_to_string(dir.join("size"))
                .ok()?
                .trim()
                .parse()
                .ok()?;
            let bytes = sectors.checked_mul(512)?;
            (bytes > 0).then_some(Volume {
                device,
                provider,
                bytes,
            })
        })
        .collect();
    out.sort_by(|a, b| a.device.cmp(&b.device));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `/sys/block` with one disk per `(device, model, GiB, SCSI address)`.
    fn tree(disks: &[(&str, &str, u64, Option<&str>)]) -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        for (dev, model, gib, address) in disks {
            let dir = root.path().join(dev);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("size"), format!("{}\n", gib * GIB / 512)).unwrap();
            // As the kernel does: the device is a link to its bus address (NVMe: its
            // controller), which holds the model, padded.
            let bus = root.path().join("bus").join(address.unwrap_or(dev));
            std::fs::create_dir_all(&bus).unwrap();
            std::fs::write(bus.join("model"), format!("{model:<40}\n")).unwrap();
            std::os::unix::fs::symlink(&bus, dir.join("device")).unwrap();
        }
        root
    }

    #[test]
    fn ebs_volumes_are_found_with_their_sizes_and_the_instance_store_is_not() {
        let t = tree(&[
            ("nvme0n1", "Amazon Elastic Block Store", 100, None),
            ("nvme1n1", "Amazon Elastic Block Store", 1000, None),
            ("nvme2n1", "Amazon EC2 NVMe Instance Storage", 3800, None),
            ("loop0", "", 1, None),
        ]);
        let v = scan(t.path());
        let got: Vec<_> = v.iter().map(|v| (v.device.as_str(), v.gb())).collect();
        assert_eq!(got, vec![("nvme0n1", 100), ("nvme1n1", 1000)]);
        assert!(v.iter().all(|v| v.provider == Provider::Aws));
    }

    #[test]
    fn gcp_persistent_disks_count_and_local_ssds_do_not() {
        let t = tree(&[
            ("sda", "PersistentDisk", 200, None),
            ("nvme0n1", "nvme_card-pd", 500, None),
            ("nvme1n1", "nvme_card", 375, None),
            ("sdb", "EphemeralDisk", 375, None),
        ]);
        let got: Vec<_> = scan(t.path())
            .into_iter()
            .map(|v| (v.gb(), v.device, v.provider))
            .collect();
        assert_eq!(
            got,
            vec![
                (500, "nvme0n1".to_string(), Provider::Gcp),
                (200, "sda".to_string(), Provider::Gcp)
            ]
        );
    }

    #[test]
    fn azure_managed_disks_count_and_the_temporary_disk_at_target_1_does_not() {
        let t = tree(&[
            ("sda", "Virtual Disk", 30, Some("0:0:0:0")),
            ("sdb", "Virtual Disk", 2900, Some("1:0:1:0")),
            ("sdc", "Virtual Disk", 1024, Some("3:0:0:0")),
            ("nvme0n1", "Microsoft NVMe Direct Disk", 3500, None),
        ]);
        let got: Vec<_> = scan(t.path())
            .into_iter()
            .map(|v| (v.gb(), v.device))
            .collect();
        assert_eq!(
            got,
            vec![(30, "sda".to_string()), (1024, "sdc".to_string())]
        );
    }

    #[test]
    fn a_missing_tree_or_a_broken_size_is_no_volume() {
        assert!(scan(Path::new("/nonexistent/sys/block")).is_empty());
        let t = tree(&[("nvme0n1", "Amazon Elastic Block Store", 100, None)]);
        std::fs::write(t.path().join("nvme0n1/size"), "lots\n").unwrap();
        assert!(scan(t.path()).is_empty());
    }
}
