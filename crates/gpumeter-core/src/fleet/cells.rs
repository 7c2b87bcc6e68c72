//! The words of a fleet row, column by column: one wording for `fleet --once`'s table and the
//! fleet screen. Money through [`Currency::format`](crate::money::Currency::format), times through [`utc_text`], ages as the
//! dashboard writes them; an unknown value is `N/A`.

use super::view::{BudgetState, HostRow, Totals};
use crate::clock::{UtcStyle, utc_text};
use crate::money::Money;
use crate::units::{NA, bytes};

/// Column titles, in order.
pub const HEADERS: [&str; 11] = [
    "HOST", "STATE", "GPUS", "UTIL", "VRAM", "BURN/H", "IDLE/H", "TODAY", "BUDGET", "AGE", "ALERT",
];

fn money(r: &HostRow, m: Option<Money>, hourly: bool) -> String {
    match (r.currency, m) {
        (Some(c), Some(m)) if hourly => c.per_hour(m),
        (Some(c), Some(m)) => c.format(m),
        _ => NA.to_string(),
    }
}

/// `62%/day`, with the forecast when it goes over: `62%/day →130%`.
pub fn budget(b: &BudgetState) -> String {
    let used = format!("{:.0}%/{}", b.used_ratio * 100.0, b.period);
    match b.forecast_ratio {
        Some(f) if f > 1.0 => format!("{used} →{:.0}%", f * 100.0),
        _ => used,
    }
}

/// What a down or waiting host shows where the numbers would be.
pub fn down_text(r: &HostRow) -> String {
    let mut seen = r.last_seen_unix_ms.map_or_else(
        || "never answered".to_string(),
        |t| format!("last seen {}", utc_text(t, UtcStyle::DayClock)),
    );
    if let Some(ms) = r.silent_ms {
        seen.push_str(&format!(
            ", {} ago",
            crate::units::duration(ms, crate::units::DurationStyle::Compact)
        ));
    }
    if let (Some(c), Some(b)) = (r.currency, r.burn_per_hour) {
        seen.push_str(&format!(
            " (last burn {} kept in the totals)",
            c.per_hour(b)
        ));
    }
    match &r.error {
        Some(e) => format!("{seen} · {e}"),
        None => seen,
    }
}

/// The cells of one row, in [`HEADERS`] order. A host that is down or has not answered has
/// only its name and state; the rest is [`down_text`].
pub fn cells(r: &HostRow) -> Vec<String> {
    let na = || NA.to_string();
    let gpus = match (r.busy_gpus, r.gpus) {
        (Some(b), Some(g)) => format!("{b}/{g}"),
        _ => na(),
    };
    let vram = match (r.vram_used_bytes, r.vram_total_bytes) {
        (Some(u), Some(t)) => format!("{}/{}", bytes(u), bytes(t)),
        _ => na(),
    };
    vec![
        r.name.clone(),
        r.state.label().to_string(),
        gpus,
        r.mean_util_pct.map_or_else(na, |u| format!("{u:.0}%")),
        vram,
        money(r, r.burn_per_hour, true),
        money(r, r.idle_burn_per_hour, true),
        money(r, r.spent_today, false),
        r.budget.as_ref().map_or_else(na, budget),
        r.sample_age_ms.map_or_else(na, crate::units::age),
        r.alert.as_ref().map_or_else(
            || "-".to_string(),
            |a| format!("{}: {}", a.severity, a.title),
        ),
    ]
}

/// Whether the row shows numbers (else [`down_text`]).
pub fn has_numbers(r: &HostRow) -> bool {
    r.state.counts()
}

/// `burn $62.00/h · idle $31.00/h · today $512.40 · 1 of 3 hosts idle · 1 down`.
pub fn totals_line(t: &Totals) -> String {
    let mut parts = Vec::new();
    if t.money.is_empty() {
        parts.push("no pricing on any host".to_string());
    }
    for m in &t.money {
        parts.push(format!(
            "burn {} · idle {} · today {}",
            m.currency.per_hour(m.burn_per_hour),
            m.currency.per_hour(m.idle_burn_per_hour),
            m.currency.format(m.spent_today)
        ));
    }
    parts.push(format!("{} of {} hosts idle", t.idle_hosts, t.hosts));
    parts.push(format!("{}/{} GPUs busy", t.busy_gpus, t.gpus));
    if t.down > 0 {
        parts.push(format!("{} down", t.down));
    }
    if t.silent_kept > 0 {
        parts.push(format!("{} silent: last burn kept", t.silent_kept));
    }
    let waiting = t.hosts - t.up - t.down;
    if waiting > 0 {
        parts.push(format!("{waiting} waiting"));
    }
    parts.join(" · ")
}
