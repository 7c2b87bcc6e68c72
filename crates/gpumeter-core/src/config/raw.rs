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
    /// `[pricing]`: the rate, currency, billing granularity, clock start, extras and budget.
    pub pricing: Option<RawPricing>,
    /// `[ledger]`: whether the SQLite spend ledger is kept, and where.
    pub ledger: Option<RawLedger>,
    /// `[alerts]` and its sub-tables: what is warned about and through which channels.
    pub alerts: Option<RawAlerts>,
    /// `[autostop]`: stopping a paid machine nobody uses (off by default).
    pub autostop: Option<RawAutostop>,
    /// `[ui]`: theme, read-only mode, ASCII-only drawing.
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
    /// A single key, e.g. `"q"`.
    One(String),
    /// Several keys for one action, e.g. `["q", "F10"]`.
    Many(Vec<String>),
}

/// `[pricing]`: money as text, read exactly.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPricing {
    /// `rate`: what the machine costs, e.g. `"31.00/h"`, `"3.10/gpu-h"`, `"2000/month"`. No rate,
    /// no meter.
    pub rate: Option<Spanned<String>>,
    /// `currency`: an ISO 4217 code such as `"USD"`.
    pub currency: Option<Spanned<String>>,
    /// `granularity`: how billed time is rounded (`per-second-min-60s`, `per-second`, `per-minute`,
    /// `per-hour`, `monthly`).
    pub granularity: Option<Spanned<String>>,
    /// `clock_start`: when the provider's clock started (`boot`, `container`, `first-sample`, or an
    /// RFC 3339 time).
    pub clock_start: Option<Spanned<String>>,
    /// `extras_per_hour`: billed per hour whatever the GPUs do (disks, snapshots, public IPs).
    pub extras_per_hour: Option<Spanned<String>>,
    /// `egress_per_gb`: price per GB (10^9 bytes) sent out on non-loopback interfaces.
    pub egress_per_gb: Option<Spanned<String>>,
    /// `budget`: a spend ceiling, `"500/day"`, `"12000/month"` or `"800/run"` (a bare amount is per
    /// run).
    pub budget: Option<Spanned<String>>,
    /// `electricity_per_kwh`: price per kWh of GPU energy (NVML energy counter), for on-prem
    /// machines.
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
    /// `enabled`: keep the ledger (default true).
    pub enabled: Option<bool>,
    /// `path`: the SQLite file; `None` means the XDG state directory default.
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
    /// `url`: where each alert transition is POSTed as Slack-compatible JSON.
    pub url: Option<String>,
    /// `timeout`: a duration such as `"5s"` a POST may take.
    pub timeout: Option<String>,
    /// `max_per_minute`: POSTs allowed per minute; transitions over it are dropped.
    pub max_per_minute: Option<u32>,
    /// `max_per_hour`: POSTs allowed per hour; transitions over it are dropped.
    pub max_per_hour: Option<u32>,
}

/// `[alerts]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAlerts {
    /// `bell`: ring the terminal bell on an alert.
    pub bell: Option<bool>,
    /// `desktop`: desktop notifications by OSC 9 / OSC 777 escape sequences.
    pub desktop: Option<bool>,
    /// `fire_share_pct`: share of its window (percent 0–100) a verdict must hold to fire.
    pub fire_share_pct: Option<f64>,
    /// `clear_share_pct`: share of its window (percent 0–100) at or below which a fired alert
    /// clears.
    pub clear_share_pct: Option<f64>,
    /// `history`: how many alert transitions the history view keeps.
    pub history: Option<usize>,
    /// `hook_timeout`: a duration such as `"10s"`; a command hook running longer is killed.
    pub hook_timeout: Option<String>,
    /// `[alerts.idle]`.
    pub idle: Option<RawIdle>,
    /// `[alerts.forgotten]`.
    pub forgotten: Option<RawForgotten>,
    /// `[alerts.starved]`.
    pub starved: Option<RawStarved>,
    /// `[alerts.checkpoint]` (checkpoint pauses, on with `[alerts.starved]`).
    pub checkpoint: Option<RawCheckpoint>,
    /// `[alerts.throttle]`.
    pub throttle: Option<RawThrottle>,
    /// `[alerts.hung]`.
    pub hung: Option<RawWindowed>,
    /// `[alerts.xid]`.
    pub xid: Option<RawSwitch>,
    /// `[alerts.lost]`.
    pub lost: Option<RawLost>,
    /// `[alerts.vram]`.
    pub vram: Option<RawVram>,
    /// `[alerts.shared]`.
    pub shared: Option<RawWindowed>,
    /// `[alerts.job_done]`.
    pub job_done: Option<RawJobDone>,
    /// `[alerts.spot]`.
    pub spot: Option<RawSwitch>,
    /// `[alerts.webhook]` (only honoured from the user's file).
    pub webhook: Option<RawWebhook>,
    /// Alert kind (`idle`, `forgotten`, `starved`, `throttle`, `budget`, `hung`, `xid`, `lost`,
    /// `vram`, `shared`, `job_done`, `spot`, or `any`) → argv.
    pub hooks: Option<BTreeMap<String, Vec<String>>>,
}

/// `[autostop]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAutostop {
    /// `enabled`: stop the machine when idle (default false).
    pub enabled: Option<bool>,
    /// `after`: a duration; how long the machine must be idle before it is stopped.
    pub after: Option<String>,
    /// `cpu_pct`: host CPU at or below this (percent 0–100) counts as idle.
    pub cpu_pct: Option<f64>,
    /// `net_kb_per_s`: network traffic at or below this (kB/s) counts as idle.
    pub net_kb_per_s: Option<f64>,
    /// `warn`: durations before the stop at which to warn, e.g. `["5m", "1m"]`.
    pub warn: Option<Vec<String>>,
    /// `arm_after_boot`: a duration; arm once the host has been up this long, even with no GPU
    /// activity seen.
    pub arm_after_boot: Option<String>,
    /// `command`: the stop command as argv (no shell).
    pub command: Option<Vec<String>>,
    /// `wall`: also warn logged-in users with `wall`.
    pub wall: Option<bool>,
}

/// `[alerts.idle]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawIdle {
    /// `enabled`: raise the idle alert.
    pub enabled: Option<bool>,
    /// `gpu_util_pct`: a GPU at or below this NVML utilisation (percent 0–100) counts as idle.
    pub gpu_util_pct: Option<f64>,
    /// `mem_util_pct`: memory utilisation (percent 0–100) at or below which a GPU counts as idle.
    pub mem_util_pct: Option<f64>,
    /// `pcie_mb_per_s`: PCIe RX+TX (MB/s) below which a GPU counts as idle.
    pub pcie_mb_per_s: Option<f64>,
    /// `window`: a duration; the hysteresis window deciding "idle".
    pub window: Option<String>,
    /// `remind_after`: a duration; the first reminder once idle this long.
    pub remind_after: Option<String>,
    /// `remind_every`: a duration between later reminders.
    pub remind_every: Option<String>,
    /// `arm_after_boot`: a duration; before any GPU activity, wait until the host has been up this
    /// long.
    pub arm_after_boot: Option<String>,
    /// `probe_memory_gib`: a burst on a GPU holding less than this (GiB) may be a probe, not work.
    pub probe_memory_gib: Option<f64>,
    /// `probe_max`: a duration; the longest burst that can still be a probe.
    pub probe_max: Option<String>,
}

/// `[alerts.forgotten]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawForgotten {
    /// `enabled`: raise the forgotten-process alert.
    pub enabled: Option<bool>,
    /// `min_vram_gib`: VRAM (GiB) a process must hold to be suspected.
    pub min_vram_gib: Option<f64>,
    /// `max_sm_pct`: SM use (percent 0–100) at or below which the holder counts as doing nothing.
    pub max_sm_pct: Option<f64>,
    /// `after`: a duration; how long it must sit before the alert.
    pub after: Option<String>,
}

/// `[alerts.starved]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawStarved {
    /// `enabled`: raise the starved alert.
    pub enabled: Option<bool>,
    /// `window`: a duration; the window the verdict is judged over.
    pub window: Option<String>,
    /// `warmup`: a duration; no verdict in a job's first `warmup`.
    pub warmup: Option<String>,
    /// `util_below_pct`: NVML utilisation (percent 0–100) below which a GPU is starved (cards
    /// without GPM).
    pub util_below_pct: Option<f64>,
    /// `cpu_saturated_pct`: share of its allowed cores (percent 0–100) at which a job is CPU-bound.
    pub cpu_saturated_pct: Option<f64>,
    /// `main_core_pct`: one core's use (percent 0–100) at which the main process or busiest thread
    /// is the bottleneck.
    pub main_core_pct: Option<f64>,
    /// `iowait_pct`: host iowait (percent 0–100) at which a job is I/O-bound.
    pub iowait_pct: Option<f64>,
    /// `h2d_rx_gb_per_s`: PCIe RX (GB/s) at which low activity is blamed on host-to-device copies.
    pub h2d_rx_gb_per_s: Option<f64>,
    /// `moderate_share_pct`: starved share of the last hour (percent 0–100) from which severity is
    /// moderate.
    pub moderate_share_pct: Option<f64>,
    /// `high_share_pct`: starved share of the last hour (percent 0–100) from which severity is
    /// high.
    pub high_share_pct: Option<f64>,
    /// `sm_active_below_pct`: GPM SM activity (percent 0–100) below which a GPU is starved (Hopper
    /// and newer).
    pub sm_active_below_pct: Option<f64>,
    /// `h2d_util_below_pct`: activity (percent 0–100) below which heavy PCIe RX counts as
    /// copy-bound.
    pub h2d_util_below_pct: Option<f64>,
    /// `disk_min_mb_per_s`: disk reads (MB/s) needed before the disk can be the limit.
    pub disk_min_mb_per_s: Option<f64>,
    /// `disk_busy_pct`: busy time (percent 0–100) of the busiest disk at which it is at its limit.
    pub disk_busy_pct: Option<f64>,
    /// `disk_queue_depth`: requests in flight at which the busiest disk is at its limit.
    pub disk_queue_depth: Option<f64>,
    /// `phase_drop_pct`: CPU and disk reads at most this (percent 0–100) of their busy level mark a
    /// lighter phase (evaluation), and hold an unclassified verdict back.
    pub phase_drop_pct: Option<f64>,
}

/// `[alerts.checkpoint]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCheckpoint {
    /// `pause_util_pct`: GPU utilisation (percent 0–100) at or below which the GPUs are paused.
    pub pause_util_pct: Option<f64>,
    /// `busy_util_pct`: GPU utilisation (percent 0–100) the GPUs must have had before the pause.
    pub busy_util_pct: Option<f64>,
    /// `min_pause`: a duration; the shortest pause that can be a checkpoint.
    pub min_pause: Option<String>,
    /// `max_pause`: a duration; the longest pause that can be a checkpoint.
    pub max_pause: Option<String>,
    /// `min_write_mb_per_s`: average disk writes (MB/s) during the pause.
    pub min_write_mb_per_s: Option<f64>,
    /// `write_ratio`: the pause's disk writes must be at least this many times those while
    /// training.
    pub write_ratio: Option<f64>,
    /// `periodic_tolerance_pct`: gaps within this (percent of their mean) make the pauses periodic.
    pub periodic_tolerance_pct: Option<f64>,
}

/// `[alerts.xid]`, `[alerts.spot]`: on or off.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSwitch {
    /// `enabled`: raise this alert.
    pub enabled: Option<bool>,
}

/// `[alerts.lost]`: on or off, and how long a lost GPU must answer again before it clears.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLost {
    /// `enabled`: raise the lost-GPU alert.
    pub enabled: Option<bool>,
    /// `clear_after`: a duration a lost GPU must answer again before the alert clears.
    pub clear_after: Option<String>,
}

/// `[alerts.hung]`, `[alerts.shared]`: on or off, and the hysteresis window.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWindowed {
    /// `enabled`: raise this alert.
    pub enabled: Option<bool>,
    /// `window`: a duration; the hysteresis window.
    pub window: Option<String>,
}

/// `[alerts.vram]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawVram {
    /// `enabled`: raise the VRAM leak alert and the high-VRAM notice.
    pub enabled: Option<bool>,
    /// `trend`: a duration; VRAM must rise in every fifth of it to be a leak.
    pub trend: Option<String>,
    /// `horizon`: a duration; a leak is only raised if it fills the card within it.
    pub horizon: Option<String>,
    /// `high_pct`: VRAM use (percent 0–100) at which a notice is raised.
    pub high_pct: Option<f64>,
}

/// `[alerts.job_done]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawJobDone {
    /// `enabled`: raise the job-done notice.
    pub enabled: Option<bool>,
    /// `min_busy`: a duration a job must have worked for its end to be noticed.
    pub min_busy: Option<String>,
    /// `went_idle`: a duration its GPUs must idle (while it lives) to count as done.
    pub went_idle: Option<String>,
}

/// `[alerts.throttle]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawThrottle {
    /// `enabled`: raise the throttle alert.
    pub enabled: Option<bool>,
    /// `window`: a duration; slowdown reasons must hold for most of it.
    pub window: Option<String>,
}
