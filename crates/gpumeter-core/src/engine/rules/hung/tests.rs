//! The hung-GPU rule on a fake clock: fires on util high / SM activity ~0 / low power, counts
//! the time as idle paid time, says nothing while the SMs work, judges a board without GPM on
//! its memory controller and power together, and clears.

use gpumeter_model::Snapshot;

use super::super::tests::{T0, drive, machine};
use super::super::{AlertKind, Rules, Severity, Transition};
use crate::clock::FakeClock;

/// Both GPUs at `util` %, SM activity `sm` (None: no GPM), `watts` of 700 W.
fn box_at(t: i64, util: u32, sm: Option<f64>, watts: f64) -> Snapshot {
    let mut s = machine(t, [util, util]);
    for g in &mut s.gpus {
        g.sm_active_pct = sm;
        g.power_watts = Some(watts);
        g.power_limit_watts = Some(700.0);
    }
    s
}

fn fired(ts: &[Transition]) -> Vec<&super::super::Alert> {
    ts.iter()
        .filter_map(|t| match t {
            Transition::Fired(a) => Some(a),
            _ => None,
        })
        .collect()
}

#[test]
fn busy_util_with_idle_sms_fires_with_evidence_and_idle_cost() {
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    // $20/h for the 2-GPU box: $10 per GPU-hour.
    let rate = Some(20_000_000);
    let ts = drive(&mut r, &clock, 60, rate, |_, t| {
        box_at(t, 100, Some(1.0), 90.0)
    });
    assert!(fired(&ts).is_empty(), "not before most of the 2 min window");
    let ts = drive(&mut r, &clock, 120, rate, |_, t| {
        box_at(t, 100, Some(1.0), 90.0)
    });
    let f = fired(&ts);
    assert_eq!(f.len(), 1, "{ts:#?}");
    let a = f[0];
    assert_eq!(a.kind, AlertKind::Hung);
    assert_eq!(a.severity, Severity::High);
    assert!(
        a.title
            .starts_with("GPUs 0, 1 report busy but do no work (hung collective? deadlock?)"),
        "{}",
        a.title
    );
    let ev = |k: &str| {
        a.evidence
            .iter()
            .find(|(l, _)| l.starts_with(k))
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("{k}: {:#?}", a.evidence))
    };
    assert_eq!(ev("util, mean"), "0: 100 %, 1: 100 %");
    assert_eq!(ev("SM activity, mean"), "0: 1.0 %, 1: 1.0 %");
    assert_eq!(ev("power"), "0: 90/700 W, 1: 90/700 W");
    assert!(a.cost_micros.unwrap() > 0);
    assert!(ev("idle paid time").ends_with("at $10.00/GPU-h"));
    // The stuck time is idle paid time in the tallies: 3 min minus the first tick.
    let idle = &r.idle_totals().machine;
    assert_eq!(idle.idle_ms, 179_000);
    assert_eq!(idle.cost_micros(), 20_000_000 * 179 / 3600);
    // And the idle alert stays about idle GPUs: it never fired.
    assert!(ts.iter().all(|t| t.alert().kind != AlertKind::IdlePaid));

    // The SMs get back to work: it clears.
    let ts = drive(&mut r, &clock, 150, rate, |_, t| {
        box_at(t, 97, Some(85.0), 650.0)
    });
    assert!(
        ts.iter()
            .any(|t| matches!(t, Transition::Cleared(a) if a.kind == AlertKind::Hung)),
        "{ts:#?}"
    );
}

#[test]
fn working_sms_high_power_or_no_gpm_stay_quiet() {
    for (sm, watts) in [(Some(85.0), 650.0), (None, 90.0), (Some(1.0), 600.0)] {
        let clock = FakeClock::new(T0);
        let mut r = Rules::default();
        let ts = drive(&mut r, &clock, 600, Some(20_000_000), |_, t| {
            box_at(t, 100, sm, watts)
        });
        assert!(
            ts.iter().all(|t| t.alert().kind != AlertKind::Hung),
            "sm {sm:?} at {watts} W: {ts:#?}"
        );
        assert_eq!(r.idle_totals().machine.idle_ms, 0, "sm {sm:?} at {watts} W");
    }
}

#[test]
fn without_gpm_an_idle_memory_controller_on_low_power_is_stuck() {
    // (memory-controller util, watts): only both idle-like say "stuck".
    for (mem, watts, stuck) in [
        (Some(0), 90.0, true),
        (Some(35), 90.0, false),
        (Some(0), 420.0, false),
        (None, 90.0, false),
    ] {
        let clock = FakeClock::new(T0);
        let mut r = Rules::default();
        let ts = drive(&mut r, &clock, 600, Some(20_000_000), |_, t| {
            let mut s = box_at(t, 100, None, watts);
            for g in &mut s.gpus {
                g.util_memory_pct = mem;
            }
            s
        });
        let hung = fired(&ts)
            .into_iter()
            .filter(|a| a.kind == AlertKind::Hung)
            .count();
        assert_eq!(hung, usize::from(stuck), "mem {mem:?} at {watts} W");
        if stuck {
            let a = &r.alerts()[0];
            assert!(a.detail.contains("no GPM"), "{}", a.detail);
            assert!(
                a.evidence
                    .iter()
                    .any(|(k, v)| k.starts_with("memory-controller") && v.contains("0: 0 %")),
                "{:?}",
                a.evidence
            );
        }
    }
}

#[test]
fn one_stuck_gpu_is_named_alone() {
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 200, None, |_, t| {
        let mut s = box_at(t, 100, Some(80.0), 500.0);
        s.gpus[1].sm_active_pct = Some(0.0);
        s.gpus[1].power_watts = Some(100.0);
        s
    });
    let f = fired(&ts);
    assert_eq!(f.len(), 1, "{ts:#?}");
    assert_eq!(f[0].gpu, Some(1));
    assert!(
        f[0].title
            .starts_with("GPU 1 reports busy but does no work")
    );
    assert_eq!(f[0].cost_micros, None, "no price, no cost");
}
