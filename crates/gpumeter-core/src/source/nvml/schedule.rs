//! When to ask again: slow calls (PCIe throughput takes ~20 ms) and probes of a lost GPU run at
//! most once per interval of the caller's clock, not every tick.

/// "At most once every `interval_ms`", measured on the timestamps the caller passes in.
#[derive(Debug, Clone)]
pub(crate) struct Every {
    interval_ms: i64,
    last_ms: Option<i64>,
}

impl Every {
    pub(crate) fn new(interval_ms: u64) -> Self {
        Self {
            interval_ms: i64::try_from(interval_ms).unwrap_or(i64::MAX),
            last_ms: None,
        }
    }

    /// Whether the interval has passed since the last [`Every::mark`] (or nothing was marked).
    /// A clock that jumped backwards counts as due, so a step back never stalls a reading.
    pub(crate) fn due(&self, now_ms: i64) -> bool {
        match self.last_ms {
            None => true,
            Some(last) => now_ms < last || now_ms.saturating_sub(last) >= self.interval_ms,
        }
    }

    /// Records that the thing was done now.
    pub(crate) fn mark(&mut self, now_ms: i64) {
        self.last_ms = Some(now_ms);
    }

    /// Makes the next [`Every::due`] true.
    pub(crate) fn reset(&mut self) {
        self.last_ms = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_first_then_once_per_interval() {
        let mut every = Every::new(5_000);
        assert!(every.due(1_000));
        every.mark(1_000);
        assert!(!every.due(1_000));
        assert!(!every.due(5_999));
        assert!(every.due(6_000));
        every.mark(6_500);
        assert!(!every.due(11_000));
        assert!(every.due(11_500));
    }

    #[test]
    fn backwards_clock_is_due_and_reset_forgets() {
        let mut every = Every::new(30_000);
        every.mark(100_000);
        assert!(!every.due(110_000));
        assert!(every.due(99_000));
        every.mark(110_000);
        every.reset();
        assert!(every.due(110_001));
    }

    #[test]
    fn huge_interval_does_not_overflow() {
        let mut every = Every::new(u64::MAX);
        every.mark(-5);
        assert!(!every.due(i64::MAX - 10));
    }
}
