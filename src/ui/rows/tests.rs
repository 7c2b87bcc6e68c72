//! Row building: filters, every sort column both ways, tree order and glyphs, invisible PIDs.

use gpumeter_model::{GpuProcessKind, GpuUse, ProcessReading, Snapshot};

use super::*;
use crate::ui::UiOptions;
use crate::ui::tests::fixtures::{self as testing, NOW};

fn app() -> App {
    let mut a = App::new(&UiOptions::default());
    a.tree = false;
    a
}

fn pids(rows: &[ProcRow<'_>]) -> Vec<u32> {
    rows.iter().map(|r| r.proc.pid).collect()
}

fn on_gpu(mut p: ProcessReading, gpu: u32, mem: Option<u64>, sm: Option<u32>) -> ProcessReading {
    p.gpu.push(GpuUse {
        gpu_index: gpu,
        kind: GpuProcessKind::Compute,
        memory_bytes: mem,
        sm_util_pct: sm,
        memory_util_pct: None,
    });
    p
}

/// Three processes whose every column orders differently, plus one with unknown values.
fn small() -> Snapshot {
    let mut s = Snapshot::empty("t", testing::T0);
    let mut a = on_gpu(
        testing::process(30, 1, "carol", "c-cmd"),
        1,
        Some(300),
        Some(10),
    );
    a.cpu_pct = Some(5.0);
    a.rss_bytes = Some(30);
    a.start_time_unix_s = Some(testing::T0 / 1000 - 100);
    let mut b = on_gpu(
        testing::process(10, 1, "alice", "b-cmd"),
        2,
        Some(100),
        Some(90),
    );
    b.cpu_pct = Some(50.0);
    b.rss_bytes = Some(10);
    b.start_time_unix_s = Some(testing::T0 / 1000 - 300);
    let mut c = on_gpu(
        testing::process(20, 1, "bob", "a-cmd"),
        0,
        Some(200),
        Some(50),
    );
    c.cpu_pct = Some(500.0);
    c.rss_bytes = Some(20);
    c.start_time_unix_s = Some(testing::T0 / 1000 - 200);
    let unknown = on_gpu(ProcessReading::invisible(40), 3, None, None);
    s.processes = vec![a, b, c, unknown];
    s
}

#[test]
fn every_sort_column_orders_both_ways_with_unknowns_last() {
    let snap = small();
    // (column, ascending, descending): unknown values (PID 40) stay last both ways.
    let cases = [
        (SortColumn::Pid, [10, 20, 30, 40], [40, 30, 20, 10]),
        (SortColumn::User, [10, 20, 30, 40], [30, 20, 10, 40]),
        (SortColumn::Gpu, [20, 30, 10, 40], [40, 10, 30, 20]),
        (SortColumn::Vram, [10, 20, 30, 40], [30, 20, 10, 40]),
        (SortColumn::Sm, [30, 20, 10, 40], [10, 20, 30, 40]),
        (SortColumn::Cpu, [30, 10, 20, 40], [20, 10, 30, 40]),
        (SortColumn::Rss, [10, 20, 30, 40], [30, 20, 10, 40]),
        (SortColumn::Runtime, [30, 20, 10, 40], [10, 20, 30, 40]),
        (SortColumn::Command, [20, 10, 30, 40], [30, 10, 20, 40]),
    ];
    for (col, ascending, descending) in cases {
        let mut a = app();
        a.sort = col;
        a.sort_desc = false;
        assert_eq!(
            pids(&build_rows(&snap, &a, NOW)),
            ascending,
            "{col:?} ascending"
        );
        a.sort_desc = true;
        assert_eq!(
            pids(&build_rows(&snap, &a, NOW)),
            descending,
            "{col:?} descending"
        );
    }
}

#[test]
fn text_filter_matches_user_command_container_and_pid_case_insensitively() {
    let snap = testing::snapshot(2);
    let mut a = app();
    a.filter = "BOB".into();
    assert_eq!(pids(&build_rows(&snap, &a, NOW)), vec![3100]);
    a.filter = "ipykernel".into();
    assert_eq!(pids(&build_rows(&snap, &a, NOW)), vec![3100]);
    a.filter = "2011".into();
    assert_eq!(pids(&build_rows(&snap, &a, NOW)), vec![2011]);
    a.filter = "3f2a9c".into();
    assert_eq!(build_rows(&snap, &a, NOW).len(), 6);
    a.filter = "not visible".into();
    assert_eq!(pids(&build_rows(&snap, &a, NOW)), vec![4242]);
    a.filter = "no such thing".into();
    assert!(build_rows(&snap, &a, NOW).is_empty());
}

#[test]
fn text_filter_matches_a_pods_name_uid_namespace_and_container() {
    let mut snap = testing::snapshot(2);
    for p in &mut snap.processes {
        p.pod = match p.pid {
            1000 | 2000 => Some(gpumeter_model::PodRef {
                namespace: Some("research".into()),
                pod: Some("Trainer-7f9c".into()),
                container: Some("pytorch-main".into()),
                pod_uid: Some("0d9a1c2e-5b7f".into()),
            }),
            3100 => Some(gpumeter_model::PodRef {
                pod_uid: Some("7b3e91f0-2c4d".into()),
                ..Default::default()
            }),
            _ => None,
        };
    }
    let mut a = app();
    a.sort = SortColumn::Pid;
    a.sort_desc = false;
    a.filter = "trainer-7F9C".into();
    assert_eq!(pids(&build_rows(&snap, &a, NOW)), vec![1000, 2000]);
    a.filter = "research".into();
    assert_eq!(pids(&build_rows(&snap, &a, NOW)), vec![1000, 2000]);
    a.filter = "pytorch-main".into();
    assert_eq!(pids(&build_rows(&snap, &a, NOW)), vec![1000, 2000]);
    a.filter = "7b3e91".into();
    assert_eq!(pids(&build_rows(&snap, &a, NOW)), vec![3100]);
    a.filter = "no-such-pod".into();
    assert!(build_rows(&snap, &a, NOW).is_empty());
}

#[test]
fn gpu_filter_keeps_processes_on_it_and_the_workers_feeding_them() {
    let snap = testing::snapshot(4);
    let mut a = app();
    a.sort = SortColumn::Pid;
    a.sort_desc = false;
    a.gpu_filter = Some(2);
    assert_eq!(pids(&build_rows(&snap, &a, NOW)), vec![1002, 2020, 2021]);
    a.gpu_filter = Some(0);
    assert_eq!(
        pids(&build_rows(&snap, &a, NOW)),
        vec![1000, 2000, 2001, 3100, 3300, 4242]
    );
    a.gpu_filter = Some(9);
    assert!(build_rows(&snap, &a, NOW).is_empty());
}

#[test]
fn tree_puts_workers_under_their_trainer_with_glyphs() {
    let snap = testing::snapshot(2);
    let mut a = app();
    a.tree = true;
    a.sort = SortColumn::Pid;
    a.sort_desc = false;
    let rows = build_rows(&snap, &a, NOW);
    let shown: Vec<(u32, &str)> = rows
        .iter()
        .map(|r| (r.proc.pid, r.tree_prefix.as_str()))
        .collect();
    assert_eq!(
        shown,
        vec![
            (1000, ""),
            (2000, "├─ "),
            (2001, "└─ "),
            (1001, ""),
            (2010, "├─ "),
            (2011, "└─ "),
            (3100, ""),
            (3300, ""),
            (4242, ""),
        ]
    );
}

#[test]
fn tree_sorts_siblings_and_draws_deeper_levels() {
    let mut s = Snapshot::empty("t", testing::T0);
    let root = on_gpu(testing::process(1, 0, "u", "root"), 0, Some(10), Some(1));
    let mut a = testing::process(5, 1, "u", "a");
    a.cpu_pct = Some(10.0);
    let mut b = testing::process(6, 1, "u", "b");
    b.cpu_pct = Some(90.0);
    let grandchild = testing::process(7, 5, "u", "g");
    s.processes = vec![grandchild, a, b, root];
    let mut app = app();
    app.tree = true;
    app.sort = SortColumn::Cpu;
    app.sort_desc = true;
    let rows = build_rows(&s, &app, NOW);
    let shown: Vec<(u32, &str)> = rows
        .iter()
        .map(|r| (r.proc.pid, r.tree_prefix.as_str()))
        .collect();
    assert_eq!(shown, vec![(1, ""), (6, "├─ "), (5, "└─ "), (7, "   └─ ")]);
    app.sort_desc = false;
    let rows = build_rows(&s, &app, NOW);
    let shown: Vec<(u32, &str)> = rows
        .iter()
        .map(|r| (r.proc.pid, r.tree_prefix.as_str()))
        .collect();
    assert_eq!(shown, vec![(1, ""), (5, "├─ "), (7, "│  └─ "), (6, "└─ ")]);
}

/// By CPU, a tree puts the busiest job first: a trainer at 6 % whose workers peg their cores
/// comes before a lone process at 50 %.
#[test]
fn tree_by_cpu_orders_jobs_by_what_they_use_in_all() {
    let mut s = Snapshot::empty("t", testing::T0);
    let mut trainer = testing::process(1, 0, "u", "train.py");
    trainer.cpu_pct = Some(6.0);
    let mut w1 = testing::process(2, 1, "u", "pt_data_worker");
    w1.cpu_pct = Some(99.0);
    let mut w2 = testing::process(3, 1, "u", "pt_data_worker");
    w2.cpu_pct = Some(98.0);
    let mut lone = testing::process(9, 0, "u", "notebook");
    lone.cpu_pct = Some(50.0);
    s.processes = vec![lone, trainer, w1, w2];
    let mut app = app();
    app.tree = true;
    app.sort = SortColumn::Cpu;
    app.sort_desc = true;
    assert_eq!(pids(&build_rows(&s, &app, NOW)), vec![1, 2, 3, 9]);
    app.sort_desc = false;
    assert_eq!(pids(&build_rows(&s, &app, NOW)), vec![9, 1, 3, 2]);
}

#[test]
fn tree_filter_keeps_the_parent_of_a_matching_worker() {
    let snap = testing::snapshot(2);
    let mut a = app();
    a.tree = true;
    a.filter = "2011".into();
    let rows = build_rows(&snap, &a, NOW);
    assert_eq!(pids(&rows), vec![1001, 2011]);
    assert_eq!(rows[1].tree_prefix, "└─ ");
}

#[test]
fn ppid_cycles_and_self_parents_do_not_hang_or_drop_rows() {
    let mut s = Snapshot::empty("t", testing::T0);
    s.processes = vec![
        testing::process(1, 2, "u", "a"),
        testing::process(2, 1, "u", "b"),
        testing::process(3, 3, "u", "c"),
        testing::process(4, 2, "u", "d"),
    ];
    let mut a = app();
    a.tree = true;
    a.gpu_filter = None;
    let rows = build_rows(&s, &a, NOW);
    let mut got = pids(&rows);
    got.sort_unstable();
    assert_eq!(got, vec![1, 2, 3, 4]);
    a.gpu_filter = Some(0);
    assert!(build_rows(&s, &a, NOW).is_empty());
}

#[test]
fn invisible_pids_are_labelled_not_dropped() {
    let snap = testing::snapshot(1);
    let rows = build_rows(&snap, &app(), NOW);
    let ghost = rows.iter().find(|r| r.proc.pid == 4242).unwrap();
    assert_eq!(ghost.command_text(), INVISIBLE_LABEL);
}

#[test]
fn inside_a_container_host_pids_are_shown_beside_the_local_ones() {
    use gpumeter_model::{PidMatch, PlaceKind, RunsIn};
    let mut s = Snapshot::empty("t", testing::T0);
    s.system.runs_in = Some(RunsIn {
        kind: PlaceKind::Container,
        runtime: Some("docker".into()),
    });
    let mut sure = on_gpu(
        testing::process(12, 1, "root", "python a.py"),
        0,
        Some(9),
        None,
    );
    sure.host_pid = Some(4_000_012);
    sure.pid_match = Some(PidMatch::Device);
    let mut guess = on_gpu(
        testing::process(13, 1, "root", "python b.py"),
        0,
        Some(8),
        None,
    );
    guess.host_pid = Some(4_000_013);
    guess.pid_match = Some(PidMatch::Guess);
    let mut worker = testing::process(14, 12, "root", "worker");
    worker.cpu_pct = Some(90.0);
    worker.rss_bytes = Some(1 << 30);
    worker.threads = Some(2);
    let mut outside = ProcessReading::invisible(777_777);
    outside.gpu = guess.gpu.clone();
    s.processes = vec![sure, guess, worker, outside];
    let rows = build_rows(&s, &app(), NOW);
    let text = |pid: u32| {
        rows.iter()
            .find(|r| r.proc.pid == pid)
            .unwrap()
            .command_text()
            .into_owned()
    };
    assert_eq!(text(12), "[host 4000012] python a.py");
    assert_eq!(text(13), "[host 4000013?] python b.py");
    assert_eq!(text(777_777), "host pid 777777 (not in this container)");
    // Tree view: the root of a job carries the job's totals.
    let mut a = app();
    a.tree = true;
    let rows = build_rows(&s, &a, NOW);
    let root = rows.iter().find(|r| r.proc.pid == 12).unwrap();
    let t = root.job.unwrap();
    assert_eq!((t.processes, t.threads), (2, 10));
    assert!((t.cpu_pct - (12.0 + 90.0)).abs() < 1e-9, "{t:?}");
    assert!(
        root.command_text().starts_with("[job 2 procs 102% CPU "),
        "{}",
        root.command_text()
    );
    assert_eq!(rows.iter().find(|r| r.proc.pid == 14).unwrap().job, None);
}

#[test]
fn a_process_that_renamed_itself_leads_with_its_name() {
    // PyTorch's workers: their trainer's command line, their own name.
    assert_eq!(
        renamed(Some("pt_data_worker"), "python train.py --config c.yaml"),
        Some("pt_data_worker")
    );
    // The program's own name, whole or cut to comm's 15 bytes, or a longer version of it.
    assert_eq!(renamed(Some("python3"), "/usr/bin/python3 -m x"), None);
    assert_eq!(
        renamed(Some("python"), "/opt/conda/bin/python3.11 t.py"),
        None
    );
    assert_eq!(
        renamed(Some("text-generation"), "text-generation-launcher --x"),
        None
    );
    assert_eq!(renamed(None, "python t.py"), None);
    assert_eq!(renamed(Some("kworker/3:1"), "[kworker/3:1]"), None);
    assert_eq!(renamed(Some("x"), ""), None);
}
