//! Scripted timelines for each rule on a [`FakeClock`]: it fires when it should, keeps quiet
//! when it should, does not flap on a sawtooth, and clears when the cause goes away. The alert
//! lifecycle (acknowledge, snooze, budget alerts, history) is in `lifecycle.rs` beside this.

mod blind;
mod blind4;
mod container;
mod lifecycle;
mod live;
mod lost;
mod scenario;
mod signal_scenario;
mod starved;

use gpumeter_model::{
    GpuProcessKind, GpuReading, GpuState, GpuUse, ProcessReading, Snapshot, ThrottleReason,
};

use super::{Alert, AlertKind, Rules, RulesConfig, Severity, Transition};
use crate::clock::{Clock, FakeClock};

pub(super) const T0: i64 = 1_750_000_000_000;
const GIB: u64 = 1 << 30;

pub(super) fn gpu(index: u32, util: u32) -> GpuReading {
    GpuReading {
        index,
        util_gpu_pct: Some(util),
        util_memory_pct: Some(util / 2),
        pcie_rx_bytes_per_s: Some(1_000),
        pcie_tx_bytes_per_s: Some(1_000),
        throttle_reasons: Some(Vec::new()),
        memory_total_bytes: Some(80 * GIB),
        ..GpuReading::default()
    }
}

fn process(pid: u32, ppid: u32, cpu: f64, gpu_use: Option<(u32, u64, u32)>) -> ProcessReading {
    let mut p = ProcessReading::invisible(pid);
    p.visible = true;
    p.ppid = Some(ppid);
    p.name = Some(
        if gpu_use.is_some() {
            "python"
        } else {
            "worker"
        }
        .into(),
    );
    p.user = Some("alice".into());
    p.cpu_pct = Some(cpu);
    p.state = Some('R');
    if let Some((g, mem, sm)) = gpu_use {
        p.gpu.push(GpuUse {
            gpu_index: g,
            kind: GpuProcessKind::Compute,
            memory_bytes: Some(mem),
            sm_util_pct: Some(sm),
            memory_util_pct: None,
        });
    }
    p
}

/// A 2-GPU, 8-core machine up for a day, at `t`.
pub(super) fn machine(t: i64, utils: [u32; 2]) -> Snapshot {
    let mut s = Snapshot::empty("test", t);
    s.system.uptime_s = Some(86_400);
    s.host.cpu_count = Some(8);
    s.host.cpu_util_pct = Some(20.0);
    s.host.iowait_pct = Some(1.0);
    s.host.disk_read_bytes_per_s = Some(1e6);
    s.gpus = vec![gpu(0, utils[0]), gpu(1, utils[1])];
    s
}

/// Drives `rules` once a second for `secs` seconds; `f(second, t)` builds each snapshot.
pub(super) fn drive(
    rules: &mut Rules,
    clock: &FakeClock,
    secs: i64,
    rate: Option<i64>,
    f: impl Fn(i64, i64) -> Snapshot,
) -> Vec<Transition> {
    let start = clock.now_unix_ms();
    let mut out = Vec::new();
    for s in 0..secs {
        clock.set_ms(start + s * 1000);
        let now = clock.now_unix_ms();
        out.extend(rules.evaluate(&f(s, now), now, rate.map(crate::money::Money::from_micros)));
    }
    clock.set_ms(start + secs * 1000);
    out
}

pub(super) fn names(ts: &[Transition]) -> Vec<(&'static str, String)> {
    ts.iter()
        .map(|t| (t.name(), t.alert().id.clone()))
        .collect()
}

fn with_job(mut s: Snapshot, workers_cpu: f64, n_workers: u32) -> Snapshot {
    s.processes
        .push(process(100, 50, 10.0, Some((0, 20 * GIB, 30))));
    for w in 0..n_workers {
        s.processes.push(process(101 + w, 100, workers_cpu, None));
    }
    s
}

#[test]
fn idle_fires_after_ten_minutes_and_clears_when_work_returns() {
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 11 * 60, Some(31_000_000), |_, t| {
        machine(t, [0, 1])
    });
    assert_eq!(names(&ts), vec![("fired", "idle".into())]);
    let ts = drive(&mut r, &clock, 5 * 60, Some(31_000_000), |_, t| {
        machine(t, [90, 95])
    });
    assert_eq!(names(&ts), vec![("cleared", "idle".into())]);
}

#[test]
fn idle_waits_for_activity_or_fifteen_minutes_of_uptime() {
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let fresh = |s: i64, t: i64| {
        let mut m = machine(t, [0, 0]);
        m.system.uptime_s = Some(60 + s as u64);
        m
    };
    // Booted a minute ago, never active: nothing for 13 minutes (uptime reaches 14 min).
    assert!(drive(&mut r, &clock, 13 * 60, None, fresh).is_empty());
    // At 15 minutes of uptime it arms; the machine was idle all along, so it fires at once.
    let ts = drive(&mut r, &clock, 2 * 60, None, |s, t| fresh(s + 13 * 60, t));
    assert_eq!(names(&ts), vec![("fired", "idle".into())]);
    assert!(
        ts[0].alert().title.contains("no price set"),
        "{}",
        ts[0].alert().title
    );
    assert_eq!(ts[0].alert().cost_micros, None);
}

#[test]
fn a_loop_busy_in_short_bursts_ends_idle_once_and_does_not_flap() {
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 11 * 60, None, |_, t| machine(t, [0, 0]));
    assert_eq!(names(&ts), vec![("fired", "idle".into())]);
    // Busy 40 % of the time in 4 s bursts: a loop runs, so the idle verdict ends, once.
    let ts = drive(&mut r, &clock, 60 * 60, None, |s, t| {
        let u = if s % 10 < 4 { 80 } else { 0 };
        machine(t, [u, u])
    });
    let idle: Vec<_> = names(&ts)
        .into_iter()
        .filter(|(_, id)| id == "idle")
        .collect();
    assert_eq!(idle, vec![("cleared", "idle".into())], "{:?}", names(&ts));
}

#[test]
fn the_idle_stretch_costs_no_more_than_idle_since_start() {
    // Idle from the start, with a 3 s burst at 5 min that the window rides over: the stretch
    // counts the same idle seconds as the since-start tally, so it can never say more.
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 12 * 60, Some(31_000_000), |s, t| {
        let u = if (300..303).contains(&s) { 60 } else { 0 };
        machine(t, [u, 0])
    });
    assert_eq!(names(&ts), vec![("fired", "idle".into())]);
    let a = &r.alerts()[0];
    let ev = |k: &str| {
        a.evidence
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.trim_start_matches('$').parse::<f64>().unwrap())
            .unwrap()
    };
    let (stretch, total) = (ev("idle cost, this stretch"), ev("idle cost since start"));
    assert!(stretch <= total, "stretch {stretch} > since start {total}");
    assert!(
        a.title.contains(&format!("${stretch:.2} so far")),
        "{}",
        a.title
    );
    assert!((a.cost_micros.unwrap() as f64 / 1e6 - stretch).abs() < 0.005);
}

#[test]
fn unsupported_pcie_is_not_evidence_against_idle_but_traffic_is() {
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 11 * 60, None, |_, t| {
        let mut m = machine(t, [0, 0]);
        for g in &mut m.gpus {
            g.pcie_rx_bytes_per_s = None;
            g.pcie_tx_bytes_per_s = None;
            g.util_memory_pct = None;
        }
        m
    });
    assert_eq!(names(&ts).len(), 1);
    // An idle card's housekeeping traffic (tens of MB/s) is no work…
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 11 * 60, None, |_, t| {
        let mut m = machine(t, [0, 0]);
        m.gpus[1].pcie_rx_bytes_per_s = Some(30_000_000);
        m.gpus[1].pcie_tx_bytes_per_s = Some(15_000_000);
        m
    });
    assert_eq!(names(&ts), vec![("fired", "idle".into())]);
    // …a copy at hundreds of MB/s is.
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 11 * 60, None, |_, t| {
        let mut m = machine(t, [0, 0]);
        m.gpus[1].pcie_rx_bytes_per_s = Some(400_000_000);
        m
    });
    // The machine is not idle; GPU 0, doing nothing beside it, is left idle.
    assert_eq!(names(&ts), vec![("fired", "idle:gpus".into())]);
    assert_eq!(ts[0].alert().gpu, Some(0));
}

#[test]
fn forgotten_allocation_fires_after_fifteen_minutes_and_clears_when_the_process_exits() {
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let nb = |t: i64| {
        let mut m = machine(t, [0, 60]);
        let mut p = process(4242, 1, 0.2, Some((0, 30 * GIB, 0)));
        p.container = Some("3f9c2b7e1a04".into());
        m.processes.push(p);
        // Small and graphics-only holders are not forgotten.
        m.processes
            .push(process(4300, 1, 0.0, Some((0, GIB / 2, 0))));
        let mut x = process(4400, 1, 0.0, Some((1, 2 * GIB, 0)));
        x.gpu[0].kind = GpuProcessKind::Graphics;
        m.processes.push(x);
        m
    };
    // GPU 0 does nothing beside busy GPU 1: left idle at 10 min, forgotten only at 15.
    let ts = drive(&mut r, &clock, 14 * 60, Some(8_000_000), |_, t| nb(t));
    assert_eq!(names(&ts), vec![("fired", "idle:gpus".into())]);
    let ts = drive(&mut r, &clock, 2 * 60, Some(8_000_000), |_, t| nb(t));
    assert_eq!(names(&ts), vec![("fired", "forgotten:4242".into())]);
    let a = ts[0].alert();
    assert!(
        a.title
            .contains("python (pid 4242, alice, container 3f9c2b7e1a04) holds 30.0GiB on GPU 0"),
        "{}",
        a.title
    );
    // $8/h over 2 GPUs, ~15 min blocked: about $1.
    let cost = a.cost_micros.unwrap();
    assert!((950_000..=1_100_000).contains(&cost), "{cost}");
    let ts = drive(&mut r, &clock, 5, Some(8_000_000), |_, t| {
        machine(t, [0, 60])
    });
    assert_eq!(names(&ts), vec![("cleared", "forgotten:4242".into())]);
}

#[test]
fn a_process_evaluating_on_the_cpu_is_in_use_not_forgotten() {
    // 30 GiB held, no kernels for 20 minutes while its main thread evaluates on the CPU: in
    // use. The same quiet with the process asleep is a forgotten allocation.
    let run = |cpu: f64| {
        let clock = FakeClock::new(T0);
        let mut r = Rules::default();
        let ts = drive(&mut r, &clock, 20 * 60, None, |_, t| {
            let mut m = machine(t, [0, 0]);
            m.processes
                .push(process(4242, 1, cpu, Some((0, 30 * GIB, 0))));
            m
        });
        names(&ts)
            .into_iter()
            .filter(|(what, id)| *what == "fired" && id.starts_with("forgotten"))
            .count()
    };
    assert_eq!(run(99.0), 0);
    assert_eq!(run(0.5), 1);
}

#[test]
fn the_ranks_of_a_run_that_hung_on_exit_are_one_forgotten_alert() {
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let hung = |t: i64| {
        let mut m = machine(t, [0, 0]);
        m.processes.push(process(900, 1, 0.1, None));
        m.processes
            .push(process(910, 900, 0.2, Some((0, 40 * GIB, 0))));
        m.processes
            .push(process(920, 900, 0.2, Some((1, 40 * GIB, 0))));
        m
    };
    let ts = drive(&mut r, &clock, 16 * 60, Some(8_000_000), |_, t| hung(t));
    let forgotten: Vec<_> = names(&ts)
        .into_iter()
        .filter(|(_, id)| id.starts_with("forgotten"))
        .collect();
    assert_eq!(forgotten, vec![("fired", "forgotten:job-900".into())]);
    let a = r
        .alerts()
        .iter()
        .find(|a| a.kind == AlertKind::Forgotten)
        .unwrap();
    assert!(
        a.title
            .contains("python (2 processes, pids 910, 920, alice) hold 80.0GiB on GPUs 0, 1"),
        "{}",
        a.title
    );
    assert!(a.next_step.as_deref().unwrap().contains("kill 910 920"));
}

#[test]
fn a_server_that_bursts_every_few_minutes_is_never_forgotten() {
    // 40 GiB resident, kernels for 5 s every 3 min: the 2-minute window's hysteresis rides
    // over each burst, but "no kernels for 15 min" counts from the last one.
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 60 * 60, None, |s, t| {
        let busy = s % 180 < 5;
        let mut m = machine(t, [if busy { 80 } else { 0 }, 0]);
        m.processes.push(process(
            4242,
            1,
            1.0,
            Some((0, 40 * GIB, if busy { 80 } else { 0 })),
        ));
        m
    });
    assert!(
        !names(&ts).iter().any(|(_, id)| id.starts_with("forgotten")),
        "{:?}",
        names(&ts)
    );
}

#[test]
fn throttle_reports_thermal_slowdown_for_how_long_and_ignores_short_power_caps() {
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 10 * 60, None, |s, t| {
        let mut m = machine(t, [95, 95]);
        m.gpus[1].temperature_celsius = Some(91);
        m.gpus[1].throttle_reasons = Some(vec![ThrottleReason::HwThermalSlowdown]);
        if s % 20 == 0 {
            m.gpus[0].throttle_reasons = Some(vec![ThrottleReason::SwPowerCap]);
        }
        m
    });
    assert_eq!(names(&ts), vec![("fired", "throttle:thermal".into())]);
    let now = r.alerts()[0].clone();
    assert_eq!(now.severity, Severity::High);
    assert_eq!(now.gpu, Some(1));
    // Ten minutes of samples: the first stands for no interval, the last was at 9:59.
    assert!(
        now.title.contains("runs too hot for 9 min"),
        "{}",
        now.title
    );
    let ts = drive(&mut r, &clock, 2 * 60, None, |_, t| machine(t, [95, 95]));
    assert_eq!(names(&ts), vec![("cleared", "throttle:thermal".into())]);
}

#[test]
fn a_card_heating_from_sw_to_hw_thermal_is_one_alert_that_escalates() {
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 8 * 60, None, |s, t| {
        let mut m = machine(t, [95, 95]);
        // Software slowdown from the start; from 4 min the board asserts its hardware one too.
        let mut reasons = vec![ThrottleReason::SwThermalSlowdown];
        if s >= 4 * 60 {
            reasons.push(ThrottleReason::HwThermalSlowdown);
        }
        m.gpus[0].throttle_reasons = Some(reasons);
        m
    });
    assert_eq!(
        names(&ts),
        vec![
            ("fired", "throttle:thermal".into()),
            ("updated", "throttle:thermal".into())
        ]
    );
    let now = &r.alerts()[0];
    assert_eq!(now.severity, Severity::High);
    let reason = now.evidence.iter().find(|(k, _)| k == "reason");
    assert_eq!(
        reason.map(|(_, v)| v.as_str()),
        Some("sw-thermal, hw-thermal (NVML)")
    );
}

#[test]
fn disabled_rules_never_fire() {
    let clock = FakeClock::new(T0);
    let mut cfg = RulesConfig::default();
    cfg.idle.enabled = false;
    let mut r = Rules::new(cfg);
    assert!(drive(&mut r, &clock, 30 * 60, None, |_, t| machine(t, [0, 0])).is_empty());
    assert!(r.idle_totals().machine.idle_ms > 0, "tallies still run");
}

#[test]
fn lost_gpu_clears_its_alerts_and_is_never_idle() {
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    drive(&mut r, &clock, 11 * 60, None, |_, t| machine(t, [0, 0]));
    let ts = drive(&mut r, &clock, 3 * 60, None, |_, t| {
        let mut m = machine(t, [0, 0]);
        m.gpus[1] = GpuReading {
            index: 1,
            state: GpuState::Lost,
            ..GpuReading::default()
        };
        m
    });
    // Lost is the cause: the idle alert clears and the lost alert takes its place.
    assert_eq!(
        names(&ts),
        vec![("fired", "lost".into()), ("cleared", "idle".into())]
    );
}

#[test]
fn the_advice_to_stop_says_what_stopping_saves_and_what_bills_on() {
    let advice = |kept: Option<i64>| {
        let clock = FakeClock::new(T0);
        let mut r = Rules::default();
        r.set_kept_when_stopped(kept.map(crate::money::Money::from_micros));
        let ts = drive(&mut r, &clock, 11 * 60, Some(8_000_000), |_, t| {
            machine(t, [0, 0])
        });
        let idle = ts
            .iter()
            .map(Transition::alert)
            .find(|a| a.id == "idle")
            .expect("idle fired");
        idle.next_step.clone().unwrap_or_default()
    };
    // $8/h, of which $0.40/h is the volumes and addresses that bill while it is stopped.
    let with_disks = advice(Some(400_000));
    assert!(
        with_disks.starts_with(
            "If the work is done, stop the machine: that saves $7.60/h, while its $0.40/h of \
             storage and addresses"
        ),
        "{with_disks}"
    );
    let without = advice(Some(0));
    assert!(
        without.contains("stop or release the machine: that saves $8.00/h; a stopped box's"),
        "{without}"
    );
    // No meter: no figure to promise.
    assert!(
        advice(None).starts_with("If the work is done, stop or release the machine. gpumeter"),
        "{}",
        advice(None)
    );
}

#[test]
fn with_no_extras_set_the_advice_to_stop_names_the_catalogued_storage_and_its_source() {
    let advice = |kept: i64| {
        let clock = FakeClock::new(T0);
        let mut r = Rules::default();
        r.set_kept_when_stopped(Some(crate::money::Money::from_micros(kept)));
        r.set_stopped_storage(Some(crate::billing::StoppedStorage {
            per_hour: crate::money::Money::from_micros(219_178),
            what: "2 × 1000 GB EBS gp3 at the catalogued $0.08/GB-month".into(),
            lines: Vec::new(),
        }));
        let ts = drive(&mut r, &clock, 11 * 60, Some(8_000_000), |_, t| {
            machine(t, [0, 0])
        });
        ts.iter()
            .map(Transition::alert)
            .find(|a| a.id == "idle")
            .expect("idle fired")
            .next_step
            .clone()
            .unwrap_or_default()
    };
    let text = advice(0);
    assert!(
        text.contains(
            "stop the machine: that saves $8.00/h, while its $0.22/h of storage (2 × 1000 GB \
             EBS gp3 at the catalogued $0.08/GB-month) bills until you delete the volumes"
        ),
        "{text}"
    );
    // The user's own figure wins over the catalogue's.
    let text = advice(400_000);
    assert!(
        text.contains("that saves $7.60/h, while its $0.40/h"),
        "{text}"
    );
    assert!(!text.contains("catalogued"), "{text}");
}
