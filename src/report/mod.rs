//! `gpumeter report`: spend per UTC day and per session from the ledger, as a table with a bar
//! chart, JSON or CSV. Reads the ledger only (never changes it). A missing or empty ledger is an
//! empty report (a fresh machine that never ran a priced session); an unusable one is an error
//! with a clear message. Takes its own [`ReportOptions`], not the command line's.

pub mod render;

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use gpumeter_core::billing::calendar::day_key;
use gpumeter_core::billing::meter::MJ_PER_KWH;
use gpumeter_core::billing::per_busy_gpu_hour;
use gpumeter_core::billing::pricing::HOUR_MS;
use gpumeter_core::ledger::query::Usage;
use gpumeter_core::ledger::{Ledger, LedgerError};
use gpumeter_core::money::Money;

/// Why the report could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    #[error("writing the report: {0}")]
    Write(#[from] std::io::Error),
    #[error("--since: {0}")]
    Since(String),
}

/// How to print the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReportFormat {
    #[default]
    Table,
    Json,
    Csv,
}

/// What to report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportOptions {
    /// How far back from now.
    pub since: Duration,
    pub format: ReportFormat,
}

/// One line of the report (a day or a session). Money comes as a number in currency units and
/// exactly in micro-units.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReportRow {
    /// `2026-05-01` for a day; the session number for a session.
    pub key: String,
    pub currency: String,
    pub paid_hours: f64,
    pub busy_gpu_hours: f64,
    pub idle_gpu_hours: f64,
    pub idle_cost: f64,
    pub idle_cost_micros: i64,
    /// Reserved for the starved-GPU rule (insights); null until it lands.
    pub starved_hours: Option<f64>,
    pub spend: f64,
    pub spend_micros: i64,
    pub cost_per_busy_gpu_hour: Option<f64>,
    pub energy_kwh: Option<f64>,
    pub egress_gb: f64,
}

/// A session's identity beside its sums.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionInfo {
    pub host: String,
    pub source: String,
    pub pricing: String,
    pub start_unix_ms: i64,
    pub last_unix_ms: i64,
    #[serde(flatten)]
    pub row: ReportRow,
}

/// The whole report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub ledger: String,
    pub since_unix_ms: i64,
    pub until_unix_ms: i64,
    pub days: Vec<ReportRow>,
    pub sessions: Vec<SessionInfo>,
    /// Whether the ledger held anything at all (false: missing or empty file), so the table can
    /// tell "never recorded" from "nothing in this period".
    #[serde(skip)]
    pub recorded: bool,
}

fn row(key: String, currency: &str, u: &Usage) -> ReportRow {
    let hours = |ms: i64| ms as f64 / HOUR_MS as f64;
    let money = |micros: i64| Money::from_micros(micros).as_units_f64();
    ReportRow {
        key,
        currency: currency.to_string(),
        paid_hours: hours(u.paid_ms),
        busy_gpu_hours: hours(u.busy_gpu_ms),
        idle_gpu_hours: hours((u.gpu_ms - u.busy_gpu_ms).max(0)),
        idle_cost: money(u.idle_cost_micros),
        idle_cost_micros: u.idle_cost_micros,
        starved_hours: None,
        spend: money(u.spend_micros),
        spend_micros: u.spend_micros,
        cost_per_busy_gpu_hour: per_busy_gpu_hour(
            Money::from_micros(u.spend_micros),
            u.paid_ms,
            u.observed_ms,
            u.busy_gpu_ms,
        )
        .map(Money::as_units_f64),
        energy_kwh: u.energy_mj.map(|mj| mj as f64 / MJ_PER_KWH as f64),
        egress_gb: u.egress_bytes as f64 / 1e9,
    }
}

/// Builds the report for minutes since `since_unix_ms`.
pub fn build(ledger: &Ledger, since_unix_ms: i64, now_unix_ms: i64) -> Result<Report, ReportError> {
    let days = ledger
        .days_since(since_unix_ms)?
        .iter()
        .map(|d| row(day_key(d.day), &d.currency, &d.usage))
        .collect();
    let sessions = ledger
        .sessions_since(since_unix_ms)?
        .iter()
        .map(|s| SessionInfo {
            host: s.host.clone(),
            source: s.source.clone(),
            pricing: s.pricing.clone(),
            start_unix_ms: s.start_ms,
            last_unix_ms: s.last_ms,
            row: row(s.id.to_string(), &s.currency, &s.usage),
        })
        .collect();
    Ok(Report {
        ledger: ledger.path().display().to_string(),
        since_unix_ms,
        until_unix_ms: now_unix_ms,
        days,
        sessions,
        recorded: true,
    })
}

/// The report of a ledger that does not exist yet, or exists but is empty.
pub fn empty(ledger_path: &Path, since_unix_ms: i64, now_unix_ms: i64) -> Report {
    Report {
        ledger: ledger_path.display().to_string(),
        since_unix_ms,
        until_unix_ms: now_unix_ms,
        days: Vec::new(),
        sessions: Vec::new(),
        recorded: false,
    }
}

/// Whether the file is absent or has no bytes: nothing was ever recorded there.
fn never_written(path: &Path) -> bool {
    match std::fs::metadata(path) {
        Ok(m) => m.is_file() && m.len() == 0,
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    }
}

/// `gpumeter report`: reads the ledger at `ledger_path` and writes the report to `out`.
pub fn run_report(
    opts: &ReportOptions,
    ledger_path: &Path,
    now_unix_ms: i64,
    out: &mut dyn Write,
) -> Result<(), ReportError> {
    let since_ms =
        i64::try_from(opts.since.as_millis()).map_err(|_| ReportError::Since("too long".into()))?;
    let since_unix_ms = now_unix_ms.saturating_sub(since_ms);
    let report = if never_written(ledger_path) {
        empty(ledger_path, since_unix_ms, now_unix_ms)
    } else {
        build(
            &Ledger::open_read_only(ledger_path)?,
            since_unix_ms,
            now_unix_ms,
        )?
    };
    let text = match opts.format {
        ReportFormat::Json => render::json(&report),
        ReportFormat::Csv => render::csv(&report),
        ReportFormat::Table => render::table(&report),
    };
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}
