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
//! Each timeline runs through a [`Session`] at the live interval ([`STEP_MS`]), so what eval
//! scores is what `watch` says: the same rules, billing and autostop (its stop is scored as the
//! rule `autostop`).
//!
//! `report` turns the outcomes into the tables and JSON that `gpumeter eval` prints. Uses the
//! engine and the simulator only; no I/O beyond reading the corpus files.

pub mod report;
mod score;

use std::path::Path;

use gpumeter_sim::{RateUnit, Scenario, Simulator};

use gpumeter_core::billing::{Budget, BudgetPeriod, Pricing, Rate, RateUnit as BillingUnit};
use gpumeter_core::config::AlertSettings;
use gpumeter_core::engine::autostop::AutostopConfig;
use gpumeter_core::engine::rules::RulesConfig;
use gpumeter_core::money::Money;
use gpumeter_core::notify::NotifyConfig;
use gpumeter_core::session::{AutostopFlags, Session, SessionConfig, lines};
use gpumeter_core::units::parse_duration;

pub use score::{Event, Fired, Outcome, RuleStats, Totals, score};

/// Simulated milliseconds between readings: the live front-ends' default interval, so the
/// rules see what they see live (the same windows, the same warm-up, the same autostop).
pub const STEP_MS: u64 = gpumeter_core::session::DEFAULT_INTERVAL.as_millis() as u64;
/// The wall-clock start of every timeline (any fixed instant: results must not depend on it).
const T0_MS: i64 = 1_767_225_600_000;

/// Errors reading the corpus.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("cannot read the corpus directory {0}: {1}")]
    Dir(String, std::io::Error),
    #[error("cannot read {0}: {1}")]
    File(String, gpumeter_core::textfile::TextFileError),
    #[error(transparent)]
    Scenario(#[from] gpumeter_sim::ScenarioError),
    #[error("{0}: no [labels] table: a corpus timeline needs its labels")]
    Unlabelled(String),
    #[error("{0} holds no timelines (*.toml files, here or one directory down)")]
    Empty(String),
}

/// Every labelled timeline in `dir` (`*.toml`) and in its subdirectories one level down (a
/// group of timelines: `blind/` holds those written without reading the rules), by path. Each
/// comes with its group's name (`None` at the top).
pub fn load_corpus(dir: &Path) -> Result<Vec<(Option<String>, Scenario)>, EvalError> {
    let shown = dir.display().to_string();
    let listing = |d: &Path| -> Result<Vec<std::path::PathBuf>, EvalError> {
        let mut paths: Vec<_> = std::fs::read_dir(d)
            .map_err(|e| EvalError::Dir(d.display().to_string(), e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        paths.sort();
        Ok(paths)
    };
    let is_toml = |p: &Path| p.is_file() && p.extension().is_some_and(|x| x == "toml");
    let mut found: Vec<(Option<String>, std::path::PathBuf)> = Vec::new();
    for p in listing(dir)? {
        if is_toml(&p) {
            found.push((None, p));
        } else if p.is_dir() {
            let group = p.file_name().map(|n| n.to_string_lossy().into_owned());
            for q in listing(&p)?.into_iter().filter(|q| is_toml(q)) {
                found.push((group.clone(), q));
            }
        }
    }
    if found.is_empty() {
        return Err(EvalError::Empty(shown));
    }
    found
        .into_iter()
        .map(|(group, p)| {
            let name = p.display().to_string();
            let text =
                gpumeter_core::textfile::read_text(&p, gpumeter_core::textfile::MAX_TEXT_FILE)
                    .map_err(|e| EvalError::File(name.clone(), e))?;
            let s = Scenario::from_toml(&name, &text)?;
            if s.labels.is_none() {
                return Err(EvalError::Unlabelled(name));
            }
            Ok((group, s))
        })
        .collect()
}

/// Fast-forwards one timeline through the default rules and scores it against its labels.
pub fn run(scenario: Scenario) -> Outcome {
    run_with(scenario, &RulesConfig::default())
}

/// The same with these rule settings (a config file's `[alerts]` tables, to tune them on the
/// corpus). Runs the timeline through a [`Session`], as `watch` does: the rules, the billing
/// and autostop (on when the labels ask, with a stop command that is never run).
pub fn run_with(scenario: Scenario, rules: &RulesConfig) -> Outcome {
    let duration_s = scenario.labels.as_ref().map_or(0, |l| l.duration_s);
    let labels = scenario.labels.clone();
    let name = scenario.name.clone();
    let mut problems = Vec::new();
    let autostop = labels
        .as_ref()
        .and_then(|l| l.autostop.as_deref())
        .and_then(|text| match parse_duration(text) {
            Ok(d) => Some(i64::try_from(d.as_millis()).unwrap_or(i64::MAX)),
            Err(e) => {
                problems.push(format!("labels.autostop: {e}"));
                None
            }
        });
    let cfg = SessionConfig {
        pricing: pricing_of(&scenario),
        interval_ms: i64::try_from(STEP_MS).unwrap_or(1_000),
        // No channel leaves the process: no hooks or webhook, no `wall`, no terminal.
        alerts: AlertSettings {
            rules: rules.clone(),
            notify: NotifyConfig::default(),
            autostop: AutostopConfig {
                wall: false,
                ..AutostopConfig::default()
            },
            commands_file: None,
        },
        autostop_flags: AutostopFlags {
            after_ms: autostop,
            command: autostop.map(|_| vec!["true".to_string()]),
        },
        ..SessionConfig::default()
    };
    let mut session = match Session::new(cfg) {
        Ok(s) => s,
        Err(e) => {
            problems.push(format!("autostop: {e}"));
            let mut o = score(&name, labels.as_ref(), &[]);
            o.problems.extend(problems);
            return o;
        }
    };
    let mut sim = Simulator::new(scenario);
    let mut events: Vec<(f64, Event)> = Vec::new();
    let mut t_ms = 0;
    while t_ms <= duration_s * 1000 {
        let now = T0_MS + i64::try_from(t_ms).unwrap_or(i64::MAX);
        let step = session.ingest(sim.snapshot_at(t_ms, now));
        let t_s = t_ms as f64 / 1000.0;
        events.extend(
            step.transitions
                .into_iter()
                .map(|tr| (t_s, Event::Alert(tr))),
        );
        let cfg = session.autostop_config();
        events.extend(step.autostop.iter().map(|e| {
            let line = lines::autostop(e, cfg, now);
            (t_s, Event::Autostop(e.clone(), line))
        }));
        t_ms += STEP_MS;
    }
    let mut o = score(&name, labels.as_ref(), &events);
    o.problems.extend(problems);
    o
}

/// The scenario's price as the meter takes it, with its budget (the whole run's, as the demo
/// takes it), so a label on the budget's crossings is scored like any other.
fn pricing_of(scenario: &Scenario) -> Option<Pricing> {
    let p = scenario.pricing.as_ref()?;
    let amount = Money::from_micros(i64::try_from(p.rate_micros).unwrap_or(i64::MAX));
    let unit = match p.unit {
        RateUnit::InstanceHour => BillingUnit::InstanceHour,
        RateUnit::GpuHour => BillingUnit::GpuHour,
    };
    let mut pricing = Pricing::simple(Rate { amount, unit });
    pricing.budget = p.budget_micros.map(|micros| Budget {
        amount: Money::from_micros(i64::try_from(micros).unwrap_or(i64::MAX)),
        period: BudgetPeriod::Run,
    });
    Some(pricing)
}

/// Runs every timeline through the default rules.
pub fn run_corpus(dir: &Path) -> Result<Vec<Outcome>, EvalError> {
    run_corpus_with(dir, &RulesConfig::default())
}

/// Runs every timeline through these rule settings.
pub fn run_corpus_with(dir: &Path, rules: &RulesConfig) -> Result<Vec<Outcome>, EvalError> {
    let timelines = load_corpus(dir)?;
    // Each timeline is its own session: they run side by side, one thread per core, and come
    // back in the corpus's order.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = timelines.len().div_ceil(threads).max(1);
    let run_one = |(group, s): (Option<String>, Scenario)| {
        let mut o = run_with(s, rules);
        if let Some(g) = group {
            o.name = format!("{g}/{}", o.name);
        }
        o
    };
    let mut chunks: Vec<Vec<(Option<String>, Scenario)>> = Vec::new();
    let mut rest = timelines.into_iter().peekable();
    while rest.peek().is_some() {
        chunks.push(rest.by_ref().take(chunk).collect());
    }
    let outcomes = std::thread::scope(|scope| {
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|c| scope.spawn(move || c.into_iter().map(run_one).collect::<Vec<Outcome>>()))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect::<Vec<_>>()
    });
    Ok(outcomes.into_iter().flatten().collect())
}
