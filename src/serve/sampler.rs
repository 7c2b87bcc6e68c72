//! The sampling side of `serve`, on its own thread: source → engine (+ meter, ledger, rules,
//! notify channels, autostop, as `watch` runs them) → one rendered [`Published`] state per tick,
//! handed to the HTTP side through a `watch` channel. The HTTP side never calls into this
//! thread, so slow or many clients cannot delay a reading; a slow source delays only the next
//! reading. Alert lines go to stdout, notes to stderr (the journal, under systemd).

use std::io::Write;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::metrics::{self, MetricsOptions, Roster};
use super::published::{self, Published};
use crate::billing::Pricing;
use crate::clock::SharedClock;
use crate::engine::Engine;
use crate::metering::Metering;
use crate::notify::headless::HeadlessAlerts;
use crate::source::Source;

/// What the sampler runs with.
pub struct SamplerSetup {
    pub source: Box<dyn Source>,
    pub clock: SharedClock,
    pub interval: Duration,
    pub pricing: Option<Pricing>,
    pub ledger: Option<std::path::PathBuf>,
    pub alerts: HeadlessAlerts,
    pub metrics: MetricsOptions,
}

/// The sampler's state between ticks.
struct Sampler {
    source: Box<dyn Source>,
    clock: SharedClock,
    engine: Engine,
    metering: Metering,
    alerts: HeadlessAlerts,
    roster: Roster,
    errors: u64,
    opts: MetricsOptions,
}

impl Sampler {
    fn tick(&mut self, out: &mut dyn Write, err: &mut dyn Write) -> std::io::Result<()> {
        match self.source.sample() {
            Ok(snap) => {
                self.roster.observe(&snap);
                let step = self.metering.ingest(&mut self.engine, snap);
                self.alerts.after_tick(&mut self.engine, out, err)?;
                for n in &step.notes {
                    writeln!(err, "gpumeter: {n}")?;
                }
            }
            Err(e) => {
                self.errors += 1;
                let now = self.clock.now_unix_ms();
                self.engine.source_failed(e.to_string(), now, 0);
                // Said once per failing stretch, not once per interval.
                if self.errors == 1 || self.engine.ticks() > 0 && self.errors % 60 == 1 {
                    writeln!(err, "gpumeter: {}: {e}", self.source.label())?;
                }
            }
        }
        Ok(())
    }

    fn publish(&self) -> Published {
        let health = metrics::health(&self.engine, self.errors);
        published::render(&self.engine, &self.roster, &health, &self.opts)
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
    let interval_ms = i64::try_from(setup.interval.as_millis()).unwrap_or(i64::MAX);
    let mut s = Sampler {
        engine: setup.alerts.engine(),
        metering: Metering::new(setup.pricing, setup.ledger, interval_ms),
        source: setup.source,
        clock: setup.clock,
        alerts: setup.alerts,
        roster: Roster::default(),
        errors: 0,
        opts: setup.metrics,
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
    let last = s.metering.finish();
    for n in &last.notes {
        writeln!(err, "gpumeter: {n}")?;
    }
    Ok(())
}
