//! The meter's money: the direct spend formula over its integer totals, the list rate per hour,
//! the burn rate, and spend per budget period with projections to the period's end.

use super::calendar::{day_index, day_start_ms, month_index, month_len_ms, month_start_ms};
use super::meter::{BYTES_PER_GB, MJ_PER_KWH, Meter};
use super::pricing::{BudgetPeriod, HOUR_MS};
use crate::money::Money;

impl Meter {
    /// Billed-time units: the GPU count for per-GPU rates (the most GPUs seen: a GPU that fell
    /// off the bus is still rented), else 1.
    pub(super) fn units(&self) -> i128 {
        if self.cfg.pricing.rate.unit.per_gpu() {
            i128::from(self.max_gpus)
        } else {
            1
        }
    }

    /// The direct formula: rate × units × billed time, plus extras, egress and electricity.
    pub(super) fn spent_now(&self) -> Money {
        let p = &self.cfg.pricing;
        let paid = self.totals.paid_ms;
        let billed = i128::from(p.granularity.bill_ms(paid));
        let time = if p.rate.unit.monthly() {
            let mut sum = Money::ZERO;
            for (&month, &ms) in &self.month_ms {
                let num = self.units() * i128::from(ms);
                sum =
                    sum.saturating_add(p.rate.amount.mul_div(num, i128::from(month_len_ms(month))));
            }
            sum
        } else {
            p.rate
                .amount
                .mul_div(self.units() * billed, i128::from(HOUR_MS))
        };
        let extras = p.extras_per_hour.mul_div(billed, i128::from(HOUR_MS));
        let egress = self.egress_cost();
        let power = self.energy_cost().unwrap_or(Money::ZERO);
        time.saturating_add(extras)
            .saturating_add(egress)
            .saturating_add(power)
    }

    /// Cost of `ms` of running time at the list rate, without rounding to the granularity.
    pub(super) fn linear_cost(&self, ms: i64) -> Money {
        let per_hour = self.time_rate_per_hour();
        per_hour.mul_div(i128::from(ms), i128::from(HOUR_MS))
    }

    /// The list price of one hour of the machine now (rate × units + extras).
    pub(super) fn time_rate_per_hour(&self) -> Money {
        let p = &self.cfg.pricing;
        let rate = if p.rate.unit.monthly() {
            let month = month_index(self.last_ms.unwrap_or(0));
            p.rate.amount.mul_div(
                self.units() * i128::from(HOUR_MS),
                i128::from(month_len_ms(month)),
            )
        } else {
            p.rate.amount.mul_div(self.units(), 1)
        };
        rate.saturating_add(p.extras_per_hour)
    }

    /// Electricity cost of the energy counted so far, when a price per kWh is set.
    pub fn energy_cost(&self) -> Option<Money> {
        self.cfg
            .pricing
            .electricity_per_kwh
            .map(|p| p.mul_div(i128::from(self.totals.energy_mj), MJ_PER_KWH))
    }

    /// Spent since the clock start.
    pub fn spent(&self) -> Money {
        self.totals.spent
    }

    /// Spent since the start of the budget period containing the last tick.
    pub fn spent_in_period(&self, period: BudgetPeriod) -> Money {
        let base = match period {
            BudgetPeriod::Day => self.day_base.map(|(_, b)| b),
            BudgetPeriod::Month => self.month_base.map(|(_, b)| b),
            BudgetPeriod::Run => None,
        };
        self.totals
            .spent
            .saturating_sub(base.unwrap_or(Money::ZERO))
    }

    /// The start and end of the current day or month, ms (None for a run).
    pub fn period_bounds(&self, period: BudgetPeriod) -> Option<(i64, i64)> {
        let now = self.last_ms?;
        match period {
            BudgetPeriod::Day => {
                let d = day_index(now);
                Some((day_start_ms(d), day_start_ms(d + 1)))
            }
            BudgetPeriod::Month => {
                let m = month_index(now);
                Some((month_start_ms(m), month_start_ms(m + 1)))
            }
            BudgetPeriod::Run => None,
        }
    }

    /// Spend in the period plus the current burn until its end (None for a run).
    pub fn projected_end_of(&self, period: BudgetPeriod) -> Option<Money> {
        let (_, end) = self.period_bounds(period)?;
        let left = end - self.last_ms?;
        let more = self
            .burn_per_hour()
            .mul_div(i128::from(left), i128::from(HOUR_MS));
        Some(self.spent_in_period(period).saturating_add(more))
    }

    /// What the bytes sent out have cost so far (`[pricing] egress_per_gb`).
    pub fn egress_cost(&self) -> Money {
        self.cfg
            .pricing
            .egress_per_gb
            .mul_div(i128::from(self.totals.egress_bytes), BYTES_PER_GB)
    }

    /// What sending out costs per hour at the recent rate.
    pub fn egress_per_hour(&self) -> Money {
        let egress_gb_h = self.egress_bps * 3_600.0 / 1e9;
        Money::from_units_f64(self.cfg.pricing.egress_per_gb.as_units_f64() * egress_gb_h)
    }

    /// What the machine costs per hour now: list rate, extras, egress and power at their
    /// recent levels.
    pub fn burn_per_hour(&self) -> Money {
        let p = &self.cfg.pricing;
        let egress = self.egress_per_hour();
        let power = p.electricity_per_kwh.map_or(Money::ZERO, |price| {
            Money::from_units_f64(price.as_units_f64() * self.power_w / 1_000.0)
        });
        self.time_rate_per_hour()
            .saturating_add(egress)
            .saturating_add(power)
    }
}
