//! Money: exact amounts as integer micro-units (millionths of a currency unit) and the currencies
//! gpumeter can print. Pure values, no I/O.
//!
//! Why micro-units: a meter ticks every second for weeks; a float would drift, an integer does
//! not. Parsing goes from the decimal text straight to integers (no `f64` on the way in).
//!
//! Overflow policy: `i64` micro-units hold ±9.2 trillion units, far beyond any bill, so the
//! arithmetic here is `checked_*` (returns `None`) or `saturating_*` (clamps at the bounds and
//! says so in its name). There are no `+`/`-` operators that could wrap or panic silently.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Micro-units in one currency unit.
pub const MICROS_PER_UNIT: i64 = 1_000_000;

/// Milliseconds in the hour that prices are quoted per.
const MS_PER_HOUR: i64 = 3_600_000;

/// An exact amount of money in micro-units of some currency (the currency travels separately).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Money(i64);

/// Why a decimal amount or a currency code was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoneyError {
    /// The text is not a plain decimal number; holds the text as given.
    #[error("'{0}' is not an amount (examples: 31, 2.49, 0.000125)")]
    NotAnAmount(String),
    /// More than 6 decimal places (finer than one micro-unit); holds the text as given.
    #[error("'{0}' has more than 6 decimal places")]
    TooPrecise(String),
    /// The amount does not fit an `i64` of micro-units; holds the text as given.
    #[error("'{0}' is too large")]
    TooLarge(String),
    /// Not an ISO 4217 code gpumeter knows; holds the code as given.
    #[error("unknown currency '{0}' (use an ISO 4217 code such as USD, EUR, GBP, JPY, CHF)")]
    UnknownCurrency(String),
}

impl Money {
    /// No money.
    pub const ZERO: Money = Money(0);
    /// The largest amount: `i64::MAX` micro-units (where saturating arithmetic stops).
    pub const MAX: Money = Money(i64::MAX);

    /// An amount in micro-units (millionths of the currency unit).
    pub const fn from_micros(micros: i64) -> Money {
        Money(micros)
    }

    /// The amount in micro-units (millionths of the currency unit).
    pub const fn micros(self) -> i64 {
        self.0
    }

    /// Whole currency units; `None` on overflow.
    pub fn from_units(units: i64) -> Option<Money> {
        units.checked_mul(MICROS_PER_UNIT).map(Money)
    }

    /// Parses a plain decimal such as `31`, `-2.5`, `0.000125` exactly (at most 6 decimals).
    pub fn parse(text: &str) -> Result<Money, MoneyError> {
        let s = text.trim();
        let bad = || MoneyError::NotAnAmount(text.to_string());
        let (negative, digits) = match s.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, s.strip_prefix('+').unwrap_or(s)),
        };
        let (whole, frac) = digits.split_once('.').unwrap_or((digits, ""));
        let all_digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
        if (whole.is_empty() && frac.is_empty()) || !all_digits(whole) || !all_digits(frac) {
            return Err(bad());
        }
        if frac.len() > 6 {
            return Err(MoneyError::TooPrecise(text.to_string()));
        }
        let too_large = || MoneyError::TooLarge(text.to_string());
        let whole_units: i64 = if whole.is_empty() {
            0
        } else {
            whole.parse().map_err(|_| too_large())?
        };
        let mut frac_micros: i64 = 0;
        for b in frac.bytes().chain(std::iter::repeat(b'0')).take(6) {
            frac_micros = frac_micros * 10 + i64::from(b - b'0');
        }
        let micros = whole_units
            .checked_mul(MICROS_PER_UNIT)
            .and_then(|w| w.checked_add(frac_micros))
            .ok_or_else(too_large)?;
        Ok(Money(if negative { -micros } else { micros }))
    }

    /// Adds exactly; `None` on overflow.
    pub fn checked_add(self, other: Money) -> Option<Money> {
        self.0.checked_add(other.0).map(Money)
    }

    /// Subtracts exactly; `None` on overflow.
    pub fn checked_sub(self, other: Money) -> Option<Money> {
        self.0.checked_sub(other.0).map(Money)
    }

    /// Adds, clamping at [`Money::MAX`] / `MIN` instead of wrapping.
    pub fn saturating_add(self, other: Money) -> Money {
        Money(self.0.saturating_add(other.0))
    }

    /// Subtracts, clamping at the bounds instead of wrapping.
    pub fn saturating_sub(self, other: Money) -> Money {
        Money(self.0.saturating_sub(other.0))
    }

    /// `self × num / den`, rounded half away from zero, computed in `i128`; saturates at the
    /// bounds. `den == 0` gives zero (there is nothing to divide).
    pub fn mul_div(self, num: i128, den: i128) -> Money {
        if den == 0 {
            return Money::ZERO;
        }
        let product = i128::from(self.0).saturating_mul(num);
        Money(clamp_i128(div_round(product, den)))
    }

    /// The one cost function: what `ms` of time costs at `self` per hour, rounded half away
    /// from zero to the micro-unit (see [`Money::mul_div`]).
    pub fn cost_for_ms(self, ms: i64) -> Money {
        self.mul_div(i128::from(ms), i128::from(MS_PER_HOUR))
    }

    /// An approximate value in currency units, for ratios and bars only (never summed).
    pub fn as_units_f64(self) -> f64 {
        self.0 as f64 / MICROS_PER_UNIT as f64
    }

    /// From a float estimate (projections); rounds to the nearest micro-unit, saturating.
    pub fn from_units_f64(units: f64) -> Money {
        if !units.is_finite() {
            return if units > 0.0 { Money::MAX } else { Money::ZERO };
        }
        let micros = (units * MICROS_PER_UNIT as f64).round();
        // `as` saturates for floats out of range.
        Money(micros as i64)
    }

    /// Whether the amount is below zero.
    pub fn is_negative(self) -> bool {
        self.0 < 0
    }
}

/// `n / d` rounded half away from zero (`d != 0`).
pub(crate) fn div_round(n: i128, d: i128) -> i128 {
    let q = n / d;
    let r = n % d;
    if r.saturating_mul(2).abs() >= d.abs() {
        if (n < 0) == (d < 0) { q + 1 } else { q - 1 }
    } else {
        q
    }
}

fn clamp_i128(v: i128) -> i64 {
    i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX })
}

/// Exact decimal text without a currency: `31`, `2.49`, `-0.000001`. [`Money::parse`] reads it back.
impl fmt::Display for Money {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let abs = self.0.unsigned_abs();
        let whole = abs / MICROS_PER_UNIT as u64;
        let frac = abs % MICROS_PER_UNIT as u64;
        if frac == 0 {
            write!(f, "{sign}{whole}")
        } else {
            let digits = format!("{frac:06}");
            write!(f, "{sign}{whole}.{}", digits.trim_end_matches('0'))
        }
    }
}

/// A currency gpumeter knows how to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Currency {
    code: &'static str,
    symbol: Option<&'static str>,
    decimals: u8,
}

/// (code, symbol, decimals). Codes without a symbol here print as `CHF 12.50`.
const CURRENCIES: &[(&str, Option<&str>, u8)] = &[
    ("USD", Some("$"), 2),
    ("EUR", Some("€"), 2),
    ("GBP", Some("£"), 2),
    ("JPY", Some("¥"), 0),
    ("AUD", None, 2),
    ("BRL", None, 2),
    ("CAD", None, 2),
    ("CHF", None, 2),
    ("CNY", None, 2),
    ("CZK", None, 2),
    ("DKK", None, 2),
    ("HKD", None, 2),
    ("INR", None, 2),
    ("KRW", None, 0),
    ("MXN", None, 2),
    ("NOK", None, 2),
    ("NZD", None, 2),
    ("PLN", None, 2),
    ("SEK", None, 2),
    ("SGD", None, 2),
    ("TWD", None, 2),
    ("ZAR", None, 2),
];

/// A currency travels as its ISO code (`"USD"`) in JSON.
impl Serialize for Currency {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.code)
    }
}

impl Default for Currency {
    fn default() -> Self {
        Currency::USD
    }
}

impl Currency {
    /// US dollars, `$`, 2 decimals (the default currency).
    pub const USD: Currency = Currency {
        code: "USD",
        symbol: Some("$"),
        decimals: 2,
    };

    /// Looks up an ISO 4217 code (case-insensitive). Unknown codes are an error, not a guess.
    pub fn from_code(code: &str) -> Result<Currency, MoneyError> {
        let wanted = code.trim().to_ascii_uppercase();
        CURRENCIES
            .iter()
            .find(|(c, _, _)| *c == wanted)
            .map(|&(code, symbol, decimals)| Currency {
                code,
                symbol,
                decimals,
            })
            .ok_or_else(|| MoneyError::UnknownCurrency(code.to_string()))
    }

    /// The ISO 4217 code (`USD`, `EUR`).
    pub fn code(&self) -> &'static str {
        self.code
    }

    /// Decimal places printed by [`Currency::format`].
    pub fn decimals(&self) -> u8 {
        self.decimals
    }

    /// `$1,234.57`, `-€0.50`, `¥1,235`, `CHF 12.50`: rounded half away from zero to the
    /// currency's decimals, with thousands separators.
    pub fn format(&self, m: Money) -> String {
        self.format_with(m, self.decimals)
    }

    /// An hourly amount: `$31.00/h`, `¥3,150/h` (the one way every room writes a rate).
    pub fn per_hour(&self, m: Money) -> String {
        let mut s = self.format(m);
        s.push_str("/h");
        s
    }

    /// Like [`Currency::format`] with more decimals (rates such as `$0.0042/min`), at most 6.
    pub fn format_with(&self, m: Money, decimals: u8) -> String {
        let decimals = decimals.min(6);
        let step = 10_i128.pow(6 - u32::from(decimals));
        let rounded = div_round(i128::from(m.micros()), step).unsigned_abs();
        let scale = 10_u128.pow(u32::from(decimals));
        let whole = group_thousands(rounded / scale);
        let number = if decimals == 0 {
            whole
        } else {
            format!(
                "{whole}.{:0width$}",
                rounded % scale,
                width = usize::from(decimals)
            )
        };
        let sign = if m.is_negative() && rounded != 0 {
            "-"
        } else {
            ""
        };
        match self.symbol {
            Some(sym) => format!("{sign}{sym}{number}"),
            None => format!("{sign}{} {number}", self.code),
        }
    }

    /// Reads back what [`Currency::format`] printed (symbol or code prefix, separators).
    pub fn parse_amount(&self, text: &str) -> Result<Money, MoneyError> {
        let s = text.trim();
        let (negative, s) = match s.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, s),
        };
        let s = match self.symbol {
            Some(sym) => s.strip_prefix(sym).unwrap_or(s),
            None => s,
        };
        let s = s.strip_prefix(self.code).unwrap_or(s).trim();
        let plain: String = s.chars().filter(|&c| c != ',').collect();
        let m = Money::parse(&plain).map_err(|_| MoneyError::NotAnAmount(text.to_string()))?;
        Ok(if negative { Money(-m.micros()) } else { m })
    }
}

fn group_thousands(n: u128) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

impl fmt::Display for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_exact_decimals() {
        assert_eq!(Money::parse("31").unwrap().micros(), 31_000_000);
        assert_eq!(Money::parse("2.49").unwrap().micros(), 2_490_000);
        assert_eq!(Money::parse(".5").unwrap().micros(), 500_000);
        assert_eq!(Money::parse("-0.000001").unwrap().micros(), -1);
        assert_eq!(Money::parse(" 7. ").unwrap().micros(), 7_000_000);
        assert!(matches!(
            Money::parse("0.0000001"),
            Err(MoneyError::TooPrecise(_))
        ));
        for bad in ["", ".", "1e3", "1,5", "abc", "--1", "1.2.3", "$5"] {
            assert!(
                matches!(Money::parse(bad), Err(MoneyError::NotAnAmount(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            Money::parse("99999999999999999999"),
            Err(MoneyError::TooLarge(_))
        ));
    }

    #[test]
    fn formats_with_symbols_codes_and_separators() {
        let eur = Currency::from_code("eur").unwrap();
        let m = Money::parse("1234.565").unwrap();
        assert_eq!(Currency::USD.format(m), "$1,234.57");
        assert_eq!(eur.format(Money::parse("-0.5").unwrap()), "-€0.50");
        assert_eq!(Currency::from_code("GBP").unwrap().format(m), "£1,234.57");
        assert_eq!(Currency::from_code("JPY").unwrap().format(m), "¥1,235");
        assert_eq!(
            Currency::from_code("CHF").unwrap().format(m),
            "CHF 1,234.57"
        );
        assert_eq!(
            Currency::USD.format_with(Money::from_micros(4_200), 4),
            "$0.0042"
        );
        assert_eq!(Currency::USD.format(Money::from_micros(-1)), "$0.00");
        let err = Currency::from_code("XYZ").unwrap_err().to_string();
        assert!(err.contains("unknown currency 'XYZ'"), "{err}");
    }

    #[test]
    fn mul_div_rounds_half_away_from_zero_and_saturates() {
        let m = Money::from_micros(10);
        assert_eq!(m.mul_div(1, 4).micros(), 3); // 2.5 → 3
        assert_eq!(Money::from_micros(-10).mul_div(1, 4).micros(), -3);
        assert_eq!(m.mul_div(1, 3).micros(), 3);
        assert_eq!(Money::MAX.mul_div(10, 1), Money::MAX);
        assert_eq!(m.mul_div(1, 0), Money::ZERO);
    }

    proptest! {
        #[test]
        fn display_parse_round_trip(micros in any::<i64>().prop_filter("abs fits", |m| *m != i64::MIN)) {
            let m = Money::from_micros(micros);
            prop_assert_eq!(Money::parse(&m.to_string()).unwrap(), m);
        }

        #[test]
        fn currency_format_round_trips_at_its_precision(cents in -10_000_000_000_i64..10_000_000_000) {
            for code in ["USD", "EUR", "GBP", "CHF"] {
                let cur = Currency::from_code(code).unwrap();
                let m = Money::from_micros(cents * 10_000);
                prop_assert_eq!(cur.parse_amount(&cur.format(m)).unwrap(), m);
            }
            let yen = Currency::from_code("JPY").unwrap();
            let m = Money::from_units(cents).unwrap();
            prop_assert_eq!(yen.parse_amount(&yen.format(m)).unwrap(), m);
        }

        /// What people read: never a negative zero (`-$0.00` for a fraction of a cent), never
        /// `+-`, and a sign only on an amount that shows as non-zero.
        #[test]
        fn formatted_money_has_no_negative_zero_and_no_stray_sign(micros in -100_000_i64..100_000, big in any::<i64>()) {
            for code in ["USD", "EUR", "JPY", "CHF"] {
                let cur = Currency::from_code(code).unwrap();
                for m in [micros, big] {
                    let text = cur.format(Money::from_micros(m));
                    prop_assert!(!text.contains("+-") && !text.contains("-+"), "{text}");
                    let digits_zero = text.chars().filter(char::is_ascii_digit).all(|c| c == '0');
                    prop_assert!(!(text.starts_with('-') && digits_zero), "negative zero: {text} for {m}");
                }
            }
        }

        /// Durations never read negative and never carry a sign, whatever the span.
        #[test]
        fn formatted_durations_never_carry_a_sign(ms in any::<i64>()) {
            use crate::units::{DurationStyle, age, duration, period};
            for text in [
                duration(ms, DurationStyle::Compact),
                duration(ms, DurationStyle::Words),
                period(ms),
                age(ms),
            ] {
                prop_assert!(!text.contains('-') && !text.contains('+'), "{text} for {ms}");
            }
        }

        #[test]
        fn arithmetic_never_wraps(a in any::<i64>(), b in any::<i64>()) {
            let (x, y) = (Money::from_micros(a), Money::from_micros(b));
            prop_assert_eq!(x.checked_add(y).map(Money::micros), a.checked_add(b));
            prop_assert_eq!(x.checked_sub(y).map(Money::micros), a.checked_sub(b));
            prop_assert_eq!(x.saturating_add(y).micros(), a.saturating_add(b));
            prop_assert_eq!(x.saturating_sub(y).micros(), a.saturating_sub(b));
            let r = x.mul_div(i128::from(b), 3_600_000);
            let exact = i128::from(a) * i128::from(b) / 3_600_000;
            prop_assert!((i128::from(r.micros()) - exact).abs() <= 1
                || r == Money::MAX || r.micros() == i64::MIN);
        }
    }
}
