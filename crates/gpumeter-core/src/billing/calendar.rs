//! UTC days and months as integers, for budget periods, projections and monthly amortisation.
//!
//! Everything is UTC milliseconds: no time zones, so daylight-saving changes cannot create or
//! destroy an hour of spend. Reports bucket by UTC day too (documented in docs/billing.md).

use chrono::{Datelike, NaiveDate};

/// Milliseconds in one UTC day.
pub const DAY_MS: i64 = 86_400_000;

/// Days since 1970-01-01 (UTC) of a time.
pub fn day_index(unix_ms: i64) -> i64 {
    unix_ms.div_euclid(DAY_MS)
}

/// The start of a day index (days since 1970-01-01, UTC), ms since the Unix epoch.
pub fn day_start_ms(day: i64) -> i64 {
    day.saturating_mul(DAY_MS)
}

/// `2026-05-01` for a day index.
pub fn day_key(day: i64) -> String {
    match NaiveDate::from_ymd_opt(1970, 1, 1)
        .and_then(|epoch| epoch.checked_add_signed(chrono::TimeDelta::try_days(day)?))
    {
        Some(d) => d.format("%Y-%m-%d").to_string(),
        None => format!("day{day}"),
    }
}

/// Months since year 0 (`year × 12 + month − 1`) of a time, UTC.
pub fn month_index(unix_ms: i64) -> i64 {
    let date = chrono::DateTime::from_timestamp_millis(unix_ms)
        .map(|t| t.date_naive())
        .unwrap_or_default();
    i64::from(date.year()) * 12 + i64::from(date.month0())
}

fn month_first_day(month: i64) -> Option<NaiveDate> {
    let year = i32::try_from(month.div_euclid(12)).ok()?;
    let m0 = u32::try_from(month.rem_euclid(12)).ok()?;
    NaiveDate::from_ymd_opt(year, m0 + 1, 1)
}

/// Start of a month index, ms since the epoch (UTC).
pub fn month_start_ms(month: i64) -> i64 {
    month_first_day(month)
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc().timestamp_millis())
        .unwrap_or(i64::MAX)
}

/// Length of a month in ms (28 to 31 days).
pub fn month_len_ms(month: i64) -> i64 {
    (month_start_ms(month + 1) - month_start_ms(month)).max(DAY_MS)
}

/// `2026-05` for a month index.
pub fn month_key(month: i64) -> String {
    format!(
        "{:04}-{:02}",
        month.div_euclid(12),
        month.rem_euclid(12) + 1
    )
}

/// The first day or month boundary strictly after `unix_ms` (months always start on a day).
pub fn next_day_boundary(unix_ms: i64) -> i64 {
    day_start_ms(day_index(unix_ms) + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_and_months_in_utc() {
        // 2024-02-29T23:59:59.999Z, a leap day.
        let t = 1_709_251_199_999;
        assert_eq!(day_key(day_index(t)), "2024-02-29");
        assert_eq!(day_key(day_index(t + 1)), "2024-03-01");
        let feb = month_index(t);
        assert_eq!(month_key(feb), "2024-02");
        assert_eq!(month_len_ms(feb), 29 * DAY_MS);
        assert_eq!(month_len_ms(feb + 1), 31 * DAY_MS);
        assert_eq!(month_start_ms(feb + 1), t + 1);
        assert_eq!(next_day_boundary(t), t + 1);
        assert_eq!(day_index(-1), -1);
        assert_eq!(month_key(month_index(0)), "1970-01");
    }

    #[test]
    fn a_dst_change_day_is_24_hours_in_utc() {
        // 2026-03-29: Europe springs forward; the UTC day still has 24 hours.
        let start = 1_774_742_400_000; // 2026-03-29T00:00:00Z
        assert_eq!(day_key(day_index(start)), "2026-03-29");
        assert_eq!(next_day_boundary(start) - start, DAY_MS);
    }
}
