//! `gpumeter watch`: the meter without a terminal UI. Runs source → engine (+ meter) → ledger,
//! printing one line per minute (spend, burn, busy GPUs) and each budget event. With `--fast`
//! (demo only) a fake clock is stepped by the interval as fast as the machine allows, so hours
//! of a scenario pass in seconds. Alerts are printed as they fire, and autostop (off unless
//! asked for) runs its stop command: see [`crate::notify::headless`].
//!
//! Stopping: `--for` ends it cleanly (last minute written). A signal or kill -9 loses at most the
//! minute in progress; the ledger is never left half-written.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use gpumeter_model::Snapshot;

use crate::billing::{BudgetEvent, BudgetEventKind, Pricing};
use crate::clock::{Clock, FakeClock, SharedClock};
use crate::engine::Engine;
use crate::ledger::FlushedMinute;
use crate::metering::Metering;
use crate::money::Money;
use crate::notify::headless::HeadlessAlerts;
use crate::source::Source;

/// How long to run and how fast.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchOptions {
    /// Stop after this long (clock time); `None` runs until killed.
    pub for_ms: Option<i64>,
    pub interval_ms: i64,
}

/// Real time, or a fake clock the loop steps itself (`--fast`; the source must read this clock).
#[derive(Clone)]
pub enum WatchClock {
    Real(SharedClock),
    Fast(FakeClock),
}

impl std::fmt::Debug for WatchClock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WatchClock::Real(_) => f.write_str("WatchClock::Real"),
            WatchClock::Fast(c) => write!(f, "WatchClock::Fast({})", c.now_unix_ms()),
        }
    }
}

impl WatchClock {
    fn now(&self) -> i64 {
        match self {
            WatchClock::Real(c) => c.now_unix_ms(),
            WatchClock::Fast(c) => c.now_unix_ms(),
        }
    }
}

/// Why watching stopped early.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error("--fast needs --demo: only a simulated machine can run faster than time")]
    FastNeedsDemo,
    #[error("writing output: {0}")]
    Write(#[from] std::io::Error),
}

/// What a run did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WatchSummary {
    pub ticks: u64,
    pub spent: Option<Money>,
    pub minutes_written: u64,
    pub events: Vec<BudgetEvent>,
    /// Alert ids that fired, in order.
    pub alerts_fired: Vec<String>,
}

/// Checks the flags: `--fast` only with a demo.
pub fn check_fast(fast: bool, demo: bool) -> Result<(), WatchError> {
    if fast && !demo {
        return Err(WatchError::FastNeedsDemo);
    }
    Ok(())
}

fn hhmm(unix_ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(unix_ms).map_or_else(
        || unix_ms.to_string(),
        |t| t.format("%Y-%m-%d %H:%MZ").to_string(),
    )
}

/// The state a run carries between ticks.
struct Run {
    engine: Engine,
    metering: Metering,
    last_minute: Option<i64>,
    summary: WatchSummary,
    alerts: HeadlessAlerts,
}

impl Run {
    fn tick(
        &mut self,
        snap: Snapshot,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> std::io::Result<()> {
        let at = snap.taken_at_unix_ms;
        let step = self.metering.ingest(&mut self.engine, snap);
        self.summary.ticks += 1;
        for e in &step.events {
            writeln!(out, "{}", self.event_line(e))?;
        }
        self.summary.events.extend(step.events.iter().cloned());
        self.alerts.after_tick(&mut self.engine, out, err)?;
        if let Some(m) = &step.flushed {
            self.minute_line(m, out)?;
        }
        for n in &step.notes {
            writeln!(err, "gpumeter: {n}")?;
        }
        if !self.metering.priced() {
            let minute = at.div_euclid(60_000);
            if self.last_minute.is_some_and(|m| m != minute) {
                let (busy, gpus) = self.busy_gpus();
                writeln!(
                    out,
                    "{}  busy {busy}/{gpus} GPUs  (no pricing: set --rate)",
                    hhmm(at)
                )?;
            }
            self.last_minute = Some(minute);
        }
        Ok(())
    }

    fn busy_gpus(&self) -> (usize, usize) {
        let Some(snap) = self.engine.latest() else {
            return (0, 0);
        };
        let busy = snap
            .gpus
            .iter()
            .filter(|g| g.util_gpu_pct.unwrap_or(0) > 5 || g.util_memory_pct.unwrap_or(0) > 5)
            .count();
        (busy, snap.gpus.len())
    }

    fn minute_line(&mut self, m: &FlushedMinute, out: &mut dyn Write) -> std::io::Result<()> {
        self.summary.minutes_written += u64::from(m.written);
        let Some(view) = self.engine.billing() else {
            return Ok(());
        };
        let c = view.currency;
        let idle = view
            .idle_share
            .map_or("N/A".into(), |s| format!("{:.0}%", s * 100.0));
        writeln!(
            out,
            "{}  spent {}  burn {}/h  busy {}/{} GPUs  idle {} of spend",
            hhmm(m.minute * 60_000),
            c.format(Money::from_micros(m.total.spend_micros)),
            c.format(view.burn_per_hour),
            view.busy_gpus,
            view.gpus,
            idle
        )
    }

    fn event_line(&self, e: &BudgetEvent) -> String {
        let c = self
            .engine
            .billing()
            .map(|v| v.currency)
            .unwrap_or_default();
        match e.kind {
            BudgetEventKind::Actual => format!(
                "{}  budget: {}% of the {} {} budget reached ({} spent)",
                hhmm(e.at_unix_ms),
                e.threshold,
                c.format(e.budget),
                e.period,
                c.format(e.spent)
            ),
            BudgetEventKind::Forecast => format!(
                "{}  budget: at this rate the {} will end at {}, over the {} budget",
                hhmm(e.at_unix_ms),
                e.period,
                c.format(e.spent),
                c.format(e.budget)
            ),
        }
    }
}

/// Runs the headless meter until `opts.for_ms` has passed on `clock` (or forever).
/// `ledger_path` None runs without a ledger. Minute lines and events go to `out`, notes and
/// warnings to `err`.
pub fn run_watch(
    source: &mut dyn Source,
    clock: &WatchClock,
    pricing: Option<&Pricing>,
    ledger_path: Option<&Path>,
    opts: WatchOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<WatchSummary, WatchError> {
    let alerts = HeadlessAlerts::default();
    run_watch_with(source, clock, pricing, ledger_path, opts, alerts, out, err)
}

/// [`run_watch`] with alert rules, autostop and notification channels configured.
#[allow(clippy::too_many_arguments)]
pub fn run_watch_with(
    source: &mut dyn Source,
    clock: &WatchClock,
    pricing: Option<&Pricing>,
    ledger_path: Option<&Path>,
    opts: WatchOptions,
    alerts: HeadlessAlerts,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<WatchSummary, WatchError> {
    let interval_ms = opts.interval_ms.max(1);
    if pricing.is_none() {
        writeln!(
            err,
            "gpumeter: no pricing configured (pricing.rate or --rate): no spend to count"
        )?;
    }
    let mut run = Run {
        engine: alerts.engine(),
        metering: Metering::new(
            pricing.cloned(),
            ledger_path.map(Path::to_path_buf),
            interval_ms,
        ),
        last_minute: None,
        summary: WatchSummary::default(),
        alerts,
    };
    let end = opts.for_ms.map(|d| clock.now().saturating_add(d));
    loop {
        let started = std::time::Instant::now();
        let now = clock.now();
        if end.is_some_and(|e| now > e) {
            break;
        }
        match source.sample() {
            Ok(snap) => run.tick(snap, out, err)?,
            Err(e) => {
                run.engine.source_failed(e.to_string(), now, 0);
                writeln!(err, "gpumeter: {}: {e}", source.label())?;
            }
        }
        match clock {
            WatchClock::Fast(fake) => fake.advance_ms(interval_ms),
            WatchClock::Real(_) => {
                let wait = Duration::from_millis(u64::try_from(interval_ms).unwrap_or(0));
                std::thread::sleep(wait.saturating_sub(started.elapsed()));
            }
        }
    }
    let last = run.metering.finish();
    if let Some(m) = &last.flushed {
        run.minute_line(m, out)?;
    }
    for n in &last.notes {
        writeln!(err, "gpumeter: {n}")?;
    }
    run.summary.spent = run.engine.billing().map(|v| v.spent);
    run.summary.alerts_fired = std::mem::take(&mut run.alerts.fired);
    if let Some(v) = run.engine.billing() {
        writeln!(
            out,
            "total: spent {} over {:.2} paid hours, {:.2} busy GPU-hours, {} per busy GPU-hour",
            v.currency.format(v.spent),
            v.paid_ms as f64 / 3_600_000.0,
            v.busy_gpu_hours,
            v.cost_per_busy_gpu_hour
                .map_or("N/A".into(), |m| v.currency.format(m))
        )?;
    }
    Ok(run.summary)
}
