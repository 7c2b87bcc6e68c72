//! Disk and network throughput from `<proc>/diskstats` and `<proc>/net/dev`, as bytes per
//! second over the interval between two samples.
//!
//! What is counted, so that one byte is counted once:
//! - disks: whole physical disks only. With sysfs beside the proc root, a disk counts when
//!   `sys/block/<name>/device` exists (partitions are not in `sys/block`; loop, ram, zram, dm-
//!   and md devices have no `device`: they are layers over the physical disks). Without sysfs,
//!   names decide (see [`is_whole_disk_by_name`]).
//! - network: non-loopback interfaces; of those, only physical NICs (`sys/class/net/<if>/device`)
//!   when there are any, because container traffic crosses a veth and a bridge before the NIC
//!   and would otherwise be counted three times. A container's own network namespace has no
//!   physical NIC: then every non-loopback interface counts.

use std::collections::HashMap;
use std::path::PathBuf;

use procfs::DiskStats;
use procfs::net::InterfaceDeviceStatus;
use procfs::prelude::*;

use super::kept::KeptFile;
use super::{Roots, Warnings};

/// Bytes per sector in /proc/diskstats, whatever the device's real sector size.
const SECTOR_BYTES: u64 = 512;

/// Throughput over the last interval.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct IoRates {
    pub(super) disk_read_bytes_per_s: Option<f64>,
    pub(super) disk_write_bytes_per_s: Option<f64>,
    pub(super) net_rx_bytes_per_s: Option<f64>,
    pub(super) net_tx_bytes_per_s: Option<f64>,
    /// Busy time of the busiest whole disk (io_ticks), percent of the interval…
    pub(super) disk_busy_pct: Option<f64>,
    /// …and its mean requests in flight (weighted I/O ms / interval ms, iostat's aqu-sz).
    pub(super) disk_queue_depth: Option<f64>,
}

/// Per-device byte counters (in, out) at one instant.
type Counters = HashMap<String, (u64, u64)>;
/// Per-disk milliseconds busy (io_ticks) and weighted by requests in flight, at one instant.
type Ticks = HashMap<String, (u64, u64)>;

/// Remembers the previous counters of one file.
#[derive(Debug, Default)]
struct CounterRates {
    prev: Option<(i64, Counters)>,
}

impl CounterRates {
    /// Rates of the summed per-device deltas since the previous call. Devices that appeared
    /// or whose counters went backwards (reset, wrap) add nothing this time.
    fn update(&mut self, now_ms: i64, cur: Option<Counters>) -> (Option<f64>, Option<f64>) {
        let Some(cur) = cur else {
            self.prev = None;
            return (None, None);
        };
        let rates = match &self.prev {
            Some((prev_ms, prev)) if now_ms > *prev_ms => {
                let secs = (now_ms - prev_ms) as f64 / 1000.0;
                let (mut a, mut b) = (0u64, 0u64);
                for (name, (cur_a, cur_b)) in &cur {
                    if let Some((prev_a, prev_b)) = prev.get(name)
                        && cur_a >= prev_a
                        && cur_b >= prev_b
                    {
                        a = a.saturating_add(cur_a - prev_a);
                        b = b.saturating_add(cur_b - prev_b);
                    }
                }
                (Some(a as f64 / secs), Some(b as f64 / secs))
            }
            _ => (None, None),
        };
        self.prev = Some((now_ms, cur));
        rates
    }
}

/// Disk and network trackers.
#[derive(Debug)]
pub(super) struct IoTracker {
    sys: PathBuf,
    /// `<proc>/diskstats` and `<proc>/net/dev`, kept open, and the buffer they are read into.
    diskstats: KeptFile,
    net_dev: KeptFile,
    buf: Vec<u8>,
    /// Whether `sys/block` and `sys/class/net` exist: decided once.
    sys_block: bool,
    sys_net: bool,
    disks: CounterRates,
    net: CounterRates,
    /// Whether a block device is a whole physical disk: decided once per name.
    whole_disk: HashMap<String, bool>,
    /// Whether an interface is a physical NIC (sysfs `device`): decided once per name.
    physical_nic: HashMap<String, bool>,
    /// Each whole disk's [`Ticks`] at the previous sample.
    busy_prev: Option<(i64, Ticks)>,
}

impl IoTracker {
    pub(super) fn new(roots: &Roots) -> Self {
        Self {
            sys: roots.sys.clone(),
            diskstats: KeptFile::records(roots.proc.join("diskstats")),
            net_dev: KeptFile::records(roots.proc.join("net/dev")),
            buf: Vec::with_capacity(4096),
            sys_block: roots.sys.join("block").is_dir(),
            sys_net: roots.sys.join("class/net").is_dir(),
            disks: CounterRates::default(),
            net: CounterRates::default(),
            whole_disk: HashMap::new(),
            physical_nic: HashMap::new(),
            busy_prev: None,
        }
    }

    pub(super) fn update(&mut self, now_ms: i64, warnings: &mut Warnings) -> IoRates {
        let mut busy = None;
        let read = self.diskstats.read_into(&mut self.buf);
        let disks = match read
            .map_err(procfs::ProcError::from)
            .and_then(|()| DiskStats::from_read(self.buf.as_slice()))
        {
            Ok(stats) => {
                let (counters, ticks) = self.disk_counters(stats);
                busy = Some(ticks);
                Some(counters)
            }
            Err(e) => {
                warnings.push(format!("cannot read disk statistics: {e}"));
                None
            }
        };
        let read = self.net_dev.read_into(&mut self.buf);
        let net = match read
            .map_err(procfs::ProcError::from)
            .and_then(|()| InterfaceDeviceStatus::from_read(self.buf.as_slice()))
        {
            Ok(status) => Some(self.net_counters(status)),
            Err(e) => {
                warnings.push(format!("cannot read network statistics: {e}"));
                None
            }
        };
        let (disk_read, disk_write) = self.disks.update(now_ms, disks);
        let (disk_busy_pct, disk_queue_depth) = self
            .busy_pct(now_ms, busy)
            .map_or((None, None), |(b, q)| (Some(b), Some(q)));
        let (rx, tx) = self.net.update(now_ms, net);
        IoRates {
            disk_read_bytes_per_s: disk_read,
            disk_write_bytes_per_s: disk_write,
            net_rx_bytes_per_s: rx,
            net_tx_bytes_per_s: tx,
            disk_busy_pct,
            disk_queue_depth,
        }
    }

    /// The busiest disk's share of the interval with I/O in flight, and its mean requests in
    /// flight: near 100 % busy a disk that serves one request at a time is saturated; NVMe and
    /// RAID serve many at once, so only a queue well above one says that requests wait.
    fn busy_pct(&mut self, now_ms: i64, cur: Option<Ticks>) -> Option<(f64, f64)> {
        let prev = std::mem::replace(&mut self.busy_prev, cur.clone().map(|c| (now_ms, c)));
        let (prev_ms, prev) = prev?;
        let cur = cur?;
        if now_ms <= prev_ms {
            return None;
        }
        busiest_disk(&prev, &cur, (now_ms - prev_ms) as f64)
    }

    fn disk_counters(&mut self, stats: DiskStats) -> (Counters, Ticks) {
        let mut busy = HashMap::new();
        let sys_block = self.sys.join("block");
        let has_sysfs = self.sys_block;
        let mut counters = Counters::new();
        for d in stats.0 {
            let whole = *self.whole_disk.entry(d.name.clone()).or_insert_with(|| {
                if has_sysfs {
                    // sysfs spells a `/` in a device name (cciss/c0d0) as `!`.
                    sys_block
                        .join(d.name.replace('/', "!"))
                        .join("device")
                        .exists()
                } else {
                    is_whole_disk_by_name(&d.name)
                }
            });
            if whole {
                let read = d.sectors_read.saturating_mul(SECTOR_BYTES);
                let written = d.sectors_written.saturating_mul(SECTOR_BYTES);
                busy.insert(
                    d.name.clone(),
                    (d.time_in_progress, d.weighted_time_in_progress),
                );
                counters.insert(d.name, (read, written));
            }
        }
        (counters, busy)
    }
}

/// Busy percent and mean queue of the busiest disk between two [`Ticks`] `dt_ms` apart (disks
/// new since, or whose counters went back, count nothing).
fn busiest_disk(prev: &Ticks, cur: &Ticks, dt_ms: f64) -> Option<(f64, f64)> {
    cur.iter()
        .filter_map(|(name, &(ticks, weighted))| {
            let (t0, w0) = *prev.get(name)?;
            (ticks >= t0 && weighted >= w0).then(|| {
                (
                    ((ticks - t0) as f64 / dt_ms * 100.0).min(100.0),
                    (weighted - w0) as f64 / dt_ms,
                )
            })
        })
        .reduce(|a, b| if b > a { b } else { a })
}

impl IoTracker {
    fn net_counters(&mut self, status: InterfaceDeviceStatus) -> Counters {
        let class_net = self.sys.join("class/net");
        let has_sysfs = self.sys_net;
        let all: Counters = status
            .0
            .into_values()
            .filter(|d| d.name != "lo")
            .map(|d| (d.name, (d.recv_bytes, d.sent_bytes)))
            .collect();
        let physical: Counters = all
            .iter()
            .filter(|(name, _)| {
                *self.physical_nic.entry((*name).clone()).or_insert_with(|| {
                    if has_sysfs {
                        class_net.join(name).join("device").exists()
                    } else {
                        !is_virtual_nic_name(name)
                    }
                })
            })
            .map(|(n, c)| (n.clone(), *c))
            .collect();
        // Interfaces come and go (a veth per container): forget the ones gone.
        if self.physical_nic.len() > all.len() {
            self.physical_nic.retain(|n, _| all.contains_key(n));
        }
        if physical.is_empty() { all } else { physical }
    }
}

/// Without sysfs: is this /proc/diskstats name a whole disk (not a partition, not a virtual
/// layer over other disks)?
pub(super) fn is_whole_disk_by_name(name: &str) -> bool {
    const VIRTUAL: [&str; 8] = ["loop", "ram", "zram", "dm-", "md", "sr", "fd", "nbd"];
    if VIRTUAL.iter().any(|p| name.starts_with(p)) {
        return false;
    }
    let ends_in_digit = name.ends_with(|c: char| c.is_ascii_digit());
    // sda1, vdb2, xvda1, hdc3: letters name the disk, a trailing number the partition.
    if ["sd", "hd", "vd", "xvd"]
        .iter()
        .any(|p| name.starts_with(p))
    {
        return !ends_in_digit;
    }
    // nvme0n1p2, mmcblk0p1: `p<N>` after a digit is a partition.
    if let Some(i) = name.rfind('p') {
        let (head, tail) = (&name[..i], &name[i + 1..]);
        if head.ends_with(|c: char| c.is_ascii_digit())
            && !tail.is_empty()
            && tail.chars().all(|c| c.is_ascii_digit())
        {
            return false;
        }
    }
    true
}

/// Without sysfs: interface names that are software layers (bridges, veths, tunnels).
fn is_virtual_nic_name(name: &str) -> bool {
    const VIRTUAL: [&str; 14] = [
        "veth", "docker", "br-", "virbr", "cni", "flannel", "cali", "vxlan", "tun", "tap", "lxc",
        "kube-", "cilium", "podman",
    ];
    VIRTUAL.iter().any(|p| name.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counters(items: &[(&str, u64, u64)]) -> Option<Counters> {
        Some(
            items
                .iter()
                .map(|(n, a, b)| (n.to_string(), (*a, *b)))
                .collect(),
        )
    }

    #[test]
    fn first_sample_has_no_rate_then_deltas_over_wall_time() {
        let mut r = CounterRates::default();
        assert_eq!(r.update(1_000, counters(&[("a", 0, 0)])), (None, None));
        let rates = r.update(3_000, counters(&[("a", 2_000, 4_000)]));
        assert_eq!(rates, (Some(1_000.0), Some(2_000.0)));
    }

    #[test]
    fn reset_or_new_devices_add_nothing() {
        let mut r = CounterRates::default();
        r.update(0, counters(&[("a", 500, 500), ("b", 10, 10)]));
        let rates = r.update(
            1_000,
            counters(&[("a", 100, 100), ("b", 20, 30), ("c", 9, 9)]),
        );
        assert_eq!(rates, (Some(10.0), Some(20.0)));
    }

    #[test]
    fn same_timestamp_gives_no_rate_and_unreadable_forgets() {
        let mut r = CounterRates::default();
        r.update(5, counters(&[("a", 0, 0)]));
        assert_eq!(r.update(5, counters(&[("a", 9, 9)])), (None, None));
        assert_eq!(r.update(6, None), (None, None));
        assert_eq!(r.update(7, counters(&[("a", 9, 9)])), (None, None));
    }

    #[test]
    fn the_busiest_disk_gives_busy_time_and_queue_depth() {
        let ticks = |v: &[(&str, u64, u64)]| -> Ticks {
            v.iter()
                .map(|(n, t, w)| (n.to_string(), (*t, *w)))
                .collect()
        };
        let prev = ticks(&[("sda", 1_000, 5_000), ("nvme0n1", 0, 0), ("sdb", 900, 900)]);
        // Over 1 s: sda busy 400 ms with 1.2 requests in flight on average; nvme0n1 busy the
        // whole second with 6 in flight; sdb's counters went back (reset): nothing.
        let cur = ticks(&[
            ("sda", 1_400, 6_200),
            ("nvme0n1", 1_000, 6_000),
            ("sdb", 10, 10),
            ("sdc", 99, 99),
        ]);
        assert_eq!(busiest_disk(&prev, &cur, 1_000.0), Some((100.0, 6.0)));
        let only_sda = ticks(&[("sda", 1_400, 6_200)]);
        assert_eq!(busiest_disk(&prev, &only_sda, 1_000.0), Some((40.0, 1.2)));
        assert_eq!(busiest_disk(&prev, &ticks(&[("sdz", 1, 1)]), 1_000.0), None);
    }

    #[test]
    fn disk_names_without_sysfs() {
        for whole in ["sda", "vdb", "xvda", "nvme0n1", "mmcblk0", "sdaa", "hdc"] {
            assert!(is_whole_disk_by_name(whole), "{whole} is a disk");
        }
        for part in [
            "sda1",
            "vdb12",
            "xvda1",
            "nvme0n1p2",
            "mmcblk0p1",
            "loop0",
            "ram1",
            "zram0",
            "dm-0",
            "md127",
            "sr0",
            "nbd3",
        ] {
            assert!(!is_whole_disk_by_name(part), "{part} is not a whole disk");
        }
    }

    #[test]
    fn virtual_nic_names() {
        assert!(is_virtual_nic_name("veth1a2b"));
        assert!(is_virtual_nic_name("docker0"));
        assert!(is_virtual_nic_name("br-5f3e"));
        assert!(!is_virtual_nic_name("eth0"));
        assert!(!is_virtual_nic_name("ens5"));
        assert!(!is_virtual_nic_name("enp65s0f0"));
    }
}
