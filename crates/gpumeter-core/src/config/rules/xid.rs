//! `[alerts.xid]` resolved over the XID rule's defaults: every unset key takes the default,
//! every set one is checked (an error names the key).

use crate::config::raw::RawSwitch;
use crate::config::values::ValueError;
use crate::engine::rules::config::XidConfig;

/// `[alerts.xid]` (absent: the defaults).
pub(super) fn resolve(raw: Option<&RawSwitch>, d: &XidConfig) -> Result<XidConfig, ValueError> {
    let xid = XidConfig {
        enabled: raw.and_then(|x| x.enabled).unwrap_or(d.enabled),
    };
    Ok(xid)
}
