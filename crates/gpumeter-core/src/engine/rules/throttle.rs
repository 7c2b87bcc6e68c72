//! Throttling: clocks held down by the power cap, temperature or a hardware slowdown signal,
//! as NVML's throttle reasons say, for most of the window (default 60 s). One alert per reason
//! (the software and hardware thermal slowdowns are one heat alert that escalates),
//! listing the GPUs and for how long. Reasons that cost nothing (idle clocks, application clock
//! settings) are ignored; a GPU whose driver cannot report reasons is no evidence either way.
//! The power cap counts only when the limit was lowered below the board's default: at the
//! default, a card held at its rated power under full load works as designed.

use std::collections::BTreeMap;

use gpumeter_model::{GpuReading, ThrottleReason};

use super::alert::{Alert, AlertKind, Severity};
use super::config::ThrottleConfig;
use super::job::gpu_ranges;
use super::window::Window;
use super::{Ctx, RuleOutput};
use crate::units;

/// The throttle rule's state across ticks: a window per GPU and throttle reason (see the module
/// docs).
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

/// Reasons that are one problem: a card heating up first slows itself in software, then the
/// board asserts its hardware thermal slowdown. One alert for the heat, escalating, not two.
fn family(r: ThrottleReason) -> &'static str {
    match r {
        ThrottleReason::SwThermalSlowdown | ThrottleReason::HwThermalSlowdown => "thermal",
        other => other.label(),
    }
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
            "held at a lowered power cap",
            "The power limit is below the board's default: raise it (nvidia-smi -pl, as root) \
             or ask the provider why it was lowered — the work you pay for runs slower.",
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

/// Whether the power cap holding a GPU was lowered: its limit below the board's default by
/// more than a watt. At the default, the cap holding the clocks under full load is the board
/// working as designed (a training step or a burn-in at its rated power), nothing to fix; with
/// the default unknown (or an odd driver answer of 0 W) it may have been lowered, so it counts.
fn cap_lowered(g: &GpuReading) -> bool {
    match (g.power_limit_watts, g.power_default_limit_watts) {
        (Some(limit), Some(default)) if default > 0.0 => limit + 1.0 < default,
        _ => true,
    }
}

impl ThrottleRule {
    /// A rule with these settings; it fires when its condition held for `fire_share` of its window
    /// and clears at or below `clear_share` (0–1, `RulesConfig`).
    pub fn new(cfg: ThrottleConfig, fire_share: f64, clear_share: f64) -> Self {
        Self {
            cfg,
            fire_share,
            clear_share,
            windows: BTreeMap::new(),
        }
    }

    /// One tick: folds `ctx` in and returns the alerts that stand now (and any due a reminder).
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
                let value = g.throttle_reasons.as_ref().map(|rs| {
                    rs.contains(&r) && (r != ThrottleReason::SwPowerCap || cap_lowered(g))
                });
                w.push(now, value);
            }
        }
        self.windows.retain(|gpu, _| snap.gpu(*gpu).is_some());

        let mut out = RuleOutput::default();
        if !self.cfg.enabled {
            return out;
        }
        // Per family: since when, its GPUs, and the reasons active (the worst one speaks).
        let mut by_family: BTreeMap<&str, (i64, Vec<u32>, Vec<ThrottleReason>)> = BTreeMap::new();
        for (&gpu, k, w) in self
            .windows
            .iter()
            .flat_map(|(gpu, ws)| ws.iter().map(move |(k, w)| (gpu, *k, w)))
        {
            let (true, Some(since), Some(r)) = (w.is_active(), w.active_since(), reason(k)) else {
                continue;
            };
            let e = by_family
                .entry(family(r))
                .or_insert((since, Vec::new(), Vec::new()));
            e.0 = e.0.min(since);
            if e.1.last() != Some(&gpu) {
                e.1.push(gpu);
            }
            if !e.2.contains(&r) {
                e.2.push(r);
            }
        }
        for (fam, (since, gpus, reasons)) in by_family {
            let readings: Vec<&GpuReading> = gpus.iter().filter_map(|&i| snap.gpu(i)).collect();
            out.alerts
                .extend(self.alert(ctx, fam, &reasons, since, &gpus, &readings));
        }
        out
    }

    fn alert(
        &self,
        ctx: &Ctx<'_>,
        fam: &str,
        reasons: &[ThrottleReason],
        since: i64,
        gpus: &[u32],
        readings: &[&GpuReading],
    ) -> Option<Alert> {
        // The worst reason speaks (the later in NVML's order on a tie: hardware after software).
        let r = reasons
            .iter()
            .copied()
            .max_by_key(|&r| (severity(r), key(r)))?;
        let labels: Vec<&str> = reasons.iter().map(|r| r.label()).collect();
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
            (
                "reason".to_string(),
                format!("{} (NVML)", labels.join(", ")),
            ),
            ("GPUs".to_string(), list.clone()),
            ("for".to_string(), lasted.clone()),
            (
                "temperature".to_string(),
                join(&|g| g.temperature_celsius.map(|t| format!("{t} °C"))),
            ),
            (
                "power / limit".to_string(),
                join(&|g| {
                    let default = g
                        .power_default_limit_watts
                        .map_or_else(String::new, |d| format!(" (default {d:.0} W)"));
                    Some(format!(
                        "{:.0}/{:.0} W{default}",
                        g.power_watts?, g.power_limit_watts?
                    ))
                }),
            ),
            (
                "SM clock / max".to_string(),
                join(&|g| Some(format!("{}/{} MHz", g.clock_sm_mhz?, g.clock_sm_max_mhz?))),
            ),
        ];
        Some(Alert {
            id: format!("throttle:{fam}"),
            kind: AlertKind::Throttle,
            severity: severity(r),
            gpu: (gpus.len() == 1).then(|| gpus[0]),
            title: format!("{gpu_word} {list} {what} for {lasted}"),
            detail: format!(
                "NVML reports `{}` on {gpu_word} {list} for most of the last {}: the clocks run \
                 below their maximum, so work takes longer than it should.",
                labels.join("`, `"),
                crate::units::duration(self.cfg.window_ms, crate::units::DurationStyle::Words)
            ),
            evidence,
            cost_micros: None,
            next_step: Some(next.to_string()),
            since_unix_ms: since,
            currency: ctx.currency,
        })
    }
}
