//! The JSON form: the versioned snapshot [`Document`] (`"schema": N`, units in field names,
//! `null` for unsupported readings), with the session's `billing` block and standing `alerts`
//! when there are any. One builder for `gpumeter snapshot --json` and `serve`'s
//! `/api/v1/snapshot`.

use gpumeter_model::{AlertSummary, BillingSummary, BudgetSummary, Document, Evidence, Snapshot};

use crate::billing::BillingView;
use crate::engine::rules::Alert;

/// Pretty-printed JSON of one snapshot alone, newline-terminated.
pub fn to_json(snap: &Snapshot) -> Result<String, serde_json::Error> {
    to_json_document(&document(snap, None, &[]))
}

/// Pretty-printed JSON of a document, newline-terminated.
pub fn to_json_document(doc: &Document) -> Result<String, serde_json::Error> {
    let mut s = serde_json::to_string_pretty(doc)?;
    s.push('\n');
    Ok(s)
}

/// The document for a snapshot with the session's bill and standing alerts.
pub fn document(snap: &Snapshot, billing: Option<&BillingView>, alerts: &[Alert]) -> Document {
    Document {
        snapshot: snap.clone(),
        billing: billing.map(billing_summary),
        alerts: alerts.iter().map(alert_summary).collect(),
    }
}

/// The billing block of a [`BillingView`].
pub fn billing_summary(v: &BillingView) -> BillingSummary {
    BillingSummary {
        currency: v.currency.code().to_string(),
        rate: v.rate.to_string(),
        rate_source: v.rate_source.kind().to_string(),
        rate_note: v.rate_source.line(&v.rate, v.currency),
        granularity: v.granularity.name().to_string(),
        clock_start_unix_ms: v.clock_start_unix_ms,
        paid_ms: v.paid_ms,
        spent_micros: v.spent.micros(),
        spent_today_micros: v.spent_today.micros(),
        burn_per_hour_micros: v.burn_per_hour.micros(),
        idle_spend_micros: v.idle_cost.micros(),
        idle_share: v.idle_share,
        cost_per_busy_gpu_hour_micros: v.cost_per_busy_gpu_hour.map(|m| m.micros()),
        projected_end_of_day_micros: v.projected_end_of_day.map(|m| m.micros()),
        projected_end_of_month_micros: v.projected_end_of_month.map(|m| m.micros()),
        budget: v.budget.as_ref().map(|b| BudgetSummary {
            amount_micros: b.amount.micros(),
            period: b.period.to_string(),
            spent_micros: b.spent.micros(),
            used_ratio: b.share,
            forecast_micros: b.forecast.map(|m| m.micros()),
            forecast_ratio: b
                .forecast
                .and_then(|f| ratio(f.micros(), b.amount.micros())),
            ceiling_at_unix_ms: b.ceiling_at_unix_ms,
        }),
        gpus: v.gpus,
        busy_gpus: v.busy_gpus,
        stopped_storage: v
            .stopped_storage
            .as_ref()
            .map(|s| gpumeter_model::StorageSummary {
                per_hour_micros: s.per_hour.micros(),
                what: s.what.clone(),
            }),
    }
}

fn ratio(part: i64, whole: i64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// One alert as the document carries it.
pub fn alert_summary(a: &Alert) -> AlertSummary {
    AlertSummary {
        id: a.id.clone(),
        kind: a.kind.name().to_string(),
        severity: a.severity.name().to_string(),
        gpu: a.gpu,
        title: a.title.clone(),
        detail: a.detail.clone(),
        evidence: a
            .evidence
            .iter()
            .map(|(label, value)| Evidence {
                label: label.clone(),
                value: value.clone(),
            })
            .collect(),
        cost_micros: a.cost_micros,
        currency: a.currency.code().to_string(),
        next_step: a.next_step.clone(),
        since_unix_ms: a.since_unix_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::billing::{Budget, ClockStart, Meter, MeterConfig, Pricing, Rate};
    use gpumeter_model::{GpuReading, SCHEMA_VERSION};

    #[test]
    fn json_carries_schema_and_nulls() {
        let mut snap = Snapshot::empty("demo:x", 42);
        snap.gpus.push(GpuReading {
            index: 0,
            temperature_celsius: Some(61),
            ..GpuReading::default()
        });
        let v: serde_json::Value = serde_json::from_str(&to_json(&snap).unwrap()).unwrap();
        assert_eq!(v["schema"], SCHEMA_VERSION);
        assert_eq!(v["taken_at_unix_ms"], 42);
        assert_eq!(v["gpus"][0]["temperature_celsius"], 61);
        assert!(v["gpus"][0]["fan_speed_pct"].is_null());
        assert!(v.get("billing").is_none());
        assert_eq!(v["alerts"], serde_json::json!([]));
    }

    #[test]
    fn the_billing_block_has_the_meter_in_micro_units_and_the_budget_ratios() {
        let mut pricing = Pricing::simple(Rate::parse("36/h").unwrap());
        pricing.clock_start = ClockStart::FirstSample;
        pricing.budget = Some(Budget::parse("1/run").unwrap());
        let mut meter = Meter::new(MeterConfig {
            pricing,
            tick_cap_ms: 10_000,
        });
        for t in 0..=50 {
            let at = 1_000_000 + t * 1_000;
            meter.observe(&Snapshot::empty("t", at), at);
        }
        let view = meter.view();
        let doc = document(&Snapshot::empty("t", 1_050_000), Some(&view), &[]);
        let v = serde_json::to_value(&doc).unwrap();
        let b = &v["billing"];
        assert_eq!(b["currency"], "USD");
        assert!(b["rate"].as_str().unwrap().ends_with("/h"), "{}", b["rate"]);
        // $36/h for 50 s = $0.50.
        assert_eq!(b["spent_micros"], 500_000);
        assert_eq!(b["burn_per_hour_micros"], 36_000_000);
        assert_eq!(b["budget"]["amount_micros"], 1_000_000);
        assert_eq!(b["budget"]["used_ratio"], 0.5);
        assert!(
            b["budget"]["forecast_micros"].is_null(),
            "a run budget has no forecast"
        );
    }
}
