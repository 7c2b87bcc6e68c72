//! How one tick's sums are shared among the minutes and days it spans. A tick credits the
//! time since the one before (observed and paid time, GPU time busy and idle, and the money
//! that time cost) and, on the first, the paid time since the clock start; the ledger keeps
//! minutes and days, so each gets the part that lies in it, rounded down (the minute the tick
//! lands in keeps the remainder, and its energy and bytes).
//! Pure arithmetic over [`Recorded`] sums; the recorder decides where the pieces go.

use super::recorder::Recorded;

pub(super) const MINUTE_MS: i64 = 60_000;
pub(super) const DAY_MS: i64 = 86_400_000;
/// Paid time further back than this is left in the day the tick lands in (a clock start of
/// years ago would otherwise write a row per day since).
const MAX_EARLIER_DAYS: i64 = 400;

/// One tick's time-proportional sums, to share among the minutes it spans.
pub(super) struct Share {
    /// The sums before the tick.
    pub base: Recorded,
    /// What the tick added to the time fields (the rest zero).
    pub delta: Recorded,
    pub credited: i64,
}

impl Share {
    /// The sums once `given` ms of the tick are counted: each time field grown by its share,
    /// rounded down, so the minutes it lands in keeps the remainder.
    pub(crate) fn after(&self, given: i64) -> Recorded {
        let part = |d: i64| {
            if self.credited <= 0 {
                return 0;
            }
            let v = i128::from(d) * i128::from(given) / i128::from(self.credited);
            i64::try_from(v).unwrap_or(d)
        };
        let mut r = self.base;
        r.observed_ms += part(self.delta.observed_ms);
        r.gpu_ms += part(self.delta.gpu_ms);
        r.busy_gpu_ms += part(self.delta.busy_gpu_ms);
        r.idle_ms += part(self.delta.idle_ms);
        r.paid_ms += part(self.delta.paid_ms);
        r.spend_micros += part(self.delta.spend_micros);
        r.idle_cost_micros += part(self.delta.idle_cost_micros);
        r
    }
}

/// The UTC-day pieces of `[from, until)` where `until` is a day's start: one `(start, end)` per
/// day, oldest first; nothing when `from` is not before `until`.
pub(super) fn earlier_days(from: i64, until: i64) -> Vec<(i64, i64)> {
    let from = from.max(until - MAX_EARLIER_DAYS * DAY_MS);
    let mut out = Vec::new();
    let mut a = from;
    while a < until {
        let b = ((a.div_euclid(DAY_MS) + 1) * DAY_MS).min(until);
        out.push((a, b));
        a = b;
    }
    out
}

impl Recorded {
    /// What the fields shared by time (observed, GPU, busy GPU, idle and paid time, spend and
    /// idle cost) grew by since `base`; energy and bytes zero (they stay where they landed).
    pub(super) fn shared_over(&self, base: &Recorded) -> Recorded {
        let d = |now: i64, was: i64| now.saturating_sub(was).max(0);
        Recorded {
            observed_ms: d(self.observed_ms, base.observed_ms),
            gpu_ms: d(self.gpu_ms, base.gpu_ms),
            busy_gpu_ms: d(self.busy_gpu_ms, base.busy_gpu_ms),
            idle_ms: d(self.idle_ms, base.idle_ms),
            paid_ms: d(self.paid_ms, base.paid_ms),
            spend_micros: d(self.spend_micros, base.spend_micros),
            idle_cost_micros: d(self.idle_cost_micros, base.idle_cost_micros),
            ..Recorded::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_is_cut_at_each_midnight_and_bounded() {
        let day = 20_000 * DAY_MS;
        assert_eq!(earlier_days(day, day), vec![]);
        assert_eq!(
            earlier_days(day - DAY_MS - 5, day),
            vec![(day - DAY_MS - 5, day - DAY_MS), (day - DAY_MS, day)]
        );
        assert_eq!(earlier_days(0, day).len() as i64, MAX_EARLIER_DAYS);
    }

    #[test]
    fn shares_round_down_and_add_up() {
        let s = Share {
            base: Recorded::default(),
            delta: Recorded {
                observed_ms: 100,
                idle_ms: 33,
                ..Recorded::default()
            },
            credited: 100,
        };
        assert_eq!(s.after(50).idle_ms, 16);
        assert_eq!(s.after(100).idle_ms, 33);
        assert_eq!(s.after(100).observed_ms, 100);
    }
}
