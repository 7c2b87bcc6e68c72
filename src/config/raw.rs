//! The config file as written: serde structs where every key is optional (so a user file can set
//! one key and leave the rest to the defaults) and unknown keys are refused. Values that need
//! checking keep their span so an error can name the line. Nothing here decides meaning; see
//! [`super::resolve`].

use serde::Deserialize;
use toml::Spanned;

/// One layer: the embedded defaults or a user file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    pub pricing: Option<RawPricing>,
    pub ledger: Option<RawLedger>,
    pub alerts: Option<RawAlerts>,
    pub autostop: Option<RawAutostop>,
    pub ui: Option<RawUi>,
}

/// `[pricing]`: money as text, read exactly.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPricing {
    pub rate: Option<Spanned<String>>,
    pub currency: Option<Spanned<String>>,
    pub granularity: Option<Spanned<String>>,
    pub clock_start: Option<Spanned<String>>,
    pub extras_per_hour: Option<Spanned<String>>,
    pub egress_per_gb: Option<Spanned<String>>,
    pub budget: Option<Spanned<String>>,
    pub electricity_per_kwh: Option<Spanned<String>>,
}

/// `[ledger]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLedger {
    pub enabled: Option<bool>,
    pub path: Option<Spanned<String>>,
}

/// `[alerts]` and `[autostop]` are defined beside the rules and channels that read them.
pub use crate::notify::config::{RawAlerts, RawAutostop};

/// `[ui]`: how the dashboard looks.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawUi {
    /// A built-in theme name or a path to a theme file.
    pub theme: Option<Spanned<String>>,
}
