//! The sampler over a fixture tree with children lists: the trees are walked (not every
//! process read), workers at their slower cadence.

use std::collections::BTreeMap;

use gpumeter_model::{GpuProcessKind, GpuUse, ProcessReading};

use super::super::fixture::{FakeProc, Fixture};
use super::super::scan::MEMBER_STAT_MS;

fn gpu_procs(pids: &[u32]) -> BTreeMap<u32, Vec<GpuUse>> {
    let uses = vec![GpuUse {
        gpu_index: 0,
        kind: GpuProcessKind::Compute,
        memory_bytes: Some(1 << 30),
        sm_util_pct: Some(80),
        memory_util_pct: None,
    }];
    pids.iter().map(|&p| (p, uses.clone())).collect()
}

fn cpu(processes: &[ProcessReading], pid: u32) -> Option<Option<f64>> {
    processes.iter().find(|p| p.pid == pid).map(|p| p.cpu_pct)
}

/// A GPU process (100, 20 % of a core) with two workers: 101 at 50 %, 102 at 150 %.
fn machine(f: &Fixture) -> Vec<FakeProc> {
    let procs = vec![
        FakeProc::new(100, 1, "python"),
        FakeProc::new(101, 100, "pt_data_worker"),
        FakeProc::new(102, 100, "pt_data_worker"),
    ];
    for p in &procs {
        f.add_process(p);
        f.set_children(p.pid, &[]);
    }
    f.set_children(100, &[101, 102]);
    procs
}

#[test]
fn a_trees_cpu_is_right_with_its_workers_read_at_a_slower_cadence() {
    let f = Fixture::new();
    let mut procs = machine(&f);
    let mut s = f.sampler();
    let per_tick = [20, 50, 150];
    let mut worker_rates: Vec<f64> = Vec::new();
    for k in 0..(3 * MEMBER_STAT_MS / 1_000) {
        let r = s.sample(k * 1_000, &gpu_procs(&[100]));
        assert_eq!(r.processes.len(), 3, "tick {k}: the whole tree, every tick");
        if k >= 1 {
            assert_eq!(cpu(&r.processes, 100), Some(Some(20.0)), "tick {k}");
        }
        // A worker's rate is its own CPU time over its own interval: exact, every tick
        // once it has been read twice.
        for (pid, want) in [(101, 50.0), (102, 150.0)] {
            match cpu(&r.processes, pid).unwrap() {
                Some(pct) => {
                    assert!((pct - want).abs() < 1e-9, "tick {k}: {pid} at {pct}");
                    worker_rates.push(pct);
                }
                None => assert!(
                    k * 1_000 <= MEMBER_STAT_MS,
                    "tick {k}: {pid} has no rate yet"
                ),
            }
        }
        for (p, ticks) in procs.iter_mut().zip(per_tick) {
            p.utime += ticks;
            f.add_process(p);
        }
    }
    assert!(
        worker_rates.len() >= 2 * 8,
        "rates on most ticks: {worker_rates:?}"
    );
}

#[test]
fn a_worker_that_burns_then_sleeps_shows_its_mean_over_each_read_interval() {
    let f = Fixture::new();
    let mut procs = machine(&f);
    let mut s = f.sampler();
    // 101 burns a whole core for 10 s, then nothing: summed over the run, the rates shown
    // (each held until the next read) give back its CPU time within one read interval.
    let mut shown_s = 0.0;
    let ticks = 30;
    for k in 0..ticks {
        let r = s.sample(k * 1_000, &gpu_procs(&[100]));
        shown_s += cpu(&r.processes, 101).flatten().unwrap_or(0.0) / 100.0;
        if k < 10 {
            procs[1].utime += 100;
            f.add_process(&procs[1]);
        }
    }
    let burned_s = 10.0;
    let slack_s = (MEMBER_STAT_MS / 1_000) as f64;
    assert!(
        (shown_s - burned_s).abs() <= slack_s,
        "shown {shown_s:.1} s of CPU for {burned_s} s burned"
    );
}

#[test]
fn a_worker_forked_later_joins_the_tree_within_the_children_cadence() {
    use super::super::scan::CHILDREN_MS;
    let f = Fixture::new();
    machine(&f);
    let mut s = f.sampler();
    for k in 0..3 {
        s.sample(k * 1_000, &gpu_procs(&[100]));
    }
    f.add_process(&FakeProc::new(103, 100, "late_worker"));
    f.set_children(103, &[]);
    f.set_children(100, &[101, 102, 103]);
    let found = (3..=3 + CHILDREN_MS / 1_000).find(|&k| {
        let r = s.sample(k * 1_000, &gpu_procs(&[100]));
        cpu(&r.processes, 103).is_some()
    });
    let k = found.expect("the late worker is found");
    assert!(
        (k - 2) * 1_000 <= CHILDREN_MS,
        "found {} s after its birth",
        k - 2
    );
}

/// The first reading reads the GPU process's command line, user and container, and leaves its
/// workers' for their second tick in the tree; they are there from then on.
#[test]
fn workers_statics_come_on_their_second_tick() {
    let f = Fixture::new();
    machine(&f);
    let mut s = f.sampler();
    let find = |r: &[ProcessReading], pid: u32| r.iter().find(|p| p.pid == pid).cloned().unwrap();
    let first = s.sample(0, &gpu_procs(&[100])).processes;
    assert_eq!(first.len(), 3, "the whole tree at once");
    let gpu = find(&first, 100);
    assert_eq!(gpu.command.as_deref(), Some("python"));
    assert_eq!(gpu.user.as_deref(), Some("alice"));
    for pid in [101, 102] {
        let w = find(&first, pid);
        assert_eq!(
            w.name.as_deref(),
            Some("pt_data_worker"),
            "its stat is read"
        );
        assert_eq!(w.command, None, "{pid}: command read on the first tick");
        assert_eq!(w.user, None);
    }
    for k in 1..3 {
        let r = s.sample(k * 1_000, &gpu_procs(&[100])).processes;
        for pid in [101, 102] {
            let w = find(&r, pid);
            assert_eq!(
                w.command.as_deref(),
                Some("pt_data_worker"),
                "tick {k}: {pid}"
            );
            assert_eq!(w.user.as_deref(), Some("alice"), "tick {k}: {pid}");
        }
    }
}

/// Headless (no process shown): a GPU process's stat is read every few ticks, and what a
/// reading says of it stays exact: its CPU % is its CPU time over the interval between its
/// two last reads, held in between, and its busiest thread with it.
#[test]
fn a_gpu_process_not_shown_keeps_an_exact_cpu_rate_and_busiest_thread_between_reads() {
    use crate::source::focus::ProcessFocus;
    let f = Fixture::new();
    let mut gpu = FakeProc::new(100, 1, "python");
    f.add_process(&gpu);
    f.set_children(100, &[]);
    let mut s = f.sampler();
    s.set_focus(ProcessFocus::headless());
    let mut changes = 0;
    let mut last = None;
    for k in 0..(4 * MEMBER_STAT_MS / 1_000) {
        let r = s.sample(k * 1_000, &gpu_procs(&[100]));
        let p = r.processes.iter().find(|p| p.pid == 100).unwrap();
        if k >= 1 {
            // 30 ticks a second at 100 ticks/s: 30 % of a core, whatever the interval.
            let pct = p.cpu_pct.expect("a rate from the second tick on");
            assert!((pct - 30.0).abs() < 1e-9, "tick {k}: {pct}");
            let t = p.busiest_thread.as_ref().expect("its busiest thread");
            assert_eq!(t.tid, 100);
            assert!((t.cpu_pct.unwrap() - 30.0).abs() < 1e-9, "tick {k}: {t:?}");
        }
        if last != Some(p.rss_bytes) {
            changes += 1;
            last = Some(p.rss_bytes);
        }
        gpu.utime += 30;
        gpu.rss_pages += 1;
        f.add_process(&gpu);
    }
    // Its stat (here: its RSS, which grows every tick) is read far less than every tick.
    let ticks = 4 * MEMBER_STAT_MS / 1_000;
    assert!(
        changes >= 4 && changes <= 2 + ticks / 3,
        "{changes} reads in {ticks} ticks"
    );
}

#[test]
fn a_workers_statics_wait_for_its_second_tick_again_after_a_tick_without_gpu_processes() {
    // The same tree before and after: the walk's kept answer must not stand for the members
    // the tick without GPU processes forgot.
    let f = Fixture::new();
    machine(&f);
    let mut s = f.sampler();
    let worker = |r: &super::super::HostSample| {
        r.processes
            .iter()
            .find(|p| p.pid == 101)
            .map(|p| p.command.is_some())
    };
    let first = s.sample(0, &gpu_procs(&[100]));
    assert_eq!(
        worker(&first),
        Some(false),
        "a worker's first tick reads nothing"
    );
    for k in 1..4 {
        let r = s.sample(k * 1_000, &gpu_procs(&[100]));
        assert_eq!(worker(&r), Some(true), "tick {k}");
    }
    assert!(s.sample(4_000, &BTreeMap::new()).processes.is_empty());
    // Back in the tree when its parent's children list is next due (within 5 s).
    let mut t = 5_000;
    let back = loop {
        let r = s.sample(t, &gpu_procs(&[100]));
        if let Some(read) = worker(&r) {
            break read;
        }
        assert!(t < 5_000 + MEMBER_STAT_MS, "the worker is back within 5 s");
        t += 1_000;
    };
    assert!(!back, "new to the tree again: its first tick reads nothing");
    let next = s.sample(t + 1_000, &gpu_procs(&[100]));
    assert_eq!(worker(&next), Some(true));
}
