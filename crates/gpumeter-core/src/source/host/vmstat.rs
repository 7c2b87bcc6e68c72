//! Two rates from `<proc>/vmstat` over the interval between two samples: pages swapped back in
//! (`pswpin`) and major page faults (`pgmajfault`: a page that had to be read from disk, from a
//! file's mapping or from swap). A box short of memory pages its workers back in, and a data set
//! that no longer fits the page cache is read from disk again page by page; every batch then
//! waits behind the disk. Machine-wide: a container's own cgroup has no such counters.

use std::path::Path;

use super::kept::KeptFile;

/// This interval's rates; each `None` the first time, when the file or its line is missing,
/// the clock did not move forward, or the counter went back.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct VmstatRates {
    pub(super) swap_in_bytes_per_s: Option<f64>,
    pub(super) major_faults_per_s: Option<f64>,
}

/// Reads `pswpin` and `pgmajfault` every tick (the file kept open).
#[derive(Debug)]
pub(super) struct VmstatTracker {
    file: KeptFile,
    buf: Vec<u8>,
    page_size: u64,
    /// When the counters were read, and `pswpin`, `pgmajfault` then.
    prev: Option<(i64, Option<u64>, Option<u64>)>,
}

impl VmstatTracker {
    pub(super) fn new(proc: &Path, page_size: u64) -> Self {
        Self {
            file: KeptFile::records(proc.join("vmstat")),
            buf: Vec::with_capacity(8192),
            page_size,
            prev: None,
        }
    }

    /// The rates since the last call.
    pub(super) fn update(&mut self, now_ms: i64) -> VmstatRates {
        let (swap, faults) = self.file.text(&mut self.buf).map_or((None, None), |t| {
            (counter(t, "pswpin"), counter(t, "pgmajfault"))
        });
        let cur = (swap.is_some() || faults.is_some()).then_some((now_ms, swap, faults));
        let Some((at, swap0, faults0)) = std::mem::replace(&mut self.prev, cur) else {
            return VmstatRates::default();
        };
        let secs = (now_ms - at) as f64 / 1000.0;
        let rate = |before: Option<u64>, now: Option<u64>| {
            let (b, n) = (before?, now?);
            (now_ms > at && n >= b).then(|| (n - b) as f64 / secs)
        };
        VmstatRates {
            swap_in_bytes_per_s: rate(swap0, swap).map(|p| p * self.page_size as f64),
            major_faults_per_s: rate(faults0, faults),
        }
    }
}

/// The value of a `name value` line of vmstat's text.
fn counter(text: &str, name: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|v| v.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::host::fixture::Fixture;

    #[test]
    fn pages_swapped_in_and_major_faults_over_the_interval_become_rates() {
        let f = Fixture::new();
        f.write(
            "proc/vmstat",
            "nr_free_pages 100\npswpin 1000\npswpout 5\npgmajfault 70\npgmajfault_x 9\n",
        );
        let mut t = VmstatTracker::new(&f.root().join("proc"), 4096);
        assert_eq!(t.update(0), VmstatRates::default(), "no interval yet");
        // 2 500 pages of 4 KiB and 10 000 major faults in 5 s.
        f.write(
            "proc/vmstat",
            "nr_free_pages 100\npswpin 3500\npswpout 5\npgmajfault 10070\n",
        );
        let r = t.update(5_000);
        assert_eq!(r.swap_in_bytes_per_s, Some(2_048_000.0));
        assert_eq!(r.major_faults_per_s, Some(2_000.0));
        // A counter that went back (a fixture rewound, a wrap) gives no rate, not a negative one.
        f.write("proc/vmstat", "pswpin 10\npgmajfault 10080\n");
        let r = t.update(6_000);
        assert_eq!(r.swap_in_bytes_per_s, None);
        assert_eq!(r.major_faults_per_s, Some(10.0));
        assert_eq!(t.update(7_000).swap_in_bytes_per_s, Some(0.0));
    }

    #[test]
    fn without_vmstat_or_its_lines_the_rates_are_unknown_not_zero() {
        let f = Fixture::new();
        let mut t = VmstatTracker::new(&f.root().join("proc"), 4096);
        assert_eq!(t.update(0), VmstatRates::default());
        assert_eq!(t.update(1_000), VmstatRates::default());
        f.write("proc/vmstat", "nr_free_pages 100\n");
        assert_eq!(t.update(2_000), VmstatRates::default());
        assert_eq!(t.update(3_000), VmstatRates::default());
    }
}
