//! `[alerts.lost]` resolved over the lost-GPU rule's defaults: every unset key takes the default,
//! every set one is checked (an error names the key).

use crate::config::raw::RawLost;
use crate::config::values::{ValueError, duration_ms};
use crate::engine::rules::config::LostConfig;

/// `[alerts.lost]` (absent: the defaults).
pub(super) fn resolve(raw: Option<&RawLost>, d: &LostConfig) -> Result<LostConfig, ValueError> {
    let l = raw.cloned().unwrap_or_default();
    let lost = LostConfig {
        enabled: l.enabled.unwrap_or(d.enabled),
        clear_after_ms: duration_ms(
            "alerts.lost.clear_after",
            &l.clear_after,
            d.clear_after_ms,
            0,
        )?,
    };
    Ok(lost)
}
