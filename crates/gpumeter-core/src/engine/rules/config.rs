//! The rules' resolved settings, [`RulesConfig`], with every default (documented in
//! `config/default.toml` and docs/alerts.md). The config file's `[alerts.<rule>]` tables are read
//! and resolved into these by `config::rules`; the engine never sees the file.

/// Idle paid time.
#[derive(Debug, Clone, PartialEq)]
pub struct IdleConfig {
    /// The idle rule runs (`[alerts.idle] enabled`, default on).
    pub enabled: bool,
    /// A GPU sample is idle when util ≤ this…
    pub gpu_util_pct: f64,
    /// …and memory-controller util ≤ this…
    pub mem_util_pct: f64,
    /// …and PCIe RX + TX < this (bytes/s; an unsupported PCIe reading does not count against).
    pub pcie_bytes_per_s: f64,
    /// Hysteresis window deciding "the machine is idle".
    pub window_ms: i64,
    /// First notification once idle this long.
    pub remind_after_ms: i64,
    /// Then again every this long.
    pub remind_every_ms: i64,
    /// Without GPU activity since gpumeter started, alerts wait until the host has been up this long.
    pub arm_after_boot_ms: i64,
    /// A burst on a GPU holding less than this (bytes: a CUDA context, no model)…
    pub probe_memory_bytes: u64,
    /// …lasting at most this long is a probe, not work ([`super::work`]).
    pub probe_max_ms: i64,
}

/// Forgotten allocation.
#[derive(Debug, Clone, PartialEq)]
pub struct ForgottenConfig {
    /// The forgotten rule runs (`[alerts.forgotten] enabled`, default on).
    pub enabled: bool,
    /// A process must hold at least this much VRAM on the GPU, bytes (`[alerts.forgotten]
    /// min_vram_gib`, default 1 GiB).
    pub min_vram_bytes: u64,
    /// "~0 SM": per-process SM util (or the GPU's util when unknown) at most this.
    pub max_sm_pct: f64,
    /// Quiet this long since its last kernel, ms, before it is forgotten (`[alerts.forgotten]
    /// after`, default 15 min).
    pub after_ms: i64,
    /// The window over which a process's busy/quiet samples are judged, ms (2 min; no config key).
    pub window_ms: i64,
}

/// Starved GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct StarvedConfig {
    /// The starved rule runs (`[alerts.starved] enabled`, default on); the checkpoint rule follows
    /// it.
    pub enabled: bool,
    /// Hysteresis window for the starved verdict, ms (`[alerts.starved] window`, default 60 s).
    pub window_ms: i64,
    /// No verdict in a job's first this long (by its GPU processes' start time): warm-up.
    pub warmup_ms: i64,
    /// Starved when the window's mean util is below this (and above the idle level)…
    pub util_below_pct: f64,
    /// …or, on cards with GPM, its mean SM activity below this.
    pub sm_active_below_pct: f64,
    /// CPU-bound: the job's processes use at least this share of the cores they may use…
    pub cpu_saturated_pct: f64,
    /// …or its main process sits at this much of one core.
    pub main_core_pct: f64,
    /// I/O-bound: iowait at least this…
    pub iowait_pct: f64,
    /// …or a process of the job in D state this share of the window…
    pub dstate_share: f64,
    /// Disk reads at this share of their observed peak read "steady at their peak" (words only:
    /// a level is no limit without saturation signs)…
    pub disk_peak_share: f64,
    /// …and fewer reads than this are no limit at all.
    pub disk_min_bytes_per_s: f64,
    /// Disk-throughput bound needs the busiest disk busy at least this share of the time…
    pub disk_busy_pct: f64,
    /// …with at least this many requests in flight on average, where known.
    pub disk_queue_depth: f64,
    /// A lighter phase (evaluation): the job's CPU and reads fell to at most this share of
    /// their level while its GPUs were busy; an unclassified verdict is then held back.
    pub phase_drop_share: f64,
    /// Host-to-device copies: PCIe RX at least this while util is below `h2d_util_below_pct`.
    pub h2d_rx_bytes_per_s: f64,
    /// Util below this, percent 0–100, while PCIe RX is at `h2d_rx_bytes_per_s` (`[alerts.starved]
    /// h2d_util_below_pct`, default 30).
    pub h2d_util_below_pct: f64,
    /// Severity by the starved share of the job's recent time.
    pub moderate_share: f64,
    /// At least this starved share (0–1) is high severity, else at `moderate_share` moderate
    /// (`[alerts.starved] high_share_pct`, default 20 %).
    pub high_share: f64,
    /// How far back that share looks.
    pub severity_horizon_ms: i64,
}

/// Checkpoint pauses (see `checkpoint.rs`); on with the starved rule, which they would fool.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckpointConfig {
    /// At or below this mean util the held GPUs are paused…
    pub pause_util_pct: f64,
    /// …and at or above it they are training.
    pub busy_util_pct: f64,
    /// A pause this long or longer, and no longer than `max_pause_ms`, may be a checkpoint…
    pub min_pause_ms: i64,
    /// The longest pause that may be a checkpoint, ms (`[alerts.checkpoint] max_pause`, default 10
    /// min).
    pub max_pause_ms: i64,
    /// …when disk writes during it averaged at least this (bytes/s)…
    pub min_write_bytes_per_s: f64,
    /// …and this many times the writes while training.
    pub write_ratio: f64,
    /// Gaps between pauses within this share of their mean are periodic.
    pub periodic_tolerance: f64,
}

/// Clock throttling.
#[derive(Debug, Clone, PartialEq)]
pub struct ThrottleConfig {
    /// The throttle rule runs (`[alerts.throttle] enabled`, default on).
    pub enabled: bool,
    /// Hysteresis window for each throttle reason, ms (`[alerts.throttle] window`, default 60 s).
    pub window_ms: i64,
}

/// Hung GPU: util high while GPM says the SMs do no work (see `StuckThresholds`).
#[derive(Debug, Clone, PartialEq)]
pub struct HungConfig {
    /// The hung rule runs (`[alerts.hung] enabled`, default on).
    pub enabled: bool,
    /// Hysteresis window for the hung verdict, ms (`[alerts.hung] window`, default 2 min).
    pub window_ms: i64,
    /// What a stuck sample looks like (util high, SM activity and power low); the model's defaults,
    /// no config key.
    pub thresholds: gpumeter_model::StuckThresholds,
}

/// Critical XID errors.
#[derive(Debug, Clone, PartialEq)]
pub struct XidConfig {
    /// The XID rule runs (`[alerts.xid] enabled`, default on).
    pub enabled: bool,
}

/// VRAM headroom.
#[derive(Debug, Clone, PartialEq)]
pub struct VramConfig {
    /// The VRAM rule runs (`[alerts.vram] enabled`, default on).
    pub enabled: bool,
    /// The trend is fitted over this much history…
    pub trend_ms: i64,
    /// …and counts as growth at ≥ this many bytes per minute…
    pub growth_bytes_per_min: f64,
    /// …rising at least this much over the trend window (noise never does)…
    pub min_rise_bytes: u64,
    /// …when it would fill the card within this long.
    pub horizon_ms: i64,
    /// Sustained-high warning: used ≥ this share of total (percent)…
    pub high_pct: f64,
    /// …for most of this window.
    pub high_window_ms: i64,
    /// Hysteresis window for the growth verdict.
    pub window_ms: i64,
}

/// Shared or foreign cards.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedConfig {
    /// The shared-card rule runs (`[alerts.shared] enabled`, default on).
    pub enabled: bool,
    /// VRAM no process we can see accounts for, at least this much, counts.
    pub min_hidden_bytes: u64,
    /// Hysteresis window for the shared notice, ms (`[alerts.shared] window`, default 60 s).
    pub window_ms: i64,
}

/// Lost GPUs.
#[derive(Debug, Clone, PartialEq)]
pub struct LostConfig {
    /// The lost-GPU rule runs (`[alerts.lost] enabled`, default on).
    pub enabled: bool,
    /// A lost GPU must answer again this long before the alert clears (no flapping).
    pub clear_after_ms: i64,
}

/// Spot interruption notice.
#[derive(Debug, Clone, PartialEq)]
pub struct SpotConfig {
    /// The spot-interruption rule runs (`[alerts.spot] enabled`, default on).
    pub enabled: bool,
}

/// Job finished, meter running.
#[derive(Debug, Clone, PartialEq)]
pub struct JobDoneConfig {
    /// The job-done rule runs (`[alerts.job_done] enabled`, default on).
    pub enabled: bool,
    /// A job counts once its GPUs were busy this long in all…
    pub min_busy_ms: i64,
    /// …and it is gone for this long (a reading glitch is not an end; its rhythm may ask for
    /// longer)…
    pub confirm_ms: i64,
    /// …or its GPUs idle for this long while it lives (and twice its longest pause).
    pub went_idle_ms: i64,
    /// The notice stands at most this long (the idle reminders take over).
    pub stands_ms: i64,
}

/// Everything the rules read.
#[derive(Debug, Clone, PartialEq)]
pub struct RulesConfig {
    /// Share of a window a condition must hold to fire (0–1)…
    pub fire_share: f64,
    /// …and the share at or below which it clears.
    pub clear_share: f64,
    /// Alert transitions kept for the history view.
    pub history_len: usize,
    /// Idle paid time, from `[alerts.idle]`.
    pub idle: IdleConfig,
    /// Forgotten allocations, from `[alerts.forgotten]`.
    pub forgotten: ForgottenConfig,
    /// Starved GPUs, from `[alerts.starved]`.
    pub starved: StarvedConfig,
    /// Checkpoint pauses, from `[alerts.checkpoint]` (switched on and off with the starved rule).
    pub checkpoint: CheckpointConfig,
    /// Clock throttling, from `[alerts.throttle]`.
    pub throttle: ThrottleConfig,
    /// Hung GPUs, from `[alerts.hung]`.
    pub hung: HungConfig,
    /// Critical XID errors, from `[alerts.xid]`.
    pub xid: XidConfig,
    /// Lost GPUs, from `[alerts.lost]`.
    pub lost: LostConfig,
    /// VRAM headroom, from `[alerts.vram]`.
    pub vram: VramConfig,
    /// Shared or foreign cards, from `[alerts.shared]`.
    pub shared: SharedConfig,
    /// Finished jobs, from `[alerts.job_done]`.
    pub job_done: JobDoneConfig,
    /// Spot interruption notices, from `[alerts.spot]`.
    pub spot: SpotConfig,
}

const MIN: i64 = 60_000;
const GIB: f64 = (1u64 << 30) as f64;

impl Default for RulesConfig {
    fn default() -> Self {
        Self {
            fire_share: 0.8,
            clear_share: 0.2,
            history_len: 200,
            idle: IdleConfig {
                enabled: true,
                gpu_util_pct: 5.0,
                mem_util_pct: 5.0,
                pcie_bytes_per_s: 100e6,
                window_ms: 2 * MIN,
                remind_after_ms: 10 * MIN,
                remind_every_ms: 30 * MIN,
                arm_after_boot_ms: 15 * MIN,
                probe_memory_bytes: 2 << 30,
                probe_max_ms: 10_000,
            },
            forgotten: ForgottenConfig {
                enabled: true,
                min_vram_bytes: 1 << 30,
                max_sm_pct: 1.0,
                after_ms: 15 * MIN,
                window_ms: 2 * MIN,
            },
            starved: StarvedConfig {
                enabled: true,
                window_ms: MIN,
                warmup_ms: 5 * MIN,
                util_below_pct: 60.0,
                sm_active_below_pct: 50.0,
                cpu_saturated_pct: 85.0,
                main_core_pct: 95.0,
                iowait_pct: 15.0,
                dstate_share: 0.5,
                disk_peak_share: 0.9,
                disk_min_bytes_per_s: 50e6,
                disk_busy_pct: 90.0,
                disk_queue_depth: 2.0,
                phase_drop_share: 0.6,
                h2d_rx_bytes_per_s: 1e9,
                h2d_util_below_pct: 30.0,
                moderate_share: 0.05,
                high_share: 0.20,
                severity_horizon_ms: 60 * MIN,
            },
            checkpoint: CheckpointConfig {
                pause_util_pct: 10.0,
                busy_util_pct: 60.0,
                min_pause_ms: 5_000,
                max_pause_ms: 10 * MIN,
                min_write_bytes_per_s: 200e6,
                write_ratio: 3.0,
                periodic_tolerance: 0.3,
            },
            throttle: ThrottleConfig {
                enabled: true,
                window_ms: MIN,
            },
            hung: HungConfig {
                enabled: true,
                window_ms: 2 * MIN,
                thresholds: gpumeter_model::StuckThresholds::default(),
            },
            xid: XidConfig { enabled: true },
            lost: LostConfig {
                enabled: true,
                clear_after_ms: 5 * MIN,
            },
            vram: VramConfig {
                enabled: true,
                trend_ms: 15 * MIN,
                growth_bytes_per_min: 0.05 * GIB,
                min_rise_bytes: 1 << 30,
                horizon_ms: 24 * 60 * MIN,
                high_pct: 95.0,
                high_window_ms: 5 * MIN,
                window_ms: MIN,
            },
            shared: SharedConfig {
                enabled: true,
                min_hidden_bytes: 1 << 30,
                window_ms: MIN,
            },
            job_done: JobDoneConfig {
                enabled: true,
                min_busy_ms: 5 * MIN,
                confirm_ms: 5_000,
                went_idle_ms: 5 * MIN,
                stands_ms: 60 * MIN,
            },
            spot: SpotConfig { enabled: true },
        }
    }
}
