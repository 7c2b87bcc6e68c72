//! `[alerts.vram]` resolved over the VRAM rule's defaults: every unset key takes the default,
//! every set one is checked (an error names the key).

use crate::config::raw::RawVram;
use crate::config::values::{ValueError, duration_ms, number};
use crate::engine::rules::config::VramConfig;

/// `[alerts.vram]` (absent: the defaults).
pub(super) fn resolve(raw: Option<&RawVram>, d: &VramConfig) -> Result<VramConfig, ValueError> {
    let v = raw.cloned().unwrap_or_default();
    let trend_ms = duration_ms("alerts.vram.trend", &v.trend, d.trend_ms, 30_000)?;
    let vram = VramConfig {
        enabled: v.enabled.unwrap_or(d.enabled),
        trend_ms,
        horizon_ms: duration_ms("alerts.vram.horizon", &v.horizon, d.horizon_ms, 60_000)?,
        high_pct: number("alerts.vram.high_pct", v.high_pct, d.high_pct, 50.0, 100.0)?,
        ..d.clone()
    };
    Ok(vram)
}
