//! Jobs from snapshots: grouping, cores allowed (affinity sets, quota, cpuset), totals.
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
fn ranks_pinned_to_the_same_cpus_may_use_that_set_once() {
    // Four ranks and their workers pinned to CPUs 0-7 of 16: 8 cores, not 32 (clamped 16).
    let mut procs = Vec::new();
    for r in 0..4u32 {
        let mut rank = proc(100 + r * 10, 50, 10.0, Some(r));
        rank.cpus_allowed = Some(8);
        rank.cpus_allowed_list = Some("0-7".into());
        let mut worker = proc(101 + r * 10, 100 + r * 10, 99.0, None);
        worker.cpus_allowed = Some(8);
        worker.cpus_allowed_list = Some("0-7".into());
        procs.extend([rank, worker]);
    }
    let mut s = snap(4, procs);
    let job = &jobs(&s)[0];
    assert_eq!(job.gpus, vec![0, 1, 2, 3]);
    assert_eq!(sample(&s, job).cores_allowed, Some(8.0));
    // Disjoint sets add up.
    s.processes[2].cpus_allowed_list = Some("8-11".into());
    s.processes[3].cpus_allowed_list = Some("8-11".into());
    assert_eq!(sample(&s, job).cores_allowed, Some(12.0));
    // The cgroup's cpuset narrows it further.
    s.host.cgroup.cpuset_cpus = Some(6);
    assert_eq!(sample(&s, job).cores_allowed, Some(6.0));
    assert_eq!(
        parse_cpu_list("0-3,8"),
        Some(BTreeSet::from([0, 1, 2, 3, 8]))
    );
    assert_eq!(parse_cpu_list("3-1"), None);
}

#[test]
fn totals_sum_cpu_rss_and_threads() {
    let mut a = proc(10, 1, 50.0, Some(0));
    a.rss_bytes = Some(100);
    a.threads = Some(40);
    let mut b = proc(11, 10, 99.0, None);
    b.rss_bytes = Some(20);
    b.threads = Some(3);
    let s = snap(1, vec![a, b]);
    let t = totals(&s, &[10, 11, 99]);
    assert_eq!(t.processes, 2);
    assert_eq!(t.cpu_pct, Some(149.0));
    assert_eq!(t.rss_bytes, Some(120));
    assert_eq!(t.threads, Some(43));
    assert_eq!(totals(&s, &[]), JobTotals::default());
}

#[test]
fn gpu_lists_collapse_runs() {
    assert_eq!(gpu_ranges(&[0, 1, 2, 3, 5, 7, 8]), "0–3, 5, 7, 8");
    assert_eq!(gpu_ranges(&[4]), "4");
    assert_eq!(gpu_ranges(&[]), "");
}

fn with_cmd(mut p: ProcessReading, user: &str, cmd: &str) -> ProcessReading {
    p.user = Some(user.into());
    p.command = Some(cmd.into());
    p
}

#[test]
fn ranks_under_init_that_look_alike_are_one_job() {
    // torchrun as a container's PID 1: its ranks have ppid 1.
    let s = snap(
        4,
        vec![
            with_cmd(
                proc(38, 1, 60.0, Some(0)),
                "root",
                "python train.py --local_rank=0",
            ),
            with_cmd(
                proc(45, 1, 60.0, Some(1)),
                "root",
                "python train.py --local_rank=1",
            ),
            with_cmd(
                proc(52, 1, 60.0, Some(2)),
                "root",
                "python train.py --local_rank=12",
            ),
            // Same parent, another user's notebook: its own job.
            with_cmd(
                proc(60, 1, 1.0, Some(3)),
                "ana",
                "python -m ipykernel_launcher",
            ),
        ],
    );
    let jobs = jobs(&s);
    assert_eq!(jobs.len(), 2, "{jobs:?}");
    assert_eq!(jobs[0].key, JobKey::Ranks(38));
    assert_eq!(jobs[0].gpus, vec![0, 1, 2]);
    assert_eq!(jobs[1].key, JobKey::Process(60));
}

#[test]
fn a_lone_process_under_init_and_unseen_commands_stay_alone() {
    let mut hidden = proc(45, 1, 60.0, Some(1));
    hidden.command = None;
    let s = snap(
        2,
        vec![
            with_cmd(proc(38, 1, 60.0, Some(0)), "root", "python serve.py"),
            hidden,
        ],
    );
    let keys: Vec<JobKey> = jobs(&s).iter().map(|j| j.key).collect();
    assert_eq!(keys, vec![JobKey::Process(38), JobKey::Process(45)]);
}

#[test]
fn gpu_processes_started_by_a_gpu_process_join_its_job() {
    // A server on GPU 0 whose tensor-parallel worker (its child) holds GPU 1; mp.spawn's ranks
    // 1–2 under rank 0 (GPU 2) on GPUs 3–4.
    let s = snap(
        5,
        vec![
            with_cmd(
                proc(2210, 1, 28.0, Some(0)),
                "app",
                "python -m vllm.entrypoints.openai.api_server",
            ),
            with_cmd(
                proc(2260, 2210, 22.0, Some(1)),
                "app",
                "python -c spawn_main",
            ),
            with_cmd(proc(500, 400, 90.0, Some(2)), "ml", "python train.py"),
            with_cmd(proc(510, 500, 90.0, Some(3)), "ml", "python -c spawn_main"),
            with_cmd(proc(520, 500, 90.0, Some(4)), "ml", "python -c spawn_main"),
        ],
    );
    let jobs = jobs(&s);
    let shape: Vec<(JobKey, Vec<u32>, u32)> = jobs
        .iter()
        .map(|j| (j.key, j.gpus.clone(), j.main))
        .collect();
    assert_eq!(
        shape,
        vec![
            (JobKey::Process(500), vec![2, 3, 4], 500),
            (JobKey::Process(2210), vec![0, 1], 2210),
        ]
    );
}
