//! The one duration formatter. Two styles of the same reading: [`DurationStyle::Compact`] for
//! columns, chart titles and lines (`45s`, `1m30s`, `15m`, `3h07m`, `2d04h`), and
//! [`DurationStyle::Words`] for sentences (`45 s`, `90 s`, `12 min`, `3 h 07 min`). Both
//! truncate (never round up: "idle 9 min" is not said at 8 min 40 s) and read a negative span
//! as zero.

/// How [`duration`] writes a span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DurationStyle {
    /// The two largest units, the second left out when zero: `45s`, `1m30s`, `15m`,
    /// `3h07m`, `6h`, `2d04h`.
    Compact,
    /// For prose: seconds under two minutes (`45 s`, `60 s`, `90 s`), then
    /// whole minutes (`12 min`), then hours and minutes (`3 h 07 min`, `26 h 05 min`).
    Words,
}

/// A span of `ms` milliseconds in the given style.
pub fn duration(ms: i64, style: DurationStyle) -> String {
    let secs = (ms.max(0) / 1000).unsigned_abs();
    match style {
        DurationStyle::Compact => compact(secs),
        DurationStyle::Words => words(secs),
    }
}

/// A count of seconds (an uptime, a process's age) in [`DurationStyle::Compact`]: for
/// [`crate::units::opt`], which takes a function.
pub fn duration_of_secs(secs: u64) -> String {
    compact(secs)
}

/// A sampling interval or a bound on one: milliseconds under a second (`500ms`), else
/// [`DurationStyle::Compact`] (`1s`, `1m30s`): a sub-second period must not read as `0s`.
pub fn period(ms: i64) -> String {
    let ms = ms.max(0);
    if ms < 1000 {
        format!("{ms}ms")
    } else {
        duration(ms, DurationStyle::Compact)
    }
}

/// A sample's age: a tenth of a second while fresh (`0.4s`, under 10 s), then
/// [`DurationStyle::Compact`] (`12s`, `3m05s`).
pub fn age(ms: i64) -> String {
    let ms = ms.max(0);
    if ms < 10_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        duration(ms, DurationStyle::Compact)
    }
}

fn compact(secs: u64) -> String {
    let (d, h, m, s) = (secs / 86_400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    let pair = |big: u64, a: &str, small: u64, b: &str| {
        if small == 0 {
            format!("{big}{a}")
        } else {
            format!("{big}{a}{small:02}{b}")
        }
    };
    if d > 0 {
        pair(d, "d", h, "h")
    } else if h > 0 {
        pair(h, "h", m, "m")
    } else if m > 0 {
        pair(m, "m", s, "s")
    } else {
        format!("{s}s")
    }
}

fn words(secs: u64) -> String {
    let min = secs / 60;
    if secs < 120 {
        format!("{secs} s")
    } else if min < 60 {
        format!("{min} min")
    } else {
        format!("{} h {:02} min", min / 60, min % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::DurationStyle::{Compact, Words};
    use super::*;

    #[test]
    fn compact_gives_the_two_largest_units_and_drops_a_zero_second() {
        let s = |secs: i64| duration(secs * 1000, Compact);
        assert_eq!(s(0), "0s");
        assert_eq!(s(45), "45s");
        assert_eq!(s(60), "1m");
        assert_eq!(s(90), "1m30s");
        assert_eq!(s(723), "12m03s");
        assert_eq!(s(900), "15m");
        assert_eq!(s(3 * 3600 + 7 * 60 + 9), "3h07m");
        assert_eq!(s(6 * 3600), "6h");
        assert_eq!(s(2 * 86_400 + 4 * 3600), "2d04h");
        assert_eq!(s(-5), "0s");
    }

    #[test]
    fn words_say_seconds_when_short_and_truncate_minutes() {
        let w = |ms: i64| duration(ms, Words);
        assert_eq!(w(0), "0 s");
        assert_eq!(w(45_000), "45 s");
        assert_eq!(w(60_000), "60 s");
        assert_eq!(w(90_000), "90 s");
        assert_eq!(w(120_000), "2 min");
        assert_eq!(w(42 * 60_000 + 59_000), "42 min");
        assert_eq!(w(187 * 60_000), "3 h 07 min");
        assert_eq!(w(26 * 3_600_000 + 5 * 60_000), "26 h 05 min");
        assert_eq!(w(-1), "0 s");
        assert_eq!(
            w(i64::MAX),
            format!(
                "{} h {:02} min",
                i64::MAX / 3_600_000,
                i64::MAX / 60_000 % 60
            )
        );
    }

    #[test]
    fn age_is_precise_when_fresh() {
        assert_eq!(age(400), "0.4s");
        assert_eq!(age(-5), "0.0s");
        assert_eq!(age(65_000), "1m05s");
    }
}
