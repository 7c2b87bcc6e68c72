//! Which `/proc/<pid>/stat` files a tick reads. Reading every process each tick made the cost
//! grow with everything on the host; only the GPU processes' trees matter. So a tick reads the
//! stat of the GPU processes and of last tick's tree members, and finds new members through
//! their main thread's `task/<pid>/children` list.
//!
//! Children forked by other threads are in those threads' lists, so every [`LISTING_MS`] /proc
//! is listed as well, and only the entries not seen before are read: a process is known by its
//! pid and the inode number of its /proc directory (free in the listing; a new process under a
//! reused pid gets a new one), and what it showed when read (parent, start time) is kept. A
//! kept parent link goes stale only when the parent exits (the process is re-parented): such a
//! link, whose parent is gone or younger than the child, is read again. So the cost of a
//! listing is one directory read plus the processes born since the last one, not the host.
//!
//! Every stat is read when the walk cannot answer: a GPU pid not found directly (the container
//! cases need every process) or a kernel without children lists. A member's stat is read every
//! tick, so a member that exits or is re-parented out of the tree leaves it at once; the trees'
//! files stay open between ticks for that (see [`Kept`]).

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io;
use std::os::unix::fs::{DirEntryExt, FileExt};
use std::path::{Path, PathBuf};

/// Longest time between two listings of /proc.
pub(super) const LISTING_MS: i64 = 10_000;

/// Most tree processes whose files stay open between ticks (two each: well inside the usual
/// limit of 1 024 open files, with room for the rest of the program).
const MAX_KEPT: usize = 256;

/// The open `stat` and `children` files of a tree process. Reading one again from its start
/// is one `pread`, where reading by path is a path lookup, an open, a read and a close: most of
/// a tick's kernel time before. A kept file of a process that exited reads as an error (stat)
/// or as empty (children), never as another process that got the pid.
#[derive(Debug)]
struct Kept {
    stat: File,
    children: Option<File>,
}

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

/// What a listing keeps of a process it read: enough to place it in a tree unread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Known {
    /// Inode number of `/proc/<pid>`: another process under the same pid has another one.
    ino: u64,
    ppid: u32,
    start_ticks: u64,
}

/// Reads the stat files a tick needs, with one buffer kept between them.
#[derive(Debug)]
pub(super) struct Scanner {
    proc: PathBuf,
    last_listing_ms: Option<i64>,
    /// Whether any tick ran yet: the first one only walks the trees (a fast first reading)
    /// when it can, and the second lists /proc.
    started: bool,
    /// Whether a `task/<tid>/children` list (CONFIG_PROC_CHILDREN) was ever read here.
    children_seen: bool,
    /// Every process the last listing saw, by pid.
    known: HashMap<u32, Known>,
    /// Kept files of the trees' processes, by pid.
    open: HashMap<u32, Kept>,
    buf: Vec<u8>,
    /// Stat files read so far (what a listing saves shows here, in tests).
    reads: u64,
}

/// What a tick read.
#[derive(Debug, Default)]
pub(super) struct Scan {
    /// The processes read this tick.
    pub(super) stats: HashMap<u32, ProcStat>,
    /// `(pid, ppid)` of the other processes a listing saw, as they were when last read.
    pub(super) kept_links: Vec<(u32, u32)>,
    /// Every process was read (else: the trees, and on a listing what was new).
    pub(super) full: bool,
}

impl Scan {
    /// Every `(pid, ppid)` link known this tick.
    pub(super) fn links(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.stats
            .iter()
            .map(|(&p, s)| (p, s.ppid))
            .chain(self.kept_links.iter().copied())
    }
}

impl Scanner {
    pub(super) fn new(proc: PathBuf) -> Self {
        Self {
            proc,
            last_listing_ms: None,
            started: false,
            children_seen: false,
            known: HashMap::new(),
            open: HashMap::new(),
            buf: Vec::with_capacity(1024),
            reads: 0,
        }
    }

    /// The stats of the trees under `roots` (with last tick's `members`, at most `cap` pids
    /// beyond the roots), plus a listing when one is due, or of every process when the walk
    /// cannot answer.
    pub(super) fn scan(
        &mut self,
        now_ms: i64,
        roots: &[u32],
        members: &HashSet<u32>,
        cap: usize,
    ) -> io::Result<Scan> {
        let first = !std::mem::replace(&mut self.started, true);
        let Some(stats) = self.walk(roots, members, cap) else {
            return self.full(now_ms);
        };
        let due = self
            .last_listing_ms
            .is_some_and(|t| now_ms < t || now_ms - t >= LISTING_MS);
        if first || !(due || self.last_listing_ms.is_none()) {
            return Ok(Scan {
                stats,
                ..Scan::default()
            });
        }
        self.listing(stats, now_ms, false)
    }

    /// Every process read, as the next tick's fallback too.
    pub(super) fn full(&mut self, now_ms: i64) -> io::Result<Scan> {
        self.listing(HashMap::new(), now_ms, true)
    }

    /// The stat of one process (a process that exited gives `None`).
    pub(super) fn read(&mut self, pid: u32) -> Option<ProcStat> {
        self.stat(pid)
    }

    /// Lists /proc: `stats` (read this tick) plus every process not seen before, or every
    /// process when `all`; the others' links are the kept ones.
    fn listing(
        &mut self,
        mut stats: HashMap<u32, ProcStat>,
        now_ms: i64,
        all: bool,
    ) -> io::Result<Scan> {
        let mut listed: Vec<(u32, u64)> = Vec::with_capacity(self.known.len() + 64);
        for entry in std::fs::read_dir(&self.proc)? {
            let Ok(entry) = entry else { continue };
            if let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            {
                listed.push((pid, entry.ino()));
            }
        }
        let mut known = HashMap::with_capacity(listed.len());
        for &(pid, ino) in &listed {
            let stat = match stats.entry(pid) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(e) => {
                    let kept = self
                        .known
                        .get(&pid)
                        .copied()
                        .filter(|k| k.ino == ino && !all);
                    if let Some(k) = kept {
                        known.insert(pid, k);
                        continue;
                    }
                    // Processes that vanish or cannot be read while listing are skipped: that
                    // race is normal.
                    let Some(s) = read_stat(&self.proc, pid, &mut self.buf) else {
                        continue;
                    };
                    self.reads += 1;
                    e.insert(s)
                }
            };
            known.insert(
                pid,
                Known {
                    ino,
                    ppid: stat.ppid,
                    start_ticks: stat.start_ticks,
                },
            );
        }
        // A kept link whose parent is gone, or whose parent's pid now names a younger process,
        // is stale: the child was re-parented. Read it again (one pass: its start is the same).
        let stale: Vec<u32> = known
            .iter()
            .filter(|(pid, k)| {
                !stats.contains_key(pid)
                    && k.ppid != 0
                    && known
                        .get(&k.ppid)
                        .is_none_or(|p| p.start_ticks > k.start_ticks)
            })
            .map(|(&pid, _)| pid)
            .collect();
        for pid in stale {
            self.reads += 1;
            match read_stat(&self.proc, pid, &mut self.buf) {
                Some(s) => {
                    if let Some(k) = known.get_mut(&pid) {
                        k.ppid = s.ppid;
                    }
                    stats.insert(pid, s);
                }
                None => {
                    known.remove(&pid);
                }
            }
        }
        let kept_links = known
            .iter()
            .filter(|(pid, _)| !stats.contains_key(pid))
            .map(|(&pid, k)| (pid, k.ppid))
            .collect();
        self.known = known;
        self.last_listing_ms = Some(now_ms);
        Ok(Scan {
            stats,
            kept_links,
            full: all,
        })
    }

    /// The roots, the members and everything their children lists lead to (at most `cap`
    /// pids beyond the roots: the list is cut there anyway); `None` when a root is not here
    /// directly, or the walk cannot be trusted (no children lists).
    fn walk(
        &mut self,
        roots: &[u32],
        members: &HashSet<u32>,
        cap: usize,
    ) -> Option<HashMap<u32, ProcStat>> {
        let mut stats = HashMap::with_capacity(roots.len() + members.len());
        let root_set: HashSet<u32> = roots.iter().copied().collect();
        let mut queued: HashSet<u32> = roots.iter().chain(members).copied().collect();
        let mut queue: Vec<u32> = queued.iter().copied().collect();
        // New members up to one more than the cap, so that the tree shows it was cut.
        let limit = root_set.len().saturating_add(cap).saturating_add(1);
        let mut room = limit.saturating_sub(queued.len());
        while let Some(pid) = queue.pop() {
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
                    for kid in kids {
                        if room == 0 {
                            break;
                        }
                        if queued.insert(kid) {
                            queue.push(kid);
                            room -= 1;
                        }
                    }
                }
                // No list before any was read: this kernel (or fixture) may have none, so
                // the tree cannot be walked (a full scan then tells). After one was read, a
                // missing list is a process that just exited.
                None if !self.children_seen => return None,
                None => {}
            }
        }
        self.keep_only(&queued);
        Some(stats)
    }

    /// A tree process's stat, through its kept file (opened and kept on the first read while
    /// there is room).
    fn stat(&mut self, pid: u32) -> Option<ProcStat> {
        self.reads += 1;
        if let Some(kept) = self.open.get(&pid) {
            if pread_into(&kept.stat, &mut self.buf).is_err() {
                // Exited (a kept file never shows another process under the same pid).
                self.open.remove(&pid);
                return None;
            }
            return parse_stat(&self.buf);
        }
        let path = self.proc.join(pid.to_string()).join("stat");
        let file = File::open(path).ok()?;
        pread_into(&file, &mut self.buf).ok()?;
        let stat = parse_stat(&self.buf)?;
        if self.open.len() < MAX_KEPT {
            self.open.insert(
                pid,
                Kept {
                    stat: file,
                    children: None,
                },
            );
        }
        Some(stat)
    }

    /// The children of `pid`'s main thread (a process that exited gives `None`, or none).
    fn children(&mut self, pid: u32) -> Option<Vec<u32>> {
        let kept = self.open.get_mut(&pid);
        let read = match kept {
            Some(Kept {
                children: Some(file),
                ..
            }) => pread_into(file, &mut self.buf),
            Some(kept) => {
                let path = self.proc.join(format!("{pid}/task/{pid}/children"));
                File::open(path).and_then(|file| {
                    let read = pread_into(&file, &mut self.buf);
                    kept.children = Some(file);
                    read
                })
            }
            None => {
                let path = self.proc.join(format!("{pid}/task/{pid}/children"));
                read_into(&path, &mut self.buf)
            }
        };
        read.ok()?;
        let text = std::str::from_utf8(&self.buf).ok()?;
        Some(
            text.split_ascii_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect(),
        )
    }

    /// Closes the kept files of processes no longer in a tree.
    fn keep_only(&mut self, pids: &HashSet<u32>) {
        self.open.retain(|pid, _| pids.contains(pid));
    }
}

/// One stat read by path (the listing's newborns: read once, not kept).
fn read_stat(proc: &Path, pid: u32, buf: &mut Vec<u8>) -> Option<ProcStat> {
    read_into(&proc.join(pid.to_string()).join("stat"), buf).ok()?;
    parse_stat(buf)
}

/// The whole file into `buf` (cleared first): one open, then as `pread_into`.
fn read_into(path: &Path, buf: &mut Vec<u8>) -> io::Result<()> {
    pread_into(&File::open(path)?, buf)
}

/// The whole of an open file, from its start, into `buf` (cleared first). Plain reads, not
/// `read_to_end`, whose size hint costs a `statx` and an `lseek` each time; a read that does not
/// fill the buffer is the end (a /proc file hands out all it has in one read that fits, a
/// regular file too), which spares the read that would return 0.
fn pread_into(file: &File, buf: &mut Vec<u8>) -> io::Result<()> {
    buf.clear();
    loop {
        if buf.capacity() - buf.len() < 512 {
            buf.reserve(1024);
        }
        let len = buf.len();
        buf.resize(buf.capacity(), 0);
        let want = buf.len() - len;
        match file.read_at(&mut buf[len..], len as u64) {
            Ok(n) => {
                buf.truncate(len + n);
                if n == 0 || n < want {
                    return Ok(());
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => buf.truncate(len),
            Err(e) => {
                buf.truncate(len);
                return Err(e);
            }
        }
    }
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
    fn a_file_longer_than_the_buffer_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let text: Vec<u8> = (0..5000u32).map(|i| b'a' + (i % 26) as u8).collect();
        std::fs::write(&path, &text).unwrap();
        let mut buf = Vec::with_capacity(16);
        read_into(&path, &mut buf).unwrap();
        assert_eq!(buf, text);
        std::fs::write(&path, b"short").unwrap();
        read_into(&path, &mut buf).unwrap();
        assert_eq!(buf, b"short");
        assert!(read_into(&dir.path().join("gone"), &mut buf).is_err());
    }

    #[test]
    fn a_cut_line_is_no_reading() {
        assert_eq!(parse_stat(&LINE[..60]), None);
        assert_eq!(parse_stat(b"4242 py S 1"), None);
    }

    fn write_stat(dir: &Path, pid: u32, ppid: u32, start: u64) {
        std::fs::create_dir_all(dir.join(format!("{pid}/task/{pid}"))).unwrap();
        let line =
            format!("{pid} (p{pid}) S {ppid} 0 0 0 -1 0 0 0 0 0 5 5 0 0 20 0 1 0 {start} 0 10 0\n");
        std::fs::write(dir.join(format!("{pid}/stat")), line).unwrap();
    }

    fn write_children(dir: &Path, pid: u32, kids: &[u32]) {
        let text: Vec<String> = kids.iter().map(u32::to_string).collect();
        std::fs::write(
            dir.join(format!("{pid}/task/{pid}/children")),
            text.join(" "),
        )
        .unwrap();
    }

    /// A proc tree of `(pid, ppid)` (started at `pid`00) with children lists (or without, like
    /// a fixture).
    fn tree(dir: &Path, procs: &[(u32, u32)], lists: bool) {
        for &(pid, ppid) in procs {
            write_stat(dir, pid, ppid, u64::from(pid) * 100);
            if lists {
                let kids: Vec<u32> = procs
                    .iter()
                    .filter(|(_, pp)| *pp == pid)
                    .map(|&(p, _)| p)
                    .collect();
                write_children(dir, pid, &kids);
            }
        }
    }

    fn pids(scan: &Scan) -> Vec<u32> {
        let mut v: Vec<u32> = scan.stats.keys().copied().collect();
        v.sort_unstable();
        v
    }

    fn link(scan: &Scan, pid: u32) -> Option<u32> {
        scan.links().find(|&(p, _)| p == pid).map(|(_, pp)| pp)
    }

    const CAP: usize = 4096;

    #[test]
    fn the_first_tick_walks_the_trees_the_second_lists_then_only_the_trees() {
        let dir = tempfile::tempdir().unwrap();
        // 10 is a GPU process with a worker 11 and grandchild 12; 20 and 21 are elsewhere.
        tree(
            dir.path(),
            &[(1, 0), (10, 1), (11, 10), (12, 11), (20, 1), (21, 20)],
            true,
        );
        let mut s = Scanner::new(dir.path().to_path_buf());
        let first = s.scan(0, &[10], &HashSet::new(), CAP).unwrap();
        assert!(!first.full);
        assert_eq!(pids(&first), vec![10, 11, 12]);
        assert!(first.kept_links.is_empty());
        let members: HashSet<u32> = [11, 12].into();
        // The first listing reads everything it has not seen.
        let listed = s.scan(1_000, &[10], &members, CAP).unwrap();
        assert_eq!(pids(&listed), vec![1, 10, 11, 12, 20, 21]);
        let next = s.scan(2_000, &[10], &members, CAP).unwrap();
        assert_eq!(pids(&next), vec![10, 11, 12]);
        assert!(next.kept_links.is_empty());
        // A new worker appears in its parent's list and is read the same tick.
        tree(dir.path(), &[(10, 1), (13, 10)], true);
        let next = s.scan(3_000, &[10], &members, CAP).unwrap();
        assert_eq!(pids(&next), vec![10, 11, 12, 13]);
        // Every LISTING_MS a listing: the others come as kept links.
        let listed = s.scan(1_000 + LISTING_MS, &[10], &members, CAP).unwrap();
        assert!(!listed.full);
        assert_eq!((link(&listed, 20), link(&listed, 21)), (Some(1), Some(20)));
    }

    #[test]
    fn a_listing_reads_only_the_processes_it_has_not_seen() {
        let dir = tempfile::tempdir().unwrap();
        let mut procs = vec![(1, 0), (10, 1), (11, 10)];
        procs.extend((1000..1300).map(|p| (p, 1)));
        tree(dir.path(), &procs, true);
        let mut s = Scanner::new(dir.path().to_path_buf());
        let members: HashSet<u32> = [11].into();
        s.scan(0, &[10], &HashSet::new(), CAP).unwrap();
        s.scan(1_000, &[10], &members, CAP).unwrap();
        // Three processes born elsewhere; the 300 others are not read again.
        tree(dir.path(), &[(2000, 1), (2001, 1), (2002, 2001)], true);
        let before = s.reads;
        let listed = s.scan(1_000 + LISTING_MS, &[10], &members, CAP).unwrap();
        assert_eq!(
            s.reads - before,
            2 + 3,
            "the tree (10, 11) and the newborns"
        );
        assert_eq!(pids(&listed), vec![10, 11, 2000, 2001, 2002]);
        assert_eq!(listed.kept_links.len(), 1 + 300);
        // One that exited is forgotten.
        std::fs::remove_dir_all(dir.path().join("1000")).unwrap();
        let listed = s
            .scan(1_000 + 2 * LISTING_MS, &[10], &members, CAP)
            .unwrap();
        assert_eq!(link(&listed, 1000), None);
        assert_eq!(listed.kept_links.len(), 1 + 299 + 3);
    }

    #[test]
    fn a_child_forked_by_another_thread_is_found_by_the_next_listing() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path(), &[(1, 0), (10, 1)], true);
        let mut s = Scanner::new(dir.path().to_path_buf());
        s.scan(0, &[10], &HashSet::new(), CAP).unwrap();
        s.scan(1_000, &[10], &HashSet::new(), CAP).unwrap();
        // 13's parent is 10, but it is not in the main thread's list.
        write_stat(dir.path(), 13, 10, 1300);
        assert_eq!(
            link(&s.scan(2_000, &[10], &HashSet::new(), CAP).unwrap(), 13),
            None
        );
        let listed = s
            .scan(1_000 + LISTING_MS, &[10], &HashSet::new(), CAP)
            .unwrap();
        assert_eq!(link(&listed, 13), Some(10));
    }

    #[test]
    fn a_kept_link_is_read_again_when_its_parent_exits_or_its_pid_is_reused() {
        let dir = tempfile::tempdir().unwrap();
        // 30 and 40 are elsewhere, children of 20 and 25; 10 is the GPU process.
        tree(
            dir.path(),
            &[(1, 0), (10, 1), (20, 1), (25, 1), (30, 20), (40, 25)],
            true,
        );
        let mut s = Scanner::new(dir.path().to_path_buf());
        s.scan(0, &[10], &HashSet::new(), CAP).unwrap();
        let listed = s.scan(1_000, &[10], &HashSet::new(), CAP).unwrap();
        assert_eq!((link(&listed, 30), link(&listed, 40)), (Some(20), Some(25)));
        // 20 exits: 30 is re-parented to 1.
        std::fs::remove_dir_all(dir.path().join("20")).unwrap();
        write_stat(dir.path(), 30, 1, 3000);
        // 25 exits and its pid goes to a new child of the GPU process (a new directory, so a
        // new inode: the old one is still there, renamed, while the new one is made).
        let d = dir.path();
        std::fs::rename(d.join("25"), d.join("old-25")).unwrap();
        write_stat(d, 25, 10, 9_000);
        write_children(d, 25, &[]);
        write_children(d, 10, &[25]);
        std::fs::remove_dir_all(d.join("old-25")).unwrap();
        write_stat(d, 40, 1, 4000);
        let before = s.reads;
        let listed = s
            .scan(1_000 + LISTING_MS, &[10], &[25].into(), CAP)
            .unwrap();
        assert_eq!((link(&listed, 30), link(&listed, 40)), (Some(1), Some(1)));
        assert_eq!(link(&listed, 25), Some(10));
        assert_eq!(
            s.reads - before,
            2 + 2,
            "the tree (10, 25), then 30 and 40 again"
        );
    }

    #[test]
    fn the_walk_stops_following_children_past_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let mut procs = vec![(1, 0), (10, 1)];
        procs.extend((100..200).map(|p| (p, 10)));
        tree(dir.path(), &procs, true);
        let mut s = Scanner::new(dir.path().to_path_buf());
        let first = s.scan(0, &[10], &HashSet::new(), 5).unwrap();
        assert!(!first.full, "a big tree is no reason to read every process");
        // The root, the cap, and one more to show the list was cut.
        assert_eq!(first.stats.len(), 1 + 5 + 1);
    }

    #[test]
    fn a_root_not_found_directly_or_no_children_lists_means_a_full_scan() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path(), &[(1, 0), (10, 1), (11, 10)], true);
        let mut s = Scanner::new(dir.path().to_path_buf());
        s.scan(0, &[10], &HashSet::new(), CAP).unwrap();
        assert!(
            s.scan(1_000, &[10, 999], &HashSet::new(), CAP)
                .unwrap()
                .full
        );

        let bare = tempfile::tempdir().unwrap();
        tree(bare.path(), &[(1, 0), (10, 1), (11, 10)], false);
        let mut s = Scanner::new(bare.path().to_path_buf());
        assert!(s.scan(0, &[10], &HashSet::new(), CAP).unwrap().full);
        let next = s.scan(1_000, &[10], &HashSet::new(), CAP).unwrap();
        assert!(next.full);
        assert_eq!(pids(&next), vec![1, 10, 11]);
    }

    #[test]
    fn the_clock_stepping_back_is_a_listing() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path(), &[(1, 0), (10, 1)], true);
        let mut s = Scanner::new(dir.path().to_path_buf());
        s.scan(50_000, &[10], &HashSet::new(), CAP).unwrap();
        s.scan(51_000, &[10], &HashSet::new(), CAP).unwrap();
        let walked = s.scan(52_000, &[10], &HashSet::new(), CAP).unwrap();
        assert!(walked.kept_links.is_empty());
        let listed = s.scan(1_000, &[10], &HashSet::new(), CAP).unwrap();
        assert_eq!(link(&listed, 1), Some(0));
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
