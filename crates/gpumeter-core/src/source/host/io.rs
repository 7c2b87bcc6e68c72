//! Disk and network throughput from `<proc>/diskstats` and `<proc>/net/dev`, as bytes per
//! second over the interval between two samples. Between two readings of `diskstats` (every
//! minute) the devices counted are read from their own sysfs files (`device_files`).
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

use super::device_files::DeviceFiles;
use super::kept::KeptFile;
use super::nic::{self, LinkSpeeds};
use super::per_device::PerDevice;
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
    /// The counted interface nearest its link speed: that speed (bytes/s) and the shares of it
    /// received and sent over the interval (see `nic`).
    pub(super) nic_busiest: Option<(f64, f64, Option<f64>)>,
}

/// Disk and network trackers.
#[derive(Debug)]
pub(super) struct IoTracker {
    sys: PathBuf,
    /// `<proc>/diskstats` and `<proc>/net/dev`, kept open, and the buffer they are read into.
    diskstats: KeptFile,
    /// The whole disks' and the counted interfaces' own files, read between listings (see
    /// `device_files`).
    disk_files: DeviceFiles,
    nic_files: DeviceFiles,
    net_dev: KeptFile,
    buf: Vec<u8>,
    /// Whether `sys/block` and `sys/class/net` exist: decided once.
    sys_block: bool,
    sys_net: bool,
    /// Whole disks' sectors read and written.
    disks: PerDevice,
    /// Whole disks' ms busy and weighted ms.
    busy: PerDevice,
    /// The chosen interfaces' bytes received and sent.
    net: PerDevice,
    /// Their link speeds.
    speeds: LinkSpeeds,
    /// Whether a block device is a whole physical disk: decided once per name.
    whole_disk: HashMap<String, bool>,
    /// Whether an interface is a physical NIC (sysfs `device`): decided once per name.
    physical_nic: HashMap<String, bool>,
    /// This sample's interfaces: where each name lies in `buf`, and its two counters.
    interfaces: Vec<(std::ops::Range<usize>, u64, u64)>,
}

impl IoTracker {
    pub(super) fn new(roots: &Roots) -> Self {
        Self {
            sys: roots.sys.clone(),
            diskstats: KeptFile::records(roots.proc.join("diskstats")),
            disk_files: DeviceFiles::new(
                Some(roots.sys.join("block")).filter(|b| b.is_dir()),
                &["stat"],
            ),
            nic_files: DeviceFiles::new(
                Some(roots.sys.join("class/net")).filter(|b| b.is_dir()),
                &["statistics/rx_bytes", "statistics/tx_bytes"],
            ),
            net_dev: KeptFile::records(roots.proc.join("net/dev")),
            buf: Vec::with_capacity(4096),
            sys_block: roots.sys.join("block").is_dir(),
            sys_net: roots.sys.join("class/net").is_dir(),
            disks: PerDevice::default(),
            busy: PerDevice::default(),
            net: PerDevice::default(),
            speeds: LinkSpeeds::new(&roots.sys),
            whole_disk: HashMap::new(),
            physical_nic: HashMap::new(),
            interfaces: Vec::new(),
        }
    }

    pub(super) fn update(&mut self, now_ms: i64, warnings: &mut Warnings) -> IoRates {
        let (disk_read, disk_write, busiest) = match self.read_disks(now_ms) {
            Ok(()) => {
                let dt = self.disks.finish(now_ms);
                let busy_dt = self.busy.finish(now_ms);
                let (r, w) = self.disks.sum_rates(dt);
                (r, w, self.busy.busiest(busy_dt))
            }
            Err(e) => {
                warnings.push(format!("cannot read disk statistics: {e}"));
                self.disks.forget();
                self.busy.forget();
                (None, None, None)
            }
        };
        let (rx, tx, nic_busiest) = match self.read_net(now_ms) {
            Ok(()) => {
                let dt = self.net.finish(now_ms);
                let (rx, tx) = self.net.sum_rates(dt);
                let net = &self.net;
                self.speeds.retain(|n| net.devices.contains_key(n));
                let busiest = dt.and_then(|dt| nic::busiest(&mut self.speeds, net.rates(dt)));
                (rx, tx, busiest)
            }
            Err(e) => {
                warnings.push(format!("cannot read network statistics: {e}"));
                self.net.forget();
                (None, None, None)
            }
        };
        IoRates {
            disk_read_bytes_per_s: disk_read,
            disk_write_bytes_per_s: disk_write,
            net_rx_bytes_per_s: rx,
            net_tx_bytes_per_s: tx,
            disk_busy_pct: busiest.map(|(b, _)| b),
            disk_queue_depth: busiest.map(|(_, q)| q),
            nic_busiest,
        }
    }

    /// This sample's whole disks, into `disks` and `busy`: from their own files between
    /// listings, else from `/proc/diskstats` (see `disk_files`).
    fn read_disks(&mut self, now_ms: i64) -> Result<(), String> {
        self.disks.begin();
        self.busy.begin();
        if !self.disk_files.listing_due(now_ms) {
            let (disks, busy) = (&mut self.disks, &mut self.busy);
            let own = |name: &str, texts: &[&str]| {
                let counters = texts
                    .first()
                    .and_then(|t| parse_counters(t.split_ascii_whitespace()));
                counters
                    .inspect(|&c| add_disk(disks, busy, name, c))
                    .is_some()
            };
            if self.disk_files.read(own) {
                return Ok(());
            }
            // One was not read: the listing, now (a disk added twice counts its last read).
        }
        self.diskstats
            .read_into(&mut self.buf)
            .map_err(|e| e.to_string())?;
        let text = std::str::from_utf8(&self.buf).map_err(|e| e.to_string())?;
        let sys_block = self.sys_block.then(|| self.sys.join("block"));
        let mut listed = Vec::new();
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let d = parse_diskstats_line(line)
                .ok_or_else(|| format!("line {} is not a diskstats line", n + 1))?;
            let whole = match self.whole_disk.get(d.name) {
                Some(&whole) => whole,
                None => {
                    let whole = match &sys_block {
                        // sysfs spells a `/` in a device name (cciss/c0d0) as `!`.
                        Some(dir) => dir.join(d.name.replace('/', "!")).join("device").exists(),
                        None => is_whole_disk_by_name(d.name),
                    };
                    self.whole_disk.insert(d.name.to_string(), whole);
                    whole
                }
            };
            if whole {
                add_disk(&mut self.disks, &mut self.busy, d.name, d.counters);
                listed.push(d.name);
            }
        }
        self.disk_files.listed(now_ms, listed.into_iter());
        Ok(())
    }

    /// This sample's interfaces (not `lo`; the physical NICs only when there are any), into
    /// `net`: from their own files between listings, else from `/proc/net/dev`.
    fn read_net(&mut self, now_ms: i64) -> Result<(), String> {
        self.net.begin();
        if !self.nic_files.listing_due(now_ms) {
            let net = &mut self.net;
            let own = |name: &str, texts: &[&str]| {
                let count = |i: usize| texts.get(i).and_then(|t| t.trim().parse::<u64>().ok());
                let read = count(0).zip(count(1));
                read.inspect(|&bytes| net.add(name, bytes)).is_some()
            };
            if self.nic_files.read(own) {
                return Ok(());
            }
        }
        self.net_dev
            .read_into(&mut self.buf)
            .map_err(|e| e.to_string())?;
        let text = std::str::from_utf8(&self.buf).map_err(|e| e.to_string())?;
        self.interfaces.clear();
        // The first two lines are headers.
        let mut at = 0;
        for (n, line) in text.split_inclusive('\n').enumerate() {
            let start = at;
            at += line.len();
            if n < 2 || line.trim().is_empty() {
                continue;
            }
            let (name, rx, tx) = parse_net_dev_line(line)
                .ok_or_else(|| format!("line {} is not a net/dev line", n + 1))?;
            if name.1 > name.0 && &line[name.0..name.1] != "lo" {
                self.interfaces
                    .push((start + name.0..start + name.1, rx, tx));
            }
        }
        let class_net = self.sys_net.then(|| self.sys.join("class/net"));
        let mut any_physical = false;
        for (range, _, _) in &self.interfaces {
            let name = &text[range.clone()];
            let physical = match self.physical_nic.get(name) {
                Some(&p) => p,
                None => {
                    let p = match &class_net {
                        Some(dir) => dir.join(name).join("device").exists(),
                        None => !is_virtual_nic_name(name),
                    };
                    self.physical_nic.insert(name.to_string(), p);
                    p
                }
            };
            any_physical |= physical;
        }
        // Interfaces come and go (a veth per container): forget the ones gone.
        if self.physical_nic.len() > self.interfaces.len() {
            let listed = &self.interfaces;
            self.physical_nic
                .retain(|n, _| listed.iter().any(|(r, _, _)| &text[r.clone()] == n));
        }
        let mut counted = Vec::new();
        for (range, rx, tx) in &self.interfaces {
            let name = &text[range.clone()];
            if !any_physical || self.physical_nic.get(name).copied().unwrap_or(false) {
                self.net.add(name, (*rx, *tx));
                counted.push(name);
            }
        }
        self.nic_files.listed(now_ms, counted.into_iter());
        Ok(())
    }
}

/// The counters of one disk used here (`/proc/diskstats` fields 6, 10, 13 and 14; the same
/// in sysfs's `block/<name>/stat`, without the first three).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct DiskCounters {
    sectors_read: u64,
    sectors_written: u64,
    /// ms with I/O in flight (io_ticks).
    time_in_progress: u64,
    /// ms × requests in flight.
    weighted_time: u64,
}

/// The eleven counters every kernel gives (later ones add discard and flush counters); `None`
/// when one is missing or not a number.
fn parse_counters<'a>(mut f: impl Iterator<Item = &'a str>) -> Option<DiskCounters> {
    let mut n = [0u64; 11];
    for slot in &mut n {
        *slot = f.next()?.parse().ok()?;
    }
    Some(DiskCounters {
        sectors_read: n[2],
        sectors_written: n[6],
        time_in_progress: n[9],
        weighted_time: n[10],
    })
}

/// One whole disk's counters of this sample, into the two trackers.
fn add_disk(disks: &mut PerDevice, busy: &mut PerDevice, name: &str, c: DiskCounters) {
    let read = c.sectors_read.saturating_mul(SECTOR_BYTES);
    let written = c.sectors_written.saturating_mul(SECTOR_BYTES);
    disks.add(name, (read, written));
    busy.add(name, (c.time_in_progress, c.weighted_time));
}

/// The fields of a `/proc/diskstats` line used here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct DiskLine<'a> {
    name: &'a str,
    counters: DiskCounters,
}

/// `major minor name` and at least eleven counters (kernels add discard and flush counters
/// after them); `None` when a field is missing or not a number.
fn parse_diskstats_line(line: &str) -> Option<DiskLine<'_>> {
    let mut f = line.split_ascii_whitespace();
    f.next()?.parse::<i32>().ok()?;
    f.next()?.parse::<i32>().ok()?;
    let name = f.next()?;
    Some(DiskLine {
        name,
        counters: parse_counters(f)?,
    })
}

/// A `/proc/net/dev` line, `  eth0: rx_bytes … (8 receive counters) tx_bytes … (8 send)`:
/// where the name lies in the line, and bytes received and sent. The name ends at the first
/// `:` (a long counter can follow it without a space).
fn parse_net_dev_line(line: &str) -> Option<((usize, usize), u64, u64)> {
    let colon = line.find(':')?;
    let head = &line[..colon];
    let name_start = head.len() - head.trim_start().len();
    let name_end = head.trim_end().len();
    let mut f = line[colon + 1..].split_ascii_whitespace();
    let mut n = [0u64; 16];
    for slot in &mut n {
        *slot = f.next()?.parse().ok()?;
    }
    Some(((name_start, name_end.max(name_start)), n[0], n[8]))
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

    /// One sample of `items` (`None`: unreadable) at `now_ms`: the summed rates.
    fn sample(
        r: &mut PerDevice,
        now_ms: i64,
        items: Option<&[(&str, u64, u64)]>,
    ) -> (Option<f64>, Option<f64>) {
        let Some(items) = items else {
            r.forget();
            return (None, None);
        };
        r.begin();
        for &(name, a, b) in items {
            r.add(name, (a, b));
        }
        let dt = r.finish(now_ms);
        r.sum_rates(dt)
    }

    #[test]
    fn first_sample_has_no_rate_then_deltas_over_wall_time() {
        let mut r = PerDevice::default();
        assert_eq!(sample(&mut r, 1_000, Some(&[("a", 0, 0)])), (None, None));
        let rates = sample(&mut r, 3_000, Some(&[("a", 2_000, 4_000)]));
        assert_eq!(rates, (Some(1_000.0), Some(2_000.0)));
    }

    #[test]
    fn reset_or_new_devices_add_nothing() {
        let mut r = PerDevice::default();
        sample(&mut r, 0, Some(&[("a", 500, 500), ("b", 10, 10)]));
        let rates = sample(
            &mut r,
            1_000,
            Some(&[("a", 100, 100), ("b", 20, 30), ("c", 9, 9)]),
        );
        assert_eq!(rates, (Some(10.0), Some(20.0)));
        // A device gone for a sample is new again when it comes back.
        sample(&mut r, 2_000, Some(&[("a", 100, 100)]));
        let back = sample(&mut r, 3_000, Some(&[("a", 100, 100), ("b", 90, 90)]));
        assert_eq!(back, (Some(0.0), Some(0.0)));
        assert_eq!(r.devices.len(), 2);
    }

    #[test]
    fn a_name_listed_twice_counts_its_last_line() {
        let mut r = PerDevice::default();
        sample(&mut r, 0, Some(&[("a", 10, 10)]));
        let rates = sample(&mut r, 1_000, Some(&[("a", 20, 20), ("a", 50, 60)]));
        assert_eq!(rates, (Some(40.0), Some(50.0)));
    }

    #[test]
    fn same_timestamp_gives_no_rate_and_unreadable_forgets() {
        let mut r = PerDevice::default();
        sample(&mut r, 5, Some(&[("a", 0, 0)]));
        assert_eq!(sample(&mut r, 5, Some(&[("a", 9, 9)])), (None, None));
        assert_eq!(sample(&mut r, 6, None), (None, None));
        assert_eq!(sample(&mut r, 7, Some(&[("a", 9, 9)])), (None, None));
    }

    #[test]
    fn the_busiest_disk_gives_busy_time_and_queue_depth() {
        let busiest = |prev: &[(&str, u64, u64)], cur: &[(&str, u64, u64)]| {
            let mut r = PerDevice::default();
            sample(&mut r, 0, Some(prev));
            sample(&mut r, 1_000, Some(cur));
            r.busiest(Some(1_000.0))
        };
        let prev = [("sda", 1_000, 5_000), ("nvme0n1", 0, 0), ("sdb", 900, 900)];
        // Over 1 s: sda busy 400 ms with 1.2 requests in flight on average; nvme0n1 busy the
        // whole second with 6 in flight; sdb's counters went back (reset): nothing.
        let cur = [
            ("sda", 1_400, 6_200),
            ("nvme0n1", 1_000, 6_000),
            ("sdb", 10, 10),
            ("sdc", 99, 99),
        ];
        assert_eq!(busiest(&prev, &cur), Some((100.0, 6.0)));
        assert_eq!(busiest(&prev, &[("sda", 1_400, 6_200)]), Some((40.0, 1.2)));
        assert_eq!(busiest(&prev, &[("sdz", 1, 1)]), None);
    }

    #[test]
    fn diskstats_and_net_dev_lines_parse_by_hand_as_procfs_does() {
        let disk = "   8       0 sda 19398 5426 1431538 9856 29374 41386 2361336 74712 0 31152 88052 \
                    0 0 0 0 3196 3483";
        let d = parse_diskstats_line(disk).unwrap();
        let p = procfs::DiskStat::from_line(disk).unwrap();
        assert_eq!(d.name, p.name);
        assert_eq!(d.counters.sectors_read, p.sectors_read);
        assert_eq!(d.counters.sectors_written, p.sectors_written);
        assert_eq!(d.counters.time_in_progress, p.time_in_progress);
        assert_eq!(d.counters.weighted_time, p.weighted_time_in_progress);
        // An older kernel's 14 fields, and lines that are not diskstats lines.
        let old = "259 0 nvme0n1 1 2 3 4 5 6 7 8 9 10 11";
        assert_eq!(
            parse_diskstats_line(old).unwrap().counters.weighted_time,
            11
        );
        assert_eq!(parse_diskstats_line("8 0 sda 1 2 3"), None);
        assert_eq!(
            parse_diskstats_line("8 0 sda 1 2 x 4 5 6 7 8 9 10 11"),
            None
        );

        let net = "  eth0: 1234567 8901 0 0 0 0 0 12 7654321 4321 0 0 0 0 0 0\n";
        let ((s, e), rx, tx) = parse_net_dev_line(net).unwrap();
        assert_eq!((&net[s..e], rx, tx), ("eth0", 1_234_567, 7_654_321));
        // A counter wide enough to touch the colon.
        let wide = "enp65s0f0:123456789012 1 0 0 0 0 0 0 98765432101 1 0 0 0 0 0 0";
        let ((s, e), rx, tx) = parse_net_dev_line(wide).unwrap();
        assert_eq!(
            (&wide[s..e], rx, tx),
            ("enp65s0f0", 123_456_789_012, 98_765_432_101)
        );
        assert_eq!(parse_net_dev_line("eth0: 1 2 3"), None);
        assert_eq!(parse_net_dev_line("no colon here"), None);
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
