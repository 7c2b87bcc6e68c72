//! Numbers and text for people, one formatter of each: bytes, rates, durations ([`duration`],
//! the one duration formatter, in a compact and a prose style; [`age`] for sample ages),
//! text fitted to a width in display cells ([`width`], [`pad_right`], [`truncate`]), and the
//! durations people write (`90s`, `5m`) on the command line and in config files. Shared by every
//! front-end and the alert texts so all say the same thing the same way. Money is
//! [`crate::money`]'s.

mod duration;
mod text;

pub use duration::{DurationStyle, age, duration, duration_of_secs, period};
pub use text::{pad_left, pad_right, truncate, truncate_cow, truncate_words, width};

/// `None` is shown as this, never as 0.
pub const NA: &str = "N/A";

/// Binary-prefixed bytes: `512B`, `1.5KiB`, `79.6GiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = n as f64;
    let mut i = 0;
    while v >= 1024.0 && i < UNITS.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{n}B")
    } else if v >= 100.0 {
        format!("{v:.0}{}", UNITS[i])
    } else {
        format!("{v:.1}{}", UNITS[i])
    }
}

/// Decimal-prefixed rate: `0B/s`, `12.3MB/s`, `1.2GB/s` (network and bus rates are decimal).
pub fn rate(bytes_per_s: f64) -> String {
    const UNITS: [&str; 5] = ["B/s", "KB/s", "MB/s", "GB/s", "TB/s"];
    let mut v = bytes_per_s.max(0.0);
    let mut i = 0;
    while v >= 1000.0 && i < UNITS.len() - 1 {
        v /= 1000.0;
        i += 1;
    }
    if i == 0 {
        format!("{v:.0}{}", UNITS[i])
    } else {
        format!("{v:.1}{}", UNITS[i])
    }
}

/// A duration such as `250ms`, `90s`, `5m`, `2h`, `1d` (a bare number means seconds).
pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let s = s.trim();
    if s.starts_with('-') {
        return Err(format!(
            "'{s}' is negative: a duration counts forward (e.g. 1s, 5m)"
        ));
    }
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a duration (examples: 500ms, 90s, 5m, 2h)"))?;
    let factor_ms = match unit.trim() {
        "ms" => 1.0,
        "" | "s" => 1_000.0,
        "m" | "min" => 60_000.0,
        "h" => 3_600_000.0,
        "d" => 86_400_000.0,
        other => {
            return Err(format!(
                "unknown unit '{other}' in '{s}' (use ms, s, m, h or d)"
            ));
        }
    };
    let ms = value * factor_ms;
    if !ms.is_finite() || ms > 1e15 {
        return Err(format!("'{s}' is too long"));
    }
    Ok(std::time::Duration::from_millis(ms.round() as u64))
}

/// An optional value through a formatter, `N/A` when absent.
pub fn opt<T>(v: Option<T>, f: impl FnOnce(T) -> String) -> String {
    v.map(f).unwrap_or_else(|| NA.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_units() {
        use std::time::Duration;
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("1.5m").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("2h").unwrap(), Duration::from_secs(7200));
        assert!(
            parse_duration("5 fortnights")
                .unwrap_err()
                .contains("unknown unit")
        );
        assert!(
            parse_duration("abc")
                .unwrap_err()
                .contains("not a duration")
        );
    }

    #[test]
    fn bytes_use_binary_prefixes() {
        assert_eq!(bytes(512), "512B");
        assert_eq!(bytes(1536), "1.5KiB");
        assert_eq!(bytes(80 * 1024 * 1024 * 1024), "80.0GiB");
        assert_eq!(bytes(200 * 1024 * 1024 * 1024), "200GiB");
    }

    #[test]
    fn rates_use_decimal_prefixes() {
        assert_eq!(rate(0.0), "0B/s");
        assert_eq!(rate(12_300_000.0), "12.3MB/s");
        assert_eq!(rate(-5.0), "0B/s");
    }

    #[test]
    fn absent_values_read_na() {
        assert_eq!(opt(None::<u32>, |v| v.to_string()), "N/A");
        assert_eq!(opt(Some(0u32), |v| v.to_string()), "0");
    }
}
