//! The player on a recorded `cpu-starved` run: playing on the recorded clock, speeds, pause,
//! steps, seeks (forward and back give the session a straight run from the start would), the
//! end, and `--start`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use gpumeter_sim::Scenario;

use super::*;
use gpumeter_core::billing::{Pricing, Rate};
use gpumeter_core::clock::FakeClock;
use gpumeter_core::recording::{RecordOptions, StartAt, Writer, parse_start};
use gpumeter_core::source::sim::SimSource;

/// 2026-01-05 09:00:00Z.
pub const T0: i64 = 1_767_603_600_000;

/// Records `n` one-second readings of `scenario` into `dir`.
pub fn recording(dir: &Path, scenario: &str, n: usize) -> PathBuf {
    let path = dir.join(format!("{scenario}.ndjson"));
    let clock = FakeClock::new(T0);
    let mut src = SimSource::new(
        Scenario::builtin(scenario).unwrap(),
        Arc::new(clock.clone()),
    );
    let mut w = Writer::create(&path, RecordOptions::default()).unwrap();
    for _ in 0..n {
        w.write(&src.sample().unwrap()).unwrap();
        clock.advance_ms(1_000);
    }
    w.finish().unwrap();
    path
}

fn priced() -> SessionConfig {
    SessionConfig {
        pricing: Some(Pricing::simple(Rate::parse("31/h").unwrap())),
        interval_ms: 1_000,
        ..SessionConfig::default()
    }
}

fn player(path: &Path, start: Option<StartAt>) -> (Player, Session) {
    let setup = ReplaySetup {
        path: path.to_path_buf(),
        start,
    };
    let p = Player::open(setup, priced()).unwrap();
    let s = p.session().unwrap();
    (p, s)
}

/// What a session shows that depends on the whole path: spend, alert history, ticks.
fn state(s: &Session) -> (Option<i64>, usize, u64, Vec<String>) {
    let e = s.engine();
    (
        e.billing().map(|b| b.spent.micros()),
        e.rules().history().len(),
        e.ticks(),
        e.rules().alerts().iter().map(|a| a.id.clone()).collect(),
    )
}

/// A session fed straight from the first reading to the one at `until` (inclusive).
fn straight(path: &Path, until: i64) -> Session {
    let mut src = ReplaySource::open(path).unwrap();
    let mut s = Session::new(quiet(priced())).unwrap();
    while let Ok(snap) = src.sample() {
        if snap.taken_at_unix_ms > until {
            break;
        }
        s.ingest(snap);
    }
    s
}

#[test]
fn plays_on_the_recorded_clock_at_each_speed_and_not_when_paused() {
    let dir = tempfile::tempdir().unwrap();
    let path = recording(dir.path(), "cpu-starved", 120);
    let (mut p, mut s) = player(&path, None);
    let t = Instant::now();
    p.start(&mut s, t);
    assert_eq!(p.at_ms(), T0);
    assert_eq!(p.status().speed, 1);
    assert_eq!(p.due(), Some(t + Duration::from_secs(1)));
    p.pump(&mut s, t + Duration::from_millis(5_500));
    assert_eq!(p.at_ms(), T0 + 5_000);
    // 4× from here: 2 s of wall time are 8 recorded seconds.
    let now = t + Duration::from_millis(5_500);
    p.command(KeyAction::Faster, &mut s, now);
    p.command(KeyAction::Faster, &mut s, now);
    assert_eq!(p.status().speed, 4);
    p.pump(&mut s, now + Duration::from_secs(2));
    assert_eq!(p.at_ms(), T0 + 13_000);
    let now = now + Duration::from_secs(2);
    p.command(KeyAction::Pause, &mut s, now);
    assert!(p.status().paused);
    assert_eq!(p.due(), None);
    p.pump(&mut s, now + Duration::from_secs(30));
    assert_eq!(p.at_ms(), T0 + 13_000, "paused");
    p.command(KeyAction::Slower, &mut s, now);
    assert_eq!(p.status().speed, 2);
    // Play again: counted from the moment of the key, not from before the pause.
    let later = now + Duration::from_secs(30);
    p.command(KeyAction::Pause, &mut s, later);
    p.pump(&mut s, later + Duration::from_secs(1));
    assert_eq!(p.at_ms(), T0 + 15_000);
    assert_eq!(state(&s), state(&straight(&path, T0 + 15_000)));
    for _ in 0..10 {
        p.command(KeyAction::Faster, &mut s, later);
    }
    assert_eq!(p.status().speed, 60);
}

#[test]
fn steps_and_seeks_re_derive_what_a_straight_run_shows() {
    let dir = tempfile::tempdir().unwrap();
    let path = recording(dir.path(), "cpu-starved", 300);
    let (mut p, mut s) = player(&path, None);
    let t = Instant::now();
    p.start(&mut s, t);
    p.command(KeyAction::StepForward, &mut s, t);
    assert!(p.status().paused, "a step pauses");
    assert_eq!(p.at_ms(), T0 + 1_000);
    p.command(KeyAction::StepBack, &mut s, t);
    assert_eq!(p.at_ms(), T0);
    assert_eq!(state(&s), state(&straight(&path, T0)));
    for _ in 0..3 {
        p.command(KeyAction::SeekForward, &mut s, t);
    }
    assert_eq!(p.at_ms(), T0 + 180_000);
    let forward = state(&s);
    assert_eq!(forward, state(&straight(&path, T0 + 180_000)));
    assert!(!forward.3.is_empty(), "3 min of cpu-starved raise an alert");
    p.command(KeyAction::SeekBack, &mut s, t);
    assert_eq!(p.at_ms(), T0 + 120_000);
    assert_eq!(state(&s), state(&straight(&path, T0 + 120_000)));
    // Money at 2 min is less than at 3 min: the spend was re-derived, not kept.
    assert!(state(&s).0 < forward.0, "{:?} vs {forward:?}", state(&s));
    assert_eq!(s.engine().latest().unwrap().taken_at_unix_ms, T0 + 120_000);
    p.command(KeyAction::ReplayStart, &mut s, t);
    assert_eq!(p.at_ms(), T0);
    assert_eq!(s.engine().ticks(), 1);
    let (_, note) = p.command(KeyAction::ReplayEnd, &mut s, t);
    assert_eq!(p.at_ms(), T0 + 299_000);
    assert!(p.status().at_end);
    assert_eq!(p.due(), None);
    assert!(
        note.unwrap()
            .contains("end of the recording (300 readings)")
    );
    assert_eq!(state(&s), state(&straight(&path, i64::MAX)));
    // Past the end a step does nothing; one back works.
    p.command(KeyAction::StepForward, &mut s, t);
    assert_eq!(p.at_ms(), T0 + 299_000);
    p.command(KeyAction::StepBack, &mut s, t);
    assert_eq!(p.at_ms(), T0 + 298_000);
    assert!(!p.status().at_end);
}

#[test]
fn start_puts_the_replay_at_an_offset_or_a_time_of_day() {
    let dir = tempfile::tempdir().unwrap();
    let path = recording(dir.path(), "training", 200);
    let (mut p, mut s) = player(&path, Some(parse_start("90s").unwrap()));
    p.start(&mut s, Instant::now());
    assert_eq!(p.at_ms(), T0 + 90_000);
    assert_eq!(s.engine().ticks(), 91);
    let (mut p, mut s) = player(&path, Some(parse_start("09:02").unwrap()));
    p.start(&mut s, Instant::now());
    assert_eq!(p.at_ms(), T0 + 120_000);
    // Past the end: the last reading.
    let (mut p, mut s) = player(&path, Some(parse_start("2h").unwrap()));
    p.start(&mut s, Instant::now());
    assert_eq!(p.at_ms(), T0 + 199_000);
}

#[test]
fn a_replay_session_is_quiet() {
    let mut cfg = priced();
    cfg.ledger_path = Some(PathBuf::from("/tmp/x.sqlite"));
    cfg.terminal_channels = true;
    cfg.alerts.autostop.enabled = true;
    cfg.alerts.notify.hooks.insert(None, vec!["true".into()]);
    let q = quiet(cfg);
    assert_eq!(q.ledger_path, None);
    assert!(!q.terminal_channels);
    assert!(!q.alerts.autostop.enabled);
    assert!(q.alerts.notify.hooks.is_empty());
    assert!(q.pricing.is_some(), "the spend is still derived");
}
