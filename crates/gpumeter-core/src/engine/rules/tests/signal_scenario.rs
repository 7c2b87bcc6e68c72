//! The sharper signals on their demo scenarios, fed once a (fake) second as `--demo --fast`
//! does: each gives its notice with evidence and cost; `training` stays quiet (see
//! `scenario::training_stays_quiet`, which runs every rule).

use super::super::{AlertKind, Severity};
use super::scenario::{evidence, fired, run};

#[test]
fn hung_reports_busy_gpus_doing_no_work_and_counts_idle_paid_time() {
    let (engine, ts) = run("hung", 6 * 60);
    let f = fired(&ts);
    let kinds: Vec<AlertKind> = f.iter().map(|a| a.kind).collect();
    assert_eq!(kinds, vec![AlertKind::Hung], "{ts:#?}");
    let a = f[0];
    assert!(
        a.title
            .starts_with("GPUs 0–7 report busy but do no work (hung collective? deadlock?)"),
        "{}",
        a.title
    );
    assert_eq!(evidence(a, "job"), "python train.py (pid 4242)");
    // The stuck stretch began with the hang at 2 min.
    let since = a.since_unix_ms - super::scenario::T0;
    assert!((119_000..=121_000).contains(&since), "{since}");
    let now = engine.alerts()[0].clone();
    assert!(now.cost_micros.unwrap() > 0);
    // 4 min stuck at $24.80/h ≈ $1.65 of idle paid time in the tallies.
    let idle = engine.rules().idle_totals().machine;
    assert!((235_000..=241_000).contains(&idle.idle_ms), "{idle:?}");
}

#[test]
fn xid_79_on_a_lost_gpu_is_one_alert_naming_the_xid_and_its_job() {
    let (engine, ts) = run("xid", 4 * 60);
    let f = fired(&ts);
    assert!(f.iter().all(|a| a.kind != AlertKind::Xid), "{ts:#?}");
    let lost: Vec<_> = f.iter().filter(|a| a.kind == AlertKind::Lost).collect();
    assert_eq!(lost.len(), 1, "{ts:#?}");
    assert!(
        lost[0]
            .title
            .starts_with("GPU 3 lost (XID 79 / GPU_IS_LOST)"),
        "{}",
        lost[0].title
    );
    assert_eq!(lost[0].severity, Severity::High);
    let now = engine
        .alerts()
        .iter()
        .find(|a| a.kind == AlertKind::Lost)
        .unwrap()
        .clone();
    assert_eq!(
        evidence(&now, "was running"),
        "python pretrain.py (pid 77310)"
    );
    assert!(now.cost_micros.unwrap() > 0);
}

#[test]
fn oom_soon_says_when_gpu_2_fills_and_who_grows() {
    let (_, ts) = run("oom-soon", 8 * 60);
    let f = fired(&ts);
    assert_eq!(f.len(), 1, "{ts:#?}");
    let a = f[0];
    assert_eq!((a.kind, a.gpu), (AlertKind::Vram, Some(2)));
    assert!(
        a.title.starts_with("GPU 2 at 7")
            && a.title.contains("/79.6 GiB, +0.4 GiB/min → full in ~"),
        "{}",
        a.title
    );
    assert!(
        a.title.ends_with("(python train.py (pid 4242))"),
        "{}",
        a.title
    );
    assert!(evidence(a, "job paid for so far").contains("on 1 GPU(s)"));
    assert!(a.cost_micros.unwrap() > 0);
}

#[test]
fn job_done_gives_its_notice_at_once_then_the_idle_reminder_follows() {
    let (_, ts) = run("job-done", 14 * 60);
    let f = fired(&ts);
    let kinds: Vec<AlertKind> = f.iter().map(|a| a.kind).collect();
    assert_eq!(
        kinds,
        vec![AlertKind::JobDone, AlertKind::IdlePaid],
        "{ts:#?}"
    );
    let a = f[0];
    assert_eq!(
        a.title,
        "python train.py (pid 4242) ended just now after 6h12m; 8 GPUs now idle at $31.00/h"
    );
    // Within seconds of the exit at 2 min, long before the 10-minute idle window.
    assert!(a.since_unix_ms - super::scenario::T0 <= 120_000);
    assert!(evidence(a, "exit").starts_with("status unknown"));
}

#[test]
fn shared_names_the_other_tenant_and_user_without_cost() {
    let (_, ts) = run("shared", 3 * 60);
    let f = fired(&ts);
    let kinds: Vec<AlertKind> = f.iter().map(|a| a.kind).collect();
    assert_eq!(kinds, vec![AlertKind::Shared], "{ts:#?}");
    let a = f[0];
    assert_eq!(
        a.title,
        "GPUs 1, 3: 24.0 GiB held by processes this container can't see; GPU 2 shared with \
         maria"
    );
    assert_eq!(
        evidence(a, "GPU 2, other users"),
        "maria (pid 41800, 6.5 GiB)"
    );
    assert_eq!((a.severity, a.cost_micros), (Severity::Info, None));
}

#[test]
fn spot_notice_raises_a_high_alert_at_the_first_reading_that_carries_it() {
    use crate::billing::{ClockStart, Meter, MeterConfig, Pricing, Rate};
    use crate::engine::Engine;
    use gpumeter_sim::{Scenario, Simulator};

    let mut pricing = Pricing::simple(Rate::parse("31/h").unwrap());
    pricing.clock_start = ClockStart::FirstSample;
    let meter = Meter::new(MeterConfig {
        pricing,
        tick_cap_ms: 10_000,
    });
    let mut engine = Engine::new().with_meter(meter);
    let mut sim = Simulator::new(Scenario::builtin("spot").unwrap());
    let t0 = super::scenario::T0;
    let mut first = None;
    for s in 0..=240u64 {
        let snap = sim.snapshot_at(s * 1000, t0 + (s * 1000) as i64);
        let posted = snap.system.interruption.is_some();
        engine.ingest(snap);
        let ts = engine.drain_alert_transitions();
        let spot: Vec<_> = fired(&ts)
            .into_iter()
            .filter(|a| a.kind == AlertKind::Spot)
            .cloned()
            .collect();
        if !posted {
            assert!(spot.is_empty(), "fired at {s} s before the notice");
        }
        if let Some(a) = spot.into_iter().next() {
            assert!(first.is_none(), "fired twice: {a:#?}");
            first = Some((s, a));
        }
    }
    let (at_s, a) = first.expect("no spot alert");
    // The notice is posted at 3 min; the alert comes with that very reading.
    assert_eq!(at_s, 180);
    assert_eq!(a.severity, Severity::High);
    // Reclaimed 2 min after the notice; 3 min at $31/h is $1.55.
    let due = crate::clock::utc_text(t0 + 300_000, crate::clock::UtcStyle::Clock);
    assert_eq!(
        a.title,
        format!("spot interruption at {due} (in 2 min) — checkpoint now; this run has cost $1.55")
    );
    assert_eq!(evidence(&a, "provider"), "AWS");
    assert_eq!(evidence(&a, "action"), "terminate");
    assert_eq!(a.cost_micros, Some(1_550_000));
    // It stands, counting down, while the notice does.
    let now = engine
        .alerts()
        .iter()
        .find(|a| a.kind == AlertKind::Spot)
        .unwrap()
        .clone();
    assert!(now.title.contains("(in 60 s)"), "{}", now.title);
}
