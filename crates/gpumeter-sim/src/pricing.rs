//! A scenario's `[pricing]` table: what the simulated machine costs. Only parsed here (money as
//! integer micro-units, never floats); the billing meter gives it meaning.

use serde::Deserialize;

/// What a rate is charged per.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateUnit {
    /// Per instance-hour (`"31.00/h"`).
    InstanceHour,
    /// Per GPU-hour, times the GPU count (`"3.10/gpu-h"`).
    GpuHour,
}

/// The price of a simulated machine.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "RawPricing")]
pub struct Pricing {
    /// The rate as written, e.g. `31.00/h`.
    pub rate_text: String,
    /// The rate in millionths of the currency unit per `unit`.
    pub rate_micros: u64,
    pub unit: RateUnit,
    /// ISO currency code, `USD` unless given.
    pub currency: String,
    /// Budget ceiling in millionths of the currency unit.
    pub budget_micros: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPricing {
    rate: String,
    currency: Option<String>,
    budget: Option<Amount>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Amount {
    Whole(u64),
    Text(String),
}

impl TryFrom<RawPricing> for Pricing {
    type Error = String;

    fn try_from(raw: RawPricing) -> Result<Self, String> {
        let (amount, unit) = raw
            .rate
            .split_once('/')
            .ok_or_else(|| format!("rate `{}`: expected AMOUNT/h or AMOUNT/gpu-h", raw.rate))?;
        let unit = match unit.trim() {
            "h" | "hr" | "hour" => RateUnit::InstanceHour,
            "gpu-h" | "gpu-hr" | "gpu-hour" => RateUnit::GpuHour,
            other => {
                return Err(format!(
                    "rate `{}`: unknown unit `{other}` (use h or gpu-h)",
                    raw.rate
                ));
            }
        };
        let rate_micros = parse_micros(amount.trim()).map_err(|e| format!("rate: {e}"))?;
        let budget_micros = match raw.budget {
            None => None,
            Some(Amount::Whole(n)) => Some(
                n.checked_mul(1_000_000)
                    .ok_or_else(|| format!("budget {n} is too large"))?,
            ),
            Some(Amount::Text(t)) => {
                Some(parse_micros(t.trim()).map_err(|e| format!("budget: {e}"))?)
            }
        };
        Ok(Pricing {
            rate_text: raw.rate.clone(),
            rate_micros,
            unit,
            currency: raw.currency.unwrap_or_else(|| "USD".into()),
            budget_micros,
        })
    }
}

/// `"31.00"` → 31_000_000: a decimal amount with up to 6 fractional digits, no floats.
pub(crate) fn parse_micros(text: &str) -> Result<u64, String> {
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !(frac.is_empty() || digits(frac)) || frac.len() > 6 {
        return Err(format!(
            "`{text}` is not an amount like 31.00 (at most 6 decimals)"
        ));
    }
    let whole: u64 = whole
        .parse()
        .map_err(|_| format!("`{text}` is too large"))?;
    let frac_micros: u64 = format!("{frac:0<6}")
        .parse()
        .map_err(|_| format!("`{text}` is not an amount"))?;
    whole
        .checked_mul(1_000_000)
        .and_then(|w| w.checked_add(frac_micros))
        .ok_or_else(|| format!("`{text}` is too large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Holder {
        pricing: Pricing,
    }

    fn parse(text: &str) -> Result<Pricing, String> {
        toml::from_str::<Holder>(&format!("pricing = {text}"))
            .map(|h| h.pricing)
            .map_err(|e| e.message().to_string())
    }

    #[test]
    fn rates_parse_to_micros() {
        let p = parse(r#"{ rate = "31.00/h" }"#).unwrap();
        assert_eq!(
            (p.rate_micros, p.unit),
            (31_000_000, RateUnit::InstanceHour)
        );
        assert_eq!(p.currency, "USD");
        let p = parse(r#"{ rate = "3.1/gpu-h", currency = "EUR", budget = "250.5" }"#).unwrap();
        assert_eq!((p.rate_micros, p.unit), (3_100_000, RateUnit::GpuHour));
        assert_eq!(p.budget_micros, Some(250_500_000));
        assert_eq!(p.currency, "EUR");
        let p = parse(r#"{ rate = "2/h", budget = 100 }"#).unwrap();
        assert_eq!(p.budget_micros, Some(100_000_000));
    }

    #[test]
    fn bad_rates_say_why() {
        assert!(
            parse(r#"{ rate = "31" }"#)
                .unwrap_err()
                .contains("AMOUNT/h")
        );
        assert!(
            parse(r#"{ rate = "31/day" }"#)
                .unwrap_err()
                .contains("unknown unit")
        );
        assert!(
            parse(r#"{ rate = "3.1234567/h" }"#)
                .unwrap_err()
                .contains("6 decimals")
        );
        assert!(
            parse(r#"{ rate = "-1/h" }"#)
                .unwrap_err()
                .contains("not an amount")
        );
    }
}
