//! Each built-in demo scenario gives its verdict within its window: the simulator feeds an
//! [`Engine`] once a (fake) second, as `--demo --fast` would.

use gpumeter_sim::{RateUnit, Scenario, Simulator};

use super::super::{AlertKind, Severity, Transition};
use crate::engine::Engine;

pub(super) const T0: i64 = 1_750_000_000_000;

/// Runs `name` for `secs` seconds; returns the engine and every transition.
pub(super) fn run(name: &str, secs: u64) -> (Engine, Vec<Transition>) {
    let scenario = Scenario::builtin(name).unwrap();
    let rate = scenario.pricing.as_ref().map(|p| {
        let r = i64::try_from(p.rate_micros).unwrap();
        match p.unit {
            RateUnit::InstanceHour => r,
            RateUnit::GpuHour => r * i64::from(scenario.gpu_count()),
        }
    });
    let mut sim = Simulator::new(scenario);
    let mut engine = Engine::new();
    engine.set_rate(
        rate.map(crate::money::Money::from_micros),
        crate::money::Currency::USD,
    );
    let mut all = Vec::new();
    for s in 0..=secs {
        engine.ingest(sim.snapshot_at(s * 1000, T0 + (s * 1000) as i64));
        all.extend(engine.drain_alert_transitions());
    }
    (engine, all)
}

pub(super) fn fired(ts: &[Transition]) -> Vec<&super::super::Alert> {
    ts.iter()
        .filter_map(|t| match t {
            Transition::Fired(a) => Some(a),
            _ => None,
        })
        .collect()
}

pub(super) fn evidence<'a>(a: &'a super::super::Alert, key: &str) -> &'a str {
    a.evidence
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no {key} in {:#?}", a.evidence))
}

#[test]
fn training_stays_quiet() {
    let (engine, ts) = run("training", 20 * 60);
    assert!(ts.is_empty(), "{ts:#?}");
    assert!(engine.alerts().is_empty());
    assert_eq!(engine.rules().idle_totals().machine.idle_ms, 0);
}

#[test]
fn idle_box_reports_idle_paid_time_after_ten_minutes_with_its_cost() {
    let (engine, ts) = run("idle", 12 * 60);
    let f = fired(&ts);
    assert_eq!(f.len(), 1, "{ts:#?}");
    let a = f[0];
    assert_eq!(a.kind, AlertKind::IdlePaid);
    // Fired within a tick or two of 10 minutes of idle ($31/h: $5.17 for 10 min).
    assert!(
        a.title.starts_with("GPUs idle 10 min — $5.1"),
        "{}",
        a.title
    );
    assert!(a.title.ends_with("so far, $31.00/h"), "{}", a.title);
    let now = engine.alerts()[0].clone();
    assert!(
        now.title.starts_with("GPUs idle 12 min — $6.2"),
        "{}",
        now.title
    );
    let totals = engine.rules().idle_totals();
    assert_eq!(totals.machine.idle_ms, 12 * 60 * 1000);
    assert_eq!(totals.gpus.len(), 8);
    // 8 GPUs share the $31/h: each GPU's idle cost is an eighth of the machine's.
    assert_eq!(
        totals.gpus[&0].cost_micros(),
        totals.machine.cost_micros() / 8
    );
    assert_eq!(totals.machine.cost_micros(), 6_200_000);
}

#[test]
fn idle_reminds_every_thirty_minutes() {
    let (_, ts) = run("idle", 71 * 60);
    let reminded = ts
        .iter()
        .filter(|t| matches!(t, Transition::Reminded(_)))
        .count();
    // Fired at 10 min, reminded at 40 and 70.
    assert_eq!(reminded, 2, "{ts:#?}");
    let updated: Vec<_> = ts
        .iter()
        .filter(|t| matches!(t, Transition::Updated(_)))
        .collect();
    // After an hour the alert turns high.
    assert_eq!(updated.len(), 1);
    assert_eq!(updated[0].alert().severity, Severity::High);
}

#[test]
fn cpu_starved_is_cpu_bound_for_the_whole_job() {
    let (engine, ts) = run("cpu-starved", 5 * 60);
    let f = fired(&ts);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].kind, AlertKind::Starved);
    assert_eq!(evidence(f[0], "verdict"), "CPU-bound input");
    // The GPUs' phases differ, so they join the verdict a few seconds apart.
    assert_eq!(engine.alerts().len(), 1);
    let a = &engine.alerts()[0];
    assert_eq!(a.id, "starved:job-20488");
    assert!(a.title.starts_with("GPUs 0–7 starved"), "{}", a.title);
    assert!(
        a.title
            .contains("consistent with a CPU-bound input pipeline"),
        "{}",
        a.title
    );
    let cpu = evidence(a, "job CPU");
    assert!(cpu.contains("of 16.0 cores"), "{cpu}");
    // The workers are named with their pids.
    assert!(evidence(a, "processes (pid name CPU)").contains("20515 pt_data_worker"));
    assert!(a.next_step.as_deref().unwrap().contains("num_workers"));
    assert!(a.cost_micros.unwrap() > 0);
    assert_eq!(a.severity, Severity::High, "{a:#?}");
    assert!(
        ts.iter().all(|t| !matches!(t, Transition::Cleared(_))),
        "no flapping"
    );
}

#[test]
fn io_starved_is_io_bound() {
    let (engine, ts) = run("io-starved", 5 * 60);
    let f = fired(&ts);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(evidence(f[0], "verdict"), "I/O-bound input");
    assert!(
        f[0].title
            .contains("consistent with an I/O-bound input pipeline")
    );
    assert!(f[0].next_step.as_deref().unwrap().contains("local NVMe"));
    assert!(engine.alerts()[0].cost_micros.unwrap() > 0);
}

#[test]
fn forgotten_kernel_is_named_after_fifteen_minutes() {
    let (engine, ts) = run("forgotten", 18 * 60);
    let forgotten: Vec<_> = fired(&ts)
        .into_iter()
        .filter(|a| a.kind == AlertKind::Forgotten)
        .collect();
    assert_eq!(forgotten.len(), 1, "{ts:#?}");
    let a = forgotten[0];
    assert_eq!(a.id, "forgotten:22817");
    assert_eq!(a.gpu, Some(0));
    assert!(a.title.contains("python (pid 22817, maria)"), "{}", a.title);
    assert!(a.title.contains("30.0GiB on GPU 0"), "{}", a.title);
    assert!(evidence(a, "command").contains("ipykernel_launcher"));
    // No starved verdict on a GPU doing nothing.
    assert!(engine.alerts().iter().all(|a| a.kind != AlertKind::Starved));
}

/// GPU 2 falls off the bus at 30 s: the lost alert (high, GPU 2) is the one verdict; the idle
/// rule does not call the machine idle, but the dead card's time is idle spend.
#[test]
fn lost_gpu_raises_the_lost_alert_alone_and_is_not_idle() {
    let (engine, ts) = run("gpu-lost", 5 * 60);
    let f = fired(&ts);
    assert!(
        matches!(f.as_slice(), [a] if a.kind == AlertKind::Lost
            && a.severity == super::super::Severity::High
            && a.gpu == Some(2)),
        "{ts:#?}"
    );
    assert_eq!(ts.len(), 1, "{ts:#?}");
    let totals = engine.rules().idle_totals();
    assert_eq!(totals.gpus[&2].idle_ms, 271_000, "lost from 30 s to 300 s");
    assert_eq!(totals.gpus[&0].idle_ms, 0);
    assert_eq!(totals.machine.idle_ms, 0);
}

#[test]
fn container_pod_is_judged_against_its_quota_with_the_throttled_share() {
    let (_, ts) = run("container", 5 * 60);
    let f = fired(&ts);
    let starved: Vec<_> = f.iter().filter(|a| a.kind == AlertKind::Starved).collect();
    assert_eq!(starved.len(), 1, "{ts:#?}");
    let a = starved[0];
    assert_eq!(evidence(a, "verdict"), "CPU-bound input");
    assert!(
        a.title
            .contains("consistent with a CPU-bound input pipeline"),
        "{}",
        a.title
    );
    assert!(
        a.detail
            .contains("the container may use 8 cores and used 7.9; throttled 3"),
        "{}",
        a.detail
    );
    assert!(a.detail.contains("% of the last 60 s"), "{}", a.detail);
    assert!(
        evidence(a, "job").starts_with("python (pid 412, host pid 2319471)"),
        "{}",
        evidence(a, "job")
    );
    assert!(
        evidence(a, "cgroup CPU").starts_with("may use 8 cores (quota), used 7.9"),
        "{}",
        evidence(a, "cgroup CPU")
    );
    let step = a.next_step.as_deref().unwrap();
    assert!(
        step.contains("The job may use 8 cores (cgroup CPU quota; the host has 64)"),
        "{step}"
    );
    assert!(
        step.contains("num_workers > usable cores oversubscribes"),
        "{step}"
    );
}
