//! Jobs and their host-side evidence, for the starved rule. A job is what holds a set of GPUs:
//! the GPU processes started by one launcher (same parent, as torchrun or DDP ranks are), a
//! GPU process with the GPU processes it started (a server's tensor-parallel workers, ranks
//! spawned by rank 0), ranks under init (a container's entrypoint is PID 1) that look alike, or
//! a single process holding several GPUs; its process tree is those processes plus all their
//! descendants in the snapshot (dataloader workers). One tick's numbers are a [`JobSample`];
//! [`totals`] sums a job's CPU, RSS and threads for the per-job view.
//!
//! The cores a job may use: the CPUs online, narrowed by the cgroup's quota and cpuset, and by
//! affinity taken as CPU *sets* — the union of its processes' `Cpus_allowed_list` (four ranks
//! pinned to the same 8 CPUs may use 8, not 32).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use foldhash::{HashMap, HashMapExt};
use gpumeter_model::{GpuProcessKind, GpuState, ProcessReading, Snapshot};

/// Which job holds a GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum JobKey {
    /// GPU processes sharing this parent (a launcher).
    Parent(u32),
    /// Ranks whose parent is init (PID 1: a container's entrypoint, or re-parented orphans)
    /// that share user, container and command up to their digits; keyed by the lowest pid.
    Ranks(u32),
    /// One process.
    Process(u32),
}

impl JobKey {
    /// The job's stable id in alert ids: `job-<parent pid>`, `ranks-<lowest pid>` or `pid-<pid>`.
    pub fn id(self) -> String {
        match self {
            JobKey::Parent(p) => format!("job-{p}"),
            JobKey::Ranks(p) => format!("ranks-{p}"),
            JobKey::Process(p) => format!("pid-{p}"),
        }
    }
}

/// A job this tick: its GPUs, the GPU processes at its root, and its whole tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// How the job was grouped, and its stable id.
    pub key: JobKey,
    /// The GPUs it holds (indices), ascending.
    pub gpus: Vec<u32>,
    /// The process holding the most memory on the job's first GPU.
    pub main: u32,
    /// GPU processes of the job (pids).
    pub roots: Vec<u32>,
    /// Roots and all their descendants (pids), roots first.
    pub tree: Vec<u32>,
}

/// The job's host numbers at one tick.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct JobSample {
    /// Cores the tree uses (sum of per-process CPU / 100).
    pub cores_used: Option<f64>,
    /// Cores it may use: CPUs online, narrowed by affinity and the cgroup quota.
    pub cores_allowed: Option<f64>,
    /// The busiest GPU process, in percent of one core.
    pub main_core_pct: Option<f64>,
    /// The busiest thread of the job's GPU processes, in percent of one core.
    pub thread_pct: Option<f64>,
    /// 1 when a process of the tree is in uninterruptible (D) sleep, else 0.
    pub dstate: Option<f64>,
    /// Share (0–1) of the tree's processes that are runnable (R): wanting a CPU.
    pub runnable: Option<f64>,
    /// Mean PCIe RX over the job's GPUs, bytes/s…
    pub pcie_rx: Option<f64>,
    /// …and TX (device to host).
    pub pcie_tx: Option<f64>,
    /// Mean PCIe RX as a share of each GPU's link capacity at its current generation and
    /// width (percent), over the GPUs where both are known.
    pub pcie_rx_link_pct: Option<f64>,
    /// Its workers (the tree's processes without a GPU, such as DataLoader workers) whose CPU
    /// is known, and how many of them are at ≥ [`PEGGED_PCT`] of one core.
    pub workers: Option<(u32, u32)>,
}

/// A worker at this share of one core or more is saturated (a process of one thread cannot
/// go faster).
pub const PEGGED_PCT: f64 = 90.0;

/// (workers with a known CPU, of them pegged) over `procs`, the tree's visible processes.
pub(crate) fn worker_counts<'a>(
    procs: impl Iterator<Item = &'a ProcessReading>,
) -> Option<(u32, u32)> {
    let (mut n, mut pegged) = (0u32, 0u32);
    for c in procs.filter(|p| p.gpu.is_empty()).filter_map(|p| p.cpu_pct) {
        n += 1;
        pegged += u32::from(c >= PEGGED_PCT);
    }
    (n > 0).then_some((n, pegged))
}

/// The mean of a per-GPU PCIe reading over `gpus`.
pub(crate) fn pcie_mean(
    snap: &Snapshot,
    gpus: &[u32],
    f: fn(&gpumeter_model::GpuReading) -> Option<u64>,
) -> Option<f64> {
    let v: Vec<f64> = gpus
        .iter()
        .filter_map(|&g| snap.gpu(g).and_then(f))
        .map(|v| v as f64)
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The compute processes on each working GPU, keyed by GPU index.
fn holders(snap: &Snapshot) -> BTreeMap<u32, Vec<&ProcessReading>> {
    let mut out: BTreeMap<u32, Vec<&ProcessReading>> = BTreeMap::new();
    for p in &snap.processes {
        for u in p.gpu.iter().filter(|u| u.kind != GpuProcessKind::Graphics) {
            let ok = snap
                .gpu(u.gpu_index)
                .is_some_and(|g| g.state == GpuState::Ok);
            if ok {
                out.entry(u.gpu_index).or_default().push(p);
            }
        }
    }
    out
}

/// Whether a job (a compute process) holds this GPU.
pub fn held(snap: &Snapshot, gpu: u32) -> bool {
    snap.processes.iter().any(|p| {
        p.gpu
            .iter()
            .any(|u| u.gpu_index == gpu && u.kind != GpuProcessKind::Graphics)
    })
}

/// The jobs holding GPUs, in key order.
pub fn jobs(snap: &Snapshot) -> Vec<Job> {
    let holders = holders(snap);
    // Each GPU's main process: the one holding the most memory there.
    let mains: BTreeMap<u32, &ProcessReading> = holders
        .iter()
        .filter_map(|(&gpu, ps)| {
            let mem = |p: &&ProcessReading| {
                p.gpu
                    .iter()
                    .find(|u| u.gpu_index == gpu)
                    .and_then(|u| u.memory_bytes)
                    .unwrap_or(0)
            };
            ps.iter()
                .max_by_key(|p| (mem(p), std::cmp::Reverse(p.pid)))
                .map(|p| (gpu, *p))
        })
        .collect();
    // A GPU process started by another GPU's main process (a server's tensor-parallel
    // workers, mp.spawn's ranks under rank 0) belongs to its parent's job: walk up to the root.
    let main_by_pid: HashMap<u32, &ProcessReading> = mains.values().map(|p| (p.pid, *p)).collect();
    let root_of = |p: &ProcessReading| -> u32 {
        let mut at = p;
        for _ in 0..16 {
            match at.ppid.and_then(|pp| main_by_pid.get(&pp)) {
                Some(up) if up.pid != at.pid => at = up,
                _ => break,
            }
        }
        at.pid
    };
    let roots: BTreeMap<u32, &ProcessReading> = mains
        .values()
        .map(|p| root_of(p))
        .filter_map(|r| main_by_pid.get(&r).map(|p| (r, *p)))
        .collect();
    let mut parents: HashMap<u32, BTreeSet<u32>> = HashMap::new();
    for p in roots.values() {
        if let Some(pp) = p.ppid.filter(|&pp| pp > 1) {
            parents.entry(pp).or_default().insert(p.pid);
        }
    }
    // Under init, a parent says nothing (every orphan and every container entrypoint's child
    // has it): ranks are those that look alike.
    let mut alike: HashMap<RankShape, BTreeSet<u32>> = HashMap::new();
    for p in roots.values() {
        if let Some(shape) = rank_shape(p) {
            alike.entry(shape).or_default().insert(p.pid);
        }
    }
    let key_of = |root: &ProcessReading| -> JobKey {
        let ranks = rank_shape(root)
            .and_then(|s| alike.get(&s))
            .filter(|pids| pids.len() > 1)
            .and_then(|pids| pids.first().copied());
        match (root.ppid, ranks) {
            (Some(pp), _) if parents.get(&pp).is_some_and(|s| s.len() > 1) => JobKey::Parent(pp),
            (_, Some(low)) => JobKey::Ranks(low),
            _ => JobKey::Process(root.pid),
        }
    };
    let mut grouped: BTreeMap<JobKey, (BTreeSet<u32>, BTreeSet<u32>, u32)> = BTreeMap::new();
    for (&gpu, p) in &mains {
        let root = roots.get(&root_of(p)).copied().unwrap_or(p);
        let key = key_of(root);
        let entry = grouped
            .entry(key)
            .or_insert_with(|| (BTreeSet::new(), BTreeSet::new(), p.pid));
        entry.0.insert(gpu);
        // Every compute process on the GPU feeds what it waits for, the main one first.
        entry.1.insert(p.pid);
        for other in holders.get(&gpu).into_iter().flatten() {
            entry.1.insert(other.pid);
        }
    }
    let children = children_of(snap);
    grouped
        .into_iter()
        .map(|(key, (gpus, roots, main))| {
            let roots: Vec<u32> = roots.into_iter().collect();
            Job {
                key,
                main,
                gpus: gpus.into_iter().collect(),
                tree: tree(&roots, &children),
                roots,
            }
        })
        .collect()
}

/// What ranks of one job under init share: parent, user, container and the command with its
/// digit runs blanked (`--local_rank=3`); `None` when the command is not visible (the processes
/// this container cannot see at all share one shape).
type RankShape = (Option<u32>, Option<Arc<str>>, Option<Arc<str>>, String);

fn rank_shape(p: &ProcessReading) -> Option<RankShape> {
    // GPU processes this container cannot see are taken as one job: the ranks of the run
    // outside it, most often (one alert for them, not one per GPU).
    if !p.visible {
        return Some((None, None, None, String::from("\0unseen")));
    }
    if p.ppid.is_some_and(|pp| pp > 1) {
        return None;
    }
    let cmd = p.command.as_deref()?;
    let mut shape = String::with_capacity(cmd.len());
    for c in cmd.chars() {
        if !c.is_ascii_digit() {
            shape.push(c);
        } else if !shape.ends_with('#') {
            shape.push('#');
        }
    }
    Some((p.ppid, p.user.clone(), p.container.clone(), shape))
}

pub(super) fn children_of(snap: &Snapshot) -> HashMap<u32, Vec<u32>> {
    let mut out: HashMap<u32, Vec<u32>> = HashMap::new();
    for p in &snap.processes {
        if let Some(pp) = p.ppid {
            out.entry(pp).or_default().push(p.pid);
        }
    }
    out
}

/// Roots first, then their descendants breadth-first, each pid once.
pub(super) fn tree(roots: &[u32], children: &HashMap<u32, Vec<u32>>) -> Vec<u32> {
    let mut seen: BTreeSet<u32> = roots.iter().copied().collect();
    let mut out: Vec<u32> = roots.to_vec();
    let mut i = 0;
    while i < out.len() {
        if let Some(kids) = children.get(&out[i]) {
            for &k in kids {
                if seen.insert(k) {
                    out.push(k);
                }
            }
        }
        i += 1;
    }
    out
}

/// The snapshot's processes by pid, built once a tick for [`sample_in`].
pub fn by_pid(snap: &Snapshot) -> HashMap<u32, &ProcessReading> {
    snap.processes.iter().map(|p| (p.pid, p)).collect()
}

/// The job's numbers this tick.
pub fn sample(snap: &Snapshot, job: &Job) -> JobSample {
    sample_in(snap, job, &by_pid(snap))
}

/// [`sample`] with the tick's [`by_pid`] index (one per tick, not one per job).
pub fn sample_in(snap: &Snapshot, job: &Job, by_pid: &HashMap<u32, &ProcessReading>) -> JobSample {
    let members: Vec<&ProcessReading> = job
        .tree
        .iter()
        .filter_map(|pid| by_pid.get(pid).copied())
        .collect();
    let visible: Vec<&ProcessReading> = members.iter().copied().filter(|p| p.visible).collect();

    let cpus: Vec<f64> = visible.iter().filter_map(|p| p.cpu_pct).collect();
    let cores_used = (!cpus.is_empty()).then(|| cpus.iter().sum::<f64>() / 100.0);

    let online = snap.host.cpu_count.map(f64::from);
    let cores_allowed = cores_allowed(snap, online, affinity_cores(snap, job, by_pid, online));

    let main_core_pct = job
        .roots
        .iter()
        .filter_map(|pid| by_pid.get(pid).and_then(|p| p.cpu_pct))
        .reduce(f64::max);
    let thread_pct = busiest_thread(snap, job).and_then(|(_, t)| t.cpu_pct);
    let states: Vec<char> = visible.iter().filter_map(|p| p.state).collect();
    let dstate = (!states.is_empty()).then(|| if states.contains(&'D') { 1.0 } else { 0.0 });
    let runnable = (!states.is_empty())
        .then(|| states.iter().filter(|&&c| c == 'R').count() as f64 / states.len() as f64);
    JobSample {
        cores_used,
        cores_allowed,
        main_core_pct,
        thread_pct,
        dstate,
        runnable,
        pcie_rx: pcie_mean(snap, &job.gpus, |g| g.pcie_rx_bytes_per_s),
        pcie_tx: pcie_mean(snap, &job.gpus, |g| g.pcie_tx_bytes_per_s),
        pcie_rx_link_pct: pcie_link_share(snap, &job.gpus),
        workers: worker_counts(visible.iter().copied()),
    }
}

/// Usable PCIe bandwidth per lane and direction by generation, bytes/s (after line coding:
/// 8b/10b for gens 1–2, 128b/130b from gen 3; gen 6 taken as twice gen 5).
fn pcie_lane_bytes_per_s(generation: u32) -> Option<f64> {
    Some(match generation {
        1 => 250e6,
        2 => 500e6,
        3 => 984.6e6,
        4 => 1969.2e6,
        5 => 3938.5e6,
        6 => 7877e6,
        _ => return None,
    })
}

/// A link's capacity in one direction at its current generation and width, bytes/s.
fn pcie_link_capacity(g: &gpumeter_model::GpuReading) -> Option<f64> {
    let lane = pcie_lane_bytes_per_s(g.pcie_link_gen?)?;
    let width = g.pcie_link_width.filter(|&w| w > 0)?;
    Some(lane * f64::from(width))
}

/// Mean of PCIe RX / link capacity over `gpus` where both are known (percent).
pub(crate) fn pcie_link_share(snap: &Snapshot, gpus: &[u32]) -> Option<f64> {
    let shares: Vec<f64> = gpus
        .iter()
        .filter_map(|&i| snap.gpu(i))
        .filter_map(|g| {
            let rx = g.pcie_rx_bytes_per_s? as f64;
            Some((rx / pcie_link_capacity(g)? * 100.0).min(100.0))
        })
        .collect();
    (!shares.is_empty()).then(|| shares.iter().sum::<f64>() / shares.len() as f64)
}

/// The cores the job's affinity allows: the size of the union of its processes' CPU sets
/// where every process's set is known; else (counts only) each root's subtree at its widest
/// count, summed — that errs towards more cores (fewer CPU-bound verdicts), never fewer.
/// The cores a job may use: the least of the online CPUs, its affinity, the CPU quota and the
/// cgroup's cpuset (what is known of them; none or 0 is unknown).
pub(super) fn cores_allowed(
    snap: &Snapshot,
    online: Option<f64>,
    affinity: Option<f64>,
) -> Option<f64> {
    [
        online,
        affinity,
        snap.host.cpu_quota_cores,
        snap.host.cgroup.cpuset_cpus.map(f64::from),
    ]
    .into_iter()
    .flatten()
    .reduce(f64::min)
    .filter(|c| *c > 0.0)
}

fn affinity_cores(
    snap: &Snapshot,
    job: &Job,
    by_pid: &HashMap<u32, &ProcessReading>,
    online: Option<f64>,
) -> Option<f64> {
    let members: Vec<&ProcessReading> = job
        .tree
        .iter()
        .filter_map(|pid| by_pid.get(pid).copied())
        .filter(|p| p.visible)
        .collect();
    // Ranks mostly share one list: each distinct one is parsed once (the union is the same).
    let lists: Option<BTreeSet<&str>> = members
        .iter()
        .map(|p| p.cpus_allowed_list.as_deref())
        .collect();
    if let Some(n) = union_size(lists.unwrap_or_default().into_iter()) {
        return Some(n);
    }
    let children = children_of(snap);
    job.roots
        .iter()
        .map(|&r| {
            tree(&[r], &children)
                .iter()
                .filter_map(|pid| by_pid.get(pid).and_then(|p| p.cpus_allowed))
                .max()
                .map(f64::from)
                .or(online)
        })
        .sum::<Option<f64>>()
}

/// The number of CPUs in the union of these (distinct) CPU lists; `None` when there is none or
/// one is malformed (the counts decide then). Their order does not matter.
pub(super) fn union_size<'a>(lists: impl Iterator<Item = &'a str>) -> Option<f64> {
    let sets: Option<Vec<BTreeSet<u32>>> = lists.map(parse_cpu_list).collect();
    let sets = sets.filter(|s| !s.is_empty())?;
    let union: BTreeSet<u32> = sets.into_iter().flatten().collect();
    Some(union.len() as f64)
}

/// A kernel CPU list (`0-3,8`) as a set; `None` when malformed or absurdly large.
pub fn parse_cpu_list(list: &str) -> Option<BTreeSet<u32>> {
    let mut out = BTreeSet::new();
    for part in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let (lo, hi) = (lo.parse::<u32>().ok()?, hi.parse::<u32>().ok()?);
        if hi < lo || hi - lo > 65_536 {
            return None;
        }
        out.extend(lo..=hi);
    }
    (!out.is_empty()).then_some(out)
}

/// The busiest thread among the job's GPU processes: (its process's pid, the thread).
pub fn busiest_thread<'a>(
    snap: &'a Snapshot,
    job: &Job,
) -> Option<(u32, &'a gpumeter_model::ThreadReading)> {
    snap.processes
        .iter()
        .filter(|p| job.roots.contains(&p.pid))
        .filter_map(|p| p.busiest_thread.as_ref().map(|t| (p.pid, t)))
        .filter(|(_, t)| t.cpu_pct.is_some())
        .max_by(|a, b| {
            a.1.cpu_pct
                .unwrap_or(0.0)
                .total_cmp(&b.1.cpu_pct.unwrap_or(0.0))
        })
}

/// A job's CPU, memory and threads summed over its visible processes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct JobTotals {
    /// How many of the given processes the snapshot lists (only those are summed).
    pub processes: usize,
    /// Percent of one core, summed.
    pub cpu_pct: Option<f64>,
    /// Resident memory summed, bytes (`None`: no process reported it).
    pub rss_bytes: Option<u64>,
    /// Threads summed (`None`: no process reported them).
    pub threads: Option<u32>,
}

/// Totals over the processes `pids` (a job's tree, or the part of it on one GPU).
pub fn totals(snap: &Snapshot, pids: &[u32]) -> JobTotals {
    let by_pid: HashMap<u32, &ProcessReading> = snap.processes.iter().map(|p| (p.pid, p)).collect();
    let members: Vec<&ProcessReading> = pids
        .iter()
        .filter_map(|pid| by_pid.get(pid).copied())
        .collect();
    let sum_f = |f: fn(&ProcessReading) -> Option<f64>| {
        members.iter().filter_map(|p| f(p)).reduce(|a, b| a + b)
    };
    JobTotals {
        processes: members.len(),
        cpu_pct: sum_f(|p| p.cpu_pct),
        rss_bytes: members
            .iter()
            .filter_map(|p| p.rss_bytes)
            .reduce(u64::saturating_add),
        threads: members
            .iter()
            .filter_map(|p| p.threads)
            .reduce(u32::saturating_add),
    }
}

/// The tree's processes by CPU use, busiest first: (pid, name, cpu %).
pub fn busiest(snap: &Snapshot, job: &Job, limit: usize) -> Vec<(u32, String, Option<f64>)> {
    let by_pid: HashMap<u32, &ProcessReading> = snap.processes.iter().map(|p| (p.pid, p)).collect();
    let mut out: Vec<(u32, String, Option<f64>)> = job
        .tree
        .iter()
        .filter_map(|pid| by_pid.get(pid).copied())
        .map(|p| {
            (
                p.pid,
                p.name.as_deref().unwrap_or("?").to_string(),
                p.cpu_pct,
            )
        })
        .collect();
    out.sort_by(|a, b| {
        b.2.unwrap_or(-1.0)
            .total_cmp(&a.2.unwrap_or(-1.0))
            .then(a.0.cmp(&b.0))
    });
    out.truncate(limit);
    out
}

/// GPU indices as ranges: `0–3, 5`.
pub fn gpu_ranges(gpus: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < gpus.len() {
        let mut j = i;
        while j + 1 < gpus.len() && gpus[j + 1] == gpus[j] + 1 {
            j += 1;
        }
        parts.push(if j > i + 1 {
            format!("{}–{}", gpus[i], gpus[j])
        } else if j == i + 1 {
            format!("{}, {}", gpus[i], gpus[j])
        } else {
            gpus[i].to_string()
        });
        i = j + 1;
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests;
