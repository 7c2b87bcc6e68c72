//! The accuracy corpus: labelled timelines (scenario files with a `[labels]` table, in
//! `crates/gpumeter-sim/corpus/`) fast-forwarded through the engine's alert rules, each fired
//! alert checked against the labels, and the results per rule: true and false positives and
//! negatives and time to detect. `docs/accuracy.md` is this module's table; the corpus test
//! fails on any labelled false alarm or miss.
//!
//! Scoring, per timeline:
//! - a `fire` label is met (true positive) by an alert of its rule (with its GPUs and job, when
//!   given) that first fires within its window saying the words the label lists (`says`),
//!   holds the labelled verdict at every fire and update, and fires at most `max_fires` times
//!   (more is flapping); unmet, it is a miss;
//! - an alert no label covers is a false alarm of its rule;
//! - a rule listed `quiet` that stays quiet is a true negative.
//!
//! `report` turns the outcomes into the tables and JSON that `gpumeter eval` prints. Uses the
//! engine and the simulator only; no I/O beyond reading the corpus files.

pub mod report;
mod score;

use std::path::Path;

use gpumeter_sim::{RateUnit, Scenario, Simulator};

use gpumeter_core::engine::Engine;
use gpumeter_core::engine::rules::{RulesConfig, Transition};
use gpumeter_core::money::{Currency, Money};

pub use score::{Fired, Outcome, RuleStats, Totals, score};

/// Simulated seconds between readings: coarser than the dashboard's 1 s, which every rule
/// window (tens of seconds and up) resolves the same, and it keeps the corpus cheap in CI.
pub const STEP_MS: u64 = 2_000;
/// The wall-clock start of every timeline (any fixed instant: results must not depend on it).
const T0_MS: i64 = 1_767_225_600_000;

/// Errors reading the corpus.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("cannot read the corpus directory {0}: {1}")]
    Dir(String, std::io::Error),
    #[error("cannot read {0}: {1}")]
    File(String, std::io::Error),
    #[error(transparent)]
    Scenario(#[from] gpumeter_sim::ScenarioError),
    #[error("{0}: no [labels] table: a corpus timeline needs its labels")]
    Unlabelled(String),
    #[error("{0} holds no timelines (*.toml files)")]
    Empty(String),
}

/// Every labelled timeline in `dir` (`*.toml`), by file name.
pub fn load_corpus(dir: &Path) -> Result<Vec<Scenario>, EvalError> {
    let shown = dir.display().to_string();
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| EvalError::Dir(shown.clone(), e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err(EvalError::Empty(shown));
    }
    paths
        .iter()
        .map(|p| {
            let name = p.display().to_string();
            let text = std::fs::read_to_string(p).map_err(|e| EvalError::File(name.clone(), e))?;
            let s = Scenario::from_toml(&name, &text)?;
            if s.labels.is_none() {
                return Err(EvalError::Unlabelled(name));
            }
            Ok(s)
        })
        .collect()
}

/// Fast-forwards one timeline through the default rules and scores it against its labels.
pub fn run(scenario: Scenario) -> Outcome {
    run_with(scenario, &RulesConfig::default())
}

/// The same with these rule settings (a config file's `[alerts]` tables, to tune them on the
/// corpus).
pub fn run_with(scenario: Scenario, rules: &RulesConfig) -> Outcome {
    let duration_s = scenario.labels.as_ref().map_or(0, |l| l.duration_s);
    let rate = scenario.pricing.as_ref().map(|p| {
        let r = i64::try_from(p.rate_micros).unwrap_or(i64::MAX);
        match p.unit {
            RateUnit::InstanceHour => r,
            RateUnit::GpuHour => r.saturating_mul(i64::from(scenario.gpu_count())),
        }
    });
    let labels = scenario.labels.clone();
    let name = scenario.name.clone();
    let mut sim = Simulator::new(scenario);
    let mut engine = Engine::new().with_rules(rules.clone());
    engine.set_rate(rate.map(Money::from_micros), Currency::USD);
    let mut events: Vec<(f64, Transition)> = Vec::new();
    let mut t_ms = 0;
    while t_ms <= duration_s * 1000 {
        let at = T0_MS + i64::try_from(t_ms).unwrap_or(i64::MAX);
        engine.ingest(sim.snapshot_at(t_ms, at));
        let t_s = t_ms as f64 / 1000.0;
        events.extend(
            engine
                .drain_alert_transitions()
                .into_iter()
                .map(|tr| (t_s, tr)),
        );
        t_ms += STEP_MS;
    }
    score(&name, labels.as_ref(), &events)
}

/// Runs every timeline through the default rules.
pub fn run_corpus(dir: &Path) -> Result<Vec<Outcome>, EvalError> {
    run_corpus_with(dir, &RulesConfig::default())
}

/// Runs every timeline through these rule settings.
pub fn run_corpus_with(dir: &Path, rules: &RulesConfig) -> Result<Vec<Outcome>, EvalError> {
    Ok(load_corpus(dir)?
        .into_iter()
        .map(|s| run_with(s, rules))
        .collect())
}
