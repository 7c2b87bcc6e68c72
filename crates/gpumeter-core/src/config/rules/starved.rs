//! `[alerts.starved]` resolved over the starved-GPU rule's defaults: every unset key takes the default,
//! every set one is checked (an error names the key).

use crate::config::raw::RawStarved;
use crate::config::values::{ValueError, duration_ms, number};
use crate::engine::rules::config::StarvedConfig;

/// `[alerts.starved]` (absent: the defaults).
pub(super) fn resolve(
    raw: Option<&RawStarved>,
    d: &StarvedConfig,
) -> Result<StarvedConfig, ValueError> {
    let s = raw.cloned().unwrap_or_default();
    let ds = d;
    let moderate = number(
        "alerts.starved.moderate_share_pct",
        s.moderate_share_pct,
        ds.moderate_share * 100.0,
        0.0,
        100.0,
    )? / 100.0;
    let high = number(
        "alerts.starved.high_share_pct",
        s.high_share_pct,
        ds.high_share * 100.0,
        0.0,
        100.0,
    )? / 100.0;
    if high < moderate {
        return Err(ValueError::new(
            "alerts.starved.high_share_pct",
            "must be at least moderate_share_pct",
        ));
    }
    let starved = StarvedConfig {
        enabled: s.enabled.unwrap_or(ds.enabled),
        window_ms: duration_ms("alerts.starved.window", &s.window, ds.window_ms, 5_000)?,
        warmup_ms: duration_ms("alerts.starved.warmup", &s.warmup, ds.warmup_ms, 0)?,
        util_below_pct: number(
            "alerts.starved.util_below_pct",
            s.util_below_pct,
            ds.util_below_pct,
            0.0,
            100.0,
        )?,
        cpu_saturated_pct: number(
            "alerts.starved.cpu_saturated_pct",
            s.cpu_saturated_pct,
            ds.cpu_saturated_pct,
            1.0,
            100.0,
        )?,
        main_core_pct: number(
            "alerts.starved.main_core_pct",
            s.main_core_pct,
            ds.main_core_pct,
            1.0,
            100.0,
        )?,
        iowait_pct: number(
            "alerts.starved.iowait_pct",
            s.iowait_pct,
            ds.iowait_pct,
            0.0,
            100.0,
        )?,
        h2d_rx_bytes_per_s: number(
            "alerts.starved.h2d_rx_gb_per_s",
            s.h2d_rx_gb_per_s,
            ds.h2d_rx_bytes_per_s / 1e9,
            0.0,
            1e4,
        )? * 1e9,
        moderate_share: moderate,
        high_share: high,
        sm_active_below_pct: number(
            "alerts.starved.sm_active_below_pct",
            s.sm_active_below_pct,
            ds.sm_active_below_pct,
            0.0,
            100.0,
        )?,
        h2d_util_below_pct: number(
            "alerts.starved.h2d_util_below_pct",
            s.h2d_util_below_pct,
            ds.h2d_util_below_pct,
            0.0,
            100.0,
        )?,
        disk_min_bytes_per_s: number(
            "alerts.starved.disk_min_mb_per_s",
            s.disk_min_mb_per_s,
            ds.disk_min_bytes_per_s / 1e6,
            0.0,
            1e6,
        )? * 1e6,
        disk_busy_pct: number(
            "alerts.starved.disk_busy_pct",
            s.disk_busy_pct,
            ds.disk_busy_pct,
            0.0,
            100.0,
        )?,
        disk_queue_depth: number(
            "alerts.starved.disk_queue_depth",
            s.disk_queue_depth,
            ds.disk_queue_depth,
            0.0,
            1e4,
        )?,
        phase_drop_share: number(
            "alerts.starved.phase_drop_pct",
            s.phase_drop_pct,
            ds.phase_drop_share * 100.0,
            0.0,
            100.0,
        )? / 100.0,
        ..ds.clone()
    };
    Ok(starved)
}
