//! `gpumeter watch`: the meter without a terminal UI. Feeds each reading of the source to a
//! [`gpumeter_core::session::Session`] (engine, meter, ledger, alerts, autostop) and prints what
//! the step says: a line per minute (spend, burn, busy GPUs), each budget crossing and alert as
//! it happens, and autostop's events; the stop command's output follows ours (the journal,
//! under systemd). With `--fast` (a demo or a replay) a fake clock is stepped by the interval
//! as fast as the machine allows, so hours of a scenario pass in seconds.
//!
//! A thin front-end: the session does the per-tick work; this room prints each [`Step`] with
//! the core's printer ([`gpumeter_core::session::lines`]), which runs the stop command when a
//! step asks, and keeps the run's summary.
//!
//! Stopping: `--for` ends it cleanly (last minute written). A signal or kill -9 loses at most the
//! minute in progress; the ledger is never left half-written.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use gpumeter_model::Snapshot;

use gpumeter_core::billing::{BudgetEvent, Pricing};
use gpumeter_core::clock::{Clock, FakeClock, SharedClock};
use gpumeter_core::engine::rules::Transition;
use gpumeter_core::money::Money;
use gpumeter_core::session::{AutostopSetupError, Session, SessionConfig, Step, lines};
use gpumeter_core::source::Source;
use gpumeter_core::source::focus::ProcessFocus;

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
    #[error(
        "--fast needs --demo (or --replay): only a simulated or recorded machine can run faster than time"
    )]
    FastNeedsDemo,
    #[error(transparent)]
    Autostop(#[from] AutostopSetupError),
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
    /// Stop commands run and how they ended.
    pub stops: Vec<Result<(), String>>,
}

/// Checks the flags: `--fast` only with a demo.
pub fn check_fast(fast: bool, demo: bool) -> Result<(), WatchError> {
    if fast && !demo {
        return Err(WatchError::FastNeedsDemo);
    }
    Ok(())
}

/// The state a run carries between ticks.
struct Run {
    session: Session,
    last_minute: Option<i64>,
    summary: WatchSummary,
}

impl Run {
    fn tick(
        &mut self,
        snap: Snapshot,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> std::io::Result<()> {
        let at = snap.taken_at_unix_ms;
        let step = self.session.ingest(snap);
        self.summary.ticks += 1;
        self.show(&step, at, out, err)?;
        if !self.session.priced() {
            let minute = at.div_euclid(60_000);
            if self.last_minute.is_some_and(|m| m != minute) {
                let (busy, gpus) = self.busy_gpus();
                writeln!(
                    out,
                    "{}  busy {busy}/{gpus} GPUs  (no pricing: set --rate)",
                    lines::at(at)
                )?;
            }
            self.last_minute = Some(minute);
        }
        Ok(())
    }

    /// Prints what one step says (the core's printer, which also runs the stop command when
    /// autostop asks for it) and keeps the run's summary.
    fn show(
        &mut self,
        step: &Step,
        now: i64,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> std::io::Result<()> {
        self.summary.events.extend(step.budget.iter().cloned());
        for t in &step.transitions {
            if let Transition::Fired(a) = t {
                self.summary.alerts_fired.push(a.id.clone());
            }
        }
        if let Some(m) = &step.flushed {
            self.summary.minutes_written += u64::from(m.written);
        }
        if let Some(result) = lines::print_step(&self.session, step, now, out, err)? {
            self.summary.stops.push(result);
        }
        Ok(())
    }

    fn busy_gpus(&self) -> (usize, usize) {
        let Some(snap) = self.session.engine().latest() else {
            return (0, 0);
        };
        let busy = snap
            .gpus
            .iter()
            .filter(|g| gpumeter_core::billing::meter::gpu_busy(g))
            .count();
        (busy, snap.gpus.len())
    }
}

/// Runs the headless meter until `opts.for_ms` has passed on `clock` (or forever), with the
/// default alert rules and no autostop. `ledger_path` None runs without a ledger. Minute lines
/// and events go to `out`, notes and warnings to `err`.
pub fn run_watch(
    source: &mut dyn Source,
    clock: &WatchClock,
    pricing: Option<&Pricing>,
    ledger_path: Option<&Path>,
    opts: WatchOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<WatchSummary, WatchError> {
    let cfg = SessionConfig {
        pricing: pricing.cloned(),
        ledger_path: ledger_path.map(Path::to_path_buf),
        ..SessionConfig::default()
    };
    run_watch_with(source, clock, cfg, opts, out, err)
}

/// [`run_watch`] with the session configured in full (alert rules, channels, autostop). The
/// terminal channels are forced off: there is no terminal to ring. `cfg.interval_ms` is taken
/// from `opts`.
pub fn run_watch_with(
    source: &mut dyn Source,
    clock: &WatchClock,
    cfg: SessionConfig,
    opts: WatchOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<WatchSummary, WatchError> {
    let interval_ms = opts.interval_ms.max(1);
    // Nothing shows a process every second here: the GPU processes' stat at the trees'
    // slower cadence (their CPU % stays exact, each over its own read interval).
    source.set_focus(ProcessFocus::headless());
    if cfg.pricing.is_none() {
        writeln!(
            err,
            "gpumeter: no pricing configured (pricing.rate or --rate): no spend to count"
        )?;
    }
    let session = Session::new(SessionConfig {
        interval_ms,
        terminal_channels: false,
        ledger_lockstep: matches!(clock, WatchClock::Fast(_)),
        ..cfg
    })?;
    let mut run = Run {
        session,
        last_minute: None,
        summary: WatchSummary::default(),
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
            // A replay that reached its end: the run is over.
            Err(e) if e.is_final() => {
                writeln!(err, "gpumeter: {e}")?;
                break;
            }
            Err(e) => {
                run.session.source_failed(e.to_string(), now, 0);
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
    let last = run.session.finish();
    run.show(&last, clock.now(), out, err)?;
    let billing = run.session.engine().billing();
    run.summary.spent = billing.map(|v| v.spent);
    if let Some(v) = billing {
        writeln!(out, "{}", lines::total(v))?;
    }
    Ok(run.summary)
}

#[cfg(test)]
mod tests;
