//! `fleet --once --json`: the rows and totals as a versioned document of its own
//! (`"fleet_schema": 1`; each host's full snapshot stays at its server's `/api/v1/snapshot`).
//! Money in integer micro-units of `currency` (`_micros`), times in ms since the Unix epoch,
//! `null` for what is unknown.

use serde::Serialize;

use gpumeter_core::fleet::view::{HostRow, Totals};

/// Version of this document. Bump on any change a reader would misread.
pub const FLEET_SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Serialize)]
pub struct FleetDocument {
    pub fleet_schema: u32,
    pub taken_at_unix_ms: i64,
    pub totals: TotalsJson,
    pub hosts: Vec<HostJson>,
}

#[derive(Debug, Serialize)]
pub struct TotalsJson {
    pub hosts: usize,
    pub up: usize,
    pub down: usize,
    pub idle_hosts: usize,
    pub gpus: u32,
    pub busy_gpus: u32,
    /// One entry per currency the hosts bill in.
    pub money: Vec<MoneyJson>,
}

#[derive(Debug, Serialize)]
pub struct MoneyJson {
    pub currency: &'static str,
    pub burn_per_hour_micros: i64,
    pub idle_burn_per_hour_micros: i64,
    pub spent_today_micros: i64,
}

#[derive(Debug, Serialize)]
pub struct HostJson {
    pub name: String,
    pub url: String,
    /// `up`, `stale`, `waiting`, `down`, `timeout`, `http error`, `garbage`, `wrong schema`.
    pub state: &'static str,
    pub error: Option<String>,
    pub last_seen_unix_ms: Option<i64>,
    pub gpus: Option<u32>,
    pub busy_gpus: Option<u32>,
    pub idle: bool,
    pub mean_util_pct: Option<f64>,
    pub vram_used_bytes: Option<u64>,
    pub vram_total_bytes: Option<u64>,
    pub currency: Option<&'static str>,
    pub burn_per_hour_micros: Option<i64>,
    pub idle_burn_per_hour_micros: Option<i64>,
    pub spent_today_micros: Option<i64>,
    pub budget_period: Option<String>,
    pub budget_used_ratio: Option<f64>,
    pub budget_forecast_ratio: Option<f64>,
    pub alert_kind: Option<String>,
    pub alert_severity: Option<String>,
    pub alert_title: Option<String>,
    pub sample_age_ms: Option<i64>,
}

fn host(r: &HostRow) -> HostJson {
    let micros = |m: Option<gpumeter_core::money::Money>| m.map(|m| m.micros());
    HostJson {
        name: r.name.clone(),
        url: r.base.clone(),
        state: r.state.label(),
        error: r.error.clone(),
        last_seen_unix_ms: r.last_seen_unix_ms,
        gpus: r.gpus,
        busy_gpus: r.busy_gpus,
        idle: r.is_idle(),
        mean_util_pct: r.mean_util_pct,
        vram_used_bytes: r.vram_used_bytes,
        vram_total_bytes: r.vram_total_bytes,
        currency: r.currency.map(|c| c.code()),
        burn_per_hour_micros: micros(r.burn_per_hour),
        idle_burn_per_hour_micros: micros(r.idle_burn_per_hour),
        spent_today_micros: micros(r.spent_today),
        budget_period: r.budget.as_ref().map(|b| b.period.clone()),
        budget_used_ratio: r.budget.as_ref().map(|b| b.used_ratio),
        budget_forecast_ratio: r.budget.as_ref().and_then(|b| b.forecast_ratio),
        alert_kind: r.alert.as_ref().map(|a| a.kind.clone()),
        alert_severity: r.alert.as_ref().map(|a| a.severity.clone()),
        alert_title: r.alert.as_ref().map(|a| a.title.clone()),
        sample_age_ms: r.sample_age_ms,
    }
}

/// The document for `rows` and `totals` at `now_unix_ms`.
pub fn document(rows: &[HostRow], totals: &Totals, now_unix_ms: i64) -> FleetDocument {
    FleetDocument {
        fleet_schema: FLEET_SCHEMA_VERSION,
        taken_at_unix_ms: now_unix_ms,
        totals: TotalsJson {
            hosts: totals.hosts,
            up: totals.up,
            down: totals.down,
            idle_hosts: totals.idle_hosts,
            gpus: totals.gpus,
            busy_gpus: totals.busy_gpus,
            money: totals
                .money
                .iter()
                .map(|m| MoneyJson {
                    currency: m.currency.code(),
                    burn_per_hour_micros: m.burn_per_hour.micros(),
                    idle_burn_per_hour_micros: m.idle_burn_per_hour.micros(),
                    spent_today_micros: m.spent_today.micros(),
                })
                .collect(),
        },
        hosts: rows.iter().map(host).collect(),
    }
}

/// Pretty JSON, newline-terminated.
pub fn to_json(doc: &FleetDocument) -> Result<String, serde_json::Error> {
    let mut s = serde_json::to_string_pretty(doc)?;
    s.push('\n');
    Ok(s)
}
