//! The config file as written: every table's serde struct, where every key is optional (so a
//! user file can set one key and leave the rest to the defaults) and unknown keys are refused.
//! Layers are merged key by key on the TOML itself (see [`super::alerts`]). Values that need checking
//! keep their span, or are checked by their resolver, so an error can name the key. Nothing here
//! decides meaning; see [`super::resolve`] (pricing, ledger, theme) and [`super::alerts`].

use std::collections::BTreeMap;

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
    /// `[cloud]`: where-am-I and the price catalog.
    pub cloud: Option<RawCloud>,
    /// `[keys]`: dashboard action → its key or keys (checked by `ui::keys`).
    pub keys: Option<BTreeMap<String, Spanned<RawKeys>>>,
}

/// One `[keys]` value: a key, or a list of keys.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum RawKeys {
    One(String),
    Many(Vec<String>),
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

/// `[cloud]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCloud {
    /// Ask the instance metadata service (a network call to the link-local address).
    pub metadata: Option<bool>,
    /// A price catalog of your own, its rows before the built-in ones.
    pub catalog: Option<Spanned<String>>,
    /// `spot` or `on-demand`: how the box is bought, when metadata does not say (or is off).
    pub lifecycle: Option<Spanned<String>>,
}

/// `[ledger]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLedger {
    pub enabled: Option<bool>,
    pub path: Option<Spanned<String>>,
}

/// `[ui]`: how the dashboard looks.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawUi {
    /// A built-in theme name or a path to a theme file.
    pub theme: Option<Spanned<String>>,
    /// No signals, no autostop, no command hooks.
    pub readonly: Option<bool>,
    /// ASCII only: no braille, no box-drawing.
    pub ascii: Option<bool>,
}

/// `[alerts.webhook]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWebhook {
    pub url: Option<String>,
    pub timeout: Option<String>,
    pub max_per_minute: Option<u32>,
    pub max_per_hour: Option<u32>,
}

/// `[alerts]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAlerts {
    pub bell: Option<bool>,
    pub desktop: Option<bool>,
    pub fire_share_pct: Option<f64>,
    pub clear_share_pct: Option<f64>,
    pub history: Option<usize>,
    pub hook_timeout: Option<String>,
    pub idle: Option<RawIdle>,
    pub forgotten: Option<RawForgotten>,
    pub starved: Option<RawStarved>,
    pub checkpoint: Option<RawCheckpoint>,
    pub throttle: Option<RawThrottle>,
    pub hung: Option<RawWindowed>,
    pub xid: Option<RawSwitch>,
    pub lost: Option<RawLost>,
    pub vram: Option<RawVram>,
    pub shared: Option<RawWindowed>,
    pub job_done: Option<RawJobDone>,
    pub spot: Option<RawSwitch>,
    pub webhook: Option<RawWebhook>,
    /// Alert kind (`idle`, `forgotten`, `starved`, `throttle`, `budget`, `hung`, `xid`, `lost`,
    /// `vram`, `shared`, `job_done`, `spot`, or `any`) → argv.
    pub hooks: Option<BTreeMap<String, Vec<String>>>,
}

/// `[autostop]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAutostop {
    pub enabled: Option<bool>,
    pub after: Option<String>,
    pub cpu_pct: Option<f64>,
    pub net_kb_per_s: Option<f64>,
    pub warn: Option<Vec<String>>,
    pub arm_after_boot: Option<String>,
    pub command: Option<Vec<String>>,
    pub wall: Option<bool>,
}

/// `[alerts.idle]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawIdle {
    pub enabled: Option<bool>,
    pub gpu_util_pct: Option<f64>,
    pub mem_util_pct: Option<f64>,
    pub pcie_mb_per_s: Option<f64>,
    pub window: Option<String>,
    pub remind_after: Option<String>,
    pub remind_every: Option<String>,
    pub arm_after_boot: Option<String>,
    pub probe_memory_gib: Option<f64>,
    pub probe_max: Option<String>,
}

/// `[alerts.forgotten]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawForgotten {
    pub enabled: Option<bool>,
    pub min_vram_gib: Option<f64>,
    pub max_sm_pct: Option<f64>,
    pub after: Option<String>,
}

/// `[alerts.starved]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawStarved {
    pub enabled: Option<bool>,
    pub window: Option<String>,
    pub warmup: Option<String>,
    pub util_below_pct: Option<f64>,
    pub cpu_saturated_pct: Option<f64>,
    pub main_core_pct: Option<f64>,
    pub iowait_pct: Option<f64>,
    pub h2d_rx_gb_per_s: Option<f64>,
    pub moderate_share_pct: Option<f64>,
    pub high_share_pct: Option<f64>,
    pub sm_active_below_pct: Option<f64>,
    pub h2d_util_below_pct: Option<f64>,
    pub disk_min_mb_per_s: Option<f64>,
    pub disk_busy_pct: Option<f64>,
    pub disk_queue_depth: Option<f64>,
    pub phase_drop_pct: Option<f64>,
}

/// `[alerts.checkpoint]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCheckpoint {
    pub pause_util_pct: Option<f64>,
    pub busy_util_pct: Option<f64>,
    pub min_pause: Option<String>,
    pub max_pause: Option<String>,
    pub min_write_mb_per_s: Option<f64>,
    pub write_ratio: Option<f64>,
    pub periodic_tolerance_pct: Option<f64>,
}

/// `[alerts.xid]`, `[alerts.spot]`: on or off.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSwitch {
    pub enabled: Option<bool>,
}

/// `[alerts.lost]`: on or off, and how long a lost GPU must answer again before it clears.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLost {
    pub enabled: Option<bool>,
    pub clear_after: Option<String>,
}

/// `[alerts.hung]`, `[alerts.shared]`: on or off, and the hysteresis window.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWindowed {
    pub enabled: Option<bool>,
    pub window: Option<String>,
}

/// `[alerts.vram]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawVram {
    pub enabled: Option<bool>,
    pub trend: Option<String>,
    pub horizon: Option<String>,
    pub high_pct: Option<f64>,
}

/// `[alerts.job_done]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawJobDone {
    pub enabled: Option<bool>,
    pub min_busy: Option<String>,
    pub went_idle: Option<String>,
}

/// `[alerts.throttle]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawThrottle {
    pub enabled: Option<bool>,
    pub window: Option<String>,
}
