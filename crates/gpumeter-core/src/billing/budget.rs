//! Budget thresholds as a small state machine: 50 %, 80 %, 100 % of actual spend and 100 % of
//! the forecast (the AWS Budgets convention), each reported once per crossing per period.

use std::collections::BTreeSet;

use serde::Serialize;

use super::calendar::{day_index, day_key, month_index, month_key};
use super::pricing::{Budget, BudgetPeriod};
use crate::money::Money;

/// The share of the budget spent (1.0 = the ceiling; a zero budget is spent at once): the one
/// derivation the spend line, the spend panel and the budget alert print.
pub fn spent_share(spent: Money, budget: Money) -> f64 {
    if budget.micros() > 0 {
        spent.micros() as f64 / budget.micros() as f64
    } else {
        1.0
    }
}

/// Actual-spend thresholds, in percent of the budget.
pub const ACTUAL_THRESHOLDS: [u8; 3] = [50, 80, 100];
/// Forecast threshold, in percent of the budget.
pub const FORECAST_THRESHOLD: u8 = 100;

/// Whether a threshold was crossed by money spent or by the projection to the period's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetEventKind {
    /// Money spent so far in the period reached the threshold.
    Actual,
    /// The projection of spend to the period's end reached the threshold (day and month budgets only).
    Forecast,
}

impl BudgetEventKind {
    /// `actual` or `forecast`: the name the ledger stores and [`BudgetEventKind::parse`] reads back.
    pub fn name(self) -> &'static str {
        match self {
            BudgetEventKind::Actual => "actual",
            BudgetEventKind::Forecast => "forecast",
        }
    }

    /// The kind for a name written by [`BudgetEventKind::name`]; `None` for any other text.
    pub fn parse(name: &str) -> Option<BudgetEventKind> {
        match name {
            "actual" => Some(BudgetEventKind::Actual),
            "forecast" => Some(BudgetEventKind::Forecast),
            _ => None,
        }
    }
}

/// One crossing, as the alert path and the ledger receive it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BudgetEvent {
    /// Percent of the budget: 50, 80 or 100.
    pub threshold: u8,
    /// Crossed by money spent or by the projection.
    pub kind: BudgetEventKind,
    /// When the crossing was seen, ms since the Unix epoch.
    pub at_unix_ms: i64,
    /// Spent in the budget period so far (for `Forecast`: the projection to the period's end).
    pub spent: Money,
    /// The budget's ceiling (`pricing.budget`).
    pub budget: Money,
    /// The budget period's name: `day`, `month` or `run`.
    pub period: &'static str,
    /// Which period: `day:2026-05-01`, `month:2026-05` or `run`.
    pub period_key: String,
}

impl BudgetEvent {
    /// The one budget sentence: `budget: 80 % of the $100.00 day budget spent ($80.00)`.
    pub fn sentence(&self, c: crate::money::Currency) -> String {
        match self.kind {
            // The share spent now, as the alert's title and the spend line say it: a meter
            // started late crosses the 50 % mark at 64 %, and says 64 %.
            BudgetEventKind::Actual => {
                let pct = (spent_share(self.spent, self.budget) * 100.0).round() as i64;
                let past = if pct > i64::from(self.threshold) {
                    format!(", past the {} % mark", self.threshold)
                } else {
                    String::new()
                };
                format!(
                    "budget: {pct} % of the {} {} budget spent ({}{past})",
                    c.format(self.budget),
                    self.period,
                    c.format(self.spent)
                )
            }
            BudgetEventKind::Forecast => format!(
                "budget: at this rate the {} will end at {}, over the {} budget",
                self.period,
                c.format(self.spent),
                c.format(self.budget)
            ),
        }
    }
}

/// The key of the budget period containing `unix_ms`.
pub fn period_key(period: BudgetPeriod, unix_ms: i64) -> String {
    match period {
        BudgetPeriod::Day => format!("day:{}", day_key(day_index(unix_ms))),
        BudgetPeriod::Month => format!("month:{}", month_key(month_index(unix_ms))),
        BudgetPeriod::Run => "run".to_string(),
    }
}

/// Remembers which crossings were reported in the current period.
#[derive(Debug, Clone, Default)]
pub struct BudgetTracker {
    key: String,
    fired: BTreeSet<(u8, BudgetEventKind)>,
}

impl BudgetTracker {
    /// Marks a crossing as already reported (seeding from the ledger after a restart).
    pub fn mark_fired(&mut self, key: &str, threshold: u8, kind: BudgetEventKind) {
        if self.key != key {
            self.key = key.to_string();
            self.fired.clear();
        }
        self.fired.insert((threshold, kind));
    }

    /// New crossings at `now`: `spent` in the period and `forecast` to its end (`None` for a
    /// run budget, which has no end to project to).
    pub fn check(
        &mut self,
        budget: &Budget,
        now_unix_ms: i64,
        spent: Money,
        forecast: Option<Money>,
    ) -> Vec<BudgetEvent> {
        let key = period_key(budget.period, now_unix_ms);
        if key != self.key {
            self.key = key;
            self.fired.clear();
        }
        let reached = |m: Money, pct: u8| {
            i128::from(m.micros()) * 100 >= i128::from(budget.amount.micros()) * i128::from(pct)
        };
        let mut events = Vec::new();
        let mut fire = |this: &mut Self, threshold: u8, kind, amount: Money| {
            if this.fired.insert((threshold, kind)) {
                events.push(BudgetEvent {
                    threshold,
                    kind,
                    at_unix_ms: now_unix_ms,
                    spent: amount,
                    budget: budget.amount,
                    period: budget.period.name(),
                    period_key: this.key.clone(),
                });
            }
        };
        for pct in ACTUAL_THRESHOLDS {
            if reached(spent, pct) {
                fire(self, pct, BudgetEventKind::Actual, spent);
            }
        }
        // A forecast is news only while the actual spend is still under the ceiling.
        if let Some(f) = forecast
            && reached(f, FORECAST_THRESHOLD)
            && !reached(spent, 100)
        {
            fire(self, FORECAST_THRESHOLD, BudgetEventKind::Forecast, f);
        }
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(period: BudgetPeriod) -> Budget {
        Budget {
            amount: Money::from_units(100).unwrap(),
            period,
        }
    }

    fn units(u: i64) -> Money {
        Money::from_units(u).unwrap()
    }

    #[test]
    fn each_crossing_fires_once() {
        let b = budget(BudgetPeriod::Run);
        let mut t = BudgetTracker::default();
        assert!(t.check(&b, 0, units(49), None).is_empty());
        let e = t.check(&b, 1, units(50), None);
        assert_eq!(e.len(), 1);
        assert_eq!((e[0].threshold, e[0].kind), (50, BudgetEventKind::Actual));
        assert!(t.check(&b, 2, units(60), None).is_empty());
        // Jumping past two thresholds reports both, once.
        let e = t.check(&b, 3, units(150), None);
        assert_eq!(
            e.iter().map(|e| e.threshold).collect::<Vec<_>>(),
            vec![80, 100]
        );
        assert!(t.check(&b, 4, units(200), None).is_empty());
    }

    #[test]
    fn forecast_fires_once_and_only_below_the_ceiling() {
        let b = budget(BudgetPeriod::Day);
        let mut t = BudgetTracker::default();
        let e = t.check(&b, 0, units(10), Some(units(120)));
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].kind, BudgetEventKind::Forecast);
        assert_eq!(e[0].period_key, "day:1970-01-01");
        assert!(t.check(&b, 1, units(10), Some(units(90))).is_empty());
        assert!(t.check(&b, 2, units(10), Some(units(130))).is_empty());
        let mut fresh = BudgetTracker::default();
        let e = fresh.check(&b, 0, units(100), Some(units(300)));
        assert!(e.iter().all(|e| e.kind == BudgetEventKind::Actual));
    }

    #[test]
    fn a_new_day_rearms_and_seeded_crossings_stay_quiet() {
        let b = budget(BudgetPeriod::Day);
        let mut t = BudgetTracker::default();
        t.mark_fired("day:1970-01-01", 50, BudgetEventKind::Actual);
        assert!(t.check(&b, 10, units(55), None).is_empty());
        let next_day = 86_400_000 + 10;
        let e = t.check(&b, next_day, units(55), None);
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].period_key, "day:1970-01-02");
    }
}
