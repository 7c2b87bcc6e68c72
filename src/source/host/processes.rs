//! The processes of a reading: every GPU process the driver named (visible in /proc or not)
//! and the visible descendants of the visible ones, each with its host-side facts.
//!
//! Every tick with at least one GPU process reads `/proc/<pid>/stat` of the GPU processes and
//! their trees (parents for the tree, CPU time for the per-process rate, start time to spot a
//! reused pid), and of every process only now and then (see `scan`); a tick without one reads
//! none. The per-pid CPU counters are replaced wholesale each tick, so exited processes leave
//! no state behind.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;

use gpumeter_model::{GpuUse, ProcessReading};

use super::scan::{ProcStat, Scanner};
use super::statics::{Key, StaticsCache};
use super::{Roots, Warnings, tree};
use crate::sanitize::{MAX_NAME_CHARS, sanitize};

/// Most descendants listed (a GPU process that is, say, a session's init would otherwise pull
/// in the whole machine).
const MAX_DESCENDANTS: usize = 4096;

/// Per-process state kept between ticks.
#[derive(Debug)]
pub(super) struct ProcessTracker {
    proc: PathBuf,
    ticks_per_s: u64,
    page_size: u64,
    /// (start ticks, cpu ticks) per pid at the previous tick, and when that was.
    prev_cpu: HashMap<u32, (u64, u64)>,
    prev_ms: Option<i64>,
    statics: StaticsCache,
    scanner: Scanner,
    /// Last tick's descendants of the GPU processes (the tree walk starts from them).
    members: HashSet<u32>,
}

impl ProcessTracker {
    pub(super) fn new(roots: &Roots, ticks_per_s: u64, page_size: u64) -> Self {
        Self {
            proc: roots.proc.clone(),
            ticks_per_s,
            page_size,
            prev_cpu: HashMap::new(),
            prev_ms: None,
            statics: StaticsCache::new(roots.proc.clone(), roots.etc.join("passwd")),
            scanner: Scanner::new(roots.proc.clone()),
            members: HashSet::new(),
        }
    }

    /// The readings for this tick, sorted by pid.
    pub(super) fn sample(
        &mut self,
        now_ms: i64,
        gpu_procs: &BTreeMap<u32, Vec<GpuUse>>,
        boot_time_unix_s: Option<i64>,
        warnings: &mut Warnings,
    ) -> Vec<ProcessReading> {
        if gpu_procs.is_empty() {
            // Nothing feeds a GPU: skip reading every process (an idle machine stays quiet).
            // The next GPU process then starts without a CPU rate for one tick.
            self.prev_cpu.clear();
            self.prev_ms = None;
            self.members.clear();
            self.statics.end_tick(|_, _| false);
            return Vec::new();
        }
        let gpu_pids: Vec<u32> = gpu_procs.keys().copied().collect();
        let mut scanned = self.scanner.scan(now_ms, &gpu_pids, &self.members);
        let partial_miss =
            |s: &super::scan::Scan| !s.full && gpu_pids.iter().any(|p| !s.stats.contains_key(p));
        if scanned.as_ref().is_ok_and(partial_miss) {
            // A GPU pid not here directly: finding it (NSpid) needs every process.
            scanned = self.scanner.full(now_ms);
        }
        let stats = scanned.map(|s| s.stats).unwrap_or_else(|e| {
            warnings.push(format!("cannot list processes: {e}"));
            HashMap::new()
        });

        let (visible, missing) = self.locate(&stats, gpu_procs);
        // A mapped process's children name it by its directory pid: show the reported one.
        let alias: HashMap<u32, u32> = visible
            .iter()
            .filter(|(reported, dir)| reported != dir)
            .map(|&(reported, dir)| (dir, reported))
            .collect();

        let roots: Vec<u32> = visible.iter().map(|&(_, dir)| dir).collect();
        let found = tree::descendants(
            &roots,
            stats.iter().map(|(&p, s)| (p, s.ppid)),
            MAX_DESCENDANTS,
        );
        self.members = found.pids.iter().copied().collect();
        if found.truncated {
            warnings.push(format!(
                "more than {MAX_DESCENDANTS} processes below the GPU processes: list cut"
            ));
        }

        let dt_s = self
            .prev_ms
            .filter(|&prev| now_ms > prev)
            .map(|prev| (now_ms - prev) as f64 / 1000.0);
        let members = visible
            .iter()
            .map(|&(reported, dir)| {
                (
                    reported,
                    dir,
                    gpu_procs.get(&reported).cloned().unwrap_or_default(),
                )
            })
            .chain(found.pids.iter().map(|&pid| (pid, pid, Vec::new())));
        let mut out: Vec<ProcessReading> = Vec::new();
        for (reported, dir, gpu) in members {
            let Some(stat) = stats.get(&dir) else {
                continue;
            };
            let mut reading = self.reading(reported, dir, stat, boot_time_unix_s, now_ms, dt_s);
            reading.ppid = reading.ppid.map(|p| alias.get(&p).copied().unwrap_or(p));
            reading.gpu = gpu;
            out.push(reading);
        }
        if !missing.is_empty() {
            warnings.push(format!(
                "{} GPU process(es) not visible in {} (exited, or in another PID namespace: \
                 run gpumeter on the host or with --pid=host); shown by PID only",
                missing.len(),
                self.proc.display()
            ));
        }
        for pid in missing {
            let mut reading = ProcessReading::invisible(pid);
            reading.gpu = gpu_procs.get(&pid).cloned().unwrap_or_default();
            out.push(reading);
        }
        out.sort_by_key(|r| r.pid);

        self.prev_cpu = stats
            .iter()
            .map(|(&pid, s)| (pid, (s.start_ticks, s.cpu_ticks)))
            .collect();
        self.prev_ms = Some(now_ms);
        let denied = self
            .statics
            .end_tick(|pid, start| stats.get(&pid).is_some_and(|s| s.start_ticks == start));
        if denied > 0 {
            warnings.push(format!(
                "{denied} process file(s) not readable (permission denied)"
            ));
        }
        out
    }

    /// Where each GPU process lives in this /proc, as (reported pid, directory pid) pairs, and
    /// the reported pids found nowhere.
    fn locate(
        &mut self,
        stats: &HashMap<u32, ProcStat>,
        gpu_procs: &BTreeMap<u32, Vec<GpuUse>>,
    ) -> (Vec<(u32, u32)>, Vec<u32>) {
        let (mut visible, mut missing): (Vec<(u32, u32)>, Vec<u32>) = (Vec::new(), Vec::new());
        for &pid in gpu_procs.keys() {
            if stats.contains_key(&pid) {
                visible.push((pid, pid));
            } else {
                missing.push(pid);
            }
        }
        if !missing.is_empty() {
            let mapped = self.map_by_nspid(stats, &missing);
            missing.retain(|pid| !mapped.contains_key(pid));
            visible.extend(mapped);
        }
        (visible, missing)
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

    /// CPU use since the previous tick, in percent of one core. Only the same pid with the same
    /// start time is the same process, whose tick counters can be compared.
    fn cpu_pct(&self, dir: u32, stat: &ProcStat, dt_s: Option<f64>) -> Option<f64> {
        let &(prev_start, prev_ticks) = self.prev_cpu.get(&dir)?;
        let dt_s = dt_s?;
        if prev_start != stat.start_ticks || stat.cpu_ticks < prev_ticks {
            return None;
        }
        Some((stat.cpu_ticks - prev_ticks) as f64 / self.ticks_per_s as f64 / dt_s * 100.0)
    }

    /// One visible process's reading, without its GPU use.
    fn reading(
        &mut self,
        reported: u32,
        dir: u32,
        stat: &ProcStat,
        boot_time_unix_s: Option<i64>,
        now_ms: i64,
        dt_s: Option<f64>,
    ) -> ProcessReading {
        let key = Key {
            pid: dir,
            start_ticks: stat.start_ticks,
            comm: &stat.comm,
        };
        let statics = self.statics.all(key, now_ms);
        let tps = self.ticks_per_s;
        ProcessReading {
            pid: reported,
            visible: true,
            ns_pid: statics.status.as_ref().and_then(|s| s.ns_pid(reported)),
            ppid: Some(stat.ppid).filter(|&p| p != 0),
            user: statics.user,
            container: statics.container.flatten(),
            name: Some(sanitize(&stat.comm, MAX_NAME_CHARS)),
            command: statics.command,
            cpu_pct: self.cpu_pct(dir, stat, dt_s),
            rss_bytes: Some(stat.rss_pages.saturating_mul(self.page_size)),
            start_time_unix_s: boot_time_unix_s
                .map(|b| b.saturating_add((stat.start_ticks / tps) as i64)),
            state: Some(stat.state),
            threads: stat.threads,
            gpu: Vec::new(),
            cpus_allowed: statics.status.as_ref().and_then(|s| s.cpus_allowed),
        }
    }
}
