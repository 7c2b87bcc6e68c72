//! The shared-card notice on a fake clock: memory no visible process accounts for, other users'
//! processes and MIG mode give one informational notice (no cost) after most of the window, and
//! it clears when the other tenant leaves; a card that is all ours says nothing.

use gpumeter_model::{GpuProcessKind, GpuUse, ProcessReading, Snapshot};

use super::super::tests::{T0, drive, machine};
use super::super::{AlertKind, Rules, Severity, Transition};
use super::hidden_bytes;
use crate::clock::FakeClock;

const GIB: u64 = 1 << 30;

fn proc_on(pid: u32, user: &str, gpu: u32, gib: u64, visible: bool) -> ProcessReading {
    let mut p = ProcessReading::invisible(pid);
    p.visible = visible;
    if visible {
        p.user = Some(user.into());
        p.name = Some("python".into());
    }
    p.gpu.push(GpuUse {
        gpu_index: gpu,
        kind: GpuProcessKind::Compute,
        memory_bytes: Some(gib * GIB),
        sm_util_pct: Some(50),
        memory_util_pct: None,
    });
    p
}

/// alice holds 30 GiB on each GPU; GPU 1 also has `foreign` GiB used by no listed process.
fn at(t: i64, foreign: u64) -> Snapshot {
    let mut s = machine(t, [90, 90]);
    s.processes = vec![
        proc_on(100, "alice", 0, 30, true),
        proc_on(101, "alice", 1, 30, true),
    ];
    s.gpus[0].memory_used_bytes = Some(30 * GIB);
    s.gpus[1].memory_used_bytes = Some((30 + foreign) * GIB);
    s
}

fn shared(ts: &[Transition]) -> Vec<&Transition> {
    ts.iter()
        .filter(|t| t.alert().kind == AlertKind::Shared)
        .collect()
}

#[test]
fn memory_nobody_here_accounts_for_is_a_notice_without_cost_and_clears() {
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 90, Some(20_000_000), |_, t| at(t, 12));
    let f = shared(&ts);
    assert_eq!(f.len(), 1, "{ts:#?}");
    let a = f[0].alert();
    assert_eq!(
        a.title,
        "GPU 1: 12.0 GiB held by processes this container can't see"
    );
    assert_eq!(a.severity, Severity::Info);
    assert_eq!(a.cost_micros, None, "never idle-time blame");
    assert_eq!(
        a.evidence[0],
        (
            "GPU 1".to_string(),
            "12.0 GiB of 42.0 GiB used is no visible process's".to_string()
        )
    );
    assert_eq!(hidden_bytes(&at(T0, 12), 0), Some(0));
    // The other tenant leaves.
    let ts = drive(&mut r, &clock, 90, None, |_, t| at(t, 0));
    assert!(
        shared(&ts)
            .iter()
            .any(|t| matches!(t, Transition::Cleared(_))),
        "{ts:#?}"
    );
}

#[test]
fn other_users_invisible_pids_and_mig_are_named() {
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 90, None, |_, t| {
        let mut s = at(t, 0);
        s.processes.push(proc_on(200, "bob", 0, 3, true));
        // A PID /proc cannot see: its memory is nobody's we know.
        s.processes.push(proc_on(300, "", 1, 5, false));
        s.gpus[0].memory_used_bytes = Some(33 * GIB);
        s.gpus[1].memory_used_bytes = Some(35 * GIB);
        s.gpus[1].mig_enabled = Some(true);
        s
    });
    let f = shared(&ts);
    assert_eq!(f.len(), 1, "{ts:#?}");
    let a = f[0].alert();
    assert_eq!(
        a.title,
        "GPU 1: 5.0 GiB held by processes this container can't see; GPU 0 shared with bob; \
         GPU 1 in MIG mode"
    );
    let ev = |k: &str| a.evidence.iter().find(|(l, _)| l == k).unwrap().1.clone();
    assert_eq!(ev("GPU 0, other users"), "bob (pid 200, 3.0 GiB)");
}

#[test]
fn gpus_only_another_user_runs_on_are_theirs_not_shared() {
    // alice trains on GPUs 0–1; bob and carol hold GPUs 2–3 alone (a lab box: their cards, not
    // shared ones) and dave joins alice on 1.
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 90, None, |_, t| {
        let mut s = at(t, 0);
        s.gpus.push(super::super::tests::gpu(2, 90));
        s.gpus.push(super::super::tests::gpu(3, 90));
        s.processes.push(proc_on(200, "bob", 2, 10, true));
        s.processes.push(proc_on(201, "carol", 3, 10, true));
        s.processes.push(proc_on(202, "dave", 1, 2, true));
        // root's display server on GPU 0 beside alice: the machine's, not a tenant.
        let mut xorg = proc_on(203, "root", 0, 0, true);
        xorg.gpu[0].kind = GpuProcessKind::Graphics;
        s.processes.push(xorg);
        s.gpus[1].memory_used_bytes = Some(32 * GIB);
        s.gpus[2].memory_used_bytes = Some(10 * GIB);
        s.gpus[3].memory_used_bytes = Some(10 * GIB);
        s
    });
    let f = shared(&ts);
    assert_eq!(f.len(), 1, "{ts:#?}");
    assert_eq!(f[0].alert().title, "GPU 1 shared with dave");
}

#[test]
fn cards_that_are_all_ours_or_a_blip_say_nothing() {
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    // 20 s of 4 GiB unaccounted (a process starting up) among 10 minutes of none.
    let ts = drive(&mut r, &clock, 600, None, |s, t| {
        at(t, if (100..120).contains(&s) { 4 } else { 0 })
    });
    assert!(shared(&ts).is_empty(), "{ts:#?}");
}

/// The one-pass check (`any_foreign`) against the full per-GPU reading it stands in for, on
/// varied machines: hidden memory at the threshold, unknown memory, other users, MIG, failed
/// GPUs, processes on GPUs the snapshot does not list and GPUs listed twice.
#[test]
fn the_one_pass_check_agrees_with_the_full_reading() {
    use super::{SharedRule, any_foreign, main_user};
    let cfg = crate::engine::rules::RulesConfig::default().shared;
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut rnd = |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    let min = cfg.min_hidden_bytes;
    let rule = SharedRule::new(cfg, 0.8, 0.2);
    for case in 0..3_000 {
        let gpus = 1 + rnd(4) as usize;
        let mut s = machine(T0, [50, 50]);
        s.gpus.truncate(1);
        while s.gpus.len() < gpus {
            let mut g = s.gpus[0].clone();
            g.index = s.gpus.len() as u32;
            s.gpus.push(g);
        }
        for g in &mut s.gpus {
            g.memory_used_bytes = (rnd(6) != 0).then(|| rnd(8) * GIB / 2 + rnd(3) * (min / 2));
            g.mig_enabled = [None, Some(false), Some(true)][rnd(3) as usize];
            if rnd(8) == 0 {
                g.state = gpumeter_model::GpuState::Lost;
            }
        }
        if case % 7 == 0 {
            let twin = s.gpus[0].clone();
            s.gpus.push(twin);
        }
        for pid in 0..rnd(6) as u32 {
            let user = ["alice", "bob", "carol"][rnd(3) as usize];
            let mut p = proc_on(
                100 + pid,
                user,
                rnd(gpus as u64 + 1) as u32,
                rnd(4),
                rnd(4) != 0,
            );
            if rnd(5) == 0 {
                p.gpu[0].memory_bytes = None;
            }
            if rnd(3) == 0 {
                let mut again = p.gpu[0].clone();
                again.gpu_index = rnd(gpus as u64) as u32;
                p.gpu.push(again);
            }
            if rnd(6) == 0 {
                p.pid_match = Some(gpumeter_model::PidMatch::Device);
            }
            s.processes.push(p);
        }
        let me = main_user(&s);
        let fast = any_foreign(&s, me, min);
        assert_eq!(fast.len(), s.gpus.len());
        for (g, (index, any)) in s.gpus.iter().zip(&fast) {
            assert_eq!(*index, g.index);
            assert_eq!(
                *any,
                rule.foreign(&s, g.index, me).any(),
                "case {case}: {s:#?}"
            );
        }
    }
}
