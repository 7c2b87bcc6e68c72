//! The alert lifecycle on scripted timelines: acknowledge, snooze, budget alerts, bounded
//! history.

use super::super::tests::{T0, drive, machine, names};
use super::super::{Alert, AlertKind, Rules, RulesConfig};
use crate::clock::{Clock, FakeClock};

#[test]
fn acknowledge_hides_and_silences_snooze_returns_with_a_reminder() {
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    drive(&mut r, &clock, 11 * 60, None, |_, t| machine(t, [0, 0]));
    let now = clock.now_unix_ms();
    assert_eq!(r.visible(now).len(), 1);
    assert!(r.snooze("idle", now + 5 * 60_000, now));
    assert!(r.visible(now).is_empty());
    let ts = drive(&mut r, &clock, 6 * 60, None, |_, t| machine(t, [0, 0]));
    assert_eq!(names(&ts), vec![("reminded", "idle".into())]);
    let now = clock.now_unix_ms();
    assert!(r.acknowledge("idle", now));
    assert!(!r.acknowledge("nope", now));
    assert!(r.visible(now).is_empty());
    assert_eq!(r.alerts().len(), 1, "still standing");
    // The 30-minute reminder stays quiet while acknowledged.
    let ts = drive(&mut r, &clock, 40 * 60, None, |_, t| machine(t, [0, 0]));
    assert!(ts.is_empty(), "{:?}", names(&ts));
    let events: Vec<&str> = r.history().iter().map(|h| h.event.name()).collect();
    assert_eq!(events, vec!["fired", "snoozed", "reminded", "acknowledged"]);
}

#[test]
fn budget_alerts_join_the_path_and_leave_when_acknowledged() {
    let mut r = Rules::default();
    let a = Alert::from_budget(
        80,
        false,
        400_000_000,
        500_000_000,
        crate::money::Currency::USD,
        "day",
        "day:2026-05-01",
        T0,
    );
    let ts = r.push_external(a, T0);
    assert_eq!(
        names(&ts),
        vec![("fired", "budget:day:2026-05-01:actual".into())]
    );
    // It stands across ticks…
    assert!(
        r.evaluate(&machine(T0 + 1000, [90, 90]), T0 + 1000, None)
            .is_empty()
    );
    assert_eq!(r.alerts()[0].kind, AlertKind::Budget);
    // …until acknowledged.
    assert!(r.acknowledge("budget:day:2026-05-01:actual", T0 + 2000));
    assert!(r.alerts().is_empty());
    assert!(
        r.evaluate(&machine(T0 + 3000, [90, 90]), T0 + 3000, None)
            .is_empty()
    );
}

#[test]
fn history_is_bounded() {
    let clock = FakeClock::new(T0);
    let cfg = RulesConfig {
        history_len: 3,
        ..RulesConfig::default()
    };
    let mut r = Rules::new(cfg);
    for _ in 0..4 {
        drive(&mut r, &clock, 11 * 60, None, |_, t| machine(t, [0, 0]));
        drive(&mut r, &clock, 3 * 60, None, |_, t| machine(t, [90, 90]));
    }
    assert_eq!(r.history().len(), 3);
    assert_eq!(r.history().back().unwrap().event.name(), "cleared");
}
