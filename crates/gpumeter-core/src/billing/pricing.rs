//! What the machine costs and how the bill is counted: [`Rate`], [`Granularity`], [`ClockStart`],
//! [`Budget`] and the resolved [`Pricing`] the meter runs on. Parsing of the user's text lives
//! here too (exact, through [`Money::parse`]); errors say what was wrong, and the config layer
//! adds where.

use std::fmt;

use crate::money::{Currency, Money, MoneyError};

/// Milliseconds in one hour.
pub const HOUR_MS: i64 = 3_600_000;

/// Why a pricing value was refused (the config layer adds the file, line and field).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PricingError {
    /// The amount is not a valid exact money value.
    #[error("{0}")]
    Amount(#[from] MoneyError),
    /// A negative amount; holds the text as given.
    #[error("must not be negative (got '{0}')")]
    Negative(String),
    /// A rate without the `AMOUNT/UNIT` shape; holds the text as given.
    #[error("'{0}': expected AMOUNT/UNIT such as 31.00/h, 3.10/gpu-h or 2000/month")]
    RateShape(String),
    /// A rate whose unit after the `/` is not one gpumeter knows.
    #[error("unknown rate unit '{unit}' in '{text}' (use h, gpu-h, month or gpu-month)")]
    RateUnit {
        /// The whole rate as given.
        text: String,
        /// The unit after the `/`, lowercased.
        unit: String,
    },
    /// A granularity name that is none of [`Granularity::ALL`]; holds the text as given.
    #[error(
        "unknown granularity '{0}' (use per-second-min-60s, per-second, per-minute, per-hour or monthly)"
    )]
    Granularity(String),
    /// A budget whose period after the `/` is not `day`, `month` or `run`.
    #[error("unknown budget period '{period}' in '{text}' (use day, month or run)")]
    BudgetPeriod {
        /// The whole budget as given.
        text: String,
        /// The period after the `/`, lowercased.
        period: String,
    },
    /// Neither `boot`, `container`, `first-sample` nor an RFC 3339 time; holds the text as given.
    #[error(
        "'{0}' is not a clock start (use boot, container, or a time such as 2026-05-01T08:00:00Z)"
    )]
    ClockStart(String),
    /// A monthly rate with a non-monthly granularity, or the other way round (see [`Pricing::check`]).
    #[error("granularity '{granularity}' does not fit rate '{rate}' ({why})")]
    Mismatch {
        /// The granularity's config name.
        granularity: String,
        /// The rate as [`Rate`]'s `Display` writes it.
        rate: String,
        /// Which way round it does not fit.
        why: &'static str,
    },
}

/// What one rate amount is charged per.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateUnit {
    /// The whole machine per hour (`31.00/h`).
    InstanceHour,
    /// Per GPU-hour, times the GPU count (`3.10/gpu-h`).
    GpuHour,
    /// The whole machine per calendar month, amortised (`2000/month`).
    InstanceMonth,
    /// Per GPU per calendar month, amortised (`250/gpu-month`).
    GpuMonth,
}

impl RateUnit {
    /// Whether the amount is multiplied by the GPU count (`gpu-h`, `gpu-month`).
    pub fn per_gpu(self) -> bool {
        matches!(self, RateUnit::GpuHour | RateUnit::GpuMonth)
    }

    /// Whether the amount is per calendar month (amortised) rather than per hour.
    pub fn monthly(self) -> bool {
        matches!(self, RateUnit::InstanceMonth | RateUnit::GpuMonth)
    }

    /// `h`, `gpu-h`, `month`, `gpu-month`.
    pub fn suffix(self) -> &'static str {
        match self {
            RateUnit::InstanceHour => "h",
            RateUnit::GpuHour => "gpu-h",
            RateUnit::InstanceMonth => "month",
            RateUnit::GpuMonth => "gpu-month",
        }
    }
}

/// A list price: an amount per unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    /// Price per unit, exact.
    pub amount: Money,
    /// What the amount is charged per.
    pub unit: RateUnit,
}

impl Rate {
    /// Parses `31.00/h`, `3.10/gpu-h`, `2000/month`, `250/gpu-month` (also `/hour`, `/gpu-hour`,
    /// `/mo`). Negative amounts are refused.
    pub fn parse(text: &str) -> Result<Rate, PricingError> {
        let (amount, unit) = text
            .split_once('/')
            .ok_or_else(|| PricingError::RateShape(text.to_string()))?;
        let unit = match unit.trim().to_ascii_lowercase().as_str() {
            "h" | "hr" | "hour" => RateUnit::InstanceHour,
            "gpu-h" | "gpu-hr" | "gpu-hour" | "gpuh" => RateUnit::GpuHour,
            "month" | "mo" => RateUnit::InstanceMonth,
            "gpu-month" | "gpu-mo" => RateUnit::GpuMonth,
            other => {
                return Err(PricingError::RateUnit {
                    text: text.to_string(),
                    unit: other.to_string(),
                });
            }
        };
        let amount = non_negative(amount).map_err(|e| whole(e, text))?;
        Ok(Rate { amount, unit })
    }
}

/// `31/h`, `3.1/gpu-h`: [`Rate::parse`] reads it back.
impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.amount, self.unit.suffix())
    }
}

/// A negative-amount error quoting the whole value (`-1/h`), not just its number.
fn whole(e: PricingError, text: &str) -> PricingError {
    match e {
        PricingError::Negative(_) => PricingError::Negative(text.trim().to_string()),
        other => other,
    }
}

/// A non-negative exact amount.
pub fn non_negative(text: &str) -> Result<Money, PricingError> {
    let m = Money::parse(text)?;
    if m.is_negative() {
        return Err(PricingError::Negative(text.trim().to_string()));
    }
    Ok(m)
}

/// How the provider rounds the time it bills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Granularity {
    /// Per second, at least 60 s (AWS Linux, GCP).
    PerSecondMin60,
    /// Per second (RunPod and others).
    PerSecond,
    /// Per started minute (Lambda).
    PerMinute,
    /// Per started hour.
    PerHour,
    /// A flat monthly price spread evenly over each calendar month (UTC).
    Monthly,
}

impl Granularity {
    /// Every granularity, in the order the config error lists them.
    pub const ALL: [Granularity; 5] = [
        Granularity::PerSecondMin60,
        Granularity::PerSecond,
        Granularity::PerMinute,
        Granularity::PerHour,
        Granularity::Monthly,
    ];

    /// Parses a config name (`pricing.granularity`): `per-second-min-60s`, `per-second`,
    /// `per-minute`, `per-hour` or `monthly`; surrounding spaces are ignored.
    pub fn parse(text: &str) -> Result<Granularity, PricingError> {
        Granularity::ALL
            .into_iter()
            .find(|g| g.name() == text.trim())
            .ok_or_else(|| PricingError::Granularity(text.to_string()))
    }

    /// The config name.
    pub fn name(self) -> &'static str {
        match self {
            Granularity::PerSecondMin60 => "per-second-min-60s",
            Granularity::PerSecond => "per-second",
            Granularity::PerMinute => "per-minute",
            Granularity::PerHour => "per-hour",
            Granularity::Monthly => "monthly",
        }
    }

    /// Billed milliseconds for `paid_ms` of running time: rounded up to the unit, with the
    /// 60 s minimum where it applies. Nothing run yet bills nothing. Monthly bills time as is
    /// (the month's price is spread over it).
    pub fn bill_ms(self, paid_ms: i64) -> i64 {
        if paid_ms <= 0 {
            return 0;
        }
        let round_up = |unit: i64| (paid_ms.saturating_add(unit - 1) / unit).saturating_mul(unit);
        match self {
            Granularity::PerSecondMin60 => round_up(1_000).max(60_000),
            Granularity::PerSecond => round_up(1_000),
            Granularity::PerMinute => round_up(60_000),
            Granularity::PerHour => round_up(HOUR_MS),
            Granularity::Monthly => paid_ms,
        }
    }
}

/// When the provider's clock started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockStart {
    /// Instance boot (`btime`, from the snapshot); the first reading when the source cannot say.
    Boot,
    /// A fixed time, ms since the Unix epoch.
    At(i64),
    /// The container's start (resolved to [`ClockStart::At`] by the launcher, which reads /proc).
    Container,
    /// The first reading gpumeter takes.
    FirstSample,
}

impl ClockStart {
    /// `boot`, `container`, `first-sample`, or an RFC 3339 time (`2026-05-01T08:00:00Z`).
    pub fn parse(text: &str) -> Result<ClockStart, PricingError> {
        match text.trim() {
            "boot" => Ok(ClockStart::Boot),
            "container" => Ok(ClockStart::Container),
            "first-sample" | "now" => Ok(ClockStart::FirstSample),
            other => chrono::DateTime::parse_from_rfc3339(other)
                .map(|t| ClockStart::At(t.timestamp_millis()))
                .map_err(|_| PricingError::ClockStart(text.to_string())),
        }
    }
}

/// The period a budget covers; days and months are UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetPeriod {
    /// One UTC calendar day.
    Day,
    /// One UTC calendar month.
    Month,
    /// The whole billing session (since the clock start).
    Run,
}

impl BudgetPeriod {
    /// `day`, `month` or `run`: the config suffix, and the word the budget sentence prints.
    pub fn name(self) -> &'static str {
        match self {
            BudgetPeriod::Day => "day",
            BudgetPeriod::Month => "month",
            BudgetPeriod::Run => "run",
        }
    }
}

/// A spend ceiling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// The ceiling, in the pricing currency.
    pub amount: Money,
    /// What the ceiling covers.
    pub period: BudgetPeriod,
}

impl Budget {
    /// `500`, `500/day`, `12000/month`, `80/run` (a bare amount means the whole run).
    pub fn parse(text: &str) -> Result<Budget, PricingError> {
        let (amount, period) = text.split_once('/').unwrap_or((text, "run"));
        let period = match period.trim().to_ascii_lowercase().as_str() {
            "day" | "d" => BudgetPeriod::Day,
            "month" | "mo" => BudgetPeriod::Month,
            "run" => BudgetPeriod::Run,
            other => {
                return Err(PricingError::BudgetPeriod {
                    text: text.to_string(),
                    period: other.to_string(),
                });
            }
        };
        Ok(Budget {
            amount: non_negative(amount).map_err(|e| whole(e, text))?,
            period,
        })
    }
}

/// Everything the meter needs to turn time and readings into money.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pricing {
    /// The list price (`pricing.rate` or `--rate`).
    pub rate: Rate,
    /// How billed time is rounded (`pricing.granularity`; per-second unless the rate is monthly).
    pub granularity: Granularity,
    /// The currency amounts are in and are printed with (`pricing.currency` or `--currency`; USD).
    pub currency: Currency,
    /// When billing started (`pricing.clock_start`; boot by default).
    pub clock_start: ClockStart,
    /// Billed per hour whatever the GPUs do (disks, IPs, snapshots).
    pub extras_per_hour: Money,
    /// Per 10⁹ bytes sent out of the machine (non-loopback).
    pub egress_per_gb: Money,
    /// The spend ceiling (`pricing.budget` or `--budget`); `None` when no budget is set.
    pub budget: Option<Budget>,
    /// Per kWh of GPU energy (on-prem); `None` leaves energy uncosted.
    pub electricity_per_kwh: Option<Money>,
    /// Where the rate came from: the user's, or a catalog list price.
    pub source: super::RateSource,
    /// The catalogued storage of the attached volumes, when the user priced none
    /// (`extras_per_hour`): what keeps billing while the box is stopped. Not in the burn or the
    /// ledger: it is a list figure for volumes whose type is assumed, said beside the spend.
    pub stopped_storage: Option<StoppedStorage>,
}

/// Storage that bills while the machine is stopped, priced from the catalog.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StoppedStorage {
    /// Per hour, from the monthly list price (a month of 730 hours, as the clouds count it).
    pub per_hour: Money,
    /// Where the figure came from: `2 × 1000 GB EBS gp3 at the catalogued $0.08/GB-month`.
    pub what: String,
    /// The same for a narrow panel, one line per kind of volume: `2 × 1000 GB EBS gp3 at
    /// $0.08/GB-month`.
    pub lines: Vec<String>,
}

impl Pricing {
    /// Plain pricing for a rate: per-second billing, USD, clock from boot, nothing extra.
    pub fn simple(rate: Rate) -> Pricing {
        Pricing {
            granularity: if rate.unit.monthly() {
                Granularity::Monthly
            } else {
                Granularity::PerSecond
            },
            rate,
            currency: Currency::USD,
            clock_start: ClockStart::Boot,
            extras_per_hour: Money::ZERO,
            egress_per_gb: Money::ZERO,
            budget: None,
            electricity_per_kwh: None,
            source: super::RateSource::default(),
            stopped_storage: None,
        }
    }

    /// Monthly rates need the monthly granularity and the other way round.
    pub fn check(&self) -> Result<(), PricingError> {
        let why = match (
            self.rate.unit.monthly(),
            self.granularity == Granularity::Monthly,
        ) {
            (true, false) => "a monthly rate needs granularity = \"monthly\"",
            (false, true) => "monthly billing needs a monthly rate such as 2000/month",
            _ => return Ok(()),
        };
        Err(PricingError::Mismatch {
            granularity: self.granularity.name().to_string(),
            rate: self.rate.to_string(),
            why,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_units_and_refuse_bad_input() {
        let r = Rate::parse("31.00/h").unwrap();
        assert_eq!(
            (r.amount.micros(), r.unit),
            (31_000_000, RateUnit::InstanceHour)
        );
        assert_eq!(Rate::parse("3.10/gpu-h").unwrap().unit, RateUnit::GpuHour);
        assert_eq!(
            Rate::parse("2000/month").unwrap().unit,
            RateUnit::InstanceMonth
        );
        assert_eq!(Rate::parse("3.1/gpu-h").unwrap().to_string(), "3.1/gpu-h");
        assert!(matches!(
            Rate::parse("-1/h"),
            Err(PricingError::Negative(_))
        ));
        assert!(matches!(
            Rate::parse("1/fortnight"),
            Err(PricingError::RateUnit { .. })
        ));
        assert!(matches!(Rate::parse("31"), Err(PricingError::RateShape(_))));
        assert!(matches!(Rate::parse("abc/h"), Err(PricingError::Amount(_))));
    }

    #[test]
    fn granularity_rounds_like_the_providers() {
        use Granularity::*;
        let s = 1_000;
        assert_eq!(PerSecondMin60.bill_ms(59 * s), 60 * s);
        assert_eq!(PerSecondMin60.bill_ms(61 * s), 61 * s);
        assert_eq!(PerSecondMin60.bill_ms(61 * s + 1), 62 * s);
        assert_eq!(PerSecond.bill_ms(1), s);
        assert_eq!(PerMinute.bill_ms(61 * s), 120 * s);
        assert_eq!(PerMinute.bill_ms(60 * s), 60 * s);
        assert_eq!(PerHour.bill_ms(3_601 * s), 2 * HOUR_MS);
        assert_eq!(Monthly.bill_ms(12_345), 12_345);
        for g in Granularity::ALL {
            assert_eq!(g.bill_ms(0), 0);
            assert_eq!(Granularity::parse(g.name()).unwrap(), g);
        }
        assert!(Granularity::parse("per-fortnight").is_err());
    }

    #[test]
    fn budgets_and_clock_starts_parse() {
        let b = Budget::parse("500/day").unwrap();
        assert_eq!(
            (b.amount, b.period),
            (Money::from_units(500).unwrap(), BudgetPeriod::Day)
        );
        assert_eq!(Budget::parse("80").unwrap().period, BudgetPeriod::Run);
        assert!(Budget::parse("500/week").is_err());
        assert!(Budget::parse("-5/day").is_err());
        assert_eq!(ClockStart::parse("boot").unwrap(), ClockStart::Boot);
        assert_eq!(
            ClockStart::parse("1970-01-01T00:00:01Z").unwrap(),
            ClockStart::At(1_000)
        );
        assert!(ClockStart::parse("yesterday").is_err());
    }

    #[test]
    fn monthly_rates_and_granularity_must_agree() {
        let mut p = Pricing::simple(Rate::parse("2000/month").unwrap());
        assert!(p.check().is_ok());
        p.granularity = Granularity::PerHour;
        assert!(
            p.check()
                .unwrap_err()
                .to_string()
                .contains("granularity = \"monthly\"")
        );
        let mut p = Pricing::simple(Rate::parse("2/h").unwrap());
        assert!(p.check().is_ok());
        p.granularity = Granularity::Monthly;
        assert!(p.check().unwrap_err().to_string().contains("2000/month"));
    }
}
