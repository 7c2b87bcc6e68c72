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

/// A duration between `min` and `max`, or an error naming `what` it is for.
fn bounded(s: &str, what: &str, min: Duration, max: Duration) -> Result<Duration, String> {
    let d = parse_duration(s)?;
    let show = |d: Duration| {
        gpumeter_core::units::period(i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
    };
    if d < min {
        return Err(format!(
            "'{s}' is too short: {what} must be at least {}",
            show(min)
        ));
    }
    if d > max {
        return Err(format!(
            "'{s}' is too long: {what} must be at most {}",
            show(max)
        ));
    }
    Ok(d)
}

/// Time between readings or polls: 100ms to 1h (longer leaves the screen frozen).
pub(super) fn parse_interval(s: &str) -> Result<Duration, String> {
    bounded(
        s,
        "the interval",
        Duration::from_millis(100),
        Duration::from_secs(3600),
    )
}

/// How long one request may take: 100ms to 60s.
pub(super) fn parse_timeout(s: &str) -> Result<Duration, String> {
    bounded(
        s,
        "the timeout",
        Duration::from_millis(100),
        Duration::from_secs(60),
    )
}

/// Idle time before autostop: 1m (shorter stops a box between two steps) to 7d.
pub(super) fn parse_autostop(s: &str) -> Result<Duration, String> {
    bounded(
        s,
        "--autostop",
        Duration::from_secs(60),
        Duration::from_secs(7 * 86_400),
    )
}

/// How far into a demo scenario `snapshot --at` reads: at most 7d (it is simulated up to there).
pub(super) fn parse_at(s: &str) -> Result<Duration, String> {
    bounded(s, "--at", Duration::ZERO, Duration::from_secs(7 * 86_400))
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
