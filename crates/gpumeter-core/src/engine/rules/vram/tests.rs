//! The VRAM rule on a fake clock: steady growth fires with the trend, the time to full and the
//! growing process; noise and a flat allocation (however high) never do; sustained ≥ 95 % is a
//! notice; growth that stops clears.

use gpumeter_model::{GpuProcessKind, GpuUse, ProcessReading, Snapshot};

use super::super::tests::{T0, drive, machine};
use super::super::{AlertKind, Rules, Severity, Transition};
use crate::clock::FakeClock;

const GIB: f64 = (1u64 << 30) as f64;

/// GPU 0 holding `gib` (one process, pid 4242, started an hour before T0); GPU 1 flat at 10 GiB.
fn at(t: i64, gib: f64) -> Snapshot {
    let mut s = machine(t, [95, 95]);
    let bytes = (gib * GIB) as u64;
    s.gpus[0].memory_used_bytes = Some(bytes);
    s.gpus[1].memory_used_bytes = Some(10 << 30);
    let mut p = ProcessReading::invisible(4242);
    p.visible = true;
    p.ppid = Some(1);
    p.name = Some("python".into());
    p.command = Some("python train.py --bs 64".into());
    p.start_time_unix_s = Some((T0 - 3_600_000) / 1000);
    p.gpu.push(GpuUse {
        gpu_index: 0,
        kind: GpuProcessKind::Compute,
        memory_bytes: Some(bytes),
        sm_util_pct: Some(95),
        memory_util_pct: None,
    });
    s.processes.push(p);
    s
}

fn vram(ts: &[Transition]) -> Vec<&Transition> {
    ts.iter()
        .filter(|t| t.alert().kind == AlertKind::Vram)
        .collect()
}

#[test]
fn steady_growth_fires_with_trend_time_to_full_and_process_then_clears() {
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    // 60 GiB growing 0.4 GiB/min on an 80 GiB card (machine() sets 80 GiB).
    let grow = |s: i64| 60.0 + 0.4 * s as f64 / 60.0;
    let ts = drive(&mut r, &clock, 3 * 60, Some(20_000_000), |s, t| {
        at(t, grow(s))
    });
    assert!(vram(&ts).is_empty(), "needs 5 min of history: {ts:#?}");
    let ts = drive(&mut r, &clock, 3 * 60, Some(20_000_000), |s, t| {
        at(t, grow(s + 180))
    });
    let f = vram(&ts);
    assert_eq!(f.len(), 1, "{ts:#?}");
    let Transition::Fired(a) = f[0] else {
        panic!("{f:#?}")
    };
    assert_eq!(a.id, "vram:grow:pid-4242", "one alert per job");
    // Fired once 5 min of history rose in every fifth and most of the 1 min window held.
    assert_eq!(
        a.title,
        "GPU 0 at 62.3/80.0 GiB, +0.4 GiB/min → full in ~44 min (python train.py (pid 4242))"
    );
    assert!(
        a.evidence
            .iter()
            .any(|(k, v)| k == "full in" && v == "~44 min"),
        "headline and evidence agree: {:#?}",
        a.evidence
    );
    assert_eq!(a.severity, Severity::Moderate, "~45 min to full");
    let ev = |k: &str| {
        a.evidence
            .iter()
            .find(|(l, _)| l.starts_with(k))
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("{k}: {:#?}", a.evidence))
    };
    assert!(
        ev("trend over").starts_with("+0.40 GiB/min"),
        "{}",
        ev("trend")
    );
    assert!(ev("growing").starts_with("python train.py (pid 4242): +"));
    // An hour and 6 minutes of one GPU at $10/GPU-h.
    assert!(
        ev("job paid for so far").starts_with("$10.9"),
        "{}",
        ev("job paid")
    );
    assert!(a.cost_micros.unwrap() > 10_000_000);

    // The growth stops: flat at its last level, it clears.
    let last = grow(359);
    let ts = drive(&mut r, &clock, 6 * 60, None, |_, t| at(t, last));
    assert!(
        vram(&ts)
            .iter()
            .any(|t| matches!(t, Transition::Cleared(_))),
        "{ts:#?}"
    );
}

#[test]
fn fast_growth_close_to_full_is_high() {
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 6 * 60, None, |s, t| {
        at(t, 60.0 + 2.0 * s as f64 / 60.0)
    });
    let f = vram(&ts);
    assert!(
        f.iter()
            .any(|t| matches!(t, Transition::Fired(a) if a.severity == Severity::High)),
        "{ts:#?}"
    );
}

#[test]
fn noise_and_flat_allocations_raise_no_alarm_but_near_full_is_a_notice() {
    // Noise of ±0.5 GiB around 72 GiB: no trend.
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 20 * 60, None, |s, t| {
        at(t, 72.0 + if s % 2 == 0 { 0.5 } else { -0.5 })
    });
    assert!(vram(&ts).is_empty(), "{ts:#?}");
    // Flat at 97 %: no growth alarm, only the informational notice after most of 5 min.
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 10 * 60, None, |_, t| at(t, 77.6));
    let f = vram(&ts);
    assert_eq!(f.len(), 1, "{ts:#?}");
    let a = f[0].alert();
    assert_eq!(
        (a.id.as_str(), a.severity),
        ("vram:high:pid-4242", Severity::Info)
    );
    assert!(
        a.title.starts_with("GPU 0 VRAM above 95 % for "),
        "{}",
        a.title
    );
    assert_eq!(a.cost_micros, None);
    // A dip the window rides over: the title gives the share now, as the evidence does.
    drive(&mut r, &clock, 20, None, |_, t| at(t, 70.4));
    let a = r
        .alerts()
        .iter()
        .find(|a| a.id == "vram:high:pid-4242")
        .expect("still standing");
    let used = a.evidence.iter().find(|(k, _)| k == "VRAM used").unwrap();
    assert!(
        a.title.contains(&format!("VRAM at {}", used.1)),
        "{} / {}",
        a.title,
        used.1
    );
    assert!(
        a.title.contains("above 95 % for most of the last"),
        "{}",
        a.title
    );
}

#[test]
fn a_one_time_step_is_a_change_of_level_not_a_leak() {
    // 2 GiB of context, then the model loads: 2 → 70 GiB within 10 s at 2 min, then flat.
    // The least-squares line through that is steep and fits; the slices say it is one step.
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 30 * 60, None, |s, t| {
        let gib = match s {
            ..120 => 2.0,
            120..130 => 2.0 + 6.8 * (s - 120) as f64,
            _ => 70.0,
        };
        at(t, gib)
    });
    assert!(vram(&ts).is_empty(), "{ts:#?}");
    // The allocator's cache growing once, 61 → 74 GiB over a minute, 20 minutes in: no leak.
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 45 * 60, None, |s, t| {
        let ramp = ((s - 1200) as f64 / 60.0).clamp(0.0, 1.0);
        at(t, 61.0 + 13.0 * ramp)
    });
    assert!(vram(&ts).is_empty(), "{ts:#?}");
}

#[test]
fn a_job_whose_gpus_all_sit_near_full_gets_one_notice_naming_them() {
    // torchrun's 4 ranks (one parent) each hold 77.6 of 80 GiB on GPUs 0–3; GPU 4 is held
    // near full by another job; GPU 5 is half full. Before, this was five notices, which the
    // corpus scored as flapping.
    let four = |t: i64| {
        let mut s = machine(t, [95, 95]);
        s.gpus = (0..6).map(|i| super::super::tests::gpu(i, 95)).collect();
        for i in 0..6u32 {
            let gib = if i == 5 { 40.0 } else { 77.6 };
            let bytes = (gib * GIB) as u64;
            s.gpus[i as usize].memory_used_bytes = Some(bytes);
            let mut p = ProcessReading::invisible(5000 + i);
            p.visible = true;
            p.ppid = Some(if i < 4 { 4999 } else { 1 });
            p.name = Some("python".into());
            p.command = Some(format!("python train_{}.py", if i < 4 { "a" } else { "b" }).into());
            p.start_time_unix_s = Some((T0 - 3_600_000) / 1000);
            p.gpu.push(GpuUse {
                gpu_index: i,
                kind: GpuProcessKind::Compute,
                memory_bytes: Some(bytes),
                sm_util_pct: Some(95),
                memory_util_pct: None,
            });
            s.processes.push(p);
        }
        s
    };
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 10 * 60, None, |_, t| four(t));
    let f = vram(&ts);
    let titles: Vec<&str> = f.iter().map(|t| t.alert().title.as_str()).collect();
    assert_eq!(f.len(), 2, "one per job: {titles:#?}");
    let job = f
        .iter()
        .map(|t| t.alert())
        .find(|a| a.title.starts_with("GPUs 0–3 VRAM above 95 % for "))
        .unwrap_or_else(|| panic!("{titles:#?}"));
    assert!(
        job.title.ends_with("(up to 77.6/80.0 GiB)"),
        "{}",
        job.title
    );
    assert_eq!(job.gpu, None, "several GPUs");
    for i in 0..4 {
        assert!(
            job.evidence
                .iter()
                .any(|(k, v)| k == &format!("GPU {i}") && v == "77.6/80.0 GiB (97.0 %)"),
            "{:#?}",
            job.evidence
        );
    }
    let other = f
        .iter()
        .map(|t| t.alert())
        .find(|a| a.gpu == Some(4))
        .unwrap_or_else(|| panic!("{titles:#?}"));
    assert!(
        other.title.starts_with("GPU 4 VRAM above 95 %"),
        "{}",
        other.title
    );
}

#[test]
fn a_slow_leak_that_fills_the_card_this_afternoon_is_named() {
    // 80 MB/min from 30 GiB on an 80 GiB card: full in ~10 h, within the day's horizon. Its
    // rise over the 15-minute trend is 1.1 GiB (the slices' medians, a slice in from each end,
    // see 0.9 of it).
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let per_s = 80e6 / GIB / 60.0;
    let ts = drive(&mut r, &clock, 25 * 60, None, |s, t| {
        at(t, 30.0 + per_s * s as f64)
    });
    let f = vram(&ts);
    assert_eq!(f.len(), 1, "{ts:#?}");
    let a = f[0].alert();
    assert!(a.title.contains("+0.1 GiB/min"), "{}", a.title);
    let fired_s = (a.since_unix_ms - T0) / 1000;
    assert!((12 * 60..=20 * 60).contains(&fired_s), "{fired_s} s");
}
