//! Runs a [`Source`] on its own OS thread and sends what it reads over a channel. NVML calls can
//! block (a hung driver, a 500 ms call); on their own thread they delay only the next snapshot,
//! never the dashboard's key handling. A source that fails as a whole is retried with
//! exponential backoff, and each failure is reported so the screen can say so.

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
    SourceFailed {
        message: String,
        retry_in_ms: u64,
    },
}

/// Retry delays after whole-source failures: 1 s, 2 s, 4 s … capped, reset by a success.
#[derive(Debug, Clone)]
pub struct Backoff {
    initial: Duration,
    max: Duration,
    next: Duration,
}

impl Backoff {
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

fn run(source: &mut dyn Source, interval: Duration, tx: &Sender<CollectorEvent>) {
    let mut backoff = Backoff::default();
    loop {
        let started = Instant::now();
        let (event, wait) = match source.sample() {
            Ok(snap) => {
                backoff.succeed();
                let wait = interval.saturating_sub(started.elapsed());
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
