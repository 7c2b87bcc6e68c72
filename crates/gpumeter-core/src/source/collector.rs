//! Runs a [`Source`] on its own OS thread and sends what it reads over a channel. NVML calls can
//! block (a hung driver, a 500 ms call); on their own thread they delay only the next snapshot,
//! never the dashboard's key handling. A source that fails as a whole is retried with
//! exponential backoff, and each failure is reported so the screen can say so.
//!
//! [`spawn_opening`] also opens the source on that thread: `nvmlInit` can take seconds on a
//! sick or cold driver, and the dashboard paints (and says it is waiting) meanwhile.

use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use gpumeter_model::Snapshot;
use tokio::sync::mpsc::Sender;

use super::Source;

/// What the collector tells the state owner.
#[derive(Debug, Clone)]
pub enum CollectorEvent {
    /// Boxed: a snapshot is large and the failure variant small.
    Snapshot(Box<Snapshot>),
    /// Taking a reading failed as a whole; the collector retries after a backoff.
    SourceFailed {
        /// Why (sanitized, at most 200 characters).
        message: String,
        /// Milliseconds until the next try.
        retry_in_ms: u64,
    },
    /// What the first reading waits for (the source is still opening), until it comes.
    Waiting(String),
    /// The source could not be opened at all (sanitized): nothing will come.
    OpenFailed(String),
}

/// How opening the source on the collector thread went, as far as [`Opening::wait`] saw.
#[derive(Debug)]
pub enum Opened<E> {
    /// Open and sampling; its label.
    Ready(String),
    /// It failed (also sent as [`CollectorEvent::OpenFailed`], for a screen already up).
    Failed(E),
    /// Still opening after the wait.
    Pending,
    /// The thread ended without a word (it panicked).
    Gone,
}

/// The caller's end of [`spawn_opening`].
#[derive(Debug)]
pub struct Opening<E> {
    rx: std::sync::mpsc::Receiver<Result<String, E>>,
}

impl<E> Opening<E> {
    /// Waits up to `limit` for the open to finish.
    pub fn wait(&self, limit: Duration) -> Opened<E> {
        use std::sync::mpsc::RecvTimeoutError;
        match self.rx.recv_timeout(limit) {
            Ok(Ok(label)) => Opened::Ready(label),
            Ok(Err(e)) => Opened::Failed(e),
            Err(RecvTimeoutError::Timeout) => Opened::Pending,
            Err(RecvTimeoutError::Disconnected) => Opened::Gone,
        }
    }
}

/// Retry delays after whole-source failures: 1 s, 2 s, 4 s … capped, reset by a success.
#[derive(Debug, Clone)]
pub struct Backoff {
    initial: Duration,
    max: Duration,
    next: Duration,
}

impl Backoff {
    /// Delays starting at `initial`, doubling after each failure up to `max`.
    pub fn new(initial: Duration, max: Duration) -> Self {
        Self {
            initial,
            max,
            next: initial,
        }
    }

    /// The delay before the next try, doubling the one after.
    pub fn fail(&mut self) -> Duration {
        let now = self.next;
        self.next = (self.next * 2).min(self.max);
        now
    }

    /// Resets the delay to `initial` after a good reading.
    pub fn succeed(&mut self) {
        self.next = self.initial;
    }
}

impl Default for Backoff {
    fn default() -> Self {
        Self::new(Duration::from_secs(1), Duration::from_secs(30))
    }
}

/// Starts the collector thread. It stops by itself when the receiver is dropped.
pub fn spawn(
    mut source: Box<dyn Source>,
    interval: Duration,
    tx: Sender<CollectorEvent>,
) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("gpumeter-collector".into())
        .spawn(move || run(source.as_mut(), interval, &tx))
}

/// Starts the collector thread, which first calls `open` for its source. The outcome goes to
/// the returned [`Opening`] and, when it fails, over `tx` too: the caller may have stopped
/// waiting and put a screen up. Then it samples as [`spawn`] does.
pub fn spawn_opening<E, F>(
    open: F,
    interval: Duration,
    tx: Sender<CollectorEvent>,
) -> std::io::Result<Opening<E>>
where
    E: std::fmt::Display + Send + 'static,
    F: FnOnce() -> Result<Box<dyn Source>, E> + Send + 'static,
{
    let (opened, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("gpumeter-collector".into())
        .spawn(move || match open() {
            Ok(mut source) => {
                // The caller may have stopped waiting; the readings say the rest.
                let _ = opened.send(Ok(source.label()));
                run(source.as_mut(), interval, &tx);
            }
            Err(e) => {
                let message = crate::sanitize::sanitize(&e.to_string(), MAX_OPEN_MESSAGE);
                let _ = opened.send(Err(e));
                let _ = tx.blocking_send(CollectorEvent::OpenFailed(message));
            }
        })?;
    Ok(Opening { rx })
}

/// Longest open-failure message passed on (the NVML ones with their advice are ~400).
const MAX_OPEN_MESSAGE: usize = 1_000;

fn run(source: &mut dyn Source, interval: Duration, tx: &Sender<CollectorEvent>) {
    let mut backoff = Backoff::default();
    loop {
        let started = Instant::now();
        let (event, wait) = match source.sample() {
            Ok(snap) => {
                backoff.succeed();
                let wait = if source.catching_up() {
                    Duration::ZERO
                } else {
                    interval.saturating_sub(started.elapsed())
                };
                (CollectorEvent::Snapshot(Box::new(snap)), wait)
            }
            Err(e) => {
                let wait = backoff.fail();
                let event = CollectorEvent::SourceFailed {
                    message: crate::sanitize::sanitize(&e.to_string(), 200),
                    retry_in_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                };
                if e.is_final() {
                    // A replay at its end: said once, then nothing more to read.
                    let _ = tx.blocking_send(event);
                    return;
                }
                (event, wait)
            }
        };
        if tx.blocking_send(event).is_err() {
            return;
        }
        if tx.is_closed() {
            return;
        }
        std::thread::sleep(wait);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceError;

    #[test]
    fn backoff_doubles_caps_and_resets() {
        let mut b = Backoff::new(Duration::from_secs(1), Duration::from_secs(5));
        let delays: Vec<u64> = (0..5).map(|_| b.fail().as_secs()).collect();
        assert_eq!(delays, vec![1, 2, 4, 5, 5]);
        b.succeed();
        assert_eq!(b.fail().as_secs(), 1);
    }

    /// Fails twice, then succeeds.
    struct Flaky(u32);

    impl Source for Flaky {
        fn sample(&mut self) -> Result<Snapshot, SourceError> {
            self.0 += 1;
            if self.0 <= 1 {
                Err(SourceError::Nvml("Unknown Error\u{1b}[2J".into()))
            } else {
                Ok(Snapshot::empty("flaky", i64::from(self.0)))
            }
        }
        fn label(&self) -> String {
            "flaky".into()
        }
    }

    #[test]
    fn failures_are_reported_sanitized_then_snapshots_flow() {
        let (tx, mut rx) = tokio::sync::mpsc::channel(4);
        let handle = spawn(Box::new(Flaky(0)), Duration::from_millis(1), tx).unwrap();
        match rx.blocking_recv().unwrap() {
            CollectorEvent::SourceFailed {
                message,
                retry_in_ms,
            } => {
                assert_eq!(message, "NVML: Unknown Error");
                assert_eq!(retry_in_ms, 1000);
            }
            other => panic!("expected a failure first, got {other:?}"),
        }
        match rx.blocking_recv().unwrap() {
            CollectorEvent::Snapshot(s) => assert_eq!(s.source, "flaky"),
            other => panic!("expected a snapshot, got {other:?}"),
        }
        drop(rx);
        handle.join().unwrap();
    }

    /// Opens after `delay`, or fails to.
    fn opener(
        delay: Duration,
        fail: bool,
    ) -> impl FnOnce() -> Result<Box<dyn Source>, String> + Send + 'static {
        move || {
            std::thread::sleep(delay);
            if fail {
                Err("no driver here\u{1b}[2J".to_string())
            } else {
                Ok(Box::new(Flaky(1)) as Box<dyn Source>)
            }
        }
    }

    #[test]
    fn an_open_that_finishes_in_time_gives_its_label_then_readings() {
        let (tx, mut rx) = tokio::sync::mpsc::channel(4);
        let opening =
            spawn_opening(opener(Duration::ZERO, false), Duration::from_millis(1), tx).unwrap();
        match opening.wait(Duration::from_secs(10)) {
            Opened::Ready(label) => assert_eq!(label, "flaky"),
            other => panic!("expected the label, got {other:?}"),
        }
        assert!(matches!(
            rx.blocking_recv(),
            Some(CollectorEvent::Snapshot(_))
        ));
    }

    #[test]
    fn a_slow_open_is_pending_and_its_failure_still_reaches_the_screen() {
        let (tx, mut rx) = tokio::sync::mpsc::channel(4);
        let opening = spawn_opening(
            opener(Duration::from_millis(300), true),
            Duration::from_millis(1),
            tx,
        )
        .unwrap();
        assert!(matches!(
            opening.wait(Duration::from_millis(1)),
            Opened::Pending
        ));
        // The caller stops waiting and puts a screen up; the failure comes over the channel.
        drop(opening);
        match rx.blocking_recv() {
            Some(CollectorEvent::OpenFailed(m)) => assert_eq!(m, "no driver here"),
            other => panic!("expected the open failure, got {other:?}"),
        }
        assert!(rx.blocking_recv().is_none(), "nothing after a failed open");
    }

    #[test]
    fn a_failed_open_is_told_to_the_waiter() {
        let (tx, _rx) = tokio::sync::mpsc::channel(4);
        let opening =
            spawn_opening(opener(Duration::ZERO, true), Duration::from_millis(1), tx).unwrap();
        match opening.wait(Duration::from_secs(10)) {
            Opened::Failed(e) => assert!(e.starts_with("no driver here"), "{e}"),
            other => panic!("expected the failure, got {other:?}"),
        }
    }

    /// A recording with one reading.
    struct Short(bool);

    impl Source for Short {
        fn sample(&mut self) -> Result<Snapshot, SourceError> {
            if std::mem::replace(&mut self.0, true) {
                Err(SourceError::Ended(
                    "end of the recording (1 readings)".into(),
                ))
            } else {
                Ok(Snapshot::empty("replay:x", 1))
            }
        }
        fn label(&self) -> String {
            "replay:x".into()
        }
    }

    #[test]
    fn the_end_of_a_replay_is_said_once_and_the_collector_stops() {
        let (tx, mut rx) = tokio::sync::mpsc::channel(4);
        let handle = spawn(Box::new(Short(false)), Duration::from_millis(1), tx).unwrap();
        assert!(matches!(
            rx.blocking_recv(),
            Some(CollectorEvent::Snapshot(_))
        ));
        match rx.blocking_recv() {
            Some(CollectorEvent::SourceFailed { message, .. }) => {
                assert!(message.contains("end of the recording"), "{message}");
            }
            other => panic!("expected the end, got {other:?}"),
        }
        // No retries: the thread is done and the channel closes.
        assert!(rx.blocking_recv().is_none());
        handle.join().unwrap();
    }
}
