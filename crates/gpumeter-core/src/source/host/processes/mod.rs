//! The processes of a reading: every GPU process the driver named (visible in /proc or not)
//! and the visible descendants of the visible ones, each with its host-side facts.
//!
//! Every tick with at least one GPU process reads `/proc/<pid>/stat` of the GPU processes the
//! front-end shows (all, unless it said otherwise: `source::focus`) and, at a slower cadence,
//! of the other GPU processes and the rest of their trees (parents for the tree, CPU time for the
//! per-process rate, start time to spot a reused pid), and lists /proc now and then to read the
//! processes born since (see `scan`); a tick without one reads none. A process's CPU % is its
//! CPU time between its last two reads over the time between them (a member whose stat is
//! carried keeps the rate of its last read). The per-pid CPU counters are replaced wholesale
//! each tick, so exited processes leave no state behind.

use std::collections::BTreeMap;
use std::path::PathBuf;

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use gpumeter_model::{GpuUse, PidMatch, ProcessReading};

use super::gpu_fds::{self, DevDir};
use super::parents::ParentNames;
use super::pid_match::{self, Candidate, Wanted};
use super::scan::Scanner;
use super::stat::ProcStat;
use super::statics::{Key, StaticsCache};
use super::threads::ThreadTracker;
use super::{Roots, Warnings, tree};
use crate::source::focus::{ProcessFocus, Watched};

/// Most descendants listed (a GPU process that is, say, a session's init would otherwise pull
/// in the whole machine).
const MAX_DESCENDANTS: usize = 4096;

/// Per-process state kept between ticks.
#[derive(Debug)]
pub(super) struct ProcessTracker {
    proc: PathBuf,
    ticks_per_s: u64,
    page_size: u64,
    /// Each process's CPU counters at its last read, and the rate they gave.
    /// Updated in place each tick (see `sample`), so no map is built per tick.
    prev_cpu: HashMap<u32, CpuRead>,
    /// Ticks that read processes, to mark the `prev_cpu` entries a tick kept.
    cpu_tick: u64,
    statics: StaticsCache,
    scanner: Scanner,
    /// Last tick's descendants of the GPU processes (the tree walk starts from them).
    members: HashSet<u32>,
    /// The tick before's, emptied and filled as the next `members`.
    spare_members: HashSet<u32>,
    /// Whether `members` is the tree walk's last answer (else it is made again).
    members_walked: bool,
    /// Buffers of each tick, kept for the next (a steady tick allocates none of them).
    buffers: Buffers,
    dev: DevDir,
    threads: ThreadTracker,
    /// The front-end's hint, and what it said when last looked at.
    focus: ProcessFocus,
    focus_seen: Option<u64>,
    watched: Watched,
    /// The GPU processes' parents' names (a shell, or a launcher).
    parents: ParentNames,
}

/// What a tick works with, kept between ticks.
#[derive(Debug, Default)]
struct Buffers {
    gpu_pids: Vec<u32>,
    visible: Vec<Located>,
    missing: Vec<u32>,
    roots: Vec<u32>,
    walk: tree::TreeWalk,
    rows: Vec<Row>,
}

/// One process of this tick's reading, before its reading is built.
#[derive(Debug)]
struct Row {
    /// Its directory here.
    dir: u32,
    /// The driver's pid, when not `dir`.
    host_pid: Option<u32>,
    how: Option<PidMatch>,
    gpu: Vec<GpuUse>,
    read_statics: bool,
}

/// A process's CPU counters when its stat was last read.
#[derive(Debug, Clone, Copy, PartialEq)]
struct CpuRead {
    start_ticks: u64,
    cpu_ticks: u64,
    at_ms: i64,
    /// CPU % since the read before (`None`: no earlier read of this process).
    pct: Option<f64>,
    /// The tick that last kept it.
    seen: u64,
}

/// A GPU process found here: the driver's pid, its directory here, and how they were tied
/// (`None`: the same pid).
type Located = (u32, u32, Option<PidMatch>);

impl ProcessTracker {
    pub(super) fn new(roots: &Roots, ticks_per_s: u64, page_size: u64) -> Self {
        Self {
            proc: roots.proc.clone(),
            ticks_per_s,
            page_size,
            prev_cpu: HashMap::new(),
            cpu_tick: 0,
            statics: StaticsCache::new(roots.proc.clone(), roots.etc.join("passwd")),
            scanner: Scanner::new(roots.proc.clone()),
            members: HashSet::new(),
            spare_members: HashSet::new(),
            members_walked: false,
            buffers: Buffers::default(),
            dev: DevDir::open(&roots.dev),
            threads: ThreadTracker::default(),
            focus: ProcessFocus::new(),
            focus_seen: None,
            watched: Watched::All,
            parents: ParentNames::new(),
        }
    }

    pub(super) fn set_focus(&mut self, focus: ProcessFocus) {
        self.focus = focus;
        self.focus_seen = None;
    }

    /// The readings for this tick, sorted by pid. Each GPU process's uses are moved out of
    /// `gpu_procs` into its reading (the map is left with empty lists).
    pub(super) fn sample(
        &mut self,
        now_ms: i64,
        gpu_procs: &mut BTreeMap<u32, Vec<GpuUse>>,
        boot_time_unix_s: Option<i64>,
        last_pid: Option<u32>,
        warnings: &mut Warnings,
    ) -> Vec<ProcessReading> {
        if gpu_procs.is_empty() {
            // Nothing feeds a GPU: skip reading every process (an idle machine stays quiet).
            // The next GPU process then starts without a CPU rate for one tick.
            self.prev_cpu.clear();
            self.members.clear();
            self.members_walked = false;
            self.statics.end_tick(|_, _| false);
            return Vec::new();
        }
        if let Some(watched) = self.focus.changed_since(&mut self.focus_seen) {
            self.watched = watched;
        }
        let mut buf = std::mem::take(&mut self.buffers);
        buf.gpu_pids.clear();
        buf.gpu_pids.extend(gpu_procs.keys().copied());
        let gpu_pids = &buf.gpu_pids;
        self.scanner.note_last_pid(now_ms, last_pid);
        let mut scanned = self.scanner.scan(
            now_ms,
            gpu_pids,
            &self.members,
            &self.watched,
            MAX_DESCENDANTS,
        );
        let partial_miss =
            |s: &super::scan::Scan| !s.full && gpu_pids.iter().any(|p| !s.stats.contains_key(p));
        if scanned.as_ref().is_ok_and(partial_miss) {
            // A GPU pid not here directly: finding it (NSpid) needs every process.
            scanned = self.scanner.full(now_ms);
        }
        let scan = scanned.unwrap_or_else(|e| {
            warnings.push(format!("cannot list processes: {e}"));
            super::scan::Scan::default()
        });

        self.locate(
            &scan.stats,
            gpu_procs,
            warnings,
            (&mut buf.visible, &mut buf.missing),
        );
        buf.roots.clear();
        buf.roots.extend(buf.visible.iter().map(|&(_, dir, _)| dir));
        buf.walk
            .descendants(&buf.roots, scan.links(), MAX_DESCENDANTS);
        let found = buf.walk.answer();
        let mut stats = scan.stats;
        // Members placed by a kept link (found by a listing) are read now (without kept
        // links, every member was reached through a stat read this tick).
        if !scan.kept_links.is_empty() {
            for &pid in &found.pids {
                if !stats.contains_key(&pid)
                    && let Some(stat) = self.scanner.read(pid)
                {
                    stats.insert(pid, stat);
                }
            }
        }
        // `known`: last tick's members; `self.members`: this tick's (the same set when the
        // walk gave its last answer again and the members were made from it).
        let same_members = buf.walk.reused() && self.members_walked;
        if !same_members {
            std::mem::swap(&mut self.spare_members, &mut self.members);
            self.members.clear();
            self.members.extend(found.pids.iter().copied());
            self.members_walked = true;
        }
        let known = if same_members {
            &self.members
        } else {
            &self.spare_members
        };
        if found.truncated {
            warnings.push(format!(
                "more than {MAX_DESCENDANTS} processes below the GPU processes: list cut"
            ));
        }

        let carried = scan.carried;
        // A read process's counters are replaced, a carried one's kept, the rest (no longer
        // read) dropped: one look-up each, no map built.
        self.cpu_tick = self.cpu_tick.wrapping_add(1);
        let (tick, tps) = (self.cpu_tick, self.ticks_per_s);
        for (&pid, s) in &stats {
            if carried.contains(&pid) {
                if let Some(p) = self.prev_cpu.get_mut(&pid) {
                    p.seen = tick;
                }
                continue;
            }
            match self.prev_cpu.entry(pid) {
                std::collections::hash_map::Entry::Occupied(mut e) => {
                    let next = cpu_read(tps, Some(*e.get()), s, now_ms, tick);
                    *e.get_mut() = next;
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(cpu_read(tps, None, s, now_ms, tick));
                }
            }
        }
        self.prev_cpu.retain(|_, c| c.seen == tick);
        // In pid order before the readings are built (sorting the large readings after
        // moved each several times); the sort below then finds them in order. The GPU
        // processes come first where a pid is both (as a stable sort of the two lists would
        // leave them), and their list is usually in order already; the descendants are.
        if !buf.visible.is_sorted_by_key(|&(_, dir, _)| dir) {
            buf.visible.sort_by_key(|&(_, dir, _)| dir);
        }
        let rows = &mut buf.rows;
        rows.clear();
        let mut gpu_rows = buf.visible.iter().peekable();
        let mut tree_rows = found.pids.iter().peekable();
        loop {
            let gpu_first = match (gpu_rows.peek(), tree_rows.peek()) {
                (Some(&&(_, dir, _)), Some(&&pid)) => dir <= pid,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            let row = if gpu_first {
                let Some(&(reported, dir, how)) = gpu_rows.next() else {
                    break;
                };
                Row {
                    dir,
                    host_pid: (reported != dir).then_some(reported),
                    how,
                    gpu: gpu_procs
                        .get_mut(&reported)
                        .map(std::mem::take)
                        .unwrap_or_default(),
                    read_statics: true,
                }
            } else {
                let Some(&pid) = tree_rows.next() else {
                    break;
                };
                // A descendant's statics wait for its second tick here (see `statics`).
                Row {
                    dir: pid,
                    host_pid: None,
                    how: None,
                    gpu: Vec::new(),
                    read_statics: known.contains(&pid),
                }
            };
            rows.push(row);
        }
        let mut out: Vec<ProcessReading> = Vec::with_capacity(rows.len() + buf.missing.len());
        for row in rows.drain(..) {
            let Some(stat) = stats.get(&row.dir) else {
                continue;
            };
            let dir = row.dir;
            let cpu_pct = self.prev_cpu.get(&dir).and_then(|c| c.pct);
            let when = Reading {
                boot_time_unix_s,
                now_ms,
                cpu_pct,
                read_statics: row.read_statics,
            };
            let mut reading = self.reading(dir, stat, &when);
            if !row.gpu.is_empty() {
                let fresh = !carried.contains(&dir);
                reading.busiest_thread =
                    self.threads
                        .busiest(&self.proc, dir, stat, now_ms, self.ticks_per_s, fresh);
                reading.parent_name = self.parents.name(&self.proc, stat.ppid, now_ms);
            }
            reading.host_pid = row.host_pid;
            reading.pid_match = row.how;
            reading.gpu = row.gpu;
            out.push(reading);
        }
        self.threads.end_tick();
        self.parents.end_tick();
        if !buf.missing.is_empty() {
            warnings.push(format!(
                "{} GPU process(es) not visible in {} and held by no process here (exited, or \
                 outside this container: run gpumeter on the host or with --pid=host); shown by \
                 host PID only",
                buf.missing.len(),
                self.proc.display()
            ));
        }
        for &pid in &buf.missing {
            let mut reading = ProcessReading::invisible(pid);
            reading.gpu = gpu_procs
                .get_mut(&pid)
                .map(std::mem::take)
                .unwrap_or_default();
            out.push(reading);
        }
        if !out.is_sorted_by_key(|r| r.pid) {
            out.sort_by_key(|r| r.pid);
        }

        let denied = self
            .statics
            .end_tick(|pid, start| stats.get(&pid).is_some_and(|s| s.start_ticks == start));
        if denied > 0 {
            warnings.push(format!(
                "{denied} process file(s) not readable (permission denied)"
            ));
        }
        self.scanner.recycle(stats, carried);
        self.buffers = buf;
        out
    }

    /// Where each GPU process lives in this /proc (into `visible`), and the reported pids
    /// found nowhere (into `missing`). A pid missing here is looked for through `NSpid` first,
    /// then among the processes holding a GPU device open (see `pid_match`).
    fn locate(
        &mut self,
        stats: &HashMap<u32, ProcStat>,
        gpu_procs: &BTreeMap<u32, Vec<GpuUse>>,
        warnings: &mut Warnings,
        (visible, missing): (&mut Vec<Located>, &mut Vec<u32>),
    ) {
        visible.clear();
        missing.clear();
        for &pid in gpu_procs.keys() {
            if stats.contains_key(&pid) {
                visible.push((pid, pid, None));
            } else {
                missing.push(pid);
            }
        }
        if !missing.is_empty() {
            let mapped = self.map_by_nspid(stats, missing);
            missing.retain(|pid| !mapped.contains_key(pid));
            visible.extend(
                mapped
                    .into_iter()
                    .map(|(r, d)| (r, d, Some(PidMatch::Nspid))),
            );
        }
        if !missing.is_empty() {
            let taken: HashSet<u32> = visible.iter().map(|&(_, dir, _)| dir).collect();
            let mapped = self.map_by_device(stats, gpu_procs, missing, &taken, warnings);
            missing.retain(|pid| !mapped.iter().any(|&(r, _, _)| r == *pid));
            visible.extend(mapped);
        }
    }

    /// Missing driver pids paired with the processes here that hold their GPUs open.
    fn map_by_device(
        &self,
        stats: &HashMap<u32, ProcStat>,
        gpu_procs: &BTreeMap<u32, Vec<GpuUse>>,
        missing: &[u32],
        taken: &HashSet<u32>,
        warnings: &mut Warnings,
    ) -> Vec<Located> {
        let pids = stats.keys().copied().filter(|p| !taken.contains(p));
        let holders = gpu_fds::scan(&self.proc, &self.dev, pids);
        if holders.denied > 0 {
            warnings.push(format!(
                "open files of {} process(es) not readable (permission denied): a GPU process \
                 among them cannot be tied to its host PID",
                holders.denied
            ));
        }
        let wanted: Vec<Wanted> = missing
            .iter()
            .map(|&pid| {
                let uses = gpu_procs.get(&pid).map(Vec::as_slice).unwrap_or_default();
                Wanted {
                    host_pid: pid,
                    gpus: uses.iter().map(|u| u.gpu_index).collect(),
                    memory_bytes: uses.iter().filter_map(|u| u.memory_bytes).sum(),
                }
            })
            .collect();
        let all_gpus: std::collections::BTreeSet<u32> =
            wanted.iter().flat_map(|w| w.gpus.iter().copied()).collect();
        let candidates: Vec<Candidate> = holders
            .gpus
            .iter()
            .map(|(&pid, gpus)| (pid, gpus.clone()))
            // A process whose fds are hidden but which maps CUDA may hold any GPU.
            .chain(holders.cuda_hint.iter().map(|&pid| (pid, all_gpus.clone())))
            .filter_map(|(pid, gpus)| {
                Some(Candidate {
                    pid,
                    start_ticks: stats.get(&pid)?.start_ticks,
                    gpus,
                })
            })
            .collect();
        let hinted = |pid: u32| holders.cuda_hint.contains(&pid);
        pid_match::pair(&wanted, &candidates)
            .into_iter()
            .map(|(host, local, how)| {
                let how = if hinted(local) { PidMatch::Guess } else { how };
                (host, local, Some(how))
            })
            .collect()
    }

    /// How many pids have CPU counters and cached details kept.
    #[cfg(test)]
    pub(super) fn tracked(&self) -> (usize, usize) {
        (self.prev_cpu.len(), self.statics.len())
    }

    /// GPU pids missing from this /proc, matched to visible processes whose outermost `NSpid`
    /// entry names them (see the module doc of `host` for when that can happen).
    fn map_by_nspid(
        &mut self,
        stats: &HashMap<u32, ProcStat>,
        missing: &[u32],
    ) -> BTreeMap<u32, u32> {
        let wanted: HashSet<u32> = missing.iter().copied().collect();
        let mut found: BTreeMap<u32, u32> = BTreeMap::new();
        for (&pid, s) in stats {
            let key = Key {
                pid,
                start_ticks: s.start_ticks,
                comm: &s.comm,
            };
            if let Some(outer) = self.statics.status(key).and_then(|st| st.outer_pid())
                && outer != pid
                && wanted.contains(&outer)
            {
                found.entry(outer).or_insert(pid);
            }
        }
        found
    }
}

/// A fresh read's counters, with its CPU use since the previous read, in percent of one core.
/// Only the same pid with the same start time is the same process, whose tick counters can be
/// compared.
fn cpu_read(
    ticks_per_s: u64,
    prev: Option<CpuRead>,
    stat: &ProcStat,
    now_ms: i64,
    seen: u64,
) -> CpuRead {
    let pct = prev.and_then(|p| {
        if p.start_ticks != stat.start_ticks || stat.cpu_ticks < p.cpu_ticks || now_ms <= p.at_ms {
            return None;
        }
        let dt_s = (now_ms - p.at_ms) as f64 / 1000.0;
        Some((stat.cpu_ticks - p.cpu_ticks) as f64 / ticks_per_s as f64 / dt_s * 100.0)
    });
    CpuRead {
        start_ticks: stat.start_ticks,
        cpu_ticks: stat.cpu_ticks,
        at_ms: now_ms,
        pct,
        seen,
    }
}

impl ProcessTracker {
    /// One visible process's reading, without its GPU use (pid = its directory here).
    fn reading(&mut self, dir: u32, stat: &ProcStat, when: &Reading) -> ProcessReading {
        let Reading {
            boot_time_unix_s,
            now_ms,
            cpu_pct,
            read_statics,
        } = *when;
        let key = Key {
            pid: dir,
            start_ticks: stat.start_ticks,
            comm: &stat.comm,
        };
        // Shared strings: a reading clones pointers to the cached facts.
        let shown = self.statics.shown(key, now_ms, read_statics);
        let tps = self.ticks_per_s;
        ProcessReading {
            pid: dir,
            visible: true,
            ns_pid: shown.ns_pid,
            ppid: Some(stat.ppid).filter(|&p| p != 0),
            user: shown.user,
            container: shown.container,
            name: Some(shown.name),
            command: shown.command,
            cpu_pct,
            rss_bytes: Some(stat.rss_pages.saturating_mul(self.page_size)),
            start_time_unix_s: boot_time_unix_s
                .map(|b| b.saturating_add((stat.start_ticks / tps) as i64)),
            state: Some(stat.state),
            threads: stat.threads,
            gpu: Vec::new(),
            cpus_allowed: shown.cpus_allowed,
            cpus_allowed_list: shown.cpus_allowed_list,
            host_pid: None,
            pid_match: None,
            busiest_thread: None,
            pod: shown.pod,
            parent_name: None,
        }
    }
}

/// What one process's reading is taken with.
#[derive(Debug, Clone, Copy)]
struct Reading {
    boot_time_unix_s: Option<i64>,
    now_ms: i64,
    cpu_pct: Option<f64>,
    /// Whether its statics are read if not cached (else only what is cached is used).
    read_statics: bool,
}

#[cfg(test)]
mod tests;
