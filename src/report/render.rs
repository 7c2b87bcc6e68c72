//! The report as text: a table per day with a bar chart of daily spend, the sessions, and the
//! JSON and CSV forms.

use std::fmt::Write as _;

use super::{Report, ReportRow};
use gpumeter_core::money::{Currency, Money};

/// The CSV header (one row per day, then one per session; `scope` tells which).
pub const CSV_HEADER: &str = "scope,key,currency,paid_hours,busy_gpu_hours,idle_gpu_hours,\
idle_cost,starved_hours,spend,cost_per_busy_gpu_hour,energy_kwh";

const BAR_WIDTH: usize = 40;

pub fn json(report: &Report) -> String {
    // Serializing plain structs of numbers and strings cannot fail; fall back to an empty object.
    let mut s = serde_json::to_string_pretty(report).unwrap_or_else(|_| "{}".into());
    s.push('\n');
    s
}

fn opt(v: Option<f64>, decimals: usize) -> String {
    v.map_or(String::new(), |v| format!("{v:.decimals$}"))
}

pub fn csv(report: &Report) -> String {
    let mut out = format!("{CSV_HEADER}\n");
    let rows = report
        .days
        .iter()
        .map(|r| ("day", r))
        .chain(report.sessions.iter().map(|s| ("session", &s.row)));
    for (scope, r) in rows {
        let _ = writeln!(
            out,
            "{scope},{},{},{:.4},{:.4},{:.4},{},{},{},{},{}",
            r.key,
            r.currency,
            r.paid_hours,
            r.busy_gpu_hours,
            r.idle_gpu_hours,
            Money::from_micros(r.idle_cost_micros),
            opt(r.starved_hours, 4),
            Money::from_micros(r.spend_micros),
            opt(r.cost_per_busy_gpu_hour, 6),
            opt(r.energy_kwh, 4),
        );
    }
    out
}

fn fmt_money(currency: &str, micros: i64) -> String {
    match Currency::from_code(currency) {
        Ok(c) => c.format(Money::from_micros(micros)),
        Err(_) => format!("{currency} {}", Money::from_micros(micros)),
    }
}

fn fmt_opt_money(currency: &str, v: Option<f64>) -> String {
    v.map_or("N/A".into(), |v| {
        fmt_money(currency, Money::from_units_f64(v).micros())
    })
}

fn table_rows(out: &mut String, first: &str, rows: &[&ReportRow]) {
    let _ = writeln!(
        out,
        "{first:<12} {:>8} {:>11} {:>11} {:>12} {:>12} {:>13} {:>11}",
        "paid h", "busy GPU-h", "idle GPU-h", "idle cost", "spend", "per busy GPU-h", "energy kWh"
    );
    for r in rows {
        let _ = writeln!(
            out,
            "{:<12} {:>8.2} {:>11.2} {:>11.2} {:>12} {:>12} {:>13} {:>11}",
            r.key,
            r.paid_hours,
            r.busy_gpu_hours,
            r.idle_gpu_hours,
            fmt_money(&r.currency, r.idle_cost_micros),
            fmt_money(&r.currency, r.spend_micros),
            fmt_opt_money(&r.currency, r.cost_per_busy_gpu_hour),
            r.energy_kwh.map_or("N/A".into(), |k| format!("{k:.2}")),
        );
    }
}

/// A horizontal bar of `value` against `max`, in eighths of a cell.
pub fn bar(value: i64, max: i64, width: usize) -> String {
    if max <= 0 || value <= 0 {
        return String::new();
    }
    let eighths = (i128::from(value) * (width as i128) * 8 / i128::from(max)) as usize;
    let mut s = "█".repeat(eighths / 8);
    let partial = [" ", "▏", "▎", "▍", "▌", "▋", "▊", "▉"][eighths % 8];
    if !eighths.is_multiple_of(8) {
        s.push_str(partial);
    }
    if s.is_empty() {
        s.push('▏'); // something spent: never draw nothing
    }
    s
}

pub fn table(report: &Report) -> String {
    let mut out = String::new();
    let since =
        gpumeter_core::billing::calendar::day_key(report.since_unix_ms.div_euclid(86_400_000));
    let _ = writeln!(
        out,
        "Spend per UTC day since {since} (ledger {})",
        report.ledger
    );
    if !report.recorded {
        out.push_str("\nNo priced sessions recorded yet.\n");
        return out;
    }
    if report.days.is_empty() {
        out.push_str("\nNothing recorded in this period.\n");
        return out;
    }
    out.push('\n');
    let days: Vec<&ReportRow> = report.days.iter().collect();
    table_rows(&mut out, "day (UTC)", &days);

    out.push_str("\nDaily spend\n");
    for r in &report.days {
        let max = report
            .days
            .iter()
            .filter(|d| d.currency == r.currency)
            .map(|d| d.spend_micros)
            .max()
            .unwrap_or(0);
        let _ = writeln!(
            out,
            "{:<10} {:>12}  {}",
            r.key,
            fmt_money(&r.currency, r.spend_micros),
            bar(r.spend_micros, max, BAR_WIDTH)
        );
    }

    out.push_str("\nSessions\n");
    let sessions: Vec<&ReportRow> = report.sessions.iter().map(|s| &s.row).collect();
    table_rows(&mut out, "session", &sessions);
    for s in &report.sessions {
        let when =
            |ms: i64| gpumeter_core::clock::utc_text(ms, gpumeter_core::clock::UtcStyle::Full);
        let _ = writeln!(
            out,
            "  #{} {} on {} ({}), {} → {}",
            s.row.key,
            s.source,
            s.host,
            s.pricing,
            when(s.start_unix_ms),
            when(s.last_unix_ms)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_scale_and_never_vanish() {
        assert_eq!(bar(10, 10, 4), "████");
        assert_eq!(bar(5, 10, 4), "██");
        assert_eq!(bar(1, 1_000, 4), "▏");
        assert_eq!(bar(0, 10, 4), "");
        assert_eq!(bar(9, 16, 1), "▌");
    }
}
