//! The built-in demo scenarios played through a [`Session`] for tests: each one driven through a
//! [`SimSource`] on a fake clock for a fixed time, metered at its own price (no ledger), the
//! way `gpumeter --demo` runs it. Deterministic: a fixed start, no wall time, no host name from
//! this machine (the scenario names its own), no config file. Shared by the scenario snapshots
//! and the screenshots.

use std::sync::Arc;

use gpumeter_sim::Scenario;

use gpumeter_core::clock::FakeClock;
use gpumeter_core::config::{Env, LoadOptions};
use gpumeter_core::engine::Engine;
use gpumeter_core::session::{Session, SessionConfig};
use gpumeter_core::source::Source;
use gpumeter_core::source::sim::SimSource;

/// 2026-01-05T09:00:00Z, a Monday.
pub const START: i64 = 1_767_603_600_000;
/// Simulated seconds played before drawing.
pub const SECONDS: i64 = 120;
/// "Now" when drawing: 400 ms after the last reading.
pub const NOW: i64 = START + SECONDS * 1_000 + 400;

/// The scenario's engine after `seconds` of one-second readings, metered at its own price
/// resolved the way `gpumeter --demo` resolves it (defaults, then the scenario; no user file).
pub fn played_for(name: &str, seconds: i64) -> Engine {
    played_with(name, seconds, |_, _| {})
}

/// [`played_for`], calling `each` with the second and the session after every reading.
pub fn played_with(name: &str, seconds: i64, mut each: impl FnMut(i64, &Session)) -> Engine {
    let scenario = Scenario::builtin(name).unwrap();
    let settings = gpumeter_core::config::load(&LoadOptions {
        env: Env::default(),
        demo: crate::launch::demo_pricing(&scenario),
        ..Default::default()
    })
    .unwrap();
    assert!(settings.pricing.is_some(), "{name} carries no price");
    let clock = FakeClock::new(START);
    let mut source = SimSource::new(scenario, Arc::new(clock.clone()));
    let mut session = Session::new(SessionConfig {
        pricing: settings.pricing,
        interval_ms: 1_000,
        alerts: settings.alerts,
        ..SessionConfig::default()
    })
    .unwrap();
    for second in 0..=seconds {
        let step = session.ingest(source.sample().unwrap());
        assert!(step.notes.is_empty(), "{name}: {:?}", step.notes);
        each(second, &session);
        clock.advance_ms(1_000);
    }
    session.into_engine()
}

/// The scenario's engine after [`SECONDS`].
pub fn played(name: &str) -> Engine {
    played_for(name, SECONDS)
}

/// The built-in scenario names, in display order.
pub fn names() -> Vec<&'static str> {
    gpumeter_sim::builtin_scenarios()
        .iter()
        .map(|(n, _)| *n)
        .collect()
}
