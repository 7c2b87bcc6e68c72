//! The dialog against real child processes: what it names, what Enter does, the whole-job
//! switch, refusals (read-only, a demo's PIDs, a PID reused since the dialog opened), and the
//! keys and the screen.

use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, Stdio};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use gpumeter_model::{GpuProcessKind, GpuUse, Snapshot};

use super::*;
use crate::ui::tests::fixtures::{self as testing, GIB};

fn sleeper() -> Child {
    Command::new("sleep")
        .arg("30")
        .stdin(Stdio::null())
        .spawn()
        .expect("spawn sleep")
}

fn reap(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// A reading naming `trainer` (on GPUs 0 and 1, 6 GiB) and `worker` as its child.
fn reading(trainer: &Child, worker: &Child) -> Snapshot {
    let mut s = Snapshot::empty("nvml", 0);
    let mut t = testing::process(trainer.id(), 1, "alice", "python train.py --epochs 90");
    t.start_time_unix_s = None;
    for (gpu, gib) in [(0, 4), (1, 2)] {
        t.gpu.push(GpuUse {
            gpu_index: gpu,
            kind: GpuProcessKind::Compute,
            memory_bytes: Some(gib * GIB),
            sm_util_pct: None,
            memory_util_pct: None,
        });
    }
    let mut w = testing::process(worker.id(), trainer.id(), "alice", "pt_data_worker");
    w.start_time_unix_s = None;
    s.processes = vec![t, w];
    s
}

fn key(app: &mut App, code: KeyCode) -> Action {
    app.handle_key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn app(acting: Acting) -> App {
    App::new(&crate::ui::UiOptions {
        acting,
        ..testing::options()
    })
}

#[test]
fn the_dialog_names_the_process_and_enter_sends_term() {
    let (mut trainer, worker) = (sleeper(), sleeper());
    let snap = reading(&trainer, &worker);
    let pending = open(
        Ask::Signal(Signal::Term),
        Acting::Allowed,
        Some(trainer.id()),
        Some(&snap),
    )
    .expect("dialog");
    assert_eq!(
        pending.question(),
        format!("Send TERM to pid {}?", trainer.id())
    );
    assert_eq!(pending.one.user, "alice");
    assert_eq!(pending.one.command, "python train.py --epochs 90");
    assert_eq!(pending.gpus(), vec![0, 1]);
    assert_eq!(pending.vram_bytes(), Some(6 * GIB));
    assert_eq!(pending.job.len(), 2, "the trainer and its worker");

    assert_eq!(
        pending.confirm(),
        format!("sent TERM to pid {}", trainer.id())
    );
    assert_eq!(trainer.wait().expect("wait").signal(), Some(15));
    reap(worker);
}

#[test]
fn whole_job_reaches_the_trainer_and_its_workers() {
    let (mut trainer, mut worker) = (sleeper(), sleeper());
    let snap = reading(&trainer, &worker);
    // Chosen from the worker: its job is its trainer's.
    let mut pending = open(
        Ask::Signal(Signal::Kill),
        Acting::Allowed,
        Some(worker.id()),
        Some(&snap),
    )
    .expect("dialog");
    assert_eq!(pending.vram_bytes(), None, "a worker holds no VRAM");
    pending.whole_job = true;
    assert_eq!(
        pending.question(),
        format!(
            "Send KILL to 2 processes of the job of pid {}?",
            worker.id()
        )
    );
    assert_eq!(pending.vram_bytes(), Some(6 * GIB));
    assert_eq!(pending.confirm(), "sent KILL to 2 processes");
    assert_eq!(trainer.wait().expect("wait").signal(), Some(9));
    assert_eq!(worker.wait().expect("wait").signal(), Some(9));
}

#[test]
fn a_pid_reused_after_the_dialog_opened_is_refused() {
    let (mut trainer, worker) = (sleeper(), sleeper());
    let snap = reading(&trainer, &worker);
    let mut pending = open(
        Ask::Signal(Signal::Kill),
        Acting::Allowed,
        Some(trainer.id()),
        Some(&snap),
    )
    .expect("dialog");
    pending.one.target.start_ticks += 1;
    let said = pending.confirm();
    assert!(said.starts_with("refused: "), "{said}");
    assert!(said.contains("start time changed"), "{said}");
    assert!(trainer.try_wait().expect("try_wait").is_none(), "not hit");
    reap(trainer);
    reap(worker);
}

#[test]
fn a_process_that_started_at_another_time_than_shown_is_not_offered() {
    let (trainer, worker) = (sleeper(), sleeper());
    let mut snap = reading(&trainer, &worker);
    snap.system.boot_time_unix_s = Some(1_700_000_000);
    snap.processes[0].start_time_unix_s = Some(1_000);
    let err = open(
        Ask::Signal(Signal::Term),
        Acting::Allowed,
        Some(trainer.id()),
        Some(&snap),
    )
    .expect_err("refused");
    assert!(err.contains("not the process shown"), "{err}");
    reap(trainer);
    reap(worker);
}

#[test]
fn read_only_and_demo_readings_refuse_before_any_dialog() {
    let (trainer, worker) = (sleeper(), sleeper());
    let snap = reading(&trainer, &worker);
    let ask = Ask::Signal(Signal::Kill);
    let ro = open(ask, Acting::ReadOnly, Some(trainer.id()), Some(&snap)).expect_err("ro");
    assert!(ro.starts_with("read-only"), "{ro}");
    let demo = open(ask, Acting::NotLocal, Some(trainer.id()), Some(&snap)).expect_err("demo");
    assert!(demo.contains("demo"), "{demo}");
    let mut hidden = snap.clone();
    hidden.processes[0].visible = false;
    let inv = open(ask, Acting::Allowed, Some(trainer.id()), Some(&hidden)).expect_err("hidden");
    assert!(inv.contains("not visible"), "{inv}");
    reap(trainer);
    reap(worker);
}

#[test]
fn renice_starts_one_step_nicer_and_moves_with_plus_and_minus() {
    let (trainer, worker) = (sleeper(), sleeper());
    let snap = reading(&trainer, &worker);
    let mut a = app(Acting::Allowed);
    a.sync(vec![trainer.id(), worker.id()], vec![0, 1], 10);
    assert_eq!(
        key(&mut a, KeyCode::Char('r')),
        Action::Act(Ask::Renice { nicer: true })
    );
    assert!(apply(
        Action::Act(Ask::Renice { nicer: true }),
        &mut a,
        Some(&snap)
    ));
    let p = a.confirm.clone().expect("dialog open");
    // Children inherit the suite's nice value; under `nice -n 18` or more there is no room
    // for two steps up to 19, the most a nice value can be.
    if p.nice_now > 17 {
        eprintln!(
            "skipped: the test runs at nice {}, no room to renice",
            p.nice_now
        );
        reap(trainer);
        reap(worker);
        return;
    }
    assert_eq!(p.nice, p.nice_now + 1);
    key(&mut a, KeyCode::Char('+'));
    let wanted = a.confirm.as_ref().map(|p| p.nice).expect("open");
    assert_eq!(wanted, p.nice_now + 2);
    assert_eq!(key(&mut a, KeyCode::Enter), Action::ConfirmAct);
    assert!(apply(Action::ConfirmAct, &mut a, Some(&snap)));
    assert!(a.confirm.is_none());
    assert_eq!(
        a.status.as_deref(),
        Some(format!("reniced to {wanted} pid {}", trainer.id()).as_str())
    );
    let stat = procfs::process::Process::new(trainer.id() as i32)
        .and_then(|p| p.stat())
        .expect("stat");
    assert_eq!(stat.nice, i64::from(wanted));
    reap(trainer);
    reap(worker);
}

#[test]
fn any_other_key_cancels_and_nothing_is_sent() {
    let (mut trainer, worker) = (sleeper(), sleeper());
    let snap = reading(&trainer, &worker);
    let mut a = app(Acting::Allowed);
    a.sync(vec![trainer.id(), worker.id()], vec![0, 1], 10);
    let ask = key(&mut a, KeyCode::Char('K'));
    assert!(apply(ask, &mut a, Some(&snap)));
    assert_eq!(key(&mut a, KeyCode::Char('w')), Action::Redraw);
    assert!(a.confirm.as_ref().is_some_and(|p| p.whole_job));
    // `j` would move the selection; here it only cancels, and says that nothing was sent.
    assert_eq!(key(&mut a, KeyCode::Char('j')), Action::Redraw);
    assert!(a.confirm.is_none());
    assert_eq!(
        a.status.as_deref(),
        Some(
            format!(
                "cancelled: SIGKILL not sent to 2 processes of the job of pid {}",
                trainer.id()
            )
            .as_str()
        )
    );
    assert_eq!(a.selected_pid(), Some(trainer.id()));
    assert!(trainer.try_wait().expect("try_wait").is_none());
    reap(trainer);
    reap(worker);
}

#[test]
fn the_dialog_draws_everything_it_names_at_80_columns() {
    let (trainer, worker) = (sleeper(), sleeper());
    let mut snap = testing::snapshot(2);
    let real = reading(&trainer, &worker);
    snap.processes.extend(real.processes.clone());
    let engine = testing::engine_with(snap.clone());
    let mut a = app(Acting::Allowed);
    a.open_confirm(
        open(
            Ask::Signal(Signal::Term),
            Acting::Allowed,
            Some(trainer.id()),
            Some(&snap),
        )
        .expect("dialog"),
    );
    let screen = testing::buffer_to_string(&testing::render(&mut a, &engine, 80, 24));
    for want in [
        format!("Send TERM to pid {}?", trainer.id()),
        "alice".to_string(),
        "python train.py".to_string(),
        "GPU 0, 1".to_string(),
        format!("VRAM it frees {}", gpumeter_core::units::bytes(6 * GIB)),
        "whole job: off".to_string(),
        "Enter/y send TERM".to_string(),
    ] {
        assert!(screen.contains(&want), "{want:?} missing:\n{screen}");
    }
    reap(trainer);
    reap(worker);
}

#[test]
fn read_only_keys_say_so_and_the_header_says_readonly() {
    let engine = testing::engine(2);
    let mut a = app(Acting::ReadOnly);
    let ask = key(&mut a, KeyCode::F(9));
    assert!(apply(ask, &mut a, engine.latest()));
    assert!(a.confirm.is_none());
    let screen = testing::buffer_to_string(&testing::render(&mut a, &engine, 120, 40));
    assert!(screen.contains("read-only: signals"), "{screen}");
    assert!(screen.contains("gpumeter READONLY"), "{screen}");
}

/// A reading of three unrelated sleepers.
fn three(procs: [&Child; 3]) -> Snapshot {
    let mut s = Snapshot::empty("nvml", 0);
    s.processes = procs
        .iter()
        .map(|c| {
            let mut p = testing::process(c.id(), 1, "alice", "sleep 30");
            p.start_time_unix_s = None;
            p
        })
        .collect();
    s
}

#[test]
fn tagged_processes_are_what_a_signal_reaches_and_the_rest_live_on() {
    let (mut a_, mut b_, mut c_) = (sleeper(), sleeper(), sleeper());
    let snap = three([&a_, &b_, &c_]);
    let mut a = app(Acting::Allowed);
    a.sync(vec![a_.id(), b_.id(), c_.id()], vec![], 10);
    // Space on the first row, then on the third.
    assert_eq!(key(&mut a, KeyCode::Char(' ')), Action::Redraw);
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::Char(' '));
    a.tags.reconcile(&snap);
    assert_eq!(a.tags.pids().count(), 2);
    let ask = key(&mut a, KeyCode::Char('K'));
    assert!(apply(ask, &mut a, Some(&snap)));
    let pending = a.confirm.clone().expect("the dialog");
    assert_eq!(pending.question(), "Send KILL to 2 tagged processes?");
    let mut reached: Vec<u32> = pending.subjects().iter().map(|s| s.target.pid).collect();
    reached.sort_unstable();
    let mut want = vec![a_.id(), c_.id()];
    want.sort_unstable();
    assert_eq!(reached, want);
    // `w` has no job to widen to.
    assert_eq!(key(&mut a, KeyCode::Char('w')), Action::None);
    assert_eq!(key(&mut a, KeyCode::Enter), Action::ConfirmAct);
    assert!(apply(Action::ConfirmAct, &mut a, Some(&snap)));
    assert_eq!(a.status.as_deref(), Some("sent KILL to 2 processes"));
    for child in [&mut a_, &mut c_] {
        let status = child.wait().expect("wait");
        assert_eq!(status.signal(), Some(9));
    }
    assert!(
        b_.try_wait().expect("try_wait").is_none(),
        "untagged: alive"
    );
    reap(a_);
    reap(b_);
    reap(c_);
}

#[test]
fn a_tag_whose_pid_now_names_a_newer_process_is_left_out_and_cancel_says_who() {
    let (a_, b_, c_) = (sleeper(), sleeper(), sleeper());
    let snap = three([&a_, &b_, &c_]);
    let mut tags = Tags::default();
    tags.toggle(a_.id(), None, None);
    tags.reconcile(&snap);
    // The next reading shows PID a_ started anew: the tag no longer names it.
    let mut later = snap.clone();
    later.processes[0].start_time_unix_s = Some(1);
    let e = open_tagged(
        Ask::Signal(Signal::Term),
        Acting::Allowed,
        &tags,
        Some(&later),
    )
    .unwrap_err();
    assert!(e.contains("none of the 1 tagged processes"), "{e}");
    // With no start time in the readings, the kernel's start ticks pinned when tagging tell
    // a reused PID apart: ticks that differ from the process there now leave it out.
    let mut pinned = Tags::default();
    let now = crate::act::start_ticks(b_.id()).expect("ticks");
    pinned.toggle(b_.id(), None, Some(now + 1));
    let e = open_tagged(
        Ask::Signal(Signal::Term),
        Acting::Allowed,
        &pinned,
        Some(&snap),
    )
    .unwrap_err();
    assert!(e.contains("none of the 1 tagged processes"), "{e}");
    pinned.clear();
    pinned.toggle(b_.id(), None, Some(now));
    let p = open_tagged(
        Ask::Signal(Signal::Term),
        Acting::Allowed,
        &pinned,
        Some(&snap),
    )
    .expect("the same process");
    assert_eq!(p.subjects()[0].target.pid, b_.id());
    // Refusals come first, as for one process.
    let e = open_tagged(
        Ask::Signal(Signal::Term),
        Acting::NotLocal,
        &tags,
        Some(&snap),
    )
    .unwrap_err();
    assert!(e.contains("demo"), "{e}");
    // Cancelling names how many were spared.
    let mut a = app(Acting::Allowed);
    a.sync(vec![a_.id(), b_.id(), c_.id()], vec![], 10);
    key(&mut a, KeyCode::Char(' '));
    key(&mut a, KeyCode::Char(' '));
    a.tags.reconcile(&snap);
    let ask = key(&mut a, KeyCode::Char('i'));
    assert!(apply(ask, &mut a, Some(&snap)));
    key(&mut a, KeyCode::Char('x'));
    assert_eq!(
        a.status.as_deref(),
        Some("cancelled: SIGINT not sent to 2 tagged processes")
    );
    reap(a_);
    reap(b_);
    reap(c_);
}

#[test]
fn f7_starts_the_renice_one_step_less_nice() {
    let (trainer, worker) = (sleeper(), sleeper());
    let snap = reading(&trainer, &worker);
    let mut a = app(Acting::Allowed);
    a.sync(vec![trainer.id(), worker.id()], vec![0, 1], 10);
    let ask = key(&mut a, KeyCode::F(7));
    assert_eq!(ask, Action::Act(Ask::Renice { nicer: false }));
    assert!(apply(ask, &mut a, Some(&snap)));
    let p = a.confirm.clone().expect("dialog open");
    assert_eq!(p.nice, (p.nice_now - 1).max(-20));
    assert_eq!(
        p.question(),
        format!(
            "Renice pid {} from {} to {}?",
            trainer.id(),
            p.nice_now,
            p.nice
        )
    );
    // Cancelled: nothing changed.
    key(&mut a, KeyCode::Esc);
    let stat = procfs::process::Process::new(trainer.id() as i32)
        .and_then(|p| p.stat())
        .expect("stat");
    assert_eq!(stat.nice, i64::from(p.nice_now));
    reap(trainer);
    reap(worker);
}
