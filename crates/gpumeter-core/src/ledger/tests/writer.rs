//! The writer thread: a failing or locked disk never reaches the tick, nothing queued is lost,
//! and a failure is said once and its recovery too.

use std::path::Path;

use gpumeter_model::testing::SnapshotBuilder;
use gpumeter_model::{GpuReading, Snapshot};

use super::super::session::pricing_text;
use super::super::writer::FINISH_WAIT;
use super::super::*;
use crate::billing::{ClockStart, Meter, MeterConfig, Pricing, Rate};

const T0: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

fn snap(at: i64) -> Snapshot {
    SnapshotBuilder::new("demo:test", at)
        .hostname("box")
        .gpu_reading(GpuReading {
            index: 0,
            util_gpu_pct: Some(50),
            ..GpuReading::default()
        })
        .build()
}

/// A meter and a recorder writing a fresh ledger at `path`.
fn start(path: &Path) -> (Meter, Recorder) {
    let (mut ledger, _) = Ledger::open(path, T0).unwrap();
    let mut p = Pricing::simple(Rate::parse("36/h").unwrap());
    p.clock_start = ClockStart::At(T0);
    let meter = Meter::new(MeterConfig {
        pricing: p,
        tick_cap_ms: 100_000,
    });
    let key = SessionKey {
        host: "box".into(),
        source: "demo:test".into(),
        clock_start_ms: T0,
        clock_start_slack_ms: 0,
        pricing: pricing_text(meter.pricing()),
        currency: "USD".into(),
    };
    let start = ledger.begin_session(&key, T0).unwrap();
    (meter, Recorder::new(Some(ledger), Some(&start)))
}

/// Ticks every 30 s over `minutes` minutes from `from`; returns the notes said on the way.
fn tick(meter: &mut Meter, rec: &mut Recorder, from: i64, minutes: i64) -> Vec<String> {
    let mut notes = Vec::new();
    for k in 0..minutes * 2 {
        let t = from + k * 30_000;
        let ev = meter.observe(&snap(t), t);
        rec.record(meter, &ev);
        notes.extend(rec.drain_notes());
    }
    notes
}

fn side_connection(path: &Path) -> rusqlite::Connection {
    let c = rusqlite::Connection::open(path).unwrap();
    c.busy_timeout(std::time::Duration::from_secs(30)).unwrap();
    c
}

#[test]
fn a_locked_database_holds_minutes_back_without_losing_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    let (mut meter, mut rec) = start(&path);
    // Another process holds the database: every write waits out its busy timeout and fails.
    let side = side_connection(&path);
    side.execute_batch("BEGIN EXCLUSIVE").unwrap();
    // Forty minutes close while the disk takes nothing: more than the channel holds.
    let mut notes = tick(&mut meter, &mut rec, T0, 40);
    side.execute_batch("COMMIT").unwrap();
    drop(side);
    let (last, more) = rec.finish(FINISH_WAIT * 4);
    notes.extend(more);
    assert!(last.is_some_and(|m| m.written));
    // Whatever was said, every minute reached the disk in the end: the ledger holds the meter.
    let l = Ledger::open_read_only(&path).unwrap();
    assert_eq!(
        l.total_usage().unwrap().spend_micros,
        meter.spent().micros(),
        "{notes:?}"
    );
    assert!(!notes.iter().any(|n| n.contains("dropped")), "{notes:?}");
}

#[test]
fn a_failing_write_is_said_once_retried_and_its_recovery_said() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    let (mut meter, mut rec) = start(&path);
    let mut notes = tick(&mut meter, &mut rec, T0, 2);
    // The minutes table goes away (a damaged file, a full disk: the write fails, not waits).
    let side = side_connection(&path);
    side.execute_batch("ALTER TABLE minutes RENAME TO minutes_away")
        .unwrap();
    notes.extend(tick(&mut meter, &mut rec, T0 + 2 * 60_000, 5));
    // The writer works asynchronously: wait (bounded) until it has said so.
    for _ in 0..500 {
        notes.extend(rec.drain_notes());
        if notes.iter().any(|n| n.starts_with("ledger write failed")) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let failed = notes
        .iter()
        .filter(|n| n.starts_with("ledger write failed (will retry each minute)"))
        .count();
    assert_eq!(failed, 1, "{notes:?}");
    side.execute_batch("ALTER TABLE minutes_away RENAME TO minutes")
        .unwrap();
    drop(side);
    notes.extend(tick(&mut meter, &mut rec, T0 + 7 * 60_000, 2));
    let (_, more) = rec.finish(FINISH_WAIT);
    notes.extend(more);
    assert!(
        notes.iter().any(|n| n == "ledger writes work again"),
        "{notes:?}"
    );
    // The failed minutes were kept and written once the table was back.
    let l = Ledger::open_read_only(&path).unwrap();
    assert_eq!(
        l.total_usage().unwrap().spend_micros,
        meter.spent().micros()
    );
}

/// `watch --fast` waits for each minute to reach the disk; on a full disk a failed write
/// releases the reading at once (the minute is kept for the retry) instead of holding every
/// simulated minute for the lock-step wait.
#[test]
fn a_failed_write_does_not_hold_a_lockstep_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    let (mut meter, rec) = start(&path);
    let mut rec = rec.lockstep(true);
    let mut notes = tick(&mut meter, &mut rec, T0, 1);
    let side = side_connection(&path);
    side.execute_batch("ALTER TABLE minutes RENAME TO minutes_away")
        .unwrap();
    notes.extend(tick(&mut meter, &mut rec, T0 + 60_000, 4));
    assert!(
        notes.iter().any(|n| n.starts_with("ledger write failed")),
        "{notes:?}"
    );
    assert!(!notes.iter().any(|n| n.contains("took over")), "{notes:?}");
    side.execute_batch("ALTER TABLE minutes_away RENAME TO minutes")
        .unwrap();
    drop(side);
    let (_, more) = rec.finish(FINISH_WAIT);
    notes.extend(more);
    // Kept and written once the disk took them again.
    let l = Ledger::open_read_only(&path).unwrap();
    assert_eq!(
        l.total_usage().unwrap().spend_micros,
        meter.spent().micros(),
        "{notes:?}"
    );
}

/// The write-time check: a minute handed more than a minute's time (a bug upstream, a clock
/// that repeats) is written held to 60 s, with idle and GPU time within it, and said.
#[test]
fn a_minute_is_never_written_with_more_than_a_minute_in_it() {
    use super::super::recorder::Recorded;
    use super::super::writer::{MinuteWrite, write};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    let (mut ledger, _) = Ledger::open(&path, T0).unwrap();
    let key = SessionKey {
        host: "box".into(),
        source: "demo:test".into(),
        clock_start_ms: T0,
        clock_start_slack_ms: 0,
        pricing: "rate=1/h".into(),
        currency: "USD".into(),
    };
    let start = ledger.begin_session(&key, T0).unwrap();
    let minute = |observed_ms: i64| MinuteWrite {
        session_id: start.id,
        minute: T0 / 60_000,
        delta: Recorded {
            observed_ms,
            gpu_ms: 2 * observed_ms,
            busy_gpu_ms: 0,
            idle_ms: observed_ms,
            ..Recorded::default()
        },
        at_ms: T0 + 59_000,
        gpus: vec![
            (0, 0, observed_ms, 0, 0, None),
            (1, 0, observed_ms, 0, 0, None),
        ],
        events: Vec::new(),
        alerts: Vec::new(),
        max_gpus: 2,
    };
    assert!(!write(&mut ledger, &minute(40_000)).unwrap());
    assert!(write(&mut ledger, &minute(40_000)).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    let row: (i64, i64, i64) = conn
        .query_row(
            "SELECT observed_ms, idle_ms, gpu_ms FROM minutes",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(row, (60_000, 60_000, 120_000));
    let most: i64 = conn
        .query_row("SELECT max(busy_ms + idle_ms) FROM gpu_minutes", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(most, 60_000);
}
