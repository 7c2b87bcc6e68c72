//! Where a sample's per-device counters come from between listings. `<proc>/diskstats` and
//! `<proc>/net/dev` list every block device and interface (loop devices, partitions,
//! device-mapper layers; a veth per container on a busy host: hundreds of lines, each
//! formatted by the kernel on every read), though only some count (whole physical disks;
//! physical NICs: see `io`). So a listing is read every [`LIST_MS`] to learn which devices
//! count, and in between each of them is read from its own sysfs files (the same counters,
//! kept open: one `pread` each): `<sys>/block/<name>/stat`,
//! `<sys>/class/net/<name>/statistics/{rx,tx}_bytes`. A device file that cannot be read (the
//! device went away, or the sysfs has no such file) means the listing at once; without sysfs
//! every sample reads the listing.
//!
//! Touches only those files; the caller keeps the counters.

use std::path::PathBuf;

use super::kept::KeptFile;

/// Longest time between two readings of a listing (a device added shows within it).
pub(super) const LIST_MS: i64 = 60_000;

/// Most files of one device (any more given are not read).
const MAX_FILES: usize = 2;

/// The counted devices of the last listing, each with its files.
#[derive(Debug)]
pub(super) struct DeviceFiles {
    /// The sysfs directory of the devices, when there is one.
    dir: Option<PathBuf>,
    /// Each device's files, below its directory (at most [`MAX_FILES`]).
    files: &'static [&'static str],
    devices: Vec<(String, Vec<KeptFile>)>,
    /// When the listing was last read.
    listed_ms: Option<i64>,
    /// One buffer per file of a device.
    bufs: Vec<Vec<u8>>,
}

impl DeviceFiles {
    pub(super) fn new(dir: Option<PathBuf>, files: &'static [&'static str]) -> Self {
        Self {
            dir,
            files: &files[..files.len().min(MAX_FILES)],
            devices: Vec::new(),
            listed_ms: None,
            bufs: files
                .iter()
                .take(MAX_FILES)
                .map(|_| Vec::with_capacity(256))
                .collect(),
        }
    }

    /// Whether this sample reads the listing: no sysfs, none read yet, [`LIST_MS`] passed or
    /// the clock stepped back.
    pub(super) fn listing_due(&self, now_ms: i64) -> bool {
        self.dir.is_none()
            || self
                .listed_ms
                .is_none_or(|at| now_ms < at || now_ms - at >= LIST_MS)
    }

    /// The listing was read at `now_ms` and these devices count.
    pub(super) fn listed<'a>(&mut self, now_ms: i64, counted: impl Iterator<Item = &'a str>) {
        let Some(dir) = &self.dir else {
            return;
        };
        let mut kept = std::mem::take(&mut self.devices);
        for name in counted {
            let files = match kept.iter().position(|(n, _)| n == name) {
                Some(i) => kept.swap_remove(i).1,
                None => {
                    // sysfs spells a `/` in a device name (cciss/c0d0) as `!`.
                    let here = dir.join(name.replace('/', "!"));
                    let open = |f: &&str| KeptFile::new(here.join(f));
                    self.files.iter().map(open).collect()
                }
            };
            self.devices.push((name.to_string(), files));
        }
        self.listed_ms = Some(now_ms);
    }

    /// Each device of the last listing with the texts of its files, in the order given to
    /// [`DeviceFiles::new`], to `each` (which says whether they read as counters); `false`,
    /// and the listing due at once, when one cannot be read.
    pub(super) fn read(&mut self, mut each: impl FnMut(&str, &[&str]) -> bool) -> bool {
        for (name, files) in &mut self.devices {
            let read = files
                .iter_mut()
                .zip(self.bufs.iter_mut())
                .all(|(file, buf)| file.read_into(buf).is_ok());
            let mut texts = [""; MAX_FILES];
            for (text, buf) in texts.iter_mut().zip(&self.bufs) {
                *text = std::str::from_utf8(buf).unwrap_or("");
            }
            if !read || !each(name, &texts[..self.bufs.len()]) {
                self.listed_ms = None;
                return false;
            }
        }
        true
    }
}
