//! Process-level memory steps taken once start-up is over, so the steady memory of the
//! dashboard, `watch` and `serve` is what their loops use rather than what start-up touched.
//!
//! - Code and read-only data: argument parsing, config and theme loading, NVML's symbol
//!   loading and the first reading's statics run once, but their pages stay mapped (and counted
//!   in RSS) for the life of the process. After start-up, every private, read-only file
//!   mapping that holds no private copies (`Anonymous: 0` in `/proc/self/smaps`: never written,
//!   so the file has exactly what is mapped) is unmapped from this process with
//!   `MADV_DONTNEED`; the pages stay in the page cache, and those the loop runs are faulted
//!   back in (minor faults, each mapping its cached neighbours too) on the next ticks. Nothing
//!   changes in what runs: a page read again holds the same bytes. (`MADV_PAGEOUT` would evict
//!   the pages from the cache for every process and read them from disk again; measured, it
//!   also left more mapped. `MADV_RANDOM` made no difference to what the loop maps back.)
//! - The heap: `malloc_trim` gives the freed start-up heap back to the kernel.
//!
//! The steps run twice: 3 s in (past the first frame) and again a minute in, because work
//! that runs once in the first seconds after the first step (measured: ~0.4 MiB of code
//! windows, the last of start-up's opening and its tasks ending) would otherwise stay mapped.
//! The dashboard's task that runs them never ends, so tokio's code for a task's end (run
//! nowhere else) is not faulted back in after the last step.
//!
//! Linux (glibc) only; elsewhere it does nothing. Every error is ignored: a step that fails
//! leaves memory as it was. Touches only this process's own mappings.

use std::time::Duration;

/// When, after start, the steps run: past the first frame and the first /proc listing, and
/// again once the first minute's one-time work is over (see the module docs).
pub const RELEASE_AT: [Duration; 2] = [Duration::from_secs(3), Duration::from_secs(60)];

/// What [`release_startup_pages`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Released {
    /// Mappings advised.
    pub mappings: usize,
    /// Their resident size before, in KiB.
    pub rss_kib: u64,
}

/// Runs [`release_startup_pages`] at each of [`RELEASE_AT`], then waits forever: spawn it on
/// the dashboard's or `serve`'s runtime.
pub async fn after_startup() {
    at_release_times(|| {
        release_startup_pages();
    })
    .await;
}

/// Runs `step` at each of [`RELEASE_AT`] from now, then waits forever.
async fn at_release_times(mut step: impl FnMut()) {
    let start = tokio::time::Instant::now();
    for at in RELEASE_AT {
        tokio::time::sleep_until(start + at).await;
        step();
    }
    // Ending would run tokio's task-completion code for the first time, after the last step.
    std::future::pending::<()>().await;
}

/// How many of [`RELEASE_AT`] are due `elapsed` after start: for a loop that runs the steps
/// itself (`watch`), once each time this grows.
pub fn releases_due(elapsed: Duration) -> usize {
    RELEASE_AT.iter().filter(|at| elapsed >= **at).count()
}

/// Unmaps read-only file pages and trims the heap (see the module docs).
pub fn release_startup_pages() -> Released {
    let released = imp::release();
    imp::trim_heap();
    released
}

/// One mapping of `/proc/self/smaps`, as far as the choice needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Mapping {
    start: usize,
    end: usize,
    perms: String,
    path: String,
    rss_kib: u64,
    anon_kib: Option<u64>,
}

impl Mapping {
    /// A private, read-only mapping of a file with no private (written) pages: its pages can
    /// be dropped and read again from the file unchanged.
    fn can_drop(&self) -> bool {
        let p = self.perms.as_bytes();
        p.len() == 4
            && p[0] == b'r'
            && p[1] == b'-'
            && p[3] == b'p'
            && self.path.starts_with('/')
            && self.anon_kib == Some(0)
            && self.rss_kib > 0
            && self.end > self.start
    }
}

/// Parses `/proc/self/smaps`: a header line per mapping, then `Key: value kB` lines.
fn parse_smaps(text: &str) -> Vec<Mapping> {
    let mut out: Vec<Mapping> = Vec::new();
    for line in text.lines() {
        let mut fields = line.split_whitespace();
        let Some(first) = fields.next() else {
            continue;
        };
        if let Some((a, b)) = first.split_once('-')
            && let (Ok(start), Ok(end)) =
                (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
        {
            let perms = fields.next().unwrap_or("").to_string();
            // offset, device, inode, then the path (which may hold spaces).
            let path = fields.skip(3).collect::<Vec<_>>().join(" ");
            out.push(Mapping {
                start,
                end,
                perms,
                path,
                rss_kib: 0,
                anon_kib: None,
            });
            continue;
        }
        let Some(m) = out.last_mut() else {
            continue;
        };
        let mut kib = || fields.next().and_then(|v| v.parse::<u64>().ok());
        match first {
            "Rss:" => m.rss_kib = kib().unwrap_or(0),
            "Anonymous:" => m.anon_kib = kib(),
            _ => {}
        }
    }
    out
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod imp {
    use super::{Released, parse_smaps};

    pub fn release() -> Released {
        let Ok(text) = std::fs::read_to_string("/proc/self/smaps") else {
            return Released::default();
        };
        let mut done = Released::default();
        for m in parse_smaps(&text).iter().filter(|m| m.can_drop()) {
            let len = m.end - m.start;
            let addr = m.start as *mut libc::c_void;
            // SAFETY: the range is one whole mapping of this process, read-only, private and
            // file-backed with no private pages (checked above), so dropping its pages loses
            // nothing: the next access reads the same bytes from the file. Errors are ignored.
            let ok = unsafe { libc::madvise(addr, len, libc::MADV_DONTNEED) == 0 };
            if ok {
                done.mappings += 1;
                done.rss_kib += m.rss_kib;
            }
        }
        done
    }

    pub fn trim_heap() {
        // SAFETY: malloc_trim only returns free memory to the kernel.
        unsafe {
            libc::malloc_trim(0);
        }
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
mod imp {
    use super::Released;

    pub fn release() -> Released {
        Released::default()
    }

    pub fn trim_heap() {}
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMAPS: &str = "\
55e449227000-55e449be3000 r-xp 0024a000 fe:00 8094076                    /opt/gpumeter bin/gpumeter
Size:               9968 kB
Rss:                5796 kB
Anonymous:             0 kB
55e449be3000-55e449c12000 r--p 00c05000 fe:00 8094076                    /opt/gpumeter bin/gpumeter
Rss:                 188 kB
Anonymous:           188 kB
55e449c12000-55e449c17000 rw-p 00c33000 fe:00 8094076                    /opt/gpumeter bin/gpumeter
Rss:                  20 kB
Anonymous:            20 kB
55e44e43e000-55e44e526000 rw-p 00000000 00:00 0                          [heap]
Rss:                 904 kB
Anonymous:           904 kB
7f0cb1483000-7f0cb14a9000 r--p 00000000 fe:00 326279                     /usr/lib/libc.so.6
Rss:                 152 kB
Anonymous:             0 kB
7f0cb14a9000-7f0cb15ff000 r-xp 00026000 fe:00 326279                     /usr/lib/libc.so.6
Rss:                   0 kB
Anonymous:             0 kB
7ffd953d0000-7ffd953d2000 r-xp 00000000 00:00 0                          [vdso]
Rss:                   8 kB
Anonymous:             0 kB
7f0cb1779000-7f0cb179f000 r-xp 00001000 fe:00 325843                     /lib/ld.so
Rss:                 152 kB
";

    #[test]
    fn the_steps_fall_due_at_three_seconds_and_at_a_minute() {
        assert_eq!(releases_due(Duration::ZERO), 0);
        assert_eq!(releases_due(Duration::from_millis(2_999)), 0);
        assert_eq!(releases_due(Duration::from_secs(3)), 1);
        assert_eq!(releases_due(Duration::from_secs(59)), 1);
        assert_eq!(releases_due(Duration::from_secs(60)), 2);
        assert_eq!(releases_due(Duration::from_secs(86_400)), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn the_task_runs_the_steps_at_their_times_and_never_ends() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};
        let runs = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&runs);
        let task = tokio::spawn(at_release_times(move || {
            counted.fetch_add(1, Ordering::SeqCst);
        }));
        // Paused time: each sleep below returns at its deadline, the task's own sleeps too.
        let start = tokio::time::Instant::now();
        let mut seen = Vec::new();
        for secs in [2, 4, 59, 61, 3_600] {
            tokio::time::sleep_until(start + Duration::from_secs(secs)).await;
            seen.push(runs.load(Ordering::SeqCst));
        }
        assert_eq!(seen, vec![0, 1, 1, 2, 2]);
        assert!(!task.is_finished());
        task.abort();
    }

    #[test]
    fn only_unwritten_read_only_file_pages_are_dropped() {
        let maps = parse_smaps(SMAPS);
        assert_eq!(maps.len(), 8);
        assert_eq!(maps[0].path, "/opt/gpumeter bin/gpumeter");
        assert_eq!(maps[0].end - maps[0].start, 0x9bc000);
        let dropped: Vec<(&str, &str)> = maps
            .iter()
            .filter(|m| m.can_drop())
            .map(|m| (m.perms.as_str(), m.path.as_str()))
            .collect();
        // Not: the relocated (written) read-only data, writable data, the heap, a mapping with
        // nothing resident, the vdso, or one whose private pages are not known.
        assert_eq!(
            dropped,
            vec![
                ("r-xp", "/opt/gpumeter bin/gpumeter"),
                ("r--p", "/usr/lib/libc.so.6")
            ]
        );
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn dropping_this_process_code_pages_changes_nothing_it_computes() {
        fn work() -> String {
            let snap = gpumeter_model::Snapshot::empty("residency", 1_000);
            let mut h = gpumeter_core::engine::History::default();
            h.record(&snap);
            let price = gpumeter_core::money::Money::parse("12.50").map(|m| format!("{m:?}"));
            format!("{:?} {:?} {price:?}", snap.gpus, h.gpu(0).is_none())
        }
        let before = work();
        let released = release_startup_pages();
        // The test binary's own code is mapped and was run, so something was dropped.
        assert!(released.mappings > 0, "{released:?}");
        assert!(released.rss_kib > 0, "{released:?}");
        // The same code runs again from pages read back in, with the same result, and a
        // second call is as harmless.
        assert_eq!(work(), before);
        release_startup_pages();
        assert_eq!(work(), before);
    }
}
