//! Ledger sums that hold by construction: over any rates, billing granularities and points
//! where busy turns idle (and where gpumeter restarts and resumes its session), every minute,
//! day and session has idle cost ≤ spend, and the days add up to the sessions; a lost GPU is
//! idle spend there too.

use std::path::Path;

use gpumeter_model::testing::SnapshotBuilder;
use gpumeter_model::{GpuReading, Snapshot};
use proptest::prelude::*;

use super::super::session::pricing_text;
use super::super::writer::FINISH_WAIT;
use super::super::*;
use crate::billing::{ClockStart, Granularity, Meter, MeterConfig, Pricing, Rate};
use crate::money::Money;

const T0: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

fn snap(at: i64, busy: bool, gpus: u32) -> Snapshot {
    let util = if busy { 80 } else { 0 };
    (0..gpus)
        .fold(
            SnapshotBuilder::new("demo:sums", at).hostname("box"),
            |b, i| b.gpu(i, util),
        )
        .build()
}

/// One run of gpumeter over `ticks` (time, busy) against the ledger at `path`, as the session
/// core runs it: open, begin (or resume) the session, seed the meter, record, finish.
fn run(path: &Path, pricing: &Pricing, gpus: u32, ticks: &[(i64, bool)]) {
    run_with(path, pricing, gpus, ticks, snap);
}

/// [`run`] with the snapshots `shot(time, busy, gpus)` builds.
fn run_with(
    path: &Path,
    pricing: &Pricing,
    gpus: u32,
    ticks: &[(i64, bool)],
    shot: impl Fn(i64, bool, u32) -> Snapshot,
) {
    let Some(&(first, _)) = ticks.first() else {
        return;
    };
    let (mut ledger, _) = Ledger::open(path, first).unwrap();
    let mut meter = Meter::new(MeterConfig {
        pricing: pricing.clone(),
        tick_cap_ms: 600_000,
    });
    let key = SessionKey {
        host: "box".into(),
        source: "demo:sums".into(),
        clock_start_ms: meter.resolve_start(&shot(first, false, gpus), first),
        clock_start_slack_ms: super::super::session::clock_start_slack(pricing),
        pricing: pricing_text(pricing),
        currency: "USD".into(),
    };
    let start = ledger.begin_session(&key, first).unwrap();
    meter.seed(&start.seed);
    let mut rec = Recorder::new(Some(ledger), Some(&start));
    for &(t, busy) in ticks {
        let ev = meter.observe(&shot(t, busy, gpus), t);
        rec.record(&meter, &ev);
    }
    let (_, notes) = rec.finish(FINISH_WAIT);
    assert!(notes.is_empty(), "{notes:?}");
}

/// A lost card is idle paid time in the ledger too: GPU 1 of 2 lost for an hour beside a busy
/// GPU 0 is half an hour of machine idle (half the spend) and an hour of GPU 1 idle.
#[test]
fn a_lost_gpu_is_idle_spend_in_the_ledger() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    let mut pricing = Pricing::simple(Rate::parse("2/gpu-h").unwrap());
    pricing.clock_start = ClockStart::At(T0);
    let ticks: Vec<(i64, bool)> = (0..=360).map(|i| (T0 + i * 10_000, true)).collect();
    run_with(&path, &pricing, 2, &ticks, |t, busy, gpus| {
        let mut s = snap(t, busy, gpus);
        s.gpus[1] = GpuReading {
            index: 1,
            state: gpumeter_model::GpuState::Lost,
            ..GpuReading::default()
        };
        s
    });
    let l = Ledger::open_read_only(&path).unwrap();
    let total = l.total_usage().unwrap();
    assert_eq!(total.spend_micros, 4_000_000);
    assert_eq!(total.idle_ms, 1_800_000);
    assert_eq!(total.idle_cost_micros, 2_000_000);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let idle: i64 = conn
        .query_row(
            "SELECT sum(idle_ms) FROM gpu_minutes WHERE gpu = 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(idle, 3_600_000);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn idle_cost_never_exceeds_spend_and_days_add_up_to_sessions(
        rate_micros in 1_i64..40_000_000_000,
        g in 0_usize..5,
        gpus in 1_u32..4,
        stretches in prop::collection::vec((any::<bool>(), 1_usize..60, 1_000_i64..90_000), 1..8),
        restart_at in 0_usize..400,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.sqlite");
        let mut pricing = Pricing::simple(
            Rate::parse(&format!("{}/gpu-h", Money::from_micros(rate_micros))).unwrap(),
        );
        pricing.granularity = Granularity::ALL[g];
        pricing.clock_start = ClockStart::At(T0 + 23 * 3_600_000);
        // Ticks from an hour before a midnight, so days split; busy and idle as drawn.
        let mut t = T0 + 23 * 3_600_000;
        let mut ticks = vec![(t, false)];
        for (busy, n, step) in stretches {
            for _ in 0..n {
                t += step;
                ticks.push((t, busy));
            }
        }
        // gpumeter stops somewhere and starts again: the second run resumes the session.
        let split = restart_at.min(ticks.len());
        run(&path, &pricing, gpus, &ticks[..split]);
        run(&path, &pricing, gpus, &ticks[split..]);

        let l = Ledger::open_read_only(&path).unwrap();
        let conn = rusqlite::Connection::open(&path).unwrap();
        let mut stmt = conn
            .prepare("SELECT minute, spend_micros, idle_cost_micros FROM minutes")
            .unwrap();
        let minutes: Vec<(i64, i64, i64)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        for (minute, spend, idle) in &minutes {
            prop_assert!(idle <= spend, "minute {minute}: idle {idle} > spend {spend}");
            prop_assert!(*idle >= 0);
        }
        let days = l.days_since(0).unwrap();
        let sessions = l.sessions_since(0).unwrap();
        for d in &days {
            prop_assert!(d.usage.idle_cost_micros <= d.usage.spend_micros, "{d:?}");
        }
        for s in &sessions {
            prop_assert!(s.usage.idle_cost_micros <= s.usage.spend_micros, "{s:?}");
        }
        let sum = |rows: &mut dyn Iterator<Item = &query::Usage>| {
            rows.fold((0_i64, 0_i64), |(s, i), u| (s + u.spend_micros, i + u.idle_cost_micros))
        };
        let by_day = sum(&mut days.iter().map(|d| &d.usage));
        let by_session = sum(&mut sessions.iter().map(|s| &s.usage));
        prop_assert_eq!(by_day, by_session);
        let total = l.total_usage().unwrap();
        prop_assert_eq!(by_day, (total.spend_micros, total.idle_cost_micros));
    }
}

/// A run stops at 23:58:56 and the next starts just after midnight: the paid time between
/// goes to the day it lies in, in a row with no GPU time, which the write-time check leaves
/// alone (found by the proptest above).
#[test]
fn the_paid_gap_before_a_restart_goes_to_its_own_day() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    let mut pricing = Pricing::simple(Rate::parse("0.000001/gpu-h").unwrap());
    pricing.granularity = Granularity::ALL[0];
    pricing.clock_start = ClockStart::At(T0 + 23 * 3_600_000);
    let mut t = T0 + 23 * 3_600_000;
    let mut ticks = vec![(t, false)];
    for (n, step) in [(43, 73_329), (7, 63_837)] {
        for _ in 0..n {
            t += step;
            ticks.push((t, false));
        }
    }
    // `run` checks that nothing was said (no minute held to a minute's time).
    run(&path, &pricing, 1, &ticks[..50]);
    run(&path, &pricing, 1, &ticks[50..]);
    let l = Ledger::open_read_only(&path).unwrap();
    let days = l.days_since(0).unwrap();
    assert_eq!(days.len(), 2);
    assert_eq!(days[0].usage.paid_ms, 3_600_000);
    assert_eq!(days[1].usage.paid_ms, 6);
    assert_eq!(days[0].usage.idle_ms, 3_536_169);
}
