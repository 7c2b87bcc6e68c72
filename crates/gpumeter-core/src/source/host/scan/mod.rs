//! Which `/proc/<pid>/stat` and `children` files a tick reads. Reading every process each tick
//! made the cost grow with everything on the host; only the GPU processes' trees matter. So a
//! tick reads the stat of the GPU processes and of the trees' other members (last tick's), and
//! finds new members through their main thread's `task/<pid>/children` list.
//!
//! Cadences (what a tick reads of a tree):
//! - a GPU process's stat: every tick while the front-end shows it (its CPU %, state and
//!   busiest thread; all of them unless the front-end says otherwise, see
//!   [`crate::source::focus`]); one it does not show (headless `watch` and `serve`, rows off
//!   the dashboard's screen) at the members' cadence below, and on the tick after it is found
//!   (so its CPU % comes at its second tick, as before). One that becomes shown is read at
//!   once. Between reads it keeps its last stat, CPU % and busiest thread: each an exact rate
//!   over the interval between its two last reads;
//! - another member's stat (a worker, a shell): every [`MEMBER_STAT_MS`], each member at its
//!   own phase so the reads spread over the ticks. Between reads the member keeps its last
//!   stat (listed in [`Scan::carried`]); its CPU % is its own Δcpu / Δt between two reads of
//!   it, so a tree's CPU % stays right. The rules that use the trees' CPU and state (starved,
//!   over windows of tens of seconds) see the same means; a member that exits or is
//!   re-parented out of the tree leaves within [`MEMBER_STAT_MS`] (at its next read);
//! - a quiet process's stat (asleep at its last read, no CPU time since the one before: a
//!   shell, a launcher, an idle worker): every [`cadence::QUIET_STAT_MS`]. Its counters are the same at
//!   each read, so its rate (0) holds; the read that shows CPU time or another state (`R`, `D`)
//!   puts it back on [`MEMBER_STAT_MS`], and what it did meanwhile shows as a rate over that
//!   interval (the windows' means stay exact). A quiet member that exits leaves within
//!   [`cadence::QUIET_STAT_MS`]. Where the trees mostly sleep, this spares most of the reads; a GPU
//!   process shown is still read every tick;
//! - every tree process's `children` list: every [`CHILDREN_MS`], staggered the same way, and
//!   at once for a process just found (workers are forked at a job's start, rarely later): a
//!   worker forked by a main thread is in the tree within [`CHILDREN_MS`]. A list read when no
//!   pid was given out since (`loadavg`, where it names this procfs's pids: see `births`) is
//!   not read again: on a quiet machine the lists cost nothing.
//!
//! Children forked by other threads are in those threads' lists, so every [`LISTING_MS`] /proc
//! is listed as well, and only the entries not seen before are read: a process is known by its
//! pid and the inode number of its /proc directory (free in the listing; a new process under a
//! reused pid gets a new one), and what it showed when read (parent, start time) is kept. A
//! kept parent link goes stale only when the parent exits (the process is re-parented): such a
//! link, whose parent is gone or younger than the child, is read again. On a procfs a listing
//! resumes at the last one's highest pid (see [`ProcDir`]), and every [`WHOLE_LISTING_MS`] it
//! lists the whole of /proc: that one sees the processes born under a wrapped pid and drops
//! the ones that exited. So the cost of a listing is the processes born since the last one, not
//! the host.
//!
//! Every stat is read, every tick, when the walk cannot answer: a GPU pid not found directly
//! (the container cases need every process) or a kernel without children lists. The trees'
//! files stay open between ticks (see [`Kept`]). The periods and the per-process read state are
//! [`cadence`]'s.

use std::collections::hash_map::Entry;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};

use super::births::Births;
use super::kept::{pread_into, pread_records, read_into};
use super::proc_dir::{Listed, ProcDir};
use super::stat::{ProcStat, parse_stat, parse_stat_reusing};
use crate::source::focus::Watched;
use cadence::{Cadence, due, phase, quiet};

mod cadence;

pub(super) use cadence::{CHILDREN_MS, LISTING_MS, MEMBER_STAT_MS, WHOLE_LISTING_MS};

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
    dir: ProcDir,
    last_listing_ms: Option<i64>,
    last_whole_ms: Option<i64>,
    /// The last listing's entries, `(pid, inode)` (the buffer is kept).
    listed: Vec<(u32, u64)>,
    /// Whether any tick ran yet: the first one only walks the trees (a fast first reading)
    /// when it can, and the second lists /proc.
    started: bool,
    /// Whether a `task/<tid>/children` list (CONFIG_PROC_CHILDREN) was ever read here.
    children_seen: bool,
    /// Every process the last listing saw, by pid.
    known: HashMap<u32, Known>,
    /// Kept files of the trees' processes, by pid.
    open: HashMap<u32, Kept>,
    /// At most this many processes' files kept ([`MAX_KEPT`]; tests on fixture trees, where
    /// a removed file stays readable through an open one, keep none).
    max_kept: usize,
    /// When each tree process's files were read, by pid.
    cadence: HashMap<u32, Cadence>,
    /// The buffer `stat` files are read into (a read zeroes its spare room first: kept
    /// small, apart from the children lists' page-sized one).
    buf: Vec<u8>,
    list_buf: Vec<u8>,
    /// The walk's working sets and the maps a tick hands out, kept for the next tick (see
    /// [`Scanner::recycle`]): a steady tick allocates none of them.
    spare: Spare,
    /// Whether a process was born since a tick (a `children` list read then still holds).
    births: Births,
    /// Stat files read so far (what a listing saves shows here, in tests).
    reads: u64,
    /// `children` lists read so far (in tests).
    children_reads: u64,
}

/// Buffers kept between ticks.
#[derive(Debug, Default)]
struct Spare {
    stats: HashMap<u32, ProcStat>,
    carried: HashSet<u32>,
    walk: Walk,
}

/// A walk's working sets.
#[derive(Debug, Default)]
struct Walk {
    roots: HashSet<u32>,
    /// Every pid queued so far (the tree's processes once the walk is done).
    queued: HashSet<u32>,
    queue: Vec<u32>,
    kids: Vec<u32>,
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
    /// Members in `stats` not read this tick: their last stat, carried (see the module doc).
    pub(super) carried: HashSet<u32>,
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
            dir: ProcDir::new(proc.clone()),
            proc,
            last_listing_ms: None,
            last_whole_ms: None,
            listed: Vec::new(),
            started: false,
            children_seen: false,
            known: HashMap::new(),
            open: HashMap::new(),
            max_kept: MAX_KEPT,
            cadence: HashMap::new(),
            buf: Vec::with_capacity(1024),
            list_buf: Vec::new(),
            spare: Spare::default(),
            births: Births::default(),
            reads: 0,
            children_reads: 0,
        }
    }

    /// This tick's last pid given out, from `loadavg` read before [`Scanner::scan`] (`None`:
    /// unknown). Trusted only where it names this procfs's own pids: then a tree process's
    /// periodic `children` read waits while no process is born (see `births`).
    pub(super) fn note_last_pid(&mut self, now_ms: i64, last_pid: Option<u32>) {
        let trusted = last_pid.filter(|_| self.dir.names_own_pids());
        self.births.note(now_ms, trusted);
    }

    /// The stats of the trees under `roots` (with last tick's `members`, at most `cap` pids
    /// beyond the roots), plus a listing when one is due, or of every process when the walk
    /// cannot answer.
    pub(super) fn scan(
        &mut self,
        now_ms: i64,
        roots: &[u32],
        members: &HashSet<u32>,
        watched: &Watched,
        cap: usize,
    ) -> io::Result<Scan> {
        let first = !std::mem::replace(&mut self.started, true);
        let Some((stats, carried)) = self.walk(now_ms, roots, members, watched, cap) else {
            return self.full(now_ms);
        };
        let due = self
            .last_listing_ms
            .is_some_and(|t| now_ms < t || now_ms - t >= LISTING_MS);
        if first || !(due || self.last_listing_ms.is_none()) {
            return Ok(Scan {
                stats,
                carried,
                ..Scan::default()
            });
        }
        let mut scan = self.listing(stats, now_ms, false)?;
        scan.carried = carried;
        Ok(scan)
    }

    /// Every process read, as the next tick's fallback too.
    pub(super) fn full(&mut self, now_ms: i64) -> io::Result<Scan> {
        self.cadence.clear();
        self.listing(HashMap::new(), now_ms, true)
    }

    /// The stat of one process (a process that exited gives `None`, and is known no more: a
    /// resumed listing does not drop it).
    pub(super) fn read(&mut self, pid: u32) -> Option<ProcStat> {
        let stat = self.stat(pid);
        if stat.is_none() {
            self.known.remove(&pid);
        }
        stat
    }

    /// Takes back a tick's maps once they are used, emptied, for the next tick's walk.
    pub(super) fn recycle(&mut self, mut stats: HashMap<u32, ProcStat>, mut carried: HashSet<u32>) {
        stats.clear();
        carried.clear();
        if stats.capacity() >= self.spare.stats.capacity() {
            self.spare.stats = stats;
        }
        if carried.capacity() >= self.spare.carried.capacity() {
            self.spare.carried = carried;
        }
    }

    /// Lists /proc: `stats` (read this tick) plus every process not seen before, or every
    /// process when `all`; the others' links are the kept ones. A resumed listing (the
    /// processes born since the last one) adds to the known processes and gives the links of
    /// what it listed; a whole one makes them anew and gives them all.
    fn listing(
        &mut self,
        mut stats: HashMap<u32, ProcStat>,
        now_ms: i64,
        all: bool,
    ) -> io::Result<Scan> {
        let resume = !all
            && self
                .last_whole_ms
                .is_some_and(|t| now_ms >= t && now_ms - t < WHOLE_LISTING_MS);
        let mut listed = std::mem::take(&mut self.listed);
        let whole = self.dir.list(resume, &mut listed)? == Listed::Whole;
        let (mut known, before) = if whole {
            let before = std::mem::take(&mut self.known);
            (HashMap::with_capacity(listed.len()), before)
        } else {
            (std::mem::take(&mut self.known), HashMap::new())
        };
        for &(pid, ino) in &listed {
            let stat = match stats.entry(pid) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(e) => {
                    let kept = if whole { &before } else { &known }
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
        let looked_at: Vec<u32> = if whole {
            known.keys().copied().collect()
        } else {
            listed.iter().map(|&(pid, _)| pid).collect()
        };
        // A kept link whose parent is gone, or whose parent's pid now names a younger process,
        // is stale: the child was re-parented. Read it again (one pass: its start is the same).
        let stale: Vec<u32> = looked_at
            .iter()
            .copied()
            .filter(|pid| {
                !stats.contains_key(pid)
                    && known.get(pid).is_some_and(|k| {
                        k.ppid != 0
                            && known
                                .get(&k.ppid)
                                .is_none_or(|p| p.start_ticks > k.start_ticks)
                    })
            })
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
        let kept_links = looked_at
            .iter()
            .filter(|pid| !stats.contains_key(pid))
            .filter_map(|&pid| known.get(&pid).map(|k| (pid, k.ppid)))
            .collect();
        self.known = known;
        self.listed = listed;
        self.last_listing_ms = Some(now_ms);
        if whole {
            self.last_whole_ms = Some(now_ms);
        }
        Ok(Scan {
            stats,
            kept_links,
            full: all,
            carried: HashSet::new(),
        })
    }

    /// The roots, the members and everything their children lists lead to (at most `cap`
    /// pids beyond the roots: the list is cut there anyway), read at their cadences (the
    /// `watched` roots every tick), and the processes whose stat is carried; `None` when a
    /// root is not here directly, or the walk cannot be trusted (no children lists).
    fn walk(
        &mut self,
        now_ms: i64,
        roots: &[u32],
        members: &HashSet<u32>,
        watched: &Watched,
        cap: usize,
    ) -> Option<(HashMap<u32, ProcStat>, HashSet<u32>)> {
        let mut stats = std::mem::take(&mut self.spare.stats);
        stats.clear();
        stats.reserve(roots.len() + members.len());
        let mut carried = std::mem::take(&mut self.spare.carried);
        carried.clear();
        let mut walk = std::mem::take(&mut self.spare.walk);
        walk.roots.clear();
        walk.roots.extend(roots.iter().copied());
        walk.queued.clear();
        walk.queued.extend(roots.iter().chain(members).copied());
        walk.queue.clear();
        walk.queue.extend(walk.queued.iter().copied());
        let walked = self.walk_from(now_ms, watched, cap, &mut walk, &mut stats, &mut carried);
        if walked {
            self.open.retain(|pid, _| walk.queued.contains(pid));
            self.cadence.retain(|pid, _| walk.queued.contains(pid));
        }
        self.spare.walk = walk;
        if walked {
            Some((stats, carried))
        } else {
            self.recycle(stats, carried);
            None
        }
    }

    /// The walk itself, over the queue (see [`Scanner::walk`]); false when it cannot answer.
    fn walk_from(
        &mut self,
        now_ms: i64,
        watched: &Watched,
        cap: usize,
        walk: &mut Walk,
        stats: &mut HashMap<u32, ProcStat>,
        carried: &mut HashSet<u32>,
    ) -> bool {
        let Walk {
            roots: root_set,
            queued,
            queue,
            kids,
        } = walk;
        // New members up to one more than the cap, so that the tree shows it was cut.
        let limit = root_set.len().saturating_add(cap).saturating_add(1);
        let mut room = limit.saturating_sub(queued.len());
        while let Some(pid) = queue.pop() {
            let root = root_set.contains(&pid);
            let every_tick = root && watched.covers(pid);
            let known = self.cadence.get(&pid);
            let carry = known
                .filter(|c| !every_tick && !due(now_ms, c.stat_ms, c.stat_period()))
                .map(|c| c.stat.clone());
            // Due, and some process was born since it was last read (a list read when no pid
            // was given out since is still whole).
            let read_children = known.is_none_or(|c| {
                due(now_ms, c.children_ms, CHILDREN_MS) && !self.births.none_since(c.children_ms)
            });
            let stat = match carry {
                Some(stat) => {
                    carried.insert(pid);
                    stat
                }
                None => match self.stat(pid) {
                    Some(stat) => stat,
                    None if root => return false,
                    None => {
                        self.cadence.remove(&pid);
                        continue;
                    }
                },
            };
            let fresh = !carried.contains(&pid);
            match self.cadence.entry(pid) {
                Entry::Occupied(mut e) => {
                    let c = e.get_mut();
                    if fresh {
                        c.stat_ms = if std::mem::take(&mut c.rephase) {
                            now_ms - phase(pid, MEMBER_STAT_MS)
                        } else {
                            now_ms
                        };
                        c.quiet = quiet(&c.stat, &stat);
                        c.stat = stat.clone();
                    }
                    if read_children {
                        c.children_ms = now_ms;
                    }
                }
                // Found now: read now, then again at its phase within the period (a GPU
                // process first on the next tick).
                Entry::Vacant(e) => {
                    e.insert(Cadence {
                        stat_ms: if root {
                            now_ms - MEMBER_STAT_MS
                        } else {
                            now_ms - phase(pid, MEMBER_STAT_MS)
                        },
                        children_ms: now_ms - phase(pid, CHILDREN_MS),
                        rephase: root,
                        stat: stat.clone(),
                        quiet: false,
                    });
                }
            }
            stats.insert(pid, stat);
            if !read_children {
                continue;
            }
            if self.children(pid, kids) {
                self.children_seen = true;
                for &kid in kids.iter() {
                    if room == 0 {
                        break;
                    }
                    if queued.insert(kid) {
                        queue.push(kid);
                        room -= 1;
                    }
                }
            } else if !self.children_seen {
                // No list before any was read: this kernel (or fixture) may have none, so
                // the tree cannot be walked (a full scan then tells). After one was read, a
                // missing list is a process that just exited.
                return false;
            }
        }
        true
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
            let known = self.cadence.get(&pid).map(|c| &c.stat.comm);
            return parse_stat_reusing(&self.buf, known);
        }
        let path = self.proc.join(pid.to_string()).join("stat");
        let file = File::open(path).ok()?;
        pread_into(&file, &mut self.buf).ok()?;
        let known = self.cadence.get(&pid).map(|c| &c.stat.comm);
        let stat = parse_stat_reusing(&self.buf, known)?;
        if self.open.len() < self.max_kept {
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

    /// The children of `pid`'s main thread into `kids` (false: a process that exited, or
    /// none).
    fn children(&mut self, pid: u32, kids: &mut Vec<u32>) -> bool {
        kids.clear();
        let Some(listed) = self.children_list(pid) else {
            return false;
        };
        kids.extend(listed);
        true
    }

    /// The children of `pid`'s main thread (a process that exited gives `None`, or none).
    fn children_list(&mut self, pid: u32) -> Option<impl Iterator<Item = u32> + '_> {
        self.children_reads += 1;
        let kept = self.open.get_mut(&pid);
        let read = match kept {
            Some(Kept {
                children: Some(file),
                ..
            }) => pread_records(file, &mut self.list_buf),
            Some(kept) => {
                let path = self.proc.join(format!("{pid}/task/{pid}/children"));
                File::open(path).and_then(|file| {
                    let read = pread_records(&file, &mut self.list_buf);
                    kept.children = Some(file);
                    read
                })
            }
            None => {
                let path = self.proc.join(format!("{pid}/task/{pid}/children"));
                File::open(path).and_then(|file| pread_records(&file, &mut self.list_buf))
            }
        };
        read.ok()?;
        let text = std::str::from_utf8(&self.list_buf).ok()?;
        Some(text.split_ascii_whitespace().filter_map(|p| p.parse().ok()))
    }
}

/// One stat read by path (the listing's newborns: read once, not kept).
fn read_stat(proc: &Path, pid: u32, buf: &mut Vec<u8>) -> Option<ProcStat> {
    read_into(&proc.join(pid.to_string()).join("stat"), buf).ok()?;
    parse_stat(buf)
}

#[cfg(test)]
mod tests;
