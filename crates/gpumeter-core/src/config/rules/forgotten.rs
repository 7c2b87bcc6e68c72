//! `[alerts.forgotten]` resolved over the forgotten-allocation rule's defaults: every unset key takes the default,
//! every set one is checked (an error names the key).

use crate::config::raw::RawForgotten;
use crate::config::values::{ValueError, duration_ms, number};
use crate::engine::rules::config::ForgottenConfig;

/// `[alerts.forgotten]` (absent: the defaults).
pub(super) fn resolve(
    raw: Option<&RawForgotten>,
    d: &ForgottenConfig,
) -> Result<ForgottenConfig, ValueError> {
    let f = raw.cloned().unwrap_or_default();
    let df = d;
    let forgotten = ForgottenConfig {
        enabled: f.enabled.unwrap_or(df.enabled),
        min_vram_bytes: (number(
            "alerts.forgotten.min_vram_gib",
            f.min_vram_gib,
            1.0,
            0.0,
            1e6,
        )? * (1u64 << 30) as f64) as u64,
        max_sm_pct: number(
            "alerts.forgotten.max_sm_pct",
            f.max_sm_pct,
            df.max_sm_pct,
            0.0,
            100.0,
        )?,
        after_ms: duration_ms("alerts.forgotten.after", &f.after, df.after_ms, 0)?,
        window_ms: df.window_ms,
    };
    Ok(forgotten)
}
