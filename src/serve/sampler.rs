//! The sampling side of `serve`, on its own thread and the [`Session`]'s only owner: source →
//! session (meter, ledger, rules, notify channels, autostop, as `watch` runs them) → one
//! rendered [`Published`] state per tick, handed to the HTTP side through a `watch` channel.
//! The HTTP side never calls into this thread, so slow or many clients cannot delay a reading;
//! a slow source delays only the next reading. Each step is printed as `watch` prints it
//! (alert and budget lines to stdout, notes to stderr: the journal, under systemd), and the
//! stop command runs when autostop asks.

use std::io::Write;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::metrics::{self, MetricsOptions, Roster};
use super::published::{self, Published};
use crate::clock::SharedClock;
use crate::engine::rules::AlertKind;
use crate::session::{Session, Step};
use crate::source::Source;
use crate::watch::lines;

/// What the sampler runs with.
pub struct SamplerSetup {
    pub source: Box<dyn Source>,
    pub clock: SharedClock,
    pub interval: Duration,
    pub session: Session,
    pub metrics: MetricsOptions,
}

/// The sampler's state between ticks.
struct Sampler {
    source: Box<dyn Source>,
    clock: SharedClock,
    session: Session,
    roster: Roster,
    errors: u64,
    opts: MetricsOptions,
    /// A replay reached its end: the last state stays served, nothing more is read.
    ended: bool,
}

impl Sampler {
    fn tick(&mut self, out: &mut dyn Write, err: &mut dyn Write) -> std::io::Result<()> {
        if self.ended {
            return Ok(());
        }
        match self.source.sample() {
            Ok(snap) => {
                let at = snap.taken_at_unix_ms;
                self.roster.observe(&snap);
                let step = self.session.ingest(snap);
                self.show(&step, at, out, err)?;
            }
            Err(e) if e.is_final() => {
                self.ended = true;
                writeln!(err, "gpumeter: {e}; serving the last reading")?;
            }
            Err(e) => {
                self.errors += 1;
                let now = self.clock.now_unix_ms();
                let message =
                    crate::sanitize::sanitize(&e.to_string(), crate::sanitize::MAX_COMMAND_CHARS);
                self.session.source_failed(message, now, 0);
                // Said on the first failure and then once a minute-ish, not every interval.
                if self.errors % 60 == 1 {
                    writeln!(err, "gpumeter: {}: {e}", self.source.label())?;
                }
            }
        }
        Ok(())
    }

    /// Prints a step the way `watch` does; runs the stop command when autostop asks.
    fn show(
        &self,
        step: &Step,
        now: i64,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> std::io::Result<()> {
        for e in &step.budget {
            writeln!(out, "{}", lines::budget(e, self.session.currency()))?;
        }
        for t in step
            .transitions
            .iter()
            .filter(|t| t.alert().kind != AlertKind::Budget)
        {
            lines::transition(out, t, now)?;
        }
        let cfg = self.session.autostop_config();
        for e in &step.autostop {
            writeln!(out, "{}", lines::autostop(e, cfg, now))?;
        }
        if let (Some(m), Some(view)) = (&step.flushed, self.session.engine().billing()) {
            writeln!(out, "{}", lines::minute(m, view))?;
        }
        for n in &step.notes {
            writeln!(err, "gpumeter: {n}")?;
        }
        if let Some(argv) = &step.stop {
            out.flush()?;
            if let Err(e) = crate::session::run_stop(argv, true) {
                writeln!(err, "gpumeter: autostop: {e}")?;
            }
        }
        Ok(())
    }

    fn publish(&self) -> Published {
        let engine = self.session.engine();
        let health = metrics::health(engine, self.errors);
        published::render(engine, &self.roster, &health, &self.opts)
    }
}

/// Runs until `stop` says so (or its sender is gone), publishing each tick to `tx`; writes the
/// open ledger minute before returning.
pub fn run(
    setup: SamplerSetup,
    tx: watch::Sender<Arc<Published>>,
    stop: Receiver<()>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> std::io::Result<()> {
    let mut s = Sampler {
        source: setup.source,
        clock: setup.clock,
        session: setup.session,
        roster: Roster::default(),
        errors: 0,
        opts: setup.metrics,
        ended: false,
    };
    loop {
        let started = Instant::now();
        s.tick(out, err)?;
        tx.send_replace(Arc::new(s.publish()));
        let wait = setup.interval.saturating_sub(started.elapsed());
        match stop.recv_timeout(wait) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    let last = s.session.finish();
    let now = s.clock.now_unix_ms();
    s.show(&last, now, out, err)
}
