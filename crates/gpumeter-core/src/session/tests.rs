use gpumeter_model::Snapshot;
use gpumeter_model::testing::SnapshotBuilder;

use super::*;
use crate::billing::{Budget, ClockStart, Rate};
use crate::engine::rules::AlertKind;

/// A minute boundary (2027-01-15T08:00:00Z).
const T0: i64 = 1_800_000_000_000;

/// An idle machine long after boot, `s` seconds after [`T0`].
fn idle(s: i64) -> Snapshot {
    SnapshotBuilder::new("demo:test", T0 + s * 1_000)
        .hostname("box")
        .uptime_s(86_400)
        .with(|snap| {
            snap.host.cpu_util_pct = Some(1.0);
            snap.host.net_rx_bytes_per_s = Some(0.0);
            snap.host.net_tx_bytes_per_s = Some(0.0);
        })
        .gpu(0, 0)
        .build()
}

fn autostop_on() -> AlertSettings {
    let mut alerts = AlertSettings::default();
    alerts.autostop.enabled = true;
    alerts.autostop.after_ms = 60_000;
    alerts.autostop.warn_before_ms = vec![30_000];
    alerts.autostop.command = vec!["true".into()];
    alerts.autostop.wall = false;
    alerts
}

#[test]
fn autostop_warns_on_the_terminal_channels_then_hands_back_the_stop_once() {
    let mut s = Session::new(SessionConfig {
        alerts: autostop_on(),
        terminal_channels: true,
        ..SessionConfig::default()
    })
    .unwrap();
    let mut stops = Vec::new();
    let mut terminal = Vec::new();
    for k in 0..=70 {
        let step = s.ingest(idle(k));
        terminal.extend(step.terminal);
        if let Some(cmd) = step.stop {
            stops.push((k, cmd));
        }
    }
    assert_eq!(stops, vec![(60, vec!["true".to_string()])]);
    let text = String::from_utf8(terminal).unwrap();
    assert!(text.contains("will run `true` in 30 s"), "{text:?}");
    assert!(text.contains("autostop: running `true`"), "{text:?}");
}

#[test]
fn without_terminal_channels_nothing_rings_but_the_events_still_come() {
    let mut s = Session::new(SessionConfig {
        alerts: autostop_on(),
        ..SessionConfig::default()
    })
    .unwrap();
    let steps: Vec<Step> = (0..=61).map(|k| s.ingest(idle(k))).collect();
    assert!(steps.iter().all(|st| st.terminal.is_empty()));
    let events: Vec<&AutostopEvent> = steps.iter().flat_map(|st| &st.autostop).collect();
    assert!(
        matches!(events.first(), Some(AutostopEvent::Armed { .. })),
        "{events:?}"
    );
    assert!(
        matches!(events.last(), Some(AutostopEvent::Stop { .. })),
        "{events:?}"
    );
}

#[test]
fn a_key_cancels_a_warned_countdown_and_the_step_says_so() {
    let mut s = Session::new(SessionConfig {
        alerts: autostop_on(),
        ..SessionConfig::default()
    })
    .unwrap();
    for k in 0..=40 {
        assert!(s.ingest(idle(k)).stop.is_none());
    }
    let step = s.cancel_autostop(T0 + 40_500);
    assert!(
        matches!(step.autostop.as_slice(), [AutostopEvent::Cancelled { .. }]),
        "{:?}",
        step.autostop
    );
    // The countdown starts over: no stop at 60 s.
    for k in 41..=70 {
        assert!(s.ingest(idle(k)).stop.is_none(), "stopped at {k}");
    }
}

#[test]
fn a_refused_autostop_is_the_first_steps_note_under_the_dashboards_policy() {
    let mut alerts = autostop_on();
    alerts.autostop.command.clear();
    let cfg = SessionConfig {
        alerts,
        autostop_refusal: Refusal::TurnOff,
        ..SessionConfig::default()
    };
    assert!(
        Session::new(SessionConfig {
            autostop_refusal: Refusal::Fail,
            ..cfg.clone()
        })
        .is_err()
    );
    let mut s = Session::new(cfg).unwrap();
    assert!(!s.autostop_config().enabled);
    let first = s.ingest(idle(0));
    assert!(
        first.notes.iter().any(|n| n.contains("autostop is off")),
        "{:?}",
        first.notes
    );
    assert!(s.ingest(idle(1)).notes.is_empty());
}

#[test]
fn a_budget_crossing_comes_once_as_an_event_and_once_as_an_alert() {
    let mut pricing = Pricing::simple(Rate::parse("36/h").unwrap());
    pricing.clock_start = ClockStart::At(T0);
    pricing.budget = Some(Budget::parse("1/run").unwrap());
    pricing.currency = Currency::from_code("EUR").unwrap();
    let mut s = Session::new(SessionConfig {
        pricing: Some(pricing),
        interval_ms: 1_000,
        ..SessionConfig::default()
    })
    .unwrap();
    assert_eq!(s.currency().code(), "EUR");
    let steps: Vec<Step> = (0..=60).map(|k| s.ingest(idle(k))).collect();
    let budget: Vec<u8> = steps
        .iter()
        .flat_map(|st| &st.budget)
        .map(|e| e.threshold)
        .collect();
    assert_eq!(budget, vec![50]);
    let alerts: Vec<&Transition> = steps
        .iter()
        .flat_map(|st| &st.transitions)
        .filter(|t| t.alert().kind == AlertKind::Budget)
        .collect();
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    assert!(alerts[0].alert().title.contains('€'), "{alerts:?}");
    // The minute closed at 60 s; acknowledging the budget alert hides it.
    assert!(steps.iter().any(|st| st.flushed.is_some()));
    assert_eq!(s.engine().ticks(), 61);
    let now = T0 + 60_000;
    let visible = s.engine().rules().visible(now);
    let budget = visible
        .iter()
        .find(|a| a.kind == AlertKind::Budget)
        .unwrap();
    assert!(s.acknowledge(&budget.id, now));
    assert!(
        !s.engine()
            .rules()
            .visible(now)
            .iter()
            .any(|a| a.id == budget.id)
    );
}
