//! The sharper signals on their demo scenarios, fed once a (fake) second as `--demo --fast`
//! does: each gives its notice with evidence and cost; `training` stays quiet (see
//! `scenario_tests::training_stays_quiet`, which runs every rule).

use super::scenario_tests::{evidence, fired, run};
use super::{AlertKind, Severity};

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
    let since = a.since_unix_ms - super::scenario_tests::T0;
    assert!((119_000..=121_000).contains(&since), "{since}");
    let now = engine.alerts()[0].clone();
    assert!(now.cost_micros.unwrap() > 0);
    // 4 min stuck at $24.80/h ≈ $1.65 of idle paid time in the tallies.
    let idle = engine.rules().idle_totals().machine;
    assert!((235_000..=241_000).contains(&idle.idle_ms), "{idle:?}");
}

#[test]
fn xid_names_the_gpu_the_error_and_what_it_means() {
    let (engine, ts) = run("xid", 4 * 60);
    let f: Vec<_> = fired(&ts)
        .into_iter()
        .filter(|a| a.kind == AlertKind::Xid)
        .collect();
    assert_eq!(f.len(), 1, "{ts:#?}");
    assert_eq!(
        f[0].title,
        "GPU 3: XID 79 — GPU fell off the bus (no longer reachable over PCIe)"
    );
    assert_eq!(f[0].severity, Severity::High);
    assert_eq!(
        evidence(f[0], "process on it"),
        "python pretrain.py (pid 77325)"
    );
    let now = engine
        .alerts()
        .iter()
        .find(|a| a.kind == AlertKind::Xid)
        .unwrap()
        .clone();
    assert_eq!(evidence(&now, "GPU now"), "lost (fell off the bus)");
    assert!(now.cost_micros.unwrap() > 0);
}
