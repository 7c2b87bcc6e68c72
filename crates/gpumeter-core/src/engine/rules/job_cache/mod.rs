//! The jobs of a tick, kept from tick to tick. [`job::jobs`] builds them from the whole
//! snapshot (holders, main processes, process trees), but they change only when processes
//! come, go, move between GPUs or swap which holds the most memory. [`JobCache`] works out
//! each tick the *shape* `jobs` is made of — every process's pid and parent in order, its
//! compute uses of working GPUs, and each GPU's main process — in one pass without allocating,
//! and rebuilds the jobs only when that shape changed.
//!
//! With the jobs it keeps a plan per job: the snapshot positions of its tree, its roots and
//! each root's subtree, valid while the shape (so the pid order) stands. A job's numbers are
//! then a walk over positions ([`JobCache::sample`]) instead of a pid lookup per process and
//! a scan of the snapshot per root: the same [`JobSample`] as [`job::sample_in`], which stays
//! the reference (and the path for a snapshot that lists a pid twice).

use gpumeter_model::{GpuProcessKind, GpuState, ProcessReading, Snapshot};
use std::cmp::Reverse;

use super::job::{self, Job, JobSample};

/// Snapshot positions of one job's processes (see the module doc).
#[derive(Debug, Clone, Default, PartialEq)]
struct Plan {
    /// The tree's processes, in tree order.
    tree: Vec<usize>,
    /// The roots, in the job's root order.
    roots: Vec<usize>,
    /// The roots in snapshot order (the busiest thread's tie-break).
    roots_in_order: Vec<usize>,
    /// Each root's own subtree (the affinity fallback), in root order.
    subtrees: Vec<Vec<usize>>,
    /// The distinct CPU lists of the tree's visible processes at the last update (empty when
    /// one had none), and the size of their union: parsed again only when the lists change.
    lists: Vec<String>,
    union: Option<f64>,
}

impl Plan {
    /// Brings `lists` and `union` up to `snap` (the snapshot the plan's positions are for).
    fn refresh_affinity(&mut self, snap: &Snapshot) {
        // Ranks mostly share one list, so a short list beats a set; none when a visible
        // process has none.
        let mut now: Vec<&str> = Vec::new();
        for p in self.tree.iter().filter_map(|at| snap.processes.get(*at)) {
            if !p.visible {
                continue;
            }
            match p.cpus_allowed_list.as_deref() {
                Some(l) if !now.contains(&l) => now.push(l),
                Some(_) => {}
                None => {
                    now.clear();
                    break;
                }
            }
        }
        let same =
            now.len() == self.lists.len() && now.iter().zip(&self.lists).all(|(a, b)| a == b);
        if !same || self.lists.is_empty() {
            self.union = job::union_size(now.iter().copied());
            self.lists = now.into_iter().map(str::to_string).collect();
        }
    }
}

/// The last tick's jobs and the shape they were built from.
#[derive(Debug, Clone, Default)]
pub(crate) struct JobCache {
    /// The shape of the snapshot the jobs were built from (see [`shape`]).
    shape: Vec<u32>,
    /// This tick's shape, compared with `shape` (kept to reuse its allocation).
    next: Vec<u32>,
    /// Per GPU with a compute holder: (GPU, memory, position of the main process).
    mains: Vec<(u32, u64, usize)>,
    /// GPUs a compute process holds this tick (whatever the GPU's state).
    held: Vec<u32>,
    jobs: Vec<Job>,
    /// One per job; `None` when the snapshot lists a pid twice (then the reference path).
    plans: Option<Vec<Plan>>,
    /// Shapes rebuilt (for the tests: the cache must hit while nothing moves).
    rebuilds: u64,
}

impl JobCache {
    /// Brings the jobs up to `snap`: rebuilt when its shape differs from the last one's.
    pub(crate) fn update(&mut self, snap: &Snapshot) {
        shape(snap, &mut self.next, &mut self.mains, &mut self.held);
        if self.next != self.shape || self.rebuilds == 0 {
            std::mem::swap(&mut self.shape, &mut self.next);
            self.jobs = job::jobs(snap);
            self.plans = plans(snap, &self.jobs);
            self.rebuilds += 1;
        }
        for plan in self.plans.iter_mut().flatten() {
            plan.refresh_affinity(snap);
        }
    }

    /// The jobs holding GPUs at the last [`JobCache::update`], in key order.
    pub(crate) fn jobs(&self) -> &[Job] {
        &self.jobs
    }

    /// Whether a compute process holds `gpu` (as [`job::held`]).
    pub(crate) fn held(&self, gpu: u32) -> bool {
        self.held.contains(&gpu)
    }

    #[cfg(test)]
    pub(crate) fn rebuilds(&self) -> u64 {
        self.rebuilds
    }

    /// The numbers of job `i` in `snap` (the snapshot of the last update), as
    /// [`job::sample_in`] gives them.
    pub(crate) fn sample(&self, snap: &Snapshot, i: usize) -> Option<JobSample> {
        let job = self.jobs.get(i)?;
        Some(match self.plans.as_ref().and_then(|p| p.get(i)) {
            Some(plan) => planned(snap, job, plan),
            None => job::sample_in(snap, job, &job::by_pid(snap)),
        })
    }

    /// The earliest start time (Unix s) among job `i`'s GPU processes, as a scan of the
    /// snapshot for each root finds it.
    pub(crate) fn roots_started(&self, snap: &Snapshot, i: usize) -> Option<i64> {
        let job = self.jobs.get(i)?;
        match self.plans.as_ref().and_then(|p| p.get(i)) {
            Some(plan) => plan
                .roots
                .iter()
                .filter_map(|&at| snap.processes.get(at)?.start_time_unix_s)
                .min(),
            None => job
                .roots
                .iter()
                .filter_map(|pid| snap.processes.iter().find(|p| p.pid == *pid))
                .filter_map(|p| p.start_time_unix_s)
                .min(),
        }
    }
}

/// What [`job::jobs`] is made of, as words: per process its pid, its parent and the working
/// GPUs it computes on, then per held GPU its main process (most memory there; the last of
/// equals, as `max_by_key` picks). Also fills `held` (as [`job::held`]).
fn shape(
    snap: &Snapshot,
    out: &mut Vec<u32>,
    mains: &mut Vec<(u32, u64, usize)>,
    held: &mut Vec<u32>,
) {
    out.clear();
    mains.clear();
    held.clear();
    let word = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    out.push(word(snap.processes.len()));
    for (at, p) in snap.processes.iter().enumerate() {
        out.push(p.pid);
        match p.ppid {
            Some(pp) => out.extend([1, pp]),
            None => out.push(0),
        }
        let count_at = out.len();
        out.push(0);
        for u in p.gpu.iter().filter(|u| u.kind != GpuProcessKind::Graphics) {
            if !held.contains(&u.gpu_index) {
                held.push(u.gpu_index);
            }
            let ok = snap
                .gpu(u.gpu_index)
                .is_some_and(|g| g.state == GpuState::Ok);
            if !ok {
                continue;
            }
            out.push(u.gpu_index);
            out[count_at] += 1;
            let mem = mem_on(p, u.gpu_index);
            match mains.iter_mut().find(|m| m.0 == u.gpu_index) {
                Some(m) => {
                    let best = (m.1, Reverse(snap.processes[m.2].pid));
                    if (mem, Reverse(p.pid)) >= best {
                        (m.1, m.2) = (mem, at);
                    }
                }
                None => mains.push((u.gpu_index, mem, at)),
            }
        }
    }
    mains.sort_unstable_by_key(|m| m.0);
    for &(gpu, _, at) in mains.iter() {
        out.extend([gpu, word(at)]);
    }
}

/// The memory a process holds on `gpu`, as [`job::jobs`] ranks it (its first use there).
fn mem_on(p: &ProcessReading, gpu: u32) -> u64 {
    p.gpu
        .iter()
        .find(|u| u.gpu_index == gpu)
        .and_then(|u| u.memory_bytes)
        .unwrap_or(0)
}

/// The plans of `jobs` in `snap`; `None` when a pid appears twice (positions would be
/// ambiguous: the reference path decides then).
fn plans(snap: &Snapshot, jobs: &[Job]) -> Option<Vec<Plan>> {
    let by_pid = job::by_pid(snap);
    if by_pid.len() != snap.processes.len() {
        return None;
    }
    let pos: foldhash::HashMap<u32, usize> = snap
        .processes
        .iter()
        .enumerate()
        .map(|(i, p)| (p.pid, i))
        .collect();
    let children = job::children_of(snap);
    let at = |pids: &[u32]| -> Vec<usize> {
        pids.iter()
            .filter_map(|pid| pos.get(pid).copied())
            .collect()
    };
    Some(
        jobs.iter()
            .map(|j| {
                let roots = at(&j.roots);
                let mut roots_in_order = roots.clone();
                roots_in_order.sort_unstable();
                Plan {
                    tree: at(&j.tree),
                    subtrees: j
                        .roots
                        .iter()
                        .map(|&r| at(&job::tree(&[r], &children)))
                        .collect(),
                    roots,
                    roots_in_order,
                    lists: Vec::new(),
                    union: None,
                }
            })
            .collect(),
    )
}

/// [`job::sample_in`] over the plan's positions: the same numbers, summed in the same order.
fn planned(snap: &Snapshot, job: &Job, plan: &Plan) -> JobSample {
    let procs = &snap.processes;
    let get = |at: &usize| procs.get(*at);
    let visible = || plan.tree.iter().filter_map(get).filter(|p| p.visible);

    let n_cpus = visible().filter(|p| p.cpu_pct.is_some()).count();
    let cores_used = (n_cpus > 0).then(|| visible().filter_map(|p| p.cpu_pct).sum::<f64>() / 100.0);

    let online = snap.host.cpu_count.map(f64::from);
    let cores_allowed = job::cores_allowed(snap, online, affinity(snap, plan, online));

    let main_core_pct = plan
        .roots
        .iter()
        .filter_map(|at| get(at).and_then(|p| p.cpu_pct))
        .reduce(f64::max);
    let thread_pct = plan
        .roots_in_order
        .iter()
        .filter_map(get)
        .filter_map(|p| p.busiest_thread.as_ref())
        .filter(|t| t.cpu_pct.is_some())
        .max_by(|a, b| {
            a.cpu_pct
                .unwrap_or(0.0)
                .total_cmp(&b.cpu_pct.unwrap_or(0.0))
        })
        .and_then(|t| t.cpu_pct);
    let (mut states, mut d, mut r) = (0usize, false, 0usize);
    for c in visible().filter_map(|p| p.state) {
        states += 1;
        d |= c == 'D';
        r += usize::from(c == 'R');
    }
    let dstate = (states > 0).then_some(if d { 1.0 } else { 0.0 });
    let runnable = (states > 0).then(|| r as f64 / states as f64);
    JobSample {
        cores_used,
        cores_allowed,
        main_core_pct,
        thread_pct,
        dstate,
        runnable,
        pcie_rx: job::pcie_mean(snap, &job.gpus, |g| g.pcie_rx_bytes_per_s),
        pcie_tx: job::pcie_mean(snap, &job.gpus, |g| g.pcie_tx_bytes_per_s),
        pcie_rx_link_pct: job::pcie_link_share(snap, &job.gpus),
        workers: job::worker_counts(visible()),
    }
}

/// [`job::sample_in`]'s cores allowed by affinity, over the plan's positions.
fn affinity(snap: &Snapshot, plan: &Plan, online: Option<f64>) -> Option<f64> {
    let procs = &snap.processes;
    if let Some(n) = plan.union {
        return Some(n);
    }
    plan.subtrees
        .iter()
        .map(|sub| {
            sub.iter()
                .filter_map(|at| procs.get(*at).and_then(|p| p.cpus_allowed))
                .max()
                .map(f64::from)
                .or(online)
        })
        .sum::<Option<f64>>()
}

#[cfg(test)]
mod tests;
