//! `/metrics`: the Prometheus families of the latest reading, rendered at most once per tick from `&`
//! references to the engine (never per request, never with an NVML call). Names follow the
//! Prometheus conventions (`gpumeter_` prefix, base units in the name, `_total` counters, 0–1
//! ratios, `_info` gauges of value 1) and pass `promtool check metrics`; no `instance` or `job`
//! label (Prometheus adds its own). Rooms: [`gpu`] per GPU, [`machine`] host, money, verdicts and
//! self-health, [`process`] the opt-in per-process series, [`dcgm`] the compatibility names,
//! [`out`] the registry and label escaping, [`classic`] the 0.0.4 text form.

pub mod classic;
pub mod dcgm;
pub mod gpu;
pub mod machine;
pub mod out;
pub mod process;

#[cfg(test)]
mod pod_tests;
#[cfg(test)]
mod tests;

use gpumeter_core::engine::{Engine, SourceHealth};

pub use gpu::Roster;
pub use machine::Health;

/// What a scrape carries beyond the defaults.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MetricsOptions {
    /// Per-process series for at most this many GPU processes (`None`: off).
    pub process_limit: Option<usize>,
    /// The DCGM-named families too (`--compat dcgm`).
    pub dcgm: bool,
    /// On Kubernetes: `pod`, `namespace` and `container` labels on the per-GPU series.
    pub pods: bool,
}

/// One rendered scrape in both text formats.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scrape {
    pub openmetrics: String,
    pub classic: String,
}

/// The health figures of an engine and a count of failed readings.
pub fn health(engine: &Engine, sample_errors: u64) -> Health {
    Health {
        up: matches!(engine.health(), SourceHealth::Ok),
        sample_errors,
        last_sample_unix_ms: engine.latest().map(|s| s.taken_at_unix_ms),
    }
}

/// The scrape of the engine's latest state.
pub fn render(engine: &Engine, roster: &Roster, health: &Health, opts: &MetricsOptions) -> Scrape {
    let mut o = out::Out::default();
    machine::render_self(&mut o, health);
    let billing = engine.billing();
    machine::render_billing(&mut o, billing);
    if let Some(snap) = engine.latest() {
        let rules = engine.rules();
        machine::render_host(&mut o, snap, billing, rules.config());
        gpu::render(
            &mut o,
            snap,
            roster,
            rules.idle_totals(),
            rules.starved_totals(),
            rules.config(),
        );
        if let Some(limit) = opts.process_limit {
            process::render(&mut o, snap, limit);
        }
        if opts.dcgm {
            dcgm::render(&mut o, snap, opts.pods);
        }
    }
    machine::render_alerts(&mut o, engine.alerts(), &roster.gpus());
    let openmetrics = o.encode();
    let classic = classic::to_classic(&openmetrics);
    Scrape {
        openmetrics,
        classic,
    }
}
