//! Restarts never count time twice. gpumeter killed and started again, any number of times,
//! on a clock that goes on (a real box, whose boot time `/proc/stat` gives to the second and
//! may drift by one) or that replays time already written (a simulated clock started over):
//! every minute holds at most 60 s of observed time and of each GPU's time, idle time is at
//! most the observed time, the run is one session, and its spend is the rate times its paid
//! time (within the price of a second: it is billed per started second), which never exceeds the time the clock ran.

use std::path::Path;

use gpumeter_model::Snapshot;
use gpumeter_model::testing::SnapshotBuilder;
use proptest::prelude::*;

use super::super::session::pricing_text;
use super::super::writer::FINISH_WAIT;
use super::super::*;
use crate::billing::{ClockStart, Meter, MeterConfig, Pricing, Rate};

const T0: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z
const BOOT_S: i64 = T0 / 1_000 - 600;

fn snap(at: i64, busy: bool, gpus: u32, boot_jitter_s: i64) -> Snapshot {
    let util = if busy { 80 } else { 0 };
    (0..gpus)
        .fold(
            SnapshotBuilder::new("demo:restarts", at)
                .hostname("box")
                .boot_time_s(BOOT_S + boot_jitter_s),
            |b, i| b.gpu(i, util),
        )
        .build()
}

/// One gpumeter run over `ticks` (time, busy), killed (`-9`: the open minute is lost) or
/// stopped cleanly at the end, as the session core runs it.
fn run(path: &Path, pricing: &Pricing, gpus: u32, jitter: i64, ticks: &[(i64, bool)], kill: bool) {
    let Some(&(first, _)) = ticks.first() else {
        return;
    };
    let (mut ledger, _) = Ledger::open(path, first).unwrap();
    let mut meter = Meter::new(MeterConfig {
        pricing: pricing.clone(),
        tick_cap_ms: 300_000,
    });
    let key = SessionKey {
        host: "box".into(),
        source: "demo:restarts".into(),
        clock_start_ms: meter.resolve_start(&snap(first, false, gpus, jitter), first),
        clock_start_slack_ms: super::super::session::clock_start_slack(pricing),
        pricing: pricing_text(pricing),
        currency: "USD".into(),
    };
    let start = ledger.begin_session(&key, first).unwrap();
    meter.seed(&start.seed);
    let mut rec = Recorder::new(Some(ledger), Some(&start)).lockstep(true);
    for &(t, busy) in ticks {
        let ev = meter.observe(&snap(t, busy, gpus, jitter), t);
        rec.record(&meter, &ev);
    }
    if kill {
        // What reached the disk stays; the open minute dies with the process.
        let (_, notes) = rec.finish_without_open_minute(FINISH_WAIT);
        assert!(notes.is_empty(), "{notes:?}");
    } else {
        let (_, notes) = rec.finish(FINISH_WAIT);
        assert!(notes.is_empty(), "{notes:?}");
    }
}

fn check(path: &Path, gpus: u32, rate_per_h_micros: i64, clock_end_ms: i64) {
    let conn = rusqlite::Connection::open(path).unwrap();
    let sessions: i64 = conn
        .query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))
        .unwrap();
    assert_eq!(sessions, 1, "one run, one session");
    let mut stmt = conn
        .prepare("SELECT minute, observed_ms, gpu_ms, busy_gpu_ms, idle_ms FROM minutes")
        .unwrap();
    let rows: Vec<(i64, i64, i64, i64, i64)> = stmt
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for (minute, observed, gpu, busy, idle) in rows {
        assert!(
            observed <= 60_000,
            "minute {minute}: observed {observed} ms"
        );
        assert!(
            idle <= observed,
            "minute {minute}: idle {idle} > {observed}"
        );
        assert!(
            gpu <= observed * i64::from(gpus),
            "minute {minute}: GPU {gpu}"
        );
        assert!(busy <= gpu, "minute {minute}: busy {busy} > {gpu}");
    }
    let mut stmt = conn
        .prepare("SELECT minute, gpu, busy_ms + idle_ms FROM gpu_minutes")
        .unwrap();
    let rows: Vec<(i64, i64, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for (minute, gpu, ms) in rows {
        assert!(ms <= 60_000, "minute {minute} GPU {gpu}: {ms} ms");
    }
    let (paid, spend): (i64, i64) = conn
        .query_row(
            "SELECT coalesce(sum(paid_ms),0), coalesce(sum(spend_micros),0) FROM minutes",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let clock_ms = clock_end_ms - BOOT_S * 1_000;
    assert!(
        paid <= clock_ms + 1_000,
        "paid {paid} ms of a {clock_ms} ms clock"
    );
    // Billed per started second (the rate's default granularity): within a second's price of
    // the rate times the paid time (a minute closed inside a tick has its share of that tick).
    let exact = i128::from(rate_per_h_micros) * i128::from(paid) / 3_600_000;
    let second = i128::from(rate_per_h_micros) / 3_600 + 1;
    assert!(
        (i128::from(spend) - exact).abs() <= second,
        "spend {spend} for {paid} ms at {rate_per_h_micros}/h"
    );
}

/// Ten kills during a run that a simulated clock replays from the same start each time
/// (`watch --demo idle --fast` with a fixed clock start), then a full run: each minute is
/// counted once.
#[test]
fn ten_kills_on_a_replayed_clock_count_each_minute_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    let mut pricing = Pricing::simple(Rate::parse("31/h").unwrap());
    pricing.clock_start = ClockStart::At(BOOT_S * 1_000);
    let full: Vec<(i64, bool)> = (0..=720).map(|i| (T0 + i * 10_000, false)).collect();
    for k in 1..=10 {
        run(&path, &pricing, 8, 0, &full[..k * 60], true);
    }
    run(&path, &pricing, 8, 0, &full, false);
    check(&path, 8, 31_000_000, T0 + 720 * 10_000);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let (observed, idle_gpu): (i64, i64) = conn
        .query_row(
            "SELECT (SELECT sum(observed_ms) FROM minutes),
                    (SELECT sum(idle_ms) FROM gpu_minutes)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    // Two hours watched, at most: 8 GPUs idle give at most 16 idle GPU-hours.
    assert_eq!(observed, 7_200_000);
    assert_eq!(idle_gpu, 8 * 7_200_000);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn restarts_on_any_clock_never_count_time_twice(
        gpus in 1_u32..9,
        runs in prop::collection::vec(
            (
                -900_000_i64..900_000, // where the run starts, from the last one's end
                1_usize..80,           // ticks
                1_000_i64..200_000,    // tick step (some longer than a minute)
                any::<bool>(),         // busy
                any::<bool>(),         // killed
                -1_i64..=1,            // boot time as /proc/stat gives it this time
            ),
            1..8,
        ),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.sqlite");
        let mut pricing = Pricing::simple(Rate::parse("31/h").unwrap());
        pricing.clock_start = ClockStart::Boot;
        let mut end = T0;
        let mut clock_end = T0;
        for (offset, n, step, busy, kill, jitter) in runs {
            let start = (end + offset).max(T0);
            let ticks: Vec<(i64, bool)> =
                (0..n as i64).map(|i| (start + i * step, busy)).collect();
            run(&path, &pricing, gpus, jitter, &ticks, kill);
            end = ticks.last().map_or(start, |t| t.0);
            clock_end = clock_end.max(end);
        }
        check(&path, gpus, 31_000_000, clock_end);
    }
}

/// Runs that each say the box booted a day before them (a demo's boot time is its start minus
/// the scenario's uptime) are new sessions, but none reaches back into the time an earlier one
/// billed: a day never bills more than 24 hours of the rate.
#[test]
fn runs_that_each_claim_a_day_of_uptime_never_bill_a_day_twice() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    let mut pricing = Pricing::simple(Rate::parse("31/h").unwrap());
    pricing.clock_start = ClockStart::Boot;
    let uptime_s = 26 * 3_600;
    for k in 0..5_i64 {
        let from = T0 + 12 * 3_600_000 + k * 15 * 60_000;
        let boot_jitter = (from / 1_000 - uptime_s) - BOOT_S;
        let ticks: Vec<(i64, bool)> = (0..60).map(|i| (from + i * 10_000, true)).collect();
        run(&path, &pricing, 8, boot_jitter, &ticks, k % 2 == 0);
    }
    let l = Ledger::open_read_only(&path).unwrap();
    let mut sessions = l.sessions_since(0).unwrap();
    assert!(sessions.len() > 1, "each run a session of its own");
    sessions.sort_by_key(|s| s.start_ms);
    for pair in sessions.windows(2) {
        assert!(pair[1].start_ms >= pair[0].last_ms, "{pair:?}");
    }
    for d in l.days_since(0).unwrap() {
        assert!(d.usage.spend_micros <= 24 * 31_000_000, "{d:?}");
    }
}
