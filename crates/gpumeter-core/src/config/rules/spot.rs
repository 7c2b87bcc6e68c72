//! `[alerts.spot]` resolved over the spot-notice rule's defaults: on or off.

use crate::config::raw::RawSwitch;
use crate::config::values::ValueError;
use crate::engine::rules::config::SpotConfig;

/// `[alerts.spot]` (absent: the defaults).
pub(super) fn resolve(raw: Option<&RawSwitch>, d: &SpotConfig) -> Result<SpotConfig, ValueError> {
    Ok(SpotConfig {
        enabled: raw.and_then(|x| x.enabled).unwrap_or(d.enabled),
    })
}
