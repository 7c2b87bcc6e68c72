//! The swap-in rate from `<proc>/vmstat` (`pswpin`: pages read back from swap since boot) over
//! the interval between two samples. A box short of memory pages its workers back in, and every
//! batch then waits on the disk behind the swap; the rate is how that shows. Machine-wide: a
//! container's own cgroup has no such counter.

use std::path::Path;

use super::kept::KeptFile;

/// Reads `pswpin` every tick (the file kept open).
#[derive(Debug)]
pub(super) struct SwapTracker {
    file: KeptFile,
    buf: Vec<u8>,
    page_size: u64,
    /// The counter and when it was read.
    prev: Option<(i64, u64)>,
}

impl SwapTracker {
    pub(super) fn new(proc: &Path, page_size: u64) -> Self {
        Self {
            file: KeptFile::records(proc.join("vmstat")),
            buf: Vec::with_capacity(8192),
            page_size,
            prev: None,
        }
    }

    /// Bytes swapped in per second since the last call; `None` the first time, when the file or
    /// its line is missing, the clock did not move forward, or the counter went back.
    pub(super) fn update(&mut self, now_ms: i64) -> Option<f64> {
        let cur = self.file.text(&mut self.buf).and_then(pswpin);
        let prev = std::mem::replace(&mut self.prev, cur.map(|c| (now_ms, c)));
        let ((at, before), now) = (prev?, cur?);
        (now_ms > at && now >= before).then(|| {
            (now - before).saturating_mul(self.page_size) as f64 / ((now_ms - at) as f64 / 1000.0)
        })
    }
}

/// The `pswpin` counter of vmstat's text.
fn pswpin(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix("pswpin "))
        .and_then(|v| v.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::host::fixture::Fixture;

    #[test]
    fn pages_swapped_in_over_the_interval_become_bytes_per_second() {
        let f = Fixture::new();
        f.write("proc/vmstat", "nr_free_pages 100\npswpin 1000\npswpout 5\n");
        let mut t = SwapTracker::new(&f.root().join("proc"), 4096);
        assert_eq!(t.update(0), None, "no interval yet");
        // 2 500 pages of 4 KiB in 5 s.
        f.write("proc/vmstat", "nr_free_pages 100\npswpin 3500\npswpout 5\n");
        assert_eq!(t.update(5_000), Some(2_048_000.0));
        // A counter that went back (a fixture rewound, a wrap) gives no rate, not a negative one.
        f.write("proc/vmstat", "pswpin 10\n");
        assert_eq!(t.update(6_000), None);
        assert_eq!(t.update(7_000), Some(0.0));
    }

    #[test]
    fn without_vmstat_or_its_line_the_rate_is_unknown_not_zero() {
        let f = Fixture::new();
        let mut t = SwapTracker::new(&f.root().join("proc"), 4096);
        assert_eq!(t.update(0), None);
        assert_eq!(t.update(1_000), None);
        f.write("proc/vmstat", "nr_free_pages 100\n");
        assert_eq!(t.update(2_000), None);
        assert_eq!(t.update(3_000), None);
    }
}
