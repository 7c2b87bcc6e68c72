//! Jobs and their host-side evidence, for the starved rule. A job is what holds a set of GPUs:
//! the GPU processes started by one launcher (same parent, as torchrun or DDP ranks are) or a
//! single process holding several GPUs; its process tree is those processes plus all their
//! descendants in the snapshot (dataloader workers). One tick's numbers are a [`JobSample`].

use std::collections::{BTreeMap, BTreeSet, HashMap};

use gpumeter_model::{GpuProcessKind, GpuState, ProcessReading, Snapshot};

/// Which job holds a GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum JobKey {
    /// GPU processes sharing this parent (a launcher).
    Parent(u32),
    /// One process.
    Process(u32),
}

impl JobKey {
    pub fn id(self) -> String {
        match self {
            JobKey::Parent(p) => format!("job-{p}"),
            JobKey::Process(p) => format!("pid-{p}"),
        }
    }
}

/// A job this tick: its GPUs, the GPU processes at its root, and its whole tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub key: JobKey,
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
    /// 1 when a process of the tree is in uninterruptible (D) sleep, else 0.
    pub dstate: Option<f64>,
    /// Mean PCIe RX over the job's GPUs, bytes/s.
    pub pcie_rx: Option<f64>,
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
    let mut parents: HashMap<u32, BTreeSet<u32>> = HashMap::new();
    for p in mains.values() {
        if let Some(pp) = p.ppid.filter(|&pp| pp > 1) {
            parents.entry(pp).or_default().insert(p.pid);
        }
    }
    let mut grouped: BTreeMap<JobKey, (BTreeSet<u32>, BTreeSet<u32>, u32)> = BTreeMap::new();
    for (&gpu, p) in &mains {
        let key = match p.ppid {
            Some(pp) if parents.get(&pp).is_some_and(|s| s.len() > 1) => JobKey::Parent(pp),
            _ => JobKey::Process(p.pid),
        };
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

fn children_of(snap: &Snapshot) -> HashMap<u32, Vec<u32>> {
    let mut out: HashMap<u32, Vec<u32>> = HashMap::new();
    for p in &snap.processes {
        if let Some(pp) = p.ppid {
            out.entry(pp).or_default().push(p.pid);
        }
    }
    out
}

/// Roots first, then their descendants breadth-first, each pid once.
fn tree(roots: &[u32], children: &HashMap<u32, Vec<u32>>) -> Vec<u32> {
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

/// The job's numbers this tick.
pub fn sample(snap: &Snapshot, job: &Job) -> JobSample {
    let by_pid: HashMap<u32, &ProcessReading> = snap.processes.iter().map(|p| (p.pid, p)).collect();
    let members: Vec<&ProcessReading> = job
        .tree
        .iter()
        .filter_map(|pid| by_pid.get(pid).copied())
        .collect();
    let visible: Vec<&ProcessReading> = members.iter().copied().filter(|p| p.visible).collect();

    let cpus: Vec<f64> = visible.iter().filter_map(|p| p.cpu_pct).collect();
    let cores_used = (!cpus.is_empty()).then(|| cpus.iter().sum::<f64>() / 100.0);

    let online = snap.host.cpu_count.map(f64::from);
    // Each root's subtree may use at most its widest affinity; the union of the subtrees is at
    // most their sum, so this errs towards more cores (fewer CPU-bound verdicts), never fewer.
    let children = children_of(snap);
    let affinity: Option<f64> = job
        .roots
        .iter()
        .map(|&r| {
            tree(&[r], &children)
                .iter()
                .filter_map(|pid| by_pid.get(pid).and_then(|p| p.cpus_allowed))
                .max()
                .map(f64::from)
                .or(online)
        })
        .sum::<Option<f64>>();
    let cores_allowed = [online, affinity, snap.host.cpu_quota_cores]
        .into_iter()
        .flatten()
        .reduce(f64::min)
        .filter(|c| *c > 0.0);

    let main_core_pct = job
        .roots
        .iter()
        .filter_map(|pid| by_pid.get(pid).and_then(|p| p.cpu_pct))
        .reduce(f64::max);
    let states: Vec<char> = visible.iter().filter_map(|p| p.state).collect();
    let dstate = (!states.is_empty()).then(|| if states.contains(&'D') { 1.0 } else { 0.0 });
    let rx: Vec<f64> = job
        .gpus
        .iter()
        .filter_map(|&g| snap.gpu(g).and_then(|g| g.pcie_rx_bytes_per_s))
        .map(|v| v as f64)
        .collect();
    let pcie_rx = (!rx.is_empty()).then(|| rx.iter().sum::<f64>() / rx.len() as f64);
    JobSample {
        cores_used,
        cores_allowed,
        main_core_pct,
        dstate,
        pcie_rx,
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
                p.name.clone().unwrap_or_else(|| "?".into()),
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
mod tests {
    use super::*;
    use gpumeter_model::{GpuReading, GpuUse};

    fn proc(pid: u32, ppid: u32, cpu: f64, gpu: Option<u32>) -> ProcessReading {
        let mut p = ProcessReading::invisible(pid);
        p.visible = true;
        p.ppid = Some(ppid);
        p.cpu_pct = Some(cpu);
        p.state = Some('R');
        if let Some(g) = gpu {
            p.gpu.push(GpuUse {
                gpu_index: g,
                kind: GpuProcessKind::Compute,
                memory_bytes: Some(1 << 30),
                sm_util_pct: None,
                memory_util_pct: None,
            });
        }
        p
    }

    fn snap(gpus: u32, procs: Vec<ProcessReading>) -> Snapshot {
        let mut s = Snapshot::empty("t", 0);
        s.gpus = (0..gpus)
            .map(|i| GpuReading {
                index: i,
                ..GpuReading::default()
            })
            .collect();
        s.host.cpu_count = Some(16);
        s.processes = procs;
        s
    }

    #[test]
    fn ranks_of_one_launcher_form_one_job_with_their_workers() {
        let s = snap(
            3,
            vec![
                proc(10, 5, 5.0, Some(0)),
                proc(11, 10, 97.0, None),
                proc(20, 5, 5.0, Some(1)),
                proc(21, 20, 97.0, None),
                proc(30, 1, 50.0, Some(2)),
            ],
        );
        let jobs = jobs(&s);
        assert_eq!(jobs.len(), 2);
        assert_eq!(jobs[0].key, JobKey::Parent(5));
        assert_eq!(jobs[0].gpus, vec![0, 1]);
        assert_eq!(jobs[0].tree, vec![10, 20, 11, 21]);
        assert_eq!(jobs[1].key, JobKey::Process(30));
        let j = sample(&s, &jobs[0]);
        assert!((j.cores_used.unwrap() - 2.04).abs() < 1e-9);
        assert_eq!(j.cores_allowed, Some(16.0));
        assert_eq!(j.main_core_pct, Some(5.0));
        assert_eq!(j.dstate, Some(0.0));
    }

    #[test]
    fn affinity_and_quota_narrow_the_cores_allowed() {
        let mut root = proc(10, 1, 100.0, Some(0));
        root.cpus_allowed = Some(4);
        let mut s = snap(1, vec![root, proc(11, 10, 100.0, None)]);
        let job = &jobs(&s)[0];
        assert_eq!(sample(&s, job).cores_allowed, Some(4.0));
        s.host.cpu_quota_cores = Some(2.5);
        assert_eq!(sample(&s, job).cores_allowed, Some(2.5));
        s.processes[0].cpus_allowed = None;
        s.host.cpu_quota_cores = None;
        assert_eq!(sample(&s, job).cores_allowed, Some(16.0));
    }

    #[test]
    fn gpu_lists_collapse_runs() {
        assert_eq!(gpu_ranges(&[0, 1, 2, 3, 5, 7, 8]), "0–3, 5, 7, 8");
        assert_eq!(gpu_ranges(&[4]), "4");
        assert_eq!(gpu_ranges(&[]), "");
    }
}
