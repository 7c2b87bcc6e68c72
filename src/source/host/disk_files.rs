//! Where a sample's whole-disk counters come from. `<proc>/diskstats` lists every block device
//! (loop devices, partitions, device-mapper layers: a dozen lines to hundreds, each formatted
//! by the kernel on every read), though only the whole physical disks count (see `io`). So the
//! listing is read every [`LIST_MS`] to learn which disks those are, and in between each of
//! them is read from its own `<sys>/block/<name>/stat` (the same counters, kept open: one
//! `pread` each). A disk's file that cannot be read (the disk was removed, or the sysfs has no
//! such file) means the listing at once; without sysfs every sample reads the listing.
//!
//! Touches only those files; the caller keeps the counters.

use std::path::PathBuf;

use super::kept::KeptFile;

/// Longest time between two readings of the listing (a disk plugged in shows within it).
pub(super) const LIST_MS: i64 = 60_000;

/// The counters of one disk used here (`/proc/diskstats` fields 6, 10, 13 and 14).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct DiskCounters {
    pub(super) sectors_read: u64,
    pub(super) sectors_written: u64,
    /// ms with I/O in flight (io_ticks).
    pub(super) time_in_progress: u64,
    /// ms × requests in flight.
    pub(super) weighted_time: u64,
}

/// The eleven counters every kernel gives (later ones add discard and flush counters); `None`
/// when one is missing or not a number.
pub(super) fn parse_counters<'a>(mut f: impl Iterator<Item = &'a str>) -> Option<DiskCounters> {
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

/// The whole disks of the last listing, each with its `stat` file.
#[derive(Debug)]
pub(super) struct DiskFiles {
    /// `<sys>/block`, when there is one.
    block: Option<PathBuf>,
    disks: Vec<(String, KeptFile)>,
    /// When the listing was last read.
    listed_ms: Option<i64>,
    buf: Vec<u8>,
}

impl DiskFiles {
    pub(super) fn new(block: Option<PathBuf>) -> Self {
        Self {
            block,
            disks: Vec::new(),
            listed_ms: None,
            buf: Vec::with_capacity(256),
        }
    }

    /// Whether this sample reads the listing: no sysfs, none read yet, [`LIST_MS`] passed or
    /// the clock stepped back.
    pub(super) fn listing_due(&self, now_ms: i64) -> bool {
        self.block.is_none()
            || self
                .listed_ms
                .is_none_or(|at| now_ms < at || now_ms - at >= LIST_MS)
    }

    /// The listing was read at `now_ms` and gave these whole disks.
    pub(super) fn listed<'a>(&mut self, now_ms: i64, whole: impl Iterator<Item = &'a str>) {
        let Some(block) = &self.block else {
            return;
        };
        let mut kept = std::mem::take(&mut self.disks);
        for name in whole {
            let at = kept.iter().position(|(n, _)| n == name);
            let file = match at {
                Some(i) => kept.swap_remove(i).1,
                // sysfs spells a `/` in a device name (cciss/c0d0) as `!`.
                None => KeptFile::new(block.join(name.replace('/', "!")).join("stat")),
            };
            self.disks.push((name.to_string(), file));
        }
        self.listed_ms = Some(now_ms);
    }

    /// Each disk of the last listing with its counters from its own file; `false` (and the
    /// listing due at once) when one cannot be read.
    pub(super) fn read(&mut self, mut each: impl FnMut(&str, DiskCounters)) -> bool {
        for (name, file) in &mut self.disks {
            let read = file.read_into(&mut self.buf).ok().and_then(|()| {
                let text = std::str::from_utf8(&self.buf).ok()?;
                parse_counters(text.split_ascii_whitespace())
            });
            let Some(counters) = read else {
                self.listed_ms = None;
                return false;
            };
            each(name, counters);
        }
        true
    }
}
