//! `[alerts.idle]` resolved over the idle rule's defaults: every unset key takes the default,
//! every set one is checked (an error names the key).

use crate::config::raw::RawIdle;
use crate::config::values::{ValueError, duration_ms, number};
use crate::engine::rules::config::IdleConfig;

const MIN: i64 = 60_000;
const GIB: f64 = (1u64 << 30) as f64;

/// `[alerts.idle]` (absent: the defaults).
pub(super) fn resolve(raw: Option<&RawIdle>, d: &IdleConfig) -> Result<IdleConfig, ValueError> {
    let i = raw.cloned().unwrap_or_default();
    let di = d;
    let idle = IdleConfig {
        enabled: i.enabled.unwrap_or(di.enabled),
        gpu_util_pct: number(
            "alerts.idle.gpu_util_pct",
            i.gpu_util_pct,
            di.gpu_util_pct,
            0.0,
            100.0,
        )?,
        mem_util_pct: number(
            "alerts.idle.mem_util_pct",
            i.mem_util_pct,
            di.mem_util_pct,
            0.0,
            100.0,
        )?,
        pcie_bytes_per_s: number(
            "alerts.idle.pcie_mb_per_s",
            i.pcie_mb_per_s,
            di.pcie_bytes_per_s / 1e6,
            0.0,
            1e6,
        )? * 1e6,
        window_ms: duration_ms("alerts.idle.window", &i.window, di.window_ms, 1_000)?,
        remind_after_ms: duration_ms(
            "alerts.idle.remind_after",
            &i.remind_after,
            di.remind_after_ms,
            0,
        )?,
        remind_every_ms: duration_ms(
            "alerts.idle.remind_every",
            &i.remind_every,
            di.remind_every_ms,
            MIN,
        )?,
        arm_after_boot_ms: duration_ms(
            "alerts.idle.arm_after_boot",
            &i.arm_after_boot,
            di.arm_after_boot_ms,
            0,
        )?,
        probe_memory_bytes: (number(
            "alerts.idle.probe_memory_gib",
            i.probe_memory_gib,
            di.probe_memory_bytes as f64 / GIB,
            0.0,
            1024.0,
        )? * GIB) as u64,
        probe_max_ms: duration_ms("alerts.idle.probe_max", &i.probe_max, di.probe_max_ms, 0)?,
    };
    Ok(idle)
}
