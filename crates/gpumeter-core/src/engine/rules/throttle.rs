//! Throttling: clocks held down by the power cap, temperature or a hardware slowdown signal,
//! as NVML's throttle reasons say, for most of the window (default 60 s). One alert per reason,
//! listing the GPUs and for how long. Reasons that cost nothing (idle clocks, application clock
//! settings) are ignored; a GPU whose driver cannot report reasons is no evidence either way.

use std::collections::BTreeMap;

use gpumeter_model::{GpuReading, ThrottleReason};

use super::alert::{Alert, AlertKind, Severity};
use super::config::ThrottleConfig;
use super::job::gpu_ranges;
use super::window::Window;
use super::{Ctx, RuleOutput};
use crate::units;

#[derive(Debug, Clone)]
pub struct ThrottleRule {
    cfg: ThrottleConfig,
    fire_share: f64,
    clear_share: f64,
    /// Per GPU, a window per slowdown reason (in [`ThrottleReason::ALL`]'s order).
    windows: BTreeMap<u32, Vec<(ThrottleReasonKey, Window)>>,
}

/// `ThrottleReason` ordered by its NVML bit (the model type is not `Ord`).
type ThrottleReasonKey = u64;

fn key(r: ThrottleReason) -> ThrottleReasonKey {
    ThrottleReason::to_bits(&[r])
}

fn reason(k: ThrottleReasonKey) -> Option<ThrottleReason> {
    ThrottleReason::from_bits(k).into_iter().next()
}

fn severity(r: ThrottleReason) -> Severity {
    match r {
        ThrottleReason::SwPowerCap | ThrottleReason::SyncBoost => Severity::Info,
        ThrottleReason::SwThermalSlowdown => Severity::Moderate,
        _ => Severity::High,
    }
}

fn words(r: ThrottleReason) -> (&'static str, &'static str) {
    match r {
        ThrottleReason::SwPowerCap => (
            "held at the power cap",
            "Normal under full load. If the cap is below the board's default, raise it \
             (nvidia-smi -pl) or ask the provider why it was lowered.",
        ),
        ThrottleReason::SyncBoost => (
            "held back to match the other GPUs of its sync-boost group",
            "Look at the slowest GPU of the group: its throttle reason is the real cause.",
        ),
        ThrottleReason::SwThermalSlowdown | ThrottleReason::HwThermalSlowdown => (
            "slowed down because it runs too hot",
            "Check cooling: fan speeds, airflow and inlet temperature; if it persists, report the \
             GPU to the provider and move the job.",
        ),
        ThrottleReason::HwPowerBrakeSlowdown => (
            "slowed down by an external power brake",
            "The power supply or rack asserted the brake: report it to the provider with the \
             GPU's bus id.",
        ),
        _ => (
            "slowed down by a hardware signal (temperature or power)",
            "Check temperatures and power draw; if they look normal, report the GPU to the \
             provider (a failing board or power supply) and move the job.",
        ),
    }
}

impl ThrottleRule {
    pub fn new(cfg: ThrottleConfig, fire_share: f64, clear_share: f64) -> Self {
        Self {
            cfg,
            fire_share,
            clear_share,
            windows: BTreeMap::new(),
        }
    }

    pub fn evaluate(&mut self, ctx: &Ctx<'_>) -> RuleOutput {
        let snap = ctx.snap;
        let now = ctx.now_ms;
        let (span, fire, clear) = (self.cfg.window_ms, self.fire_share, self.clear_share);
        let slowdowns = || {
            ThrottleReason::ALL
                .iter()
                .filter(|(r, _)| r.is_slowdown())
                .map(|(r, _)| *r)
        };
        for g in &snap.gpus {
            let windows = self.windows.entry(g.index).or_insert_with(|| {
                slowdowns()
                    .map(|r| (key(r), Window::new(span, fire, clear)))
                    .collect()
            });
            for (r, (_, w)) in slowdowns().zip(windows.iter_mut()) {
                let value = g.throttle_reasons.as_ref().map(|rs| rs.contains(&r));
                w.push(now, value);
            }
        }
        self.windows.retain(|gpu, _| snap.gpu(*gpu).is_some());

        let mut out = RuleOutput::default();
        if !self.cfg.enabled {
            return out;
        }
        let mut by_reason: BTreeMap<ThrottleReasonKey, (i64, Vec<u32>)> = BTreeMap::new();
        for (&gpu, k, w) in self
            .windows
            .iter()
            .flat_map(|(gpu, ws)| ws.iter().map(move |(k, w)| (gpu, *k, w)))
        {
            if let (true, Some(since)) = (w.is_active(), w.active_since()) {
                let e = by_reason.entry(k).or_insert((since, Vec::new()));
                e.0 = e.0.min(since);
                e.1.push(gpu);
            }
        }
        for (k, (since, gpus)) in by_reason {
            if let Some(r) = reason(k) {
                let readings: Vec<&GpuReading> = gpus.iter().filter_map(|&i| snap.gpu(i)).collect();
                out.alerts.push(self.alert(ctx, r, since, &gpus, &readings));
            }
        }
        out
    }

    fn alert(
        &self,
        ctx: &Ctx<'_>,
        r: ThrottleReason,
        since: i64,
        gpus: &[u32],
        readings: &[&GpuReading],
    ) -> Alert {
        let list = gpu_ranges(gpus);
        let gpu_word = if gpus.len() == 1 { "GPU" } else { "GPUs" };
        let (what, next) = words(r);
        let lasted = crate::units::duration(ctx.now_ms - since, crate::units::DurationStyle::Words);
        let join = |f: &dyn Fn(&GpuReading) -> Option<String>| {
            readings
                .iter()
                .map(|g| format!("{}: {}", g.index, f(g).unwrap_or_else(|| units::NA.into())))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let evidence = vec![
            ("reason".to_string(), format!("{} (NVML)", r.label())),
            ("GPUs".to_string(), list.clone()),
            ("for".to_string(), lasted.clone()),
            (
                "temperature".to_string(),
                join(&|g| g.temperature_celsius.map(|t| format!("{t} °C"))),
            ),
            (
                "power / limit".to_string(),
                join(&|g| {
                    Some(format!(
                        "{:.0}/{:.0} W",
                        g.power_watts?, g.power_limit_watts?
                    ))
                }),
            ),
            (
                "SM clock / max".to_string(),
                join(&|g| Some(format!("{}/{} MHz", g.clock_sm_mhz?, g.clock_sm_max_mhz?))),
            ),
        ];
        Alert {
            id: format!("throttle:{}", r.label()),
            kind: AlertKind::Throttle,
            severity: severity(r),
            gpu: (gpus.len() == 1).then(|| gpus[0]),
            title: format!("{gpu_word} {list} {what} for {lasted}"),
            detail: format!(
                "NVML reports `{}` on {gpu_word} {list} for most of the last {}: the clocks run \
                 below their maximum, so work takes longer than it should.",
                r.label(),
                crate::units::duration(self.cfg.window_ms, crate::units::DurationStyle::Words)
            ),
            evidence,
            cost_micros: None,
            next_step: Some(next.to_string()),
            since_unix_ms: since,
            currency: ctx.currency,
        }
    }
}
