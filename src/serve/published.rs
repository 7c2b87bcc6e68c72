//! What the HTTP side serves: the latest state, rendered by the sampler (scrape texts, snapshot
//! JSON, readiness) at most once per reading and only when a request asks for it, then handed
//! over whole as an `Arc`. A request clones the `Arc` and writes bytes: no NVML call, no engine
//! lock, no work that grows with the number of clients; a slow client holds only its copy of
//! one published state.

use bytes::Bytes;

use super::metrics::{self, Health, MetricsOptions, Roster};
use gpumeter_core::engine::{Engine, SourceHealth};
use gpumeter_core::export::json;

/// One published state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    /// `/metrics` as OpenMetrics text.
    pub openmetrics: Bytes,
    /// `/metrics` as Prometheus text 0.0.4.
    pub classic: Bytes,
    /// `/api/v1/snapshot` (None before the first reading).
    pub snapshot: Option<Bytes>,
    /// `/-/ready`: Ok once a reading arrived and while readings succeed, else why not.
    pub ready: Result<(), String>,
    /// The sampler's tick this was rendered after (0: before the first).
    pub tick: u64,
}

impl Published {
    /// Before the first reading (NVML may take seconds to start): `gpumeter_up 0` and the
    /// build, so a scrape already says who answers and that nothing was read yet.
    pub fn starting(opts: &MetricsOptions) -> Published {
        let engine = Engine::new();
        render(
            &engine,
            &Roster::default(),
            &metrics::health(&engine, 0),
            opts,
            0,
        )
    }
}

/// Renders the engine's latest state, as of the sampler's `tick`.
pub fn render(
    engine: &Engine,
    roster: &Roster,
    health: &Health,
    opts: &MetricsOptions,
    tick: u64,
) -> Published {
    let scrape = metrics::render(engine, roster, health, opts);
    let snapshot = engine.latest().and_then(|snap| {
        // Compact, not pretty: machines read this one.
        let doc = json::document(snap, engine.billing(), engine.alerts());
        serde_json::to_vec(&doc).ok().map(Bytes::from)
    });
    let ready = match engine.health() {
        SourceHealth::Ok => Ok(()),
        SourceHealth::Starting => Err("no reading yet".into()),
        SourceHealth::Failing { message, .. } => Err(format!("the source is failing: {message}")),
    };
    Published {
        openmetrics: Bytes::from(scrape.openmetrics),
        classic: Bytes::from(scrape.classic),
        snapshot,
        ready,
        tick,
    }
}
