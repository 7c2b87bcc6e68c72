//! `[alerts.hung]` resolved over the hung-job rule's defaults: every unset key takes the default,
//! every set one is checked (an error names the key).

use crate::config::raw::RawWindowed;
use crate::config::values::{ValueError, duration_ms};
use crate::engine::rules::config::HungConfig;

/// `[alerts.hung]` (absent: the defaults).
pub(super) fn resolve(raw: Option<&RawWindowed>, d: &HungConfig) -> Result<HungConfig, ValueError> {
    let h = raw.cloned().unwrap_or_default();
    let hung = HungConfig {
        enabled: h.enabled.unwrap_or(d.enabled),
        window_ms: duration_ms("alerts.hung.window", &h.window, d.window_ms, 5_000)?,
        ..d.clone()
    };
    Ok(hung)
}
