//! Machine-wide families: the host, the bill, the verdicts and gpumeter's own health.
//! Money is exported in units of the currency (a float, as Prometheus stores every value;
//! the exact figure stays in the ledger and the snapshot JSON).

use gpumeter_model::Snapshot;

use super::out::{Labels, Out, Samples, opt_label};
use gpumeter_core::billing::BillingView;
use gpumeter_core::engine::rules::idle::gpu_idle;
use gpumeter_core::engine::rules::{Alert, AlertKind, RulesConfig, Severity};

/// What the self-health families need beside the engine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Health {
    /// The latest attempt to read the source succeeded.
    pub up: bool,
    /// Failed readings since start.
    pub sample_errors: u64,
    /// When the latest good reading was taken (ms since the epoch).
    pub last_sample_unix_ms: Option<i64>,
}

fn one(labels: Labels, v: f64) -> Samples {
    vec![(labels, v)]
}

/// gpumeter's own health and build.
pub fn render_self(out: &mut Out, health: &Health) {
    out.gauge(
        "gpumeter_up",
        "1 while the latest reading of the GPUs and host succeeded, 0 while the source fails.",
        one(vec![], f64::from(u8::from(health.up))),
    );
    out.gauge(
        "gpumeter_build_info",
        "The gpumeter build (value 1).",
        one(
            vec![("version", env!("CARGO_PKG_VERSION").to_string())],
            1.0,
        ),
    );
    if let Some(t) = health.last_sample_unix_ms {
        out.gauge(
            "gpumeter_last_sample_timestamp_seconds",
            "When the latest good reading was taken, seconds since the Unix epoch.",
            one(vec![], t as f64 / 1000.0),
        );
    }
    out.counter(
        "gpumeter_sample_errors_total",
        "Readings of the source that failed since start.",
        one(vec![], health.sample_errors as f64),
    );
}

/// The host: identity and price on `gpumeter_host_info`, GPU counts, CPU and iowait.
pub fn render_host(
    out: &mut Out,
    snap: &Snapshot,
    billing: Option<&BillingView>,
    rules: &RulesConfig,
) {
    let sys = &snap.system;
    let (rate, currency) = billing.map_or((String::new(), String::new()), |b| {
        (b.rate.to_string(), b.currency.code().to_string())
    });
    out.gauge(
        "gpumeter_host_info",
        "The machine: host name, driver, CUDA version, source and price (value 1).",
        one(
            vec![
                ("hostname", opt_label(sys.hostname.as_deref())),
                ("driver_version", opt_label(sys.driver_version.as_deref())),
                (
                    "cuda_version",
                    opt_label(sys.cuda_driver_version.as_deref()),
                ),
                ("source", opt_label(Some(&snap.source))),
                ("rate", rate),
                ("currency", currency),
            ],
            1.0,
        ),
    );
    if let Some(b) = billing {
        // Its own series, so a dashboard can flag a list price (not what the user pays).
        out.gauge(
            "gpumeter_rate_info",
            "Where the rate comes from: source=\"yours\" (config, flag, demo) or \"list-price\" \
             (the built-in catalog's price for this machine; set yours with --rate) (value 1).",
            one(
                vec![
                    ("source", b.rate_source.kind().to_string()),
                    ("rate", b.rate.to_string()),
                    ("detail", opt_label(Some(&b.rate_source.describe()))),
                ],
                1.0,
            ),
        );
    }
    let idle = snap
        .gpus
        .iter()
        .filter(|g| gpu_idle(g, &rules.idle) == Some(true))
        .count();
    out.gauge(
        "gpumeter_gpus",
        "GPUs in the latest reading.",
        one(vec![], snap.gpus.len() as f64),
    );
    out.gauge(
        "gpumeter_gpus_idle",
        "GPUs whose latest sample is idle.",
        one(vec![], idle as f64),
    );
    let ratio =
        |v: Option<f64>| -> Samples { v.map(|p| (vec![], p / 100.0)).into_iter().collect() };
    out.gauge(
        "gpumeter_host_cpu_utilization_ratio",
        "Busy share of all host CPUs over the last interval (0-1).",
        ratio(snap.host.cpu_util_pct),
    );
    out.gauge(
        "gpumeter_host_iowait_ratio",
        "Share of host CPU time spent waiting on I/O over the last interval (0-1).",
        ratio(snap.host.iowait_pct),
    );
}

/// The bill: spend, burn, idle spend and the budget.
pub fn render_billing(out: &mut Out, billing: Option<&BillingView>) {
    out.gauge(
        "gpumeter_billing_active",
        "1 when pricing is configured and the billing clock runs, else 0.",
        one(vec![], f64::from(u8::from(billing.is_some()))),
    );
    let Some(b) = billing else {
        return;
    };
    let cur = || vec![("currency", b.currency.code().to_string())];
    out.counter(
        "gpumeter_spend_total",
        "Spent since the billing clock started, in units of the currency.",
        one(cur(), b.spent.as_units_f64()),
    );
    out.gauge(
        "gpumeter_burn_rate_per_hour",
        "What the machine costs per hour now, in units of the currency.",
        one(cur(), b.burn_per_hour.as_units_f64()),
    );
    out.counter(
        "gpumeter_idle_spend_total",
        "What the time with every GPU idle has cost, in units of the currency.",
        one(cur(), b.idle_cost.as_units_f64()),
    );
    if let Some(budget) = &b.budget {
        let period = || vec![("period", budget.period.to_string())];
        out.gauge(
            "gpumeter_budget_used_ratio",
            "Spend of the current budget period over the budget (1 = the ceiling).",
            one(period(), budget.share),
        );
        let amount = budget.amount.micros();
        if let Some(f) = budget.forecast.filter(|_| amount > 0) {
            out.gauge(
                "gpumeter_budget_forecast_ratio",
                "Projected spend at the end of the budget period over the budget.",
                one(period(), f.micros() as f64 / amount as f64),
            );
        }
        let mut l = period();
        l.push(("currency", b.currency.code().to_string()));
        out.gauge(
            "gpumeter_budget_amount",
            "The budget of the current period, in units of the currency.",
            one(l, budget.amount.as_units_f64()),
        );
    }
}

const SEVERITIES: [Severity; 3] = [Severity::Info, Severity::Moderate, Severity::High];
/// Kinds whose alerts name one GPU.
const GPU_KINDS: [AlertKind; 3] = [
    AlertKind::Forgotten,
    AlertKind::Starved,
    AlertKind::Throttle,
];

/// The verdicts: every kind × severity, 0 when none stands (so rules see a series from the
/// start), and per GPU for the kinds that name one.
pub fn render_alerts(out: &mut Out, alerts: &[Alert], gpus: &[(u32, Labels)]) {
    let mut s = Samples::new();
    for kind in AlertKind::ALL {
        for sev in SEVERITIES {
            let n = alerts
                .iter()
                .filter(|a| a.kind == kind && a.severity == sev)
                .count();
            s.push((
                vec![
                    ("alert", kind.name().to_string()),
                    ("severity", sev.name().to_string()),
                ],
                n as f64,
            ));
        }
    }
    out.gauge(
        "gpumeter_alert_active",
        "Alerts of this kind and severity that stand now (0 when none).",
        s,
    );
    let mut per_gpu = Samples::new();
    for (index, labels) in gpus {
        for kind in GPU_KINDS {
            let on = alerts
                .iter()
                .any(|a| a.kind == kind && a.gpu == Some(*index));
            let mut labels = labels.clone();
            labels.push(("alert", kind.name().to_string()));
            per_gpu.push((labels, f64::from(u8::from(on))));
        }
    }
    out.gauge(
        "gpumeter_gpu_alert_active",
        "1 while an alert of this kind names this GPU, else 0.",
        per_gpu,
    );
}
