//! `[alerts.shared]` resolved over the shared-GPU notice's defaults: every unset key takes the default,
//! every set one is checked (an error names the key).

use crate::config::raw::RawWindowed;
use crate::config::values::{ValueError, duration_ms};
use crate::engine::rules::config::SharedConfig;

/// `[alerts.shared]` (absent: the defaults).
pub(super) fn resolve(
    raw: Option<&RawWindowed>,
    d: &SharedConfig,
) -> Result<SharedConfig, ValueError> {
    let s = raw.cloned().unwrap_or_default();
    let shared = SharedConfig {
        enabled: s.enabled.unwrap_or(d.enabled),
        window_ms: duration_ms("alerts.shared.window", &s.window, d.window_ms, 5_000)?,
        ..d.clone()
    };
    Ok(shared)
}
