//! `[alerts.checkpoint]` resolved over the checkpoint-pause rule's defaults: every unset key takes the default,
//! every set one is checked (an error names the key).

use crate::config::raw::RawCheckpoint;
use crate::config::values::{ValueError, duration_ms, number};
use crate::engine::rules::config::CheckpointConfig;

/// `[alerts.checkpoint]` (absent: the defaults).
pub(super) fn resolve(
    raw: Option<&RawCheckpoint>,
    d: &CheckpointConfig,
) -> Result<CheckpointConfig, ValueError> {
    let k = raw.cloned().unwrap_or_default();
    let dk = d;
    let checkpoint = CheckpointConfig {
        pause_util_pct: number(
            "alerts.checkpoint.pause_util_pct",
            k.pause_util_pct,
            dk.pause_util_pct,
            0.0,
            100.0,
        )?,
        busy_util_pct: number(
            "alerts.checkpoint.busy_util_pct",
            k.busy_util_pct,
            dk.busy_util_pct,
            0.0,
            100.0,
        )?,
        min_pause_ms: duration_ms(
            "alerts.checkpoint.min_pause",
            &k.min_pause,
            dk.min_pause_ms,
            1_000,
        )?,
        max_pause_ms: duration_ms(
            "alerts.checkpoint.max_pause",
            &k.max_pause,
            dk.max_pause_ms,
            1_000,
        )?,
        min_write_bytes_per_s: number(
            "alerts.checkpoint.min_write_mb_per_s",
            k.min_write_mb_per_s,
            dk.min_write_bytes_per_s / 1e6,
            0.0,
            1e6,
        )? * 1e6,
        write_ratio: number(
            "alerts.checkpoint.write_ratio",
            k.write_ratio,
            dk.write_ratio,
            0.0,
            1e4,
        )?,
        periodic_tolerance: number(
            "alerts.checkpoint.periodic_tolerance_pct",
            k.periodic_tolerance_pct,
            dk.periodic_tolerance * 100.0,
            0.0,
            100.0,
        )? / 100.0,
    };
    if checkpoint.busy_util_pct <= checkpoint.pause_util_pct {
        return Err(ValueError::new(
            "alerts.checkpoint.busy_util_pct",
            "must be above pause_util_pct",
        ));
    }
    if checkpoint.max_pause_ms < checkpoint.min_pause_ms {
        return Err(ValueError::new(
            "alerts.checkpoint.max_pause",
            "must be at least min_pause",
        ));
    }
    Ok(checkpoint)
}
