//! `--demo NAME --start 6m`: a demo that begins at a later moment of its scenario. The scenario
//! is a function of time, but the rules and charts need what came before (a verdict waits for
//! its window), so the moments before the start are not skipped but played as fast as the
//! reader takes them: the source's clock lags the wall clock by the start and catches up by one
//! interval per reading ([`LaggingClock`]); while it lags, [`Source::catching_up`] tells the
//! collector not to wait. Once caught up the demo runs live. Touches nothing but its clock.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use gpumeter_model::Snapshot;

use super::{Source, SourceError};
use crate::clock::{Clock, SharedClock};

/// A clock some milliseconds behind another, catching up when told. Clones share the lag.
#[derive(Clone)]
pub struct LaggingClock {
    base: SharedClock,
    behind_ms: Arc<AtomicI64>,
}

impl std::fmt::Debug for LaggingClock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LaggingClock")
            .field("behind_ms", &self.behind_ms())
            .finish_non_exhaustive()
    }
}

impl LaggingClock {
    /// A clock `behind_ms` milliseconds behind `base` (a negative lag counts as none).
    pub fn new(base: SharedClock, behind_ms: i64) -> Self {
        Self {
            base,
            behind_ms: Arc::new(AtomicI64::new(behind_ms.max(0))),
        }
    }

    /// How far behind the base clock it still is, in ms (0 once caught up).
    pub fn behind_ms(&self) -> i64 {
        self.behind_ms.load(Ordering::Relaxed)
    }

    /// Moves `ms` closer to the wall clock, never past it.
    pub fn catch_up(&self, ms: i64) {
        let _ = self
            .behind_ms
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| {
                Some((b - ms.max(0)).max(0))
            });
    }
}

impl Clock for LaggingClock {
    fn now_unix_ms(&self) -> i64 {
        self.base.now_unix_ms() - self.behind_ms()
    }
}

/// A source read on a [`LaggingClock`]: each reading while behind moves the clock one
/// interval on.
pub struct FastForward {
    inner: Box<dyn Source>,
    clock: LaggingClock,
    interval_ms: i64,
}

impl FastForward {
    /// `inner` must read time from `clock`.
    pub fn new(inner: Box<dyn Source>, clock: LaggingClock, interval_ms: i64) -> Self {
        Self {
            inner,
            clock,
            interval_ms: interval_ms.max(1),
        }
    }
}

impl Source for FastForward {
    fn sample(&mut self) -> Result<Snapshot, SourceError> {
        let snap = self.inner.sample();
        self.clock.catch_up(self.interval_ms);
        snap
    }

    fn label(&self) -> String {
        self.inner.label()
    }

    fn set_focus(&mut self, focus: super::focus::ProcessFocus) {
        self.inner.set_focus(focus);
    }

    fn catching_up(&self) -> bool {
        self.clock.behind_ms() > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::FakeClock;

    /// Reads the clock it is given, as a demo does.
    struct Stamps(LaggingClock);
    impl Source for Stamps {
        fn sample(&mut self) -> Result<Snapshot, SourceError> {
            Ok(
                gpumeter_model::testing::SnapshotBuilder::new("stamps", self.0.now_unix_ms())
                    .build(),
            )
        }
        fn label(&self) -> String {
            "stamps".into()
        }
    }

    #[test]
    fn the_readings_before_the_start_come_at_once_then_it_runs_live() {
        let wall = FakeClock::new(1_000_000);
        let lag = LaggingClock::new(Arc::new(wall.clone()), 3_500);
        let mut ff = FastForward::new(Box::new(Stamps(lag.clone())), lag, 1_000);
        let mut stamps = Vec::new();
        while ff.catching_up() {
            stamps.push(ff.sample().unwrap().taken_at_unix_ms);
        }
        // 3.5 s behind at 1 s readings: four readings without waiting, the last caught up.
        assert_eq!(stamps, vec![996_500, 997_500, 998_500, 999_500]);
        assert_eq!(ff.sample().unwrap().taken_at_unix_ms, 1_000_000);
        wall.advance_ms(1_000);
        assert!(!ff.catching_up());
        assert_eq!(ff.sample().unwrap().taken_at_unix_ms, 1_001_000);
    }
}
