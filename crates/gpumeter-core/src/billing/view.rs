//! [`BillingView`]: the small read-only summary of the meter that the dashboard and the headless
//! mode print. Computed once per tick by the engine, so rendering never does arithmetic on money.

use serde::Serialize;

use super::meter::{MJ_PER_KWH, Meter};
use super::pricing::{BudgetPeriod, Granularity, HOUR_MS, Rate};
use crate::money::{Currency, Money};

/// Where the budget stands.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BudgetView {
    /// The ceiling (`pricing.budget`), in the pricing currency.
    pub amount: Money,
    /// The budget period's name: `day`, `month` or `run`.
    pub period: &'static str,
    /// Spent in the current period.
    pub spent: Money,
    /// `spent / amount` (1.0 = the ceiling).
    pub share: f64,
    /// Time until the ceiling at the current burn; `None` when the burn is zero or the ceiling
    /// lies beyond the end of the current day/month. Zero once reached.
    pub ceiling_in_ms: Option<i64>,
    /// The clock time of that moment, ms since the epoch.
    pub ceiling_at_unix_ms: Option<i64>,
    /// Projected spend at the end of the period (None for a run budget).
    pub forecast: Option<Money>,
}

/// What the spend panel shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BillingView {
    /// The pricing currency (serialized as its ISO code, `USD`).
    #[serde(serialize_with = "ser_currency")]
    pub currency: Currency,
    /// When the meter last ticked, ms since the Unix epoch.
    pub at_unix_ms: i64,
    /// The list price (serialized as `Display` writes it: `31/h`).
    #[serde(serialize_with = "ser_rate")]
    pub rate: Rate,
    /// Where the rate came from: the user's, or a catalog list price.
    #[serde(serialize_with = "ser_rate_source")]
    pub rate_source: super::RateSource,
    /// How billed time is rounded (serialized as its config name, `per-second`).
    #[serde(serialize_with = "ser_granularity")]
    pub granularity: Granularity,
    /// When the billing clock started.
    pub clock_start_unix_ms: Option<i64>,
    /// Paid (credited) time since the clock start.
    pub paid_ms: i64,
    /// The part of it gpumeter watched (readings came in).
    pub watched_ms: i64,
    /// Money billed since the clock start.
    pub spent: Money,
    /// Money billed in the current UTC day.
    pub spent_today: Money,
    /// Current cost per hour (list rate and extras, plus egress and power at recent levels).
    pub burn_per_hour: Money,
    /// The list price of one GPU-hour on this machine (None without GPUs).
    pub list_per_gpu_hour: Option<Money>,
    /// Share of the watched time with every GPU idle, plus lost GPUs' share of the rest (None
    /// before anything was spent).
    pub idle_share: Option<f64>,
    /// What the idle time cost at the list rate.
    pub idle_cost: Money,
    /// Busy GPU-hours watched (see [`gpu_busy`](super::meter::gpu_busy)).
    pub busy_gpu_hours: f64,
    /// Spend of the watched time per busy GPU-hour (see [`Meter::cost_per_busy_gpu_hour`]).
    pub cost_per_busy_gpu_hour: Option<Money>,
    /// Spend projected to the end of the current UTC day at the current burn; `None` before the
    /// first tick.
    pub projected_end_of_day: Option<Money>,
    /// Spend projected to the end of the current UTC month at the current burn; `None` before the
    /// first tick.
    pub projected_end_of_month: Option<Money>,
    /// Where the budget stands; `None` when no budget is set.
    pub budget: Option<BudgetView>,
    /// GPU energy counted so far (None when no GPU reports an energy counter).
    pub energy_kwh: Option<f64>,
    /// Its cost, when an electricity price is set.
    pub energy_cost: Option<Money>,
    /// Bytes sent out of the machine (non-loopback) so far.
    pub egress_bytes: u64,
    /// What they have cost (`[pricing] egress_per_gb`), and what sending costs per hour now.
    pub egress_cost: Money,
    /// What sending costs per hour at the recent (smoothed) egress rate.
    pub egress_per_hour: Money,
    /// The catalogued storage of the attached volumes, which bills while the box is stopped
    /// (not in the burn; see [`super::Pricing::stopped_storage`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped_storage: Option<super::StoppedStorage>,
    /// GPUs in the last snapshot.
    pub gpus: u32,
    /// GPUs busy in the last tick (see [`gpu_busy`](super::meter::gpu_busy)).
    pub busy_gpus: u32,
}

fn ser_currency<S: serde::Serializer>(c: &Currency, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(c.code())
}

fn ser_rate_source<S: serde::Serializer>(r: &super::RateSource, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&r.describe())
}

fn ser_rate<S: serde::Serializer>(r: &Rate, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(r)
}

fn ser_granularity<S: serde::Serializer>(g: &Granularity, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(g.name())
}

/// Spent per busy GPU-hour: the one number that says whether renting pays, computed here for
/// every surface (the spend panel, `watch`'s total, `report`'s days and sessions, JSON). Only
/// the spend of the watched time counts (`spent × watched / paid`): before gpumeter first
/// looked, nobody knows how busy the GPUs were, and counting that spend against the busy hours
/// seen since would inflate the figure many times over. `None` without busy or watched time.
pub fn per_busy_gpu_hour(
    spent: Money,
    paid_ms: i64,
    observed_ms: i64,
    busy_gpu_ms: i64,
) -> Option<Money> {
    let watched = observed_ms.min(paid_ms);
    (busy_gpu_ms > 0 && watched > 0).then(|| {
        spent.mul_div(
            i128::from(watched) * i128::from(HOUR_MS),
            i128::from(paid_ms) * i128::from(busy_gpu_ms),
        )
    })
}

impl Meter {
    /// Spent per busy GPU-hour (see [`per_busy_gpu_hour`]).
    pub fn cost_per_busy_gpu_hour(&self) -> Option<Money> {
        let t = &self.totals;
        per_busy_gpu_hour(t.spent, t.paid_ms, t.observed_ms, t.busy_gpu_ms)
    }

    /// Busy GPU-hours watched: busy GPU-ms as hours.
    pub fn busy_gpu_hours(&self) -> f64 {
        self.totals.busy_gpu_ms as f64 / HOUR_MS as f64
    }

    /// Share of the watched time during which every GPU was idle, plus the lost GPUs' share
    /// of the rest (of the spend, at a constant rate). Time before the first reading is paid but
    /// unwatched, so it is left out.
    pub fn idle_share(&self) -> Option<f64> {
        let t = &self.totals;
        (t.observed_ms > 0 && t.spent.micros() > 0)
            .then(|| (t.idle_ms as f64 / t.observed_ms as f64).clamp(0.0, 1.0))
    }

    /// Time until the budget ceiling at the current burn, and the clock time it happens.
    pub fn time_to_budget(&self) -> Option<(i64, i64)> {
        let budget = self.pricing().budget?;
        let now = self.last_tick().at_unix_ms;
        let left = budget
            .amount
            .saturating_sub(self.spent_in_period(budget.period));
        if left.micros() <= 0 {
            return Some((0, now));
        }
        let burn = self.burn_per_hour();
        if burn.micros() <= 0 {
            return None;
        }
        let ms = i64::try_from(
            i128::from(left.micros()) * i128::from(HOUR_MS) / i128::from(burn.micros()),
        )
        .ok()?;
        let at = now.checked_add(ms)?;
        match self.period_bounds(budget.period) {
            Some((_, end)) if at > end => None,
            _ => Some((ms, at)),
        }
    }

    /// The summary the UI renders.
    pub fn view(&self) -> BillingView {
        let p = self.pricing();
        let per_gpu = (self.gpus_now > 0 || self.max_gpus > 0).then(|| {
            let gpus = i128::from(self.max_gpus.max(self.gpus_now));
            // Per-GPU rates come back as listed; instance rates are split over the GPUs.
            let base = self.time_rate_per_hour().saturating_sub(p.extras_per_hour);
            base.mul_div(1, gpus)
        });
        let budget = p.budget.map(|b| {
            let spent = self.spent_in_period(b.period);
            let eta = self.time_to_budget();
            BudgetView {
                amount: b.amount,
                period: b.period.name(),
                spent,
                share: super::budget::spent_share(spent, b.amount),
                ceiling_in_ms: eta.map(|(ms, _)| ms),
                ceiling_at_unix_ms: eta.map(|(_, at)| at),
                forecast: self.projected_end_of(b.period),
            }
        });
        let t = self.totals();
        BillingView {
            currency: p.currency,
            at_unix_ms: self.last_tick().at_unix_ms,
            rate: p.rate,
            rate_source: p.source.clone(),
            granularity: p.granularity,
            clock_start_unix_ms: self.start_unix_ms(),
            paid_ms: t.paid_ms,
            watched_ms: t.observed_ms.min(t.paid_ms),
            spent: t.spent,
            spent_today: self.spent_in_period(BudgetPeriod::Day),
            burn_per_hour: self.burn_per_hour(),
            list_per_gpu_hour: per_gpu,
            idle_share: self.idle_share(),
            idle_cost: t.idle_cost,
            busy_gpu_hours: self.busy_gpu_hours(),
            cost_per_busy_gpu_hour: self.cost_per_busy_gpu_hour(),
            projected_end_of_day: self.projected_end_of(BudgetPeriod::Day),
            projected_end_of_month: self.projected_end_of(BudgetPeriod::Month),
            budget,
            energy_kwh: self
                .energy_seen
                .then(|| t.energy_mj as f64 / MJ_PER_KWH as f64),
            energy_cost: self.energy_cost().filter(|_| self.energy_seen),
            egress_bytes: t.egress_bytes,
            egress_cost: self.egress_cost(),
            egress_per_hour: self.egress_per_hour(),
            stopped_storage: p.stopped_storage.clone(),
            gpus: self.gpus_now,
            busy_gpus: self.busy_now,
        }
    }
}
