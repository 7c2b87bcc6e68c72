//! The job-finished notice on a fake clock: a job that worked and exits gets its notice within
//! seconds, with how long it ran, the idle GPUs and their rate; a job whose GPUs go idle while it
//! lives on gets one too; short-lived or never-busy processes get none; work again clears it.

use gpumeter_model::{GpuProcessKind, GpuUse, ProcessReading, Snapshot};

use super::super::tests::{T0, drive, machine};
use super::super::{AlertKind, Rules, Severity, Transition};
use crate::clock::FakeClock;

/// pid 4242 (`python train.py`, started `age_s` before T0) on both GPUs, while `alive`.
fn at(t: i64, util: u32, alive: bool, age_s: i64) -> Snapshot {
    let mut s = machine(t, [util, util]);
    if alive {
        let mut p = ProcessReading::invisible(4242);
        p.visible = true;
        p.ppid = Some(1);
        p.name = Some("python".into());
        p.command = Some("/usr/bin/python train.py --epochs 90".into());
        p.start_time_unix_s = Some((T0 - age_s * 1000) / 1000);
        for g in 0..2 {
            p.gpu.push(GpuUse {
                gpu_index: g,
                kind: GpuProcessKind::Compute,
                memory_bytes: Some(30 << 30),
                sm_util_pct: Some(util),
                memory_util_pct: None,
            });
        }
        s.processes.push(p);
    }
    s
}

fn done(ts: &[Transition]) -> Vec<&Transition> {
    ts.iter()
        .filter(|t| t.alert().kind == AlertKind::JobDone)
        .collect()
}

const SIX_H: i64 = 6 * 3600 + 10 * 60 + 30;

#[test]
fn a_job_that_exits_gets_a_notice_at_once_with_what_idles_and_its_rate() {
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let rate = Some(31_000_000);
    let ts = drive(&mut r, &clock, 120, rate, |_, t| at(t, 95, true, SIX_H));
    assert!(done(&ts).is_empty());
    let ts = drive(&mut r, &clock, 10, rate, |_, t| at(t, 0, false, SIX_H));
    let f = done(&ts);
    assert_eq!(f.len(), 1, "{ts:#?}");
    let Transition::Fired(a) = f[0] else {
        panic!("{f:#?}")
    };
    assert_eq!(a.severity, Severity::Moderate);
    assert_eq!(
        a.title,
        "python train.py (pid 4242) ended just now after 6h12m; 2 GPUs now idle at $31.00/h"
    );
    let ev = |k: &str| a.evidence.iter().find(|(l, _)| l == k).unwrap().1.clone();
    assert!(ev("exit").starts_with("status unknown"), "{}", ev("exit"));
    // Two minutes on, the title says so and the idle cost grows; the idle alert comes later.
    let ts = drive(&mut r, &clock, 120, rate, |_, t| at(t, 0, false, SIX_H));
    assert!(ts.iter().all(|t| t.alert().kind != AlertKind::IdlePaid));
    let now = r
        .alerts()
        .iter()
        .find(|a| a.kind == AlertKind::JobDone)
        .unwrap()
        .clone();
    assert!(
        now.title.contains("ended 2 min ago after 6h12m"),
        "{}",
        now.title
    );
    assert!(
        now.cost_micros.unwrap() >= 31_000_000 / 30,
        "{:?}",
        now.cost_micros
    );
    // A new job on the GPUs: the notice clears.
    let ts = drive(&mut r, &clock, 5, rate, |_, t| at(t, 95, true, 0));
    assert!(
        done(&ts)
            .iter()
            .any(|t| matches!(t, Transition::Cleared(_))),
        "{ts:#?}"
    );
}

#[test]
fn an_oom_kill_at_the_end_is_named() {
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    drive(&mut r, &clock, 60, None, |_, t| {
        let mut s = at(t, 95, true, SIX_H);
        s.host.cgroup.oom_kills = Some(0);
        s
    });
    let ts = drive(&mut r, &clock, 10, None, |_, t| {
        let mut s = at(t, 0, false, SIX_H);
        s.host.cgroup.oom_kills = Some(1);
        s
    });
    let f = done(&ts);
    assert_eq!(f.len(), 1, "{ts:#?}");
    let a = f[0].alert();
    assert!(
        a.title.ends_with("2 GPUs now idle (no price set)"),
        "{}",
        a.title
    );
    let exit = &a.evidence.iter().find(|(l, _)| l == "exit").unwrap().1;
    assert!(exit.contains("OOM killer"), "{exit}");
}

#[test]
fn gpus_going_idle_under_a_live_job_give_the_notice_after_its_rhythm() {
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    drive(&mut r, &clock, 120, None, |_, t| at(t, 95, true, SIX_H));
    // A 90 s pause (a checkpoint) is no end; nor is a second one, now part of its rhythm.
    let ts = drive(&mut r, &clock, 90, None, |_, t| at(t, 0, true, SIX_H));
    assert!(done(&ts).is_empty(), "{ts:#?}");
    drive(&mut r, &clock, 600, None, |_, t| at(t, 95, true, SIX_H));
    // Idle for 6 min: past `went_idle` (5 min) and twice its longest pause (3 min).
    let ts = drive(&mut r, &clock, 360, None, |_, t| at(t, 0, true, SIX_H));
    let f = done(&ts);
    assert_eq!(f.len(), 1, "{ts:#?}");
    assert!(
        f[0].alert()
            .title
            .starts_with("python train.py (pid 4242): its GPUs went idle 5 min ago after 6h2"),
        "{}",
        f[0].alert().title
    );
    // With a 4-minute pause in its past, 6 minutes idle is still within its rhythm (8 min).
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    drive(&mut r, &clock, 120, None, |_, t| at(t, 95, true, SIX_H));
    drive(&mut r, &clock, 240, None, |_, t| at(t, 0, true, SIX_H));
    drive(&mut r, &clock, 600, None, |_, t| at(t, 95, true, SIX_H));
    let ts = drive(&mut r, &clock, 360, None, |_, t| at(t, 0, true, SIX_H));
    assert!(done(&ts).is_empty(), "{ts:#?}");
}

#[test]
fn a_job_working_on_the_cpu_while_its_gpus_idle_has_not_finished() {
    // 20 minutes of evaluation on the CPU (the main process at ~100 % of a core, its GPUs
    // idle): no end. When the process then sits idle itself, the notice comes after its
    // rhythm (the 20-minute pause is part of it, so twice that).
    let on_cpu = |t: i64, pct: f64| {
        let mut s = at(t, 0, true, SIX_H);
        s.processes[0].cpu_pct = Some(pct);
        s
    };
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    drive(&mut r, &clock, 3600, None, |_, t| at(t, 95, true, SIX_H));
    let ts = drive(&mut r, &clock, 20 * 60, None, |_, t| on_cpu(t, 99.0));
    assert!(done(&ts).is_empty(), "{ts:#?}");
    // Back on the GPUs, then a deadlock: the process asleep, nothing on the CPU.
    drive(&mut r, &clock, 1800, None, |_, t| at(t, 95, true, SIX_H));
    let ts = drive(&mut r, &clock, 39 * 60, None, |_, t| on_cpu(t, 0.5));
    assert!(
        done(&ts).is_empty(),
        "within twice its 20-minute pause: {ts:#?}"
    );
    let ts = drive(&mut r, &clock, 2 * 60, None, |_, t| on_cpu(t, 0.5));
    assert_eq!(done(&ts).len(), 1, "{ts:#?}");
}

#[test]
fn a_family_that_comes_back_is_one_job_and_its_absences_set_its_rhythm() {
    // A sweep's trials: the same launcher's processes exit and come back 80 s later.
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let mut all = Vec::new();
    for _ in 0..3 {
        all.extend(drive(&mut r, &clock, 240, None, |_, t| {
            at(t, 95, true, SIX_H)
        }));
        all.extend(drive(&mut r, &clock, 80, None, |_, t| {
            at(t, 0, false, SIX_H)
        }));
    }
    // The first gap is the first end it made (a notice), the ones after are its rhythm.
    let fired: Vec<_> = done(&all)
        .into_iter()
        .filter(|t| matches!(t, Transition::Fired(_)))
        .collect();
    assert_eq!(fired.len(), 1, "{all:#?}");
    // The sweep ends: the notice comes once it has been gone 1.5 × its longest gap (120 s).
    drive(&mut r, &clock, 240, None, |_, t| at(t, 95, true, SIX_H));
    let ts = drive(&mut r, &clock, 110, None, |_, t| at(t, 0, false, SIX_H));
    assert!(done(&ts).is_empty(), "{ts:#?}");
    let ts = drive(&mut r, &clock, 20, None, |_, t| at(t, 0, false, SIX_H));
    assert_eq!(done(&ts).len(), 1, "{ts:#?}");
}

#[test]
fn short_or_idle_jobs_and_a_blip_say_nothing() {
    // A 2-minute job (young process): no notice.
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    drive(&mut r, &clock, 120, None, |_, t| at(t, 95, true, 0));
    let ts = drive(&mut r, &clock, 30, None, |_, t| at(t, 0, false, 0));
    assert!(done(&ts).is_empty(), "{ts:#?}");
    // A process that never used its GPUs.
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    drive(&mut r, &clock, 120, None, |_, t| at(t, 0, true, SIX_H));
    let ts = drive(&mut r, &clock, 30, None, |_, t| at(t, 0, false, SIX_H));
    assert!(done(&ts).is_empty(), "{ts:#?}");
    // A reading that misses the process for 2 s is no end.
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 300, None, |s, t| {
        at(t, 95, !(100..102).contains(&s), SIX_H)
    });
    assert!(done(&ts).is_empty(), "{ts:#?}");
}

/// Its GPUs lost and its process gone with them (a spot reclaim): no "job finished" notice — the
/// job lost its cards, and the lost alert is the one that says so.
#[test]
fn a_job_whose_gpus_were_lost_did_not_finish() {
    let lost = |mut s: Snapshot| {
        for g in &mut s.gpus {
            *g = gpumeter_model::GpuReading {
                index: g.index,
                state: gpumeter_model::GpuState::Lost,
                ..Default::default()
            };
        }
        s
    };
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let rate = Some(31_000_000);
    drive(&mut r, &clock, 120, rate, |_, t| at(t, 95, true, SIX_H));
    let ts = drive(&mut r, &clock, 300, rate, |_, t| {
        lost(at(t, 0, false, SIX_H))
    });
    assert!(done(&ts).is_empty(), "{ts:#?}");
    assert!(
        r.alerts().iter().any(|a| a.kind == AlertKind::Lost),
        "{:#?}",
        r.alerts()
    );
    // Lost with the process hanging on (ranks stuck in a collective): no "went idle" either.
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    drive(&mut r, &clock, 120, rate, |_, t| at(t, 95, true, SIX_H));
    let ts = drive(&mut r, &clock, 300, rate, |_, t| {
        lost(at(t, 0, true, SIX_H))
    });
    assert!(done(&ts).is_empty(), "{ts:#?}");
}
