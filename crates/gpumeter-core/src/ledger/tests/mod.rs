//! Ledger behaviour: identity checks, setting aside, one writer, resume without double counting.

mod restarts;
mod sums;
mod writer;

use std::path::Path;

use gpumeter_model::Snapshot;
use gpumeter_model::testing::SnapshotBuilder;

use super::session::pricing_text;
use super::*;
use crate::billing::{ClockStart, Meter, MeterConfig, Pricing, Rate};

const T0: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z
const BOOT_S: i64 = T0 / 1_000 - 3_600; // booted an hour before T0

fn snap(at: i64, util: u32) -> Snapshot {
    let energy = u64::try_from(at - T0 + 10_000_000).unwrap() * 300;
    SnapshotBuilder::new("demo:test", at)
        .hostname("box")
        .boot_time_s(BOOT_S)
        .gpus(&[util, util])
        .each_gpu(|g| g.energy_millijoules = Some(energy))
        .build()
}

fn pricing(rate: &str) -> Pricing {
    let mut p = Pricing::simple(Rate::parse(rate).unwrap());
    p.clock_start = ClockStart::Boot;
    p
}

/// Runs a meter + recorder from `from` to `to` (10 s ticks) against the ledger at `path`;
/// returns the meter's final spend (micro-units) and the recorder's written total.
fn run(path: &Path, rate: &str, from: i64, to: i64) -> (i64, i64) {
    let (mut ledger, _notes) = Ledger::open(path, from).unwrap();
    let mut meter = Meter::new(MeterConfig {
        pricing: pricing(rate),
        tick_cap_ms: 100_000,
    });
    let first = snap(from, 50);
    let key = SessionKey {
        host: "box".into(),
        source: first.source.clone(),
        clock_start_ms: meter.resolve_start(&first, from),
        clock_start_slack_ms: super::session::clock_start_slack(meter.pricing()),
        pricing: pricing_text(meter.pricing()),
        currency: "USD".into(),
    };
    let start = ledger.begin_session(&key, from).unwrap();
    meter.seed(&start.seed);
    let mut rec = Recorder::new(Some(ledger), Some(&start));
    let mut t = from;
    while t <= to {
        let events = meter.observe(&snap(t, 50), t);
        rec.record(&meter, &events);
        t += 10_000;
    }
    let (last, notes) = rec.finish(crate::ledger::writer::FINISH_WAIT);
    assert!(notes.is_empty(), "{notes:?}");
    let last = last.unwrap();
    (meter.spent().micros(), last.total.spend_micros)
}

#[test]
fn a_list_price_is_its_own_session_text_and_says_where_it_came_from() {
    let yours = pricing("98.32/h");
    let mut listed = pricing("98.32/h");
    listed.source = crate::billing::RateSource::ListPrice(crate::billing::ListPrice {
        what: "AWS p5.48xlarge on-demand us-east-1".into(),
        catalog: "2025-05".into(),
        url: "https://aws.amazon.com/ec2/pricing/on-demand/".into(),
    });
    let (yours, listed) = (pricing_text(&yours), pricing_text(&listed));
    // The text `report` prints per session, and the key that keeps the two apart.
    assert!(!yours.contains("list-price"), "{yours}");
    assert!(
        listed
            .ends_with(" source=list-price(AWS p5.48xlarge on-demand us-east-1, catalog 2025-05)"),
        "{listed}"
    );
    assert_ne!(yours, listed);
}

#[test]
fn a_new_ledger_is_stamped_as_ours_and_sums_to_the_meter() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state/gpumeter/ledger.sqlite");
    let (spent, written) = run(&path, "36/h", T0, T0 + 30 * 60_000);
    // Boot an hour before T0: 1 h 30 min at $36/h.
    assert_eq!(spent, 54_000_000);
    assert_eq!(written, spent);
    let l = Ledger::open_read_only(&path).unwrap();
    assert_eq!(l.integrity_check().unwrap(), "ok");
    let app: i64 = l
        .conn()
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .unwrap();
    assert_eq!(app, APPLICATION_ID);
    let total = l.total_usage().unwrap();
    assert_eq!(total.spend_micros, spent);
    assert_eq!(total.busy_gpu_ms, 2 * 30 * 60_000);
    // 2 GPUs × 300 mJ per ms of counter time, counted between readings.
    assert_eq!(total.energy_mj, Some(2 * 300 * 30 * 60_000));
}

#[test]
fn restarts_resume_the_session_without_double_counting() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    run(&path, "36/h", T0, T0 + 10 * 60_000);
    // gpumeter was down for 5 minutes, then ran 10 more: the bill ran all along.
    let (spent, written) = run(&path, "36/h", T0 + 15 * 60_000, T0 + 25 * 60_000);
    assert_eq!(spent, 36_000_000 + 25 * 600_000);
    assert_eq!(written, spent);
    let l = Ledger::open_read_only(&path).unwrap();
    assert_eq!(l.total_usage().unwrap().spend_micros, spent);
    assert_eq!(l.sessions_since(0).unwrap().len(), 1);
    // Observed busy time counts only what was watched: 20 minutes on 2 GPUs.
    assert_eq!(l.total_usage().unwrap().busy_gpu_ms, 2 * 20 * 60_000);
}

#[test]
fn a_price_change_starts_a_session_where_the_old_one_ended() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    let (first, _) = run(&path, "36/h", T0, T0 + 10 * 60_000);
    let (second, _) = run(&path, "72/h", T0 + 10 * 60_000, T0 + 20 * 60_000);
    assert_eq!(second, 12_000_000); // only the 10 new minutes, at the new price
    let l = Ledger::open_read_only(&path).unwrap();
    assert_eq!(l.sessions_since(0).unwrap().len(), 2);
    assert_eq!(l.total_usage().unwrap().spend_micros, first + second);
}

#[test]
fn foreign_and_damaged_files_are_set_aside_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    type Make = Box<dyn Fn(&Path)>;
    let cases: Vec<(&str, Make)> = vec![
        (
            "not an SQLite database",
            Box::new(|p| std::fs::write(p, "hello, I am a text file").unwrap()),
        ),
        (
            "another program",
            Box::new(|p| {
                let c = rusqlite::Connection::open(p).unwrap();
                c.execute_batch("CREATE TABLE photos (id INTEGER); INSERT INTO photos VALUES (1);")
                    .unwrap();
            }),
        ),
        (
            "damaged",
            Box::new(|p| {
                run(p, "1/h", T0, T0 + 120_000);
                let mut bytes = std::fs::read(p).unwrap();
                let len = bytes.len();
                for b in &mut bytes[100..len] {
                    *b = 0xA5;
                }
                std::fs::write(p, bytes).unwrap();
            }),
        ),
    ];
    for (i, (why, make)) in cases.into_iter().enumerate() {
        let _ = std::fs::remove_file(&path);
        make(&path);
        let original = std::fs::read(&path).unwrap();
        let now = T0 + i64::try_from(i).unwrap() * 1_000;
        let (ledger, notes) = Ledger::open(&path, now).unwrap();
        assert_eq!(ledger.mode(), LedgerMode::ReadWrite);
        let aside = dir
            .path()
            .join(format!("ledger.sqlite.corrupt-{}", now / 1_000));
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains(why), "{why}: {}", notes[0]);
        assert!(
            notes[0].contains(&aside.display().to_string()),
            "{}",
            notes[0]
        );
        assert_eq!(
            std::fs::read(&aside).unwrap(),
            original,
            "{why}: kept as it was"
        );
        assert_eq!(ledger.integrity_check().unwrap(), "ok");
        drop(ledger);
        // report refuses what it cannot read, and says why.
        std::fs::write(&path, "junk").unwrap();
        let err = Ledger::open_read_only(&path).unwrap_err().to_string();
        assert!(err.contains("is not a usable gpumeter ledger"), "{err}");
    }
}

#[test]
fn a_newer_ledger_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    run(&path, "1/h", T0, T0 + 60_000);
    let c = rusqlite::Connection::open(&path).unwrap();
    c.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
        .unwrap();
    drop(c);
    let err = Ledger::open(&path, T0).unwrap_err().to_string();
    assert!(err.contains("newer gpumeter"), "{err}");
    assert!(path.exists());
    let missing = Ledger::open_read_only(&dir.path().join("nope.sqlite")).unwrap_err();
    assert!(matches!(missing, LedgerError::Missing(_)));
}

#[test]
fn a_second_instance_reads_only_and_counts_nothing_twice() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    let (writer, notes) = Ledger::open(&path, T0).unwrap();
    assert!(notes.is_empty());
    let (reader, notes) = Ledger::open(&path, T0).unwrap();
    assert_eq!(reader.mode(), LedgerMode::ReadOnly);
    assert!(
        notes[0].contains("another gpumeter is writing the ledger"),
        "{notes:?}"
    );
    drop(reader);
    drop(writer);

    // Two meters watch the same machine over the same 10 minutes; only one writes.
    let mut handles = Vec::new();
    for _ in 0..2 {
        let (mut ledger, _) = Ledger::open(&path, T0).unwrap();
        let mut meter = Meter::new(MeterConfig {
            pricing: pricing("36/h"),
            tick_cap_ms: 100_000,
        });
        let key = SessionKey {
            host: "box".into(),
            source: "demo:test".into(),
            clock_start_ms: meter.resolve_start(&snap(T0, 50), T0),
            clock_start_slack_ms: super::session::clock_start_slack(meter.pricing()),
            pricing: pricing_text(meter.pricing()),
            currency: "USD".into(),
        };
        let start = ledger.begin_session(&key, T0).unwrap();
        meter.seed(&start.seed);
        handles.push((meter, Recorder::new(Some(ledger), Some(&start))));
    }
    assert!(handles[0].1.writes());
    assert!(!handles[1].1.writes());
    let mut t = T0;
    while t <= T0 + 10 * 60_000 {
        for (meter, rec) in &mut handles {
            let ev = meter.observe(&snap(t, 50), t);
            rec.record(meter, &ev);
        }
        t += 10_000;
    }
    for (_, rec) in &mut handles {
        let (_, notes) = rec.finish(crate::ledger::writer::FINISH_WAIT);
        assert!(notes.is_empty(), "{notes:?}");
    }
    let spent = handles[0].0.spent().micros();
    assert_eq!(spent, handles[1].0.spent().micros());
    drop(handles);
    let l = Ledger::open_read_only(&path).unwrap();
    assert_eq!(l.total_usage().unwrap().spend_micros, spent);
}

/// 2 KB overwritten in the middle of a ledger: one line says so, and the rows still readable
/// come back in the new ledger instead of the whole history going aside with the file.
#[test]
fn a_damaged_ledger_is_set_aside_in_one_line_and_its_readable_rows_salvaged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    run(&path, "36/h", T0, T0 + 4 * 3_600_000);
    let before = Ledger::open_read_only(&path)
        .unwrap()
        .sessions_since(0)
        .unwrap();
    let minutes_before = {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.query_row("SELECT count(*) FROM minutes", [], |r| r.get::<_, i64>(0))
            .unwrap()
    };
    let mut bytes = std::fs::read(&path).unwrap();
    let mid = bytes.len() / 2;
    for b in &mut bytes[mid..mid + 2_048] {
        *b = 0xA5;
    }
    std::fs::write(&path, bytes).unwrap();

    let (ledger, notes) = Ledger::open(&path, T0 + 5 * 3_600_000).unwrap();
    assert_eq!(notes.len(), 1, "{notes:?}");
    let note = &notes[0];
    assert!(!note.contains('\n') && note.len() < 400, "{note}");
    assert!(note.contains("was damaged ("), "{note}");
    assert!(
        note.contains("copied in what was still readable: "),
        "{note}"
    );
    assert_eq!(ledger.integrity_check().unwrap(), "ok");
    let after = ledger.sessions_since(0).unwrap();
    assert_eq!(after.len(), before.len(), "{after:?}");
    let salvaged: i64 = ledger
        .conn()
        .query_row("SELECT count(*) FROM minutes", [], |r| r.get(0))
        .unwrap();
    // Most of the history is back: at most the rows on the overwritten pages are lost.
    assert!(
        salvaged * 2 > minutes_before && salvaged <= minutes_before,
        "{salvaged} of {minutes_before}: {note}"
    );
    assert!(note.contains(&format!("{salvaged} minute(s)")), "{note}");
}
