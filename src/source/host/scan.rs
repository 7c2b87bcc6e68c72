//! Which `/proc/<pid>/stat` files a tick reads. Reading every process each tick made the cost
//! grow with everything on the host; only the GPU processes' trees matter. So a tick reads the
//! stat of the GPU processes and of last tick's tree members, and finds new members through
//! their main thread's `task/<pid>/children` list; the whole of /proc is read only now and then
//! (children forked by other threads show up there, at most [`FULL_SCAN_MS`] late), and
//! whenever the tree walk cannot answer: the first tick, a GPU pid not found directly (the
//! container cases need every process), or a kernel without children lists.
//!
//! A member's stat is read every tick, so a member that exits or is re-parented out of the tree
//! leaves it at once; a pid cannot join the tree except by being born a member's child.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// Longest time between two full scans.
pub(super) const FULL_SCAN_MS: i64 = 10_000;

/// Most pids a tree walk reads before it gives up and asks for a full scan.
const MAX_WALK: usize = 8192;

/// The part of `/proc/<pid>/stat` the sampler keeps.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ProcStat {
    pub(super) ppid: u32,
    pub(super) comm: String,
    pub(super) state: char,
    pub(super) threads: Option<u32>,
    pub(super) rss_pages: u64,
    /// Ticks after boot.
    pub(super) start_ticks: u64,
    /// utime + stime, in ticks.
    pub(super) cpu_ticks: u64,
}

/// Parses one stat line: `pid (comm) state ppid …`, the comm possibly holding spaces and
/// parentheses (hence the last `)`).
pub(super) fn parse_stat(text: &[u8]) -> Option<ProcStat> {
    let open = text.iter().position(|&b| b == b'(')?;
    let close = text.iter().rposition(|&b| b == b')')?;
    let comm = String::from_utf8_lossy(text.get(open + 1..close)?).into_owned();
    let rest = std::str::from_utf8(text.get(close + 1..)?).ok()?;
    // Fields from 3 (state) on; `f(n)` is field n of proc(5).
    let fields: Vec<&str> = rest.split_ascii_whitespace().take(22).collect();
    let f = |n: usize| fields.get(n - 3).copied();
    let num = |n: usize| f(n)?.parse::<u64>().ok();
    let signed = |n: usize| f(n)?.parse::<i64>().ok();
    Some(ProcStat {
        ppid: u32::try_from(signed(4)?).unwrap_or(0),
        comm,
        state: f(3)?.chars().next()?,
        threads: signed(20).and_then(|t| u32::try_from(t).ok()),
        rss_pages: u64::try_from(signed(24)?).unwrap_or(0),
        start_ticks: num(22)?,
        cpu_ticks: num(14)?.saturating_add(num(15)?),
    })
}

/// Reads the stat files a tick needs, with one buffer kept between them.
#[derive(Debug)]
pub(super) struct Scanner {
    proc: PathBuf,
    last_full_ms: Option<i64>,
    /// Whether a `task/<tid>/children` list (CONFIG_PROC_CHILDREN) was ever read here.
    children_seen: bool,
    buf: Vec<u8>,
}

/// What a tick read.
#[derive(Debug, Default)]
pub(super) struct Scan {
    pub(super) stats: HashMap<u32, ProcStat>,
    /// Every process was read (else: the trees only).
    pub(super) full: bool,
}

impl Scanner {
    pub(super) fn new(proc: PathBuf) -> Self {
        Self {
            proc,
            last_full_ms: None,
            children_seen: false,
            buf: Vec::with_capacity(1024),
        }
    }

    /// The stats of the trees under `roots` (with last tick's `members`), or of every process
    /// when a full scan is due.
    pub(super) fn scan(
        &mut self,
        now_ms: i64,
        roots: &[u32],
        members: &HashSet<u32>,
    ) -> io::Result<Scan> {
        let due = self
            .last_full_ms
            .is_none_or(|t| now_ms < t || now_ms - t >= FULL_SCAN_MS);
        if !due && let Some(stats) = self.walk(roots, members) {
            return Ok(Scan { stats, full: false });
        }
        self.full(now_ms)
    }

    /// Every process, as the next tick's fallback too.
    pub(super) fn full(&mut self, now_ms: i64) -> io::Result<Scan> {
        let mut stats = HashMap::new();
        for entry in std::fs::read_dir(&self.proc)? {
            let Ok(entry) = entry else { continue };
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            // Processes that vanish or cannot be read while listing are skipped: that race is
            // normal.
            if let Some(stat) = self.stat(pid) {
                stats.insert(pid, stat);
            }
        }
        self.last_full_ms = Some(now_ms);
        Ok(Scan { stats, full: true })
    }

    /// The roots, the members and everything their children lists lead to; `None` when a root
    /// is not here directly, or the walk cannot be trusted (no children lists, too many pids).
    fn walk(&mut self, roots: &[u32], members: &HashSet<u32>) -> Option<HashMap<u32, ProcStat>> {
        let mut stats = HashMap::new();
        let root_set: HashSet<u32> = roots.iter().copied().collect();
        let mut seen: HashSet<u32> = HashSet::new();
        let mut queue: Vec<u32> = roots.iter().chain(members).copied().collect();
        while let Some(pid) = queue.pop() {
            if !seen.insert(pid) {
                continue;
            }
            if seen.len() > MAX_WALK {
                return None;
            }
            let Some(stat) = self.stat(pid) else {
                if root_set.contains(&pid) {
                    return None;
                }
                continue;
            };
            stats.insert(pid, stat);
            match self.children(pid) {
                Some(kids) => {
                    self.children_seen = true;
                    queue.extend(kids.into_iter().filter(|k| !seen.contains(k)));
                }
                // No list before any was read: this kernel (or fixture) may have none, so
                // the tree cannot be walked (a full scan then tells). After one was read, a
                // missing list is a process that just exited.
                None if !self.children_seen => return None,
                None => {}
            }
        }
        Some(stats)
    }

    fn stat(&mut self, pid: u32) -> Option<ProcStat> {
        let path = self.proc.join(pid.to_string()).join("stat");
        read_into(&path, &mut self.buf).ok()?;
        parse_stat(&self.buf)
    }

    /// The children of `pid`'s main thread (a process that exited gives `None`).
    fn children(&mut self, pid: u32) -> Option<Vec<u32>> {
        let path = self.proc.join(format!("{pid}/task/{pid}/children"));
        read_into(&path, &mut self.buf).ok()?;
        let text = std::str::from_utf8(&self.buf).ok()?;
        Some(
            text.split_ascii_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect(),
        )
    }
}

/// The whole file into `buf` (cleared first): one open, reads until the end, no metadata call.
fn read_into(path: &Path, buf: &mut Vec<u8>) -> io::Result<()> {
    buf.clear();
    File::open(path)?.read_to_end(buf)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &[u8] = b"4242 (py (x) y) S 41 4242 4242 0 -1 4194560 100 0 0 0 \
        250 50 0 0 20 0 7 0 123456 1000000 2048 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 \
        17 3 0 0 0 0 0\n";

    #[test]
    fn parses_the_fields_kept_with_a_hostile_comm() {
        let s = parse_stat(LINE).unwrap();
        assert_eq!(s.comm, "py (x) y");
        assert_eq!((s.state, s.ppid, s.threads), ('S', 41, Some(7)));
        assert_eq!(
            (s.cpu_ticks, s.start_ticks, s.rss_pages),
            (300, 123456, 2048)
        );
    }

    #[test]
    fn a_cut_line_is_no_reading() {
        assert_eq!(parse_stat(&LINE[..60]), None);
        assert_eq!(parse_stat(b"4242 py S 1"), None);
    }

    /// A proc tree of `(pid, ppid)` with children lists (or without, like a fixture).
    fn tree(dir: &Path, procs: &[(u32, u32)], lists: bool) {
        for &(pid, ppid) in procs {
            let d = dir.join(format!("{pid}/task/{pid}"));
            std::fs::create_dir_all(&d).unwrap();
            let line = format!(
                "{pid} (p{pid}) S {ppid} 0 0 0 -1 0 0 0 0 0 5 5 0 0 20 0 1 0 {pid}00 0 10 0\n"
            );
            std::fs::write(dir.join(format!("{pid}/stat")), line).unwrap();
            if lists {
                let kids: Vec<String> = procs
                    .iter()
                    .filter(|(_, pp)| *pp == pid)
                    .map(|(p, _)| p.to_string())
                    .collect();
                std::fs::write(d.join("children"), kids.join(" ")).unwrap();
            }
        }
    }

    fn pids(scan: &Scan) -> Vec<u32> {
        let mut v: Vec<u32> = scan.stats.keys().copied().collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn between_full_scans_only_the_trees_are_read() {
        let dir = tempfile::tempdir().unwrap();
        // 10 is a GPU process with a worker 11 and grandchild 12; 20 and 21 are elsewhere.
        tree(
            dir.path(),
            &[(1, 0), (10, 1), (11, 10), (12, 11), (20, 1), (21, 20)],
            true,
        );
        let mut s = Scanner::new(dir.path().to_path_buf());
        let first = s.scan(0, &[10], &HashSet::new()).unwrap();
        assert!(first.full);
        assert_eq!(pids(&first), vec![1, 10, 11, 12, 20, 21]);
        let members: HashSet<u32> = [11, 12].into();
        let next = s.scan(1_000, &[10], &members).unwrap();
        assert!(!next.full);
        assert_eq!(pids(&next), vec![10, 11, 12]);
        // A new worker appears in its parent's list and is read the same tick.
        tree(dir.path(), &[(10, 1), (13, 10)], true);
        let next = s.scan(2_000, &[10], &members).unwrap();
        assert_eq!(pids(&next), vec![10, 11, 12, 13]);
        // Every FULL_SCAN_MS the whole of /proc again.
        assert!(s.scan(FULL_SCAN_MS, &[10], &members).unwrap().full);
    }

    #[test]
    fn a_root_not_found_directly_or_no_children_lists_means_a_full_scan() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path(), &[(1, 0), (10, 1), (11, 10)], true);
        let mut s = Scanner::new(dir.path().to_path_buf());
        s.scan(0, &[10], &HashSet::new()).unwrap();
        assert!(s.scan(1_000, &[10, 999], &HashSet::new()).unwrap().full);

        let bare = tempfile::tempdir().unwrap();
        tree(bare.path(), &[(1, 0), (10, 1), (11, 10)], false);
        let mut s = Scanner::new(bare.path().to_path_buf());
        s.scan(0, &[10], &HashSet::new()).unwrap();
        let next = s.scan(1_000, &[10], &HashSet::new()).unwrap();
        assert!(next.full);
        assert_eq!(pids(&next), vec![1, 10, 11]);
    }

    #[test]
    fn the_clock_stepping_back_is_a_full_scan() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path(), &[(1, 0), (10, 1)], true);
        let mut s = Scanner::new(dir.path().to_path_buf());
        s.scan(50_000, &[10], &HashSet::new()).unwrap();
        assert!(!s.scan(51_000, &[10], &HashSet::new()).unwrap().full);
        assert!(s.scan(1_000, &[10], &HashSet::new()).unwrap().full);
    }

    #[test]
    fn the_same_answer_as_procfs_for_this_machine() {
        // Our own stat, parsed both ways.
        let raw = std::fs::read("/proc/self/stat").unwrap();
        let ours = parse_stat(&raw).unwrap();
        let theirs = {
            use procfs::FromRead;
            procfs::process::Stat::from_read(raw.as_slice()).unwrap()
        };
        assert_eq!(ours.ppid as i32, theirs.ppid);
        assert_eq!(ours.comm, theirs.comm);
        assert_eq!(ours.start_ticks, theirs.starttime);
        assert_eq!(ours.cpu_ticks, theirs.utime + theirs.stime);
        assert_eq!(ours.rss_pages, theirs.rss);
    }
}
