//! Time as the rest of the program sees it: wall-clock milliseconds since the Unix epoch,
//! behind a trait so engine rules and the simulator run on a fake clock in tests.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

/// A source of "now".
pub trait Clock: Send + Sync {
    /// Milliseconds since the Unix epoch.
    fn now_unix_ms(&self) -> i64;
}

/// The real wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_unix_ms(&self) -> i64 {
        chrono::Utc::now().timestamp_millis()
    }
}

/// A clock tests move by hand. Clones share the same time.
#[derive(Debug, Clone, Default)]
pub struct FakeClock {
    now_ms: Arc<AtomicI64>,
}

impl FakeClock {
    /// A fake clock reading `start_unix_ms`.
    pub fn new(start_unix_ms: i64) -> Self {
        Self {
            now_ms: Arc::new(AtomicI64::new(start_unix_ms)),
        }
    }

    /// Moves time forward (or back, with a negative step: clocks jump).
    pub fn advance_ms(&self, delta_ms: i64) {
        self.now_ms.fetch_add(delta_ms, Ordering::SeqCst);
    }

    /// Sets the time outright.
    pub fn set_ms(&self, unix_ms: i64) {
        self.now_ms.store(unix_ms, Ordering::SeqCst);
    }
}

impl Clock for FakeClock {
    fn now_unix_ms(&self) -> i64 {
        self.now_ms.load(Ordering::SeqCst)
    }
}

/// A shared clock handle.
pub type SharedClock = Arc<dyn Clock>;

/// How much of a UTC time [`utc_text`] shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UtcStyle {
    /// `14:05Z`
    Clock,
    /// `Jan 05 14:05Z`
    DayClock,
    /// `2026-01-05 14:05Z`
    Full,
    /// `14:05:09Z` (a chart's time axis over a short window)
    ClockSeconds,
    /// `2026-01-05 14:05:09Z` (a replay's position, which steps by seconds)
    FullSeconds,
}

/// The one way a time is written for people: UTC, to the minute (or to the second where it
/// steps by seconds), with its `Z`. A time outside chrono's range (a broken clock) reads `N/A`.
pub fn utc_text(unix_ms: i64, style: UtcStyle) -> String {
    let pattern = match style {
        UtcStyle::Clock => "%H:%MZ",
        UtcStyle::DayClock => "%b %d %H:%MZ",
        UtcStyle::Full => "%Y-%m-%d %H:%MZ",
        UtcStyle::ClockSeconds => "%H:%M:%SZ",
        UtcStyle::FullSeconds => "%Y-%m-%d %H:%M:%SZ",
    };
    chrono::DateTime::from_timestamp_millis(unix_ms).map_or_else(
        || crate::units::NA.to_string(),
        |t| t.format(pattern).to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_text_writes_minutes_with_a_z_in_every_style() {
        // 2026-01-05T09:07:59.999Z: minutes are cut, not rounded.
        let t = 1_767_604_079_999;
        assert_eq!(utc_text(t, UtcStyle::Clock), "09:07Z");
        assert_eq!(utc_text(t, UtcStyle::DayClock), "Jan 05 09:07Z");
        assert_eq!(utc_text(t, UtcStyle::Full), "2026-01-05 09:07Z");
        assert_eq!(utc_text(t, UtcStyle::ClockSeconds), "09:07:59Z");
        assert_eq!(utc_text(t, UtcStyle::FullSeconds), "2026-01-05 09:07:59Z");
        assert_eq!(utc_text(i64::MAX, UtcStyle::Full), "N/A");
    }

    #[test]
    fn fake_clock_clones_share_time() {
        let a = FakeClock::new(1_000);
        let b = a.clone();
        a.advance_ms(500);
        assert_eq!(b.now_unix_ms(), 1_500);
        b.set_ms(10);
        assert_eq!(a.now_unix_ms(), 10);
    }

    #[test]
    fn system_clock_is_after_2020() {
        assert!(SystemClock.now_unix_ms() > 1_577_836_800_000);
    }
}
