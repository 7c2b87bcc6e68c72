//! `[alerts.throttle]` resolved over the throttle rule's defaults: every unset key takes the default,
//! every set one is checked (an error names the key).

use crate::config::raw::RawThrottle;
use crate::config::values::{ValueError, duration_ms};
use crate::engine::rules::config::ThrottleConfig;

/// `[alerts.throttle]` (absent: the defaults).
pub(super) fn resolve(
    raw: Option<&RawThrottle>,
    d: &ThrottleConfig,
) -> Result<ThrottleConfig, ValueError> {
    let t = raw.cloned().unwrap_or_default();
    let throttle = ThrottleConfig {
        enabled: t.enabled.unwrap_or(d.enabled),
        window_ms: duration_ms("alerts.throttle.window", &t.window, d.window_ms, 5_000)?,
    };
    Ok(throttle)
}
