//! The money side of the engine: pricing, the billing [`Meter`] fed once per tick, budget
//! crossings and the [`BillingView`] the dashboard renders.
//!
//! Pure: no I/O and no wall clock. Time arrives as `now_unix_ms` (the snapshot's time), all
//! periods are UTC. The durable record lives in [`crate::ledger`], outside the engine.

pub mod budget;
pub mod calendar;
mod cost;
pub mod meter;
pub mod pricing;
pub mod rate_source;
pub mod view;

#[cfg(test)]
mod tests;

pub use budget::{BudgetEvent, BudgetEventKind, spent_share};
pub use meter::{GpuTick, Meter, MeterConfig, MeterSeed, MeterTotals, TickRecord};
pub use pricing::{
    Budget, BudgetPeriod, ClockStart, Granularity, Pricing, PricingError, Rate, RateUnit,
    StoppedStorage,
};
pub use rate_source::{ListPrice, RateSource, rate_text};
pub use view::{BillingView, BudgetView, per_busy_gpu_hour};
