//! The snapshot *document*: what `gpumeter snapshot --json` prints and `serve` answers on
//! `/api/v1/snapshot` — one [`Snapshot`] (its fields at the top level, `"schema"` first) plus,
//! when a session runs, its `billing` summary and the alerts that stand. Plain data: money is
//! integer micro-units of `currency` (`_micros` fields), times are ms since the Unix epoch.
//! A reader of schema 1 files reads a document as its snapshot (the extra keys are new).

use serde::{Deserialize, Serialize};

use crate::Snapshot;

/// One reading plus the session's derived state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Document {
    #[serde(flatten)]
    pub snapshot: Snapshot,
    /// The bill, when pricing is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub billing: Option<BillingSummary>,
    /// Alerts that stand now, most severe first (empty without a session).
    #[serde(default)]
    pub alerts: Vec<AlertSummary>,
}

/// Where the bill stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BillingSummary {
    /// ISO 4217 code of every `_micros` amount here.
    pub currency: String,
    /// The rate the meter runs on, as written (`31.00/h`, `3.10/gpu-h`, `2000/month`).
    pub rate: String,
    /// Where it came from: `yours` (a file, a flag, a demo) or `list-price` (the built-in
    /// catalog's price for the machine gpumeter found itself on; not what you were told you pay).
    #[serde(default = "yours")]
    pub rate_source: String,
    /// The same in words, with the rate: `list price, AWS p5.48xlarge on-demand us-east-1,
    /// catalog 2025-05: $98.32/h — set yours with --rate` or `your rate (config.toml): $31.00/h`.
    #[serde(default)]
    pub rate_note: String,
    pub granularity: String,
    pub clock_start_unix_ms: Option<i64>,
    /// Paid time since the clock start.
    pub paid_ms: i64,
    pub spent_micros: i64,
    pub spent_today_micros: i64,
    /// Current cost per hour.
    pub burn_per_hour_micros: i64,
    /// What the time with every GPU idle has cost.
    pub idle_spend_micros: i64,
    /// Share of the watched time with every GPU idle (None before anything was spent).
    pub idle_share: Option<f64>,
    pub cost_per_busy_gpu_hour_micros: Option<i64>,
    pub projected_end_of_day_micros: Option<i64>,
    pub projected_end_of_month_micros: Option<i64>,
    pub budget: Option<BudgetSummary>,
    pub gpus: u32,
    pub busy_gpus: u32,
    /// The catalogued storage of the attached volumes, which bills while the box is stopped
    /// (absent when the user priced it with `[pricing] extras_per_hour`, or none was found).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_storage: Option<StorageSummary>,
}

/// What bills while the box is stopped, and where the figure came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StorageSummary {
    /// Per hour, not in `burn_per_hour_micros`.
    pub per_hour_micros: i64,
    /// `2 × 1000 GB EBS gp3 at the catalogued $0.08/GB-month`.
    pub what: String,
}

/// Documents older than the rate's provenance carried the user's own rates only.
fn yours() -> String {
    "yours".to_string()
}

/// The budget, when one is set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BudgetSummary {
    pub amount_micros: i64,
    /// `day`, `month` or `run`.
    pub period: String,
    /// Spent in the current period.
    pub spent_micros: i64,
    /// `spent / amount` (1.0 = the ceiling).
    pub used_ratio: f64,
    /// Projected spend at the end of the period (None for a run budget).
    pub forecast_micros: Option<i64>,
    /// `forecast / amount`.
    pub forecast_ratio: Option<f64>,
    /// When the ceiling is reached at the current burn, if within the period.
    pub ceiling_at_unix_ms: Option<i64>,
}

/// One standing alert with its evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlertSummary {
    /// Stable while the verdict stands (`idle`, `starved:job:20488`).
    pub id: String,
    /// `idle`, `forgotten`, `starved`, `throttle` or `budget`.
    pub kind: String,
    /// `info`, `moderate` or `high`.
    pub severity: String,
    /// The GPU concerned, when exactly one is.
    pub gpu: Option<u32>,
    pub title: String,
    pub detail: String,
    pub evidence: Vec<Evidence>,
    /// What it has cost so far (None without a rate).
    pub cost_micros: Option<i64>,
    pub currency: String,
    pub next_step: Option<String>,
    /// When the condition began.
    pub since_unix_ms: i64,
}

/// One number that fired an alert.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    pub label: String,
    pub value: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SCHEMA_VERSION;

    #[test]
    fn a_document_is_its_snapshot_at_the_top_level_and_round_trips() {
        let doc = Document {
            snapshot: Snapshot::empty("demo:idle", 7),
            billing: None,
            alerts: vec![AlertSummary {
                id: "idle".into(),
                kind: "idle".into(),
                severity: "moderate".into(),
                gpu: None,
                title: "8 GPUs idle".into(),
                detail: String::new(),
                evidence: vec![Evidence {
                    label: "idle for".into(),
                    value: "12 min".into(),
                }],
                cost_micros: Some(6_200_000),
                currency: "USD".into(),
                next_step: None,
                since_unix_ms: 1,
            }],
        };
        let v = serde_json::to_value(&doc).unwrap();
        assert_eq!(v["schema"], SCHEMA_VERSION);
        assert_eq!(v["source"], "demo:idle");
        assert!(v.get("billing").is_none(), "no pricing, no billing key");
        assert_eq!(v["alerts"][0]["evidence"][0]["label"], "idle for");
        let back: Document = serde_json::from_value(v).unwrap();
        assert_eq!(back, doc);
        // A plain snapshot (schema 1 style) reads as a document without billing or alerts.
        let plain = serde_json::to_value(Snapshot::empty("nvml", 3)).unwrap();
        let doc: Document = serde_json::from_value(plain).unwrap();
        assert!(doc.billing.is_none() && doc.alerts.is_empty());
    }
}
