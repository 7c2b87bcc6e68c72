//! The value parsers clap calls for our own value types (durations, sizes, money, commands),
//! each error saying what was expected.

use std::time::Duration;

use super::commands::CommandLine;
use gpumeter_core::billing::{Budget, Rate};
use gpumeter_core::money::Currency;
use gpumeter_core::units::parse_duration;

/// A size such as `500K`, `100M`, `2G` (powers of 1024) or a plain number of bytes.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m = match c.to_ascii_uppercase() {
                'K' => 1u64 << 10,
                'M' => 1 << 20,
                'G' => 1 << 30,
                _ => return Err(format!("unknown size unit in '{s}' (use K, M or G)")),
            };
            (&t[..i], m)
        }
        _ => (t, 1),
    };
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a size (examples: 500K, 100M, 2G)"))?;
    let bytes = n
        .checked_mul(mult)
        .ok_or_else(|| format!("'{s}' is too large"))?;
    if bytes < 4096 {
        return Err(format!("'{s}' is too small: at least 4K"));
    }
    Ok(bytes)
}

pub(super) fn parse_expect(s: &str) -> Result<gpumeter_core::expect::Expect, String> {
    gpumeter_core::expect::Expect::parse(s)
}

pub(super) fn parse_command(s: &str) -> Result<CommandLine, String> {
    gpumeter_core::notify::run::split_command(s)
        .map(CommandLine)
        .ok_or_else(|| format!("'{s}' is not a command (empty, or an unclosed quote)"))
}

pub(super) fn parse_interval(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s)?;
    if d < Duration::from_millis(100) {
        return Err(format!(
            "'{s}' is too short: the interval must be at least 100ms"
        ));
    }
    Ok(d)
}

pub(super) fn parse_rate(s: &str) -> Result<Rate, String> {
    Rate::parse(s).map_err(|e| e.to_string())
}

pub(super) fn parse_budget(s: &str) -> Result<Budget, String> {
    Budget::parse(s).map_err(|e| e.to_string())
}

pub(super) fn parse_currency(s: &str) -> Result<Currency, String> {
    Currency::from_code(s).map_err(|e| e.to_string())
}
