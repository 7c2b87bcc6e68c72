//! The session core: the one heart of a metering run, behind every front-end (the dashboard,
//! `gpumeter watch`, and `gpumeter serve`). A [`Session`] owns the [`Engine`] (history, rules,
//! autostop), the billing session ([`metering`]: meter + ledger), the alert fan-out to the
//! notification channels (`fanout.rs`) and the autostop guard ([`autostop`]). No terminal, HTTP
//! or clap code here.
//!
//! One call per reading: [`Session::ingest`] takes a snapshot and returns a [`Step`]: the budget
//! crossings, the alert transitions, the autostop events (with "run the stop command now" as
//! [`Step::stop`]), notes and warnings, the bytes for the terminal channels, and the minute the
//! ledger closed. A front-end only shows the step and draws from [`Session::engine`] (`&`
//! access: latest snapshot, history, billing view, active alerts). The user's actions come in
//! as calls ([`Session::acknowledge`], [`Session::snooze`], [`Session::cancel_autostop`]), and
//! [`Session::finish`] writes the open minute at the end. [`lines`] prints a step as text (the
//! one printer of `watch` and `serve`). Running the stop command is the front-end's: the
//! dashboard first gives the terminal back.
//!
//! `serve` owns its session on the sampler thread; when a request asks, the thread renders what
//! the handlers serve from `&` access to the engine and hands it over a `tokio::sync::watch`
//! channel, so a slow client never holds the session. No action comes back over HTTP.
//!
//! May touch: engine, billing, ledger, notify, config's resolved alert settings. The front-ends
//! are in another crate and cannot be named here.

pub mod autostop;
mod fanout;
pub mod lines;
pub mod metering;

use std::path::PathBuf;

use gpumeter_model::Snapshot;

use crate::billing::{BudgetEvent, Pricing};
use crate::config::AlertSettings;
use crate::engine::Engine;
use crate::engine::autostop::{AutostopConfig, AutostopEvent};
use crate::engine::rules::Transition;
use crate::ledger::FlushedMinute;
use crate::money::Currency;
use crate::notify::Notifier;

pub use autostop::{AutostopFlags, AutostopSetupError, Refusal};
pub use metering::Metering;

/// The reading interval of the live front-ends when none is given; `gpumeter eval` runs the
/// rules at the same interval, so a verdict there is the verdict live.
pub const DEFAULT_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

/// Longest the stop command may run before it is killed.
pub const STOP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// What a session runs with: prices, ledger, alert settings, and how the front-end differs.
#[derive(Debug, Clone, Default)]
pub struct SessionConfig {
    /// `None`: nothing is metered (no money shown).
    pub pricing: Option<Pricing>,
    /// The spend ledger; `None` runs without one.
    pub ledger_path: Option<PathBuf>,
    /// The sampling interval (a gap over ten of them is not billed as observed time).
    pub interval_ms: i64,
    /// Rules, notification channels and autostop (`[alerts]`, `[autostop]`).
    pub alerts: AlertSettings,
    /// Command-line autostop overrides (`watch --autostop --stop-cmd`).
    pub autostop_flags: AutostopFlags,
    /// What a refused autostop means for this front-end.
    pub autostop_refusal: Refusal,
    /// Whether the bell and OSC desktop notifications may ring (a terminal is attached).
    pub terminal_channels: bool,
    /// Wrap terminal sequences for tmux (`$TMUX` set).
    pub in_tmux: bool,
    /// The clock is simulated (`watch --fast`): each minute waits until it is on disk, so
    /// simulated days cannot outrun the disk and a printed minute is a written one. Real-time
    /// front-ends leave this off: their ticks never wait on the disk.
    pub ledger_lockstep: bool,
}

/// What one call produced, for the front-end to show.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Step {
    /// Budget crossings, oldest first (they are also among [`Step::transitions`] as alerts).
    pub budget: Vec<BudgetEvent>,
    /// Alert transitions (fired, reminded, updated, cleared), oldest first.
    pub transitions: Vec<Transition>,
    /// Autostop events, oldest first.
    pub autostop: Vec<AutostopEvent>,
    /// Autostop says: run this command now (argv, no shell).
    pub stop: Option<Vec<String>>,
    /// Lines worth telling the user (ledger notes and warnings, refused hooks, …), in order.
    pub notes: Vec<String>,
    /// Bytes for the terminal channels (bell, OSC 9/777), to write between frames.
    pub terminal: Vec<u8>,
    /// The minute the ledger closed in this step, if any.
    pub flushed: Option<FlushedMinute>,
}

/// One metering run. See the module docs.
#[derive(Debug)]
pub struct Session {
    engine: Engine,
    metering: Metering,
    notifier: Notifier,
    currency: Currency,
    /// Notes from setup, handed out with the first step.
    pending_notes: Vec<String>,
}

impl Session {
    /// A session for `cfg`. Fails only when autostop is refused under [`Refusal::Fail`].
    pub fn new(cfg: SessionConfig) -> Result<Session, AutostopSetupError> {
        let (autostop, note) =
            autostop::resolve_with(&cfg.alerts, &cfg.autostop_flags, cfg.autostop_refusal)?;
        let mut notify = cfg.alerts.notify.clone();
        if !cfg.terminal_channels {
            notify.bell = false;
            notify.desktop = false;
        }
        let notifier = Notifier::new(notify, cfg.alerts.commands_file.as_deref(), cfg.in_tmux);
        let currency = cfg.pricing.as_ref().map(|p| p.currency).unwrap_or_default();
        let engine = Engine::new()
            .with_rules(cfg.alerts.rules.clone())
            .with_autostop(autostop);
        Ok(Session {
            engine,
            metering: Metering::new(cfg.pricing, cfg.ledger_path, cfg.interval_ms)
                .lockstep(cfg.ledger_lockstep),
            notifier,
            currency,
            pending_notes: note.into_iter().collect(),
        })
    }

    /// The engine, for drawing: latest snapshot, history, billing view, alerts, autostop.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The currency money is shown in.
    pub fn currency(&self) -> Currency {
        self.currency
    }

    /// Whether pricing is configured (money will be shown).
    pub fn priced(&self) -> bool {
        self.metering.priced()
    }

    /// Whether minutes reach the disk.
    pub fn writes_ledger(&self) -> bool {
        self.metering.writes_ledger()
    }

    /// The autostop settings the session runs with (after the guard).
    pub fn autostop_config(&self) -> &AutostopConfig {
        self.engine.autostop_config()
    }

    /// One reading: metered, ledgered, through the rules and autostop, fanned out.
    pub fn ingest(&mut self, snap: Snapshot) -> Step {
        let meter = self.metering.ingest(&mut self.engine, snap);
        let mut step = Step {
            budget: meter.events,
            notes: std::mem::take(&mut self.pending_notes),
            flushed: meter.flushed,
            ..Step::default()
        };
        step.notes.extend(meter.notes);
        fanout::pump(&mut self.notifier, &mut self.engine, &mut step);
        let now = self.engine.latest().map_or(0, |s| s.taken_at_unix_ms);
        self.metering.log_alerts(&step.transitions, now);
        step
    }

    /// The source failed as a whole (the last good reading stays); `message` is shown as is,
    /// so sanitize it first when it came from outside.
    pub fn source_failed(&mut self, message: String, now_unix_ms: i64, retry_in_ms: u64) {
        self.engine.source_failed(message, now_unix_ms, retry_in_ms);
    }

    /// Hides one alert by id for `for_ms`; whether it stood.
    pub fn snooze(&mut self, id: &str, for_ms: i64, now_unix_ms: i64) -> bool {
        self.engine
            .snooze(id, now_unix_ms.saturating_add(for_ms), now_unix_ms)
    }

    /// Dismisses one alert by id; whether it stood.
    pub fn acknowledge(&mut self, id: &str, now_unix_ms: i64) -> bool {
        self.engine.acknowledge(id, now_unix_ms)
    }

    /// Someone is here: the autostop countdown starts over (a warned one says "cancelled").
    pub fn cancel_autostop(&mut self, now_unix_ms: i64) -> Step {
        self.engine.cancel_autostop(now_unix_ms);
        let mut step = Step::default();
        fanout::pump(&mut self.notifier, &mut self.engine, &mut step);
        step
    }

    /// The engine, once the run is over (its open minute written): for fixtures that draw it.
    pub fn into_engine(mut self) -> Engine {
        self.finish();
        self.engine
    }

    /// Writes the open minute (at exit; harmless to call twice).
    pub fn finish(&mut self) -> Step {
        let meter = self.metering.finish();
        let mut step = Step {
            notes: meter.notes,
            flushed: meter.flushed,
            ..Step::default()
        };
        step.notes.extend(self.notifier.drain_notes());
        step
    }
}

/// Runs the autostop command (argv, no shell, [`STOP_TIMEOUT`]); its output goes to ours when
/// `inherit_output`. The error says what went wrong.
pub fn run_stop(argv: &[String], inherit_output: bool) -> Result<(), String> {
    crate::notify::run_stop_command(argv, inherit_output, STOP_TIMEOUT).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests;
