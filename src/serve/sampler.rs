//! The sampling side of `serve`, on its own thread and the [`Session`]'s only owner: source →
//! session (meter, ledger, rules, notify channels, autostop, as `watch` runs them) → a
//! rendered [`Published`] state, handed to the HTTP side through a `watch` channel. Rendering
//! is most of a tick's work (the scrape texts and the snapshot JSON), and scrapes come every
//! 15–60 s while readings come every second, so a tick only says it happened ([`Ticks`]); the
//! first request that finds the published state older wakes this thread ([`Wake::Render`])
//! between readings, and it renders once for that reading whoever else asks. The HTTP side
//! never waits on a reading in progress for long (see `http`), so slow or many clients cannot
//! delay a reading; a slow source delays only the next reading. Each step is printed as `watch` prints it
//! (alert and budget lines to stdout, notes to stderr: the journal, under systemd), and the
//! stop command runs when autostop asks.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::metrics::{self, MetricsOptions, Roster};
use super::published::{self, Published};
use gpumeter_core::clock::SharedClock;
use gpumeter_core::session::{Session, lines};
use gpumeter_core::source::Source;

/// What the sampler thread is woken for between readings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// A request found the published state older than the latest tick.
    Render,
    /// Serving ends: write the open ledger minute and return.
    Stop,
}

/// The sampler's tick count, shared with the HTTP side (which compares it with
/// [`Published::tick`]).
#[derive(Debug, Default)]
pub struct Ticks(AtomicU64);

impl Ticks {
    pub fn latest(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }

    fn set(&self, tick: u64) {
        self.0.store(tick, Ordering::Release);
    }
}

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
                lines::print_step(&self.session, &step, at, out, err)?;
            }
            Err(e) if e.is_final() => {
                self.ended = true;
                writeln!(err, "gpumeter: {e}; serving the last reading")?;
            }
            Err(e) => {
                self.errors += 1;
                let now = self.clock.now_unix_ms();
                let message = gpumeter_core::sanitize::sanitize(
                    &e.to_string(),
                    gpumeter_core::sanitize::MAX_COMMAND_CHARS,
                );
                self.session.source_failed(message, now, 0);
                // Said on the first failure and then once a minute-ish, not every interval.
                if self.errors % 60 == 1 {
                    writeln!(err, "gpumeter: {}: {e}", self.source.label())?;
                }
            }
        }
        Ok(())
    }

    fn publish(&self, tick: u64) -> Published {
        let engine = self.session.engine();
        let health = metrics::health(engine, self.errors);
        published::render(engine, &self.roster, &health, &self.opts, tick)
    }
}

/// Runs until [`Wake::Stop`] (or every sender is gone), counting ticks in `ticks` and
/// publishing to `tx` when a request asks ([`Wake::Render`]), at most once per tick; writes the
/// open ledger minute before returning.
pub fn run(
    setup: SamplerSetup,
    tx: watch::Sender<Arc<Published>>,
    ticks: &Ticks,
    wake: Receiver<Wake>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> std::io::Result<()> {
    let mut source = setup.source;
    // No screen: the GPU processes' stat at the trees' slower cadence (see `source::focus`).
    source.set_focus(gpumeter_core::source::focus::ProcessFocus::headless());
    let mut s = Sampler {
        source,
        clock: setup.clock,
        session: setup.session,
        roster: if setup.metrics.pods {
            Roster::with_pods()
        } else {
            Roster::default()
        },
        errors: 0,
        opts: setup.metrics,
        ended: false,
    };
    let mut tick = 0;
    let mut rendered = 0;
    'readings: loop {
        let started = Instant::now();
        // After a replay's end nothing changes: the last rendering stays current.
        let changes = !s.ended;
        s.tick(out, err)?;
        if changes {
            tick += 1;
            ticks.set(tick);
        }
        let next = started + setup.interval;
        loop {
            match wake.recv_timeout(next.saturating_duration_since(Instant::now())) {
                Ok(Wake::Render) => {
                    if rendered < tick {
                        tx.send_replace(Arc::new(s.publish(tick)));
                        rendered = tick;
                    }
                }
                Err(RecvTimeoutError::Timeout) => break,
                Ok(Wake::Stop) | Err(RecvTimeoutError::Disconnected) => break 'readings,
            }
        }
    }
    let last = s.session.finish();
    let now = s.clock.now_unix_ms();
    lines::print_step(&s.session, &last, now, out, err).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpumeter_core::clock::SystemClock;
    use gpumeter_core::session::SessionConfig;
    use gpumeter_core::source::SourceError;
    use gpumeter_model::Snapshot;

    /// Counts its readings.
    struct Counting(i64);

    impl Source for Counting {
        fn sample(&mut self) -> Result<Snapshot, SourceError> {
            self.0 += 1;
            Ok(Snapshot::empty("counting", 1_000 * self.0))
        }
        fn label(&self) -> String {
            "counting".into()
        }
    }

    fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !done() {
            assert!(Instant::now() < deadline, "never: {what}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// A sampler running on its thread, and its ends.
    struct Running {
        rx: watch::Receiver<Arc<Published>>,
        wake: std::sync::mpsc::Sender<Wake>,
        ticks: Arc<Ticks>,
        thread: std::thread::JoinHandle<std::io::Result<()>>,
    }

    /// A sampler on a counting source, reading every `interval`.
    fn start(interval: Duration) -> Running {
        let opts = MetricsOptions::default();
        let (tx, rx) = watch::channel(Arc::new(Published::starting(&opts)));
        let (wake_tx, wake_rx) = std::sync::mpsc::channel();
        let ticks = Arc::new(Ticks::default());
        let setup = SamplerSetup {
            source: Box::new(Counting(0)),
            clock: Arc::new(SystemClock),
            interval,
            session: Session::new(SessionConfig::default()).unwrap(),
            metrics: opts,
        };
        let sampler_ticks = Arc::clone(&ticks);
        let thread = std::thread::spawn(move || {
            run(
                setup,
                tx,
                &sampler_ticks,
                wake_rx,
                &mut std::io::sink(),
                &mut std::io::sink(),
            )
        });
        Running {
            rx,
            wake: wake_tx,
            ticks,
            thread,
        }
    }

    #[test]
    fn nothing_is_rendered_until_a_request_asks() {
        let Running {
            rx,
            wake,
            ticks,
            thread,
        } = start(Duration::from_millis(20));
        wait_until("three readings", || ticks.latest() >= 3);
        assert_eq!(rx.borrow().tick, 0, "nobody asked: nothing rendered");
        assert!(rx.borrow().snapshot.is_none());
        let want = ticks.latest();
        wake.send(Wake::Render).unwrap();
        wait_until("the render", || rx.borrow().tick >= want);
        assert!(
            rx.borrow().snapshot.is_some(),
            "the latest reading, rendered"
        );
        wake.send(Wake::Stop).unwrap();
        thread.join().unwrap().unwrap();
    }

    #[test]
    fn a_tick_is_rendered_once_however_many_ask() {
        // One reading, then a long wait in which only requests come.
        let Running {
            rx,
            wake,
            ticks,
            thread,
        } = start(Duration::from_secs(600));
        wait_until("the first reading", || ticks.latest() == 1);
        wake.send(Wake::Render).unwrap();
        wait_until("the render", || rx.borrow().tick == 1);
        let first = Arc::clone(&rx.borrow());
        for _ in 0..3 {
            wake.send(Wake::Render).unwrap();
        }
        wake.send(Wake::Stop).unwrap();
        thread.join().unwrap().unwrap();
        assert!(
            Arc::ptr_eq(&first, &rx.borrow()),
            "published once for the tick"
        );
    }
}
