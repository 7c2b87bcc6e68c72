//! The sampler inside a container, on fixture trees: NVML names host PIDs this /proc does not
//! have, the processes here hold `/dev/nvidia<N>` open, and the cgroup (v1 or v2) sets the
//! CPU and memory budget.

use std::collections::BTreeMap;

use gpumeter_model::{GpuProcessKind, GpuUse, PidMatch, PlaceKind, ProcessReading};

use super::super::fixture::{FakeProc, Fixture};

const GIB: u64 = 1 << 30;

fn on_gpu(gpu_index: u32, gib: u64) -> GpuUse {
    GpuUse {
        gpu_index,
        kind: GpuProcessKind::Compute,
        memory_bytes: Some(gib * GIB),
        sm_util_pct: Some(40),
        memory_util_pct: None,
    }
}

fn find(ps: &[ProcessReading], pid: u32) -> &ProcessReading {
    ps.iter()
        .find(|p| p.pid == pid)
        .unwrap_or_else(|| panic!("pid {pid} not in {ps:#?}"))
}

/// A docker container with the host's four GPUs: nodes, cgroup v2 in a cgroup namespace.
fn container() -> Fixture {
    let f = Fixture::new();
    f.write(".dockerenv", "");
    for n in 0..4 {
        f.write(&format!("dev/nvidia{n}"), "");
    }
    f.write("dev/nvidiactl", "");
    f.write("proc/self/cgroup", "0::/\n");
    f.write(
        "sys/fs/cgroup/cgroup.controllers",
        "cpuset cpu io memory pids\n",
    );
    f
}

#[test]
fn host_pids_are_tied_to_the_local_processes_holding_their_gpus() {
    let f = container();
    // Four ranks under one launcher, each holding its own GPU; two workers under rank 0.
    f.add_process(&FakeProc::new(1, 0, "torchrun"));
    for r in 0..4u32 {
        f.add_process(&FakeProc::new(10 + r, 1, "python").holding(&[r]));
    }
    f.add_process(&FakeProc::new(20, 10, "pt_data_worker"));
    f.add_process(&FakeProc::new(21, 10, "pt_data_worker"));
    let nvml: BTreeMap<u32, Vec<GpuUse>> = (0..4u32)
        .map(|r| (3_100_000 + r * 7, vec![on_gpu(r, 30 + u64::from(r))]))
        .collect();
    let mut sampler = f.sampler();
    let s = sampler.sample(0, &nvml);
    for r in 0..4u32 {
        let p = find(&s.processes, 10 + r);
        assert_eq!(p.host_pid, Some(3_100_000 + r * 7), "rank {r}");
        assert_eq!(p.pid_match, Some(PidMatch::Device));
        assert_eq!(p.gpu, vec![on_gpu(r, 30 + u64::from(r))]);
        assert_eq!(p.driver_pid(), 3_100_000 + r * 7);
    }
    // Workers come along by their local parent.
    assert_eq!(find(&s.processes, 20).ppid, Some(10));
    assert_eq!(find(&s.processes, 21).ppid, Some(10));
    assert!(s.processes.iter().all(|p| p.visible));
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    let place = s.system.runs_in.unwrap();
    assert_eq!(place.kind, PlaceKind::Container);
    assert_eq!(place.runtime.as_deref(), Some("docker"));
}

#[test]
fn two_processes_on_one_gpu_are_a_labelled_guess_and_a_stranger_stays_unmatched() {
    let f = container();
    let mut older = FakeProc::new(30, 1, "python").holding(&[0]);
    older.start_ticks = 100;
    let mut newer = FakeProc::new(31, 1, "python").holding(&[0]);
    newer.start_ticks = 900;
    f.add_process(&older);
    f.add_process(&newer);
    let nvml = BTreeMap::from([
        (700_001, vec![on_gpu(0, 40)]),
        (700_050, vec![on_gpu(0, 2)]),
        // A process of another container on GPU 3: nothing here holds it.
        (812_345, vec![on_gpu(3, 10)]),
    ]);
    let s = f.sampler().sample(0, &nvml);
    let (a, b) = (find(&s.processes, 30), find(&s.processes, 31));
    assert_eq!(
        (a.host_pid, a.pid_match),
        (Some(700_001), Some(PidMatch::Guess))
    );
    assert_eq!(
        (b.host_pid, b.pid_match),
        (Some(700_050), Some(PidMatch::Guess))
    );
    let stranger = find(&s.processes, 812_345);
    assert!(!stranger.visible);
    assert_eq!(stranger.gpu, vec![on_gpu(3, 10)]);
    assert_eq!(stranger.host_pid, None);
    assert!(
        s.warnings
            .iter()
            .any(|w| w.contains("1 GPU process(es) not visible") && w.contains("host PID only")),
        "{:?}",
        s.warnings
    );
}

#[test]
fn a_quota_of_four_cores_on_a_64_core_host_with_throttling_rising() {
    let f = container();
    f.write("sys/devices/system/cpu/online", "0-63\n");
    f.write("sys/fs/cgroup/cpu.max", "400000 100000\n");
    f.write("sys/fs/cgroup/cpuset.cpus.effective", "0-63\n");
    let stat = |usage_s: u64, periods: u64, throttled: u64| {
        format!(
            "usage_usec {}\nnr_periods {periods}\nnr_throttled {throttled}\nthrottled_usec {}\n",
            usage_s * 1_000_000,
            throttled * 20_000
        )
    };
    f.write("sys/fs/cgroup/cpu.stat", stat(0, 0, 0));
    let mut sampler = f.sampler();
    let none = BTreeMap::new();
    let first = sampler.sample(0, &none);
    assert_eq!(first.host.cpu_quota_cores, Some(4.0));
    assert_eq!(first.host.cgroup.cpuset_cpus, Some(64));
    assert_eq!(first.host.cgroup.cpu_throttled_pct, None);
    let mut throttled = 0;
    let mut shares = Vec::new();
    for tick in 1..=3u64 {
        // 10 s per tick, 100 periods, more of them throttled each time.
        throttled += 20 * tick;
        f.write(
            "sys/fs/cgroup/cpu.stat",
            stat(40 * tick, 100 * tick, throttled),
        );
        let s = sampler.sample((tick * 10_000) as i64, &none);
        assert!((s.host.cgroup.cpu_used_cores.unwrap() - 4.0).abs() < 1e-9);
        shares.push(s.host.cgroup.cpu_throttled_pct.unwrap().round() as u32);
    }
    assert_eq!(shares, vec![20, 40, 60]);
}

#[test]
fn cgroup_v1_quota_memory_limit_and_oom_kills() {
    let f = Fixture::new();
    f.write(
        "proc/self/cgroup",
        "11:memory:/docker/abc\n5:cpuset:/docker/abc\n3:cpu,cpuacct:/docker/abc\n",
    );
    let cpu = "sys/fs/cgroup/cpu,cpuacct";
    f.write(&format!("{cpu}/cpu.cfs_quota_us"), "400000\n");
    f.write(&format!("{cpu}/cpu.cfs_period_us"), "100000\n");
    f.write(
        &format!("{cpu}/cpu.stat"),
        "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n",
    );
    f.write(&format!("{cpu}/cpuacct.usage"), "0\n");
    f.write("sys/fs/cgroup/cpuset/cpuset.effective_cpus", "0-3\n");
    f.write(
        "sys/fs/cgroup/memory/memory.limit_in_bytes",
        "34359738368\n",
    );
    f.write(
        "sys/fs/cgroup/memory/memory.usage_in_bytes",
        "34000000000\n",
    );
    f.write(
        "sys/fs/cgroup/memory/memory.oom_control",
        "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n",
    );
    let mut sampler = f.sampler();
    let none = BTreeMap::new();
    assert_eq!(sampler.sample(0, &none).host.cgroup.oom_kills, Some(0));
    f.write(
        &format!("{cpu}/cpu.stat"),
        "nr_periods 100\nnr_throttled 38\nthrottled_time 1000000000\n",
    );
    f.write(&format!("{cpu}/cpuacct.usage"), "39500000000\n");
    f.write(
        "sys/fs/cgroup/memory/memory.oom_control",
        "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n",
    );
    let s = sampler.sample(10_000, &none);
    let cg = &s.host.cgroup;
    assert_eq!(s.host.cpu_quota_cores, Some(4.0));
    assert_eq!(cg.cpuset_cpus, Some(4));
    assert!((cg.cpu_used_cores.unwrap() - 3.95).abs() < 1e-9);
    assert!((cg.cpu_throttled_pct.unwrap() - 38.0).abs() < 1e-9);
    assert_eq!(cg.mem_limit_bytes, Some(32 * GIB));
    assert_eq!(cg.mem_used_bytes, Some(34_000_000_000));
    assert_eq!(cg.oom_kills, Some(3));
    assert_eq!(s.system.runs_in.unwrap().runtime.as_deref(), Some("docker"));
}

#[test]
fn psi_present_and_absent() {
    let f = container();
    let mut sampler = f.sampler();
    let none = BTreeMap::new();
    sampler.sample(0, &none);
    let s = sampler.sample(1_000, &none);
    assert_eq!(s.host.io_pressure_pct, None, "no PSI files: unknown, not 0");
    assert_eq!(s.host.cpu_pressure_pct, None);

    let g = container();
    let psi = |total: u64| {
        format!(
            "some avg10=0 avg60=0 avg300=0 total={total}\nfull avg10=0 avg60=0 avg300=0 total=0\n"
        )
    };
    g.write("sys/fs/cgroup/io.pressure", psi(0));
    g.write("sys/fs/cgroup/cpu.pressure", psi(0));
    let mut sampler = g.sampler();
    sampler.sample(0, &none);
    g.write("sys/fs/cgroup/io.pressure", psi(4_500_000));
    g.write("sys/fs/cgroup/cpu.pressure", psi(100_000));
    let s = sampler.sample(10_000, &none);
    assert!((s.host.io_pressure_pct.unwrap() - 45.0).abs() < 1e-9);
    assert!((s.host.cpu_pressure_pct.unwrap() - 1.0).abs() < 1e-9);
}

#[test]
fn the_busiest_thread_of_a_gpu_process() {
    let f = container();
    let mut p = FakeProc::new(10, 1, "python").holding(&[0]);
    p.tasks = vec![
        (10, "python".into(), 100),
        (11, "pt_main_thread".into(), 100),
    ];
    f.add_process(&p);
    let nvml = BTreeMap::from([(4_000_000, vec![on_gpu(0, 8)])]);
    let mut sampler = f.sampler();
    sampler.sample(0, &nvml);
    p.tasks = vec![
        (10, "python".into(), 110),
        (11, "pt_main_thread".into(), 199),
    ];
    f.add_process(&p);
    let s = sampler.sample(1_000, &nvml);
    let t = find(&s.processes, 10).busiest_thread.clone().unwrap();
    assert_eq!((t.tid, t.name.as_deref()), (11, Some("pt_main_thread")));
    assert!((t.cpu_pct.unwrap() - 99.0).abs() < 1e-9);
}
