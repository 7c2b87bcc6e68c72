use std::sync::Arc;

use super::*;
use gpumeter_core::billing::{Budget, ClockStart, Rate};
use gpumeter_core::clock::FakeClock;
use gpumeter_core::source::sim::SimSource;

#[test]
fn budget_crossings_and_rule_verdicts_reach_the_alert_path() {
    let clock = FakeClock::new(1_750_000_000_000);
    let scenario = gpumeter_sim::Scenario::builtin("idle").unwrap();
    let mut source = SimSource::new(scenario, Arc::new(clock.clone()));
    let mut pricing = Pricing::simple(Rate::parse("31/h").unwrap());
    pricing.clock_start = ClockStart::FirstSample;
    pricing.budget = Some(Budget::parse("10/run").unwrap());
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let summary = run_watch(
        &mut source,
        &WatchClock::Fast(clock.clone()),
        Some(&pricing),
        None,
        WatchOptions {
            for_ms: Some(25 * 60_000),
            interval_ms: 1_000,
        },
        &mut out,
        &mut err,
    )
    .unwrap();
    let fired = summary.alerts_fired;
    // $31/h: 50 % of $10 after ~10 min, 100 % after ~19 min; idle fires at 10 min.
    assert!(fired.contains(&"idle".to_string()), "{fired:?}");
    assert_eq!(
        fired
            .iter()
            .filter(|id| id.as_str() == "budget:run:actual")
            .count(),
        3,
        "{fired:?}"
    );
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("alert fired [moderate] idle: GPUs idle 10 min"),
        "{text}"
    );
    // Each budget crossing (50, 80, 100 %) is said once, as its own line (not again as an
    // alert line).
    assert_eq!(
        text.matches("% of the $10.00 run budget spent (").count(),
        3,
        "{text}"
    );
    assert!(!text.contains("alert fired [high] budget"), "{text}");
    assert!(clock.now_unix_ms() > 1_750_000_000_000);
}

#[test]
fn a_refused_autostop_stops_watch_before_the_first_reading() {
    let clock = FakeClock::new(1_750_000_000_000);
    let scenario = gpumeter_sim::Scenario::builtin("idle").unwrap();
    let mut source = SimSource::new(scenario, Arc::new(clock.clone()));
    let cfg = SessionConfig {
        autostop_flags: gpumeter_core::session::AutostopFlags {
            after_ms: Some(30 * 60_000),
            command: None,
        },
        ..SessionConfig::default()
    };
    let opts = WatchOptions {
        for_ms: Some(60_000),
        interval_ms: 1_000,
    };
    let e = run_watch_with(
        &mut source,
        &WatchClock::Fast(clock.clone()),
        cfg,
        opts,
        &mut Vec::new(),
        &mut Vec::new(),
    )
    .unwrap_err();
    assert!(
        matches!(e, WatchError::Autostop(AutostopSetupError::NoCommand)),
        "{e:?}"
    );
    assert_eq!(clock.now_unix_ms(), 1_750_000_000_000);
}

/// An alert that fires on the tick closing a minute comes after that minute's line: the log
/// reads in time order. The clock starts on a minute boundary so the spot notice (posted 3 min
/// in) lands on exactly that tick.
#[test]
fn the_minute_a_tick_closes_is_said_before_that_ticks_alert() {
    let start = 1_750_000_020_000; // a whole minute
    assert_eq!(start % 60_000, 0);
    let clock = FakeClock::new(start);
    let scenario = gpumeter_sim::Scenario::builtin("spot").unwrap();
    let mut source = SimSource::new(scenario, Arc::new(clock.clone()));
    let mut pricing = Pricing::simple(Rate::parse("31/h").unwrap());
    pricing.clock_start = ClockStart::FirstSample;
    let mut out = Vec::new();
    run_watch(
        &mut source,
        &WatchClock::Fast(clock.clone()),
        Some(&pricing),
        None,
        WatchOptions {
            for_ms: Some(5 * 60_000),
            interval_ms: 1_000,
        },
        &mut out,
        &mut Vec::new(),
    )
    .unwrap();
    let text = String::from_utf8(out).unwrap();
    let alert = text
        .lines()
        .position(|l| l.contains(" alert fired [high] spot: "))
        .unwrap_or_else(|| panic!("no spot alert:\n{text}"));
    let minutes_before = text
        .lines()
        .take(alert)
        .filter(|l| l.contains(" spent $"))
        .count();
    assert_eq!(minutes_before, 3, "{text}");
    // Every line's time stamp is at or after the one before it.
    let stamps: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("20"))
        .map(|l| &l[..17])
        .collect();
    assert!(stamps.windows(2).all(|w| w[0] <= w[1]), "{text}");
}
