//! What a snapshot says of one GPU: whether it answers ([`GpuState`]), its readings
//! ([`GpuReading`]: utilization, memory, power, clocks, throttling, PCIe, XID counts), and the
//! thresholds that call a GPU stuck. Plain data.

use serde::{Deserialize, Serialize};

use crate::{PodRef, SharedStr, ThrottleReason};

/// Whether a GPU is answering.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GpuState {
    /// Answering normally (individual readings may still be unsupported).
    #[default]
    Ok,
    /// The driver reported the GPU lost (fell off the bus); readings are absent.
    Lost,
    /// The GPU needs a reset before it answers again.
    ResetRequired,
    /// The last attempt to read it failed for another reason; see the snapshot warnings.
    Error,
}

/// One GPU's readings. Every measurement is optional: `None` means unsupported or unavailable.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuReading {
    /// NVML device index.
    pub index: u32,
    pub state: GpuState,
    pub uuid: Option<SharedStr>,
    pub name: Option<SharedStr>,
    pub pci_bus_id: Option<SharedStr>,
    /// Share of the sample period in which one or more kernels ran (0–100).
    pub util_gpu_pct: Option<u32>,
    /// Share of the sample period in which device memory was read or written (0–100).
    pub util_memory_pct: Option<u32>,
    pub memory_total_bytes: Option<u64>,
    pub memory_used_bytes: Option<u64>,
    pub power_watts: Option<f64>,
    pub power_limit_watts: Option<f64>,
    /// The board's default power limit (NVML's management default): a limit below it was
    /// lowered by someone (`nvidia-smi -pl`, the provider).
    #[serde(default)]
    pub power_default_limit_watts: Option<f64>,
    /// Energy counter since the driver loaded, in millijoules (grows monotonically).
    pub energy_millijoules: Option<u64>,
    pub temperature_celsius: Option<u32>,
    pub fan_speed_pct: Option<u32>,
    pub clock_graphics_mhz: Option<u32>,
    pub clock_sm_mhz: Option<u32>,
    pub clock_memory_mhz: Option<u32>,
    pub clock_sm_max_mhz: Option<u32>,
    pub clock_memory_max_mhz: Option<u32>,
    /// Active clock throttle reasons; `None` when the driver cannot say, empty when none apply.
    pub throttle_reasons: Option<Vec<ThrottleReason>>,
    pub pcie_rx_bytes_per_s: Option<u64>,
    pub pcie_tx_bytes_per_s: Option<u64>,
    pub pcie_link_gen: Option<u32>,
    pub pcie_link_gen_max: Option<u32>,
    pub pcie_link_width: Option<u32>,
    pub pcie_link_width_max: Option<u32>,
    pub encoder_util_pct: Option<u32>,
    pub decoder_util_pct: Option<u32>,
    pub mig_enabled: Option<bool>,
    /// GPM (Hopper and newer) over the last interval, 0–100: share of SM time with a warp
    /// resident — the real "is the GPU working" figure where `util_gpu_pct` only says a kernel
    /// ran. `None` where GPM is unsupported.
    #[serde(default)]
    pub sm_active_pct: Option<f64>,
    /// GPM: resident warps as a share of the maximum, 0–100.
    #[serde(default)]
    pub sm_occupancy_pct: Option<f64>,
    /// GPM: share of time any tensor pipe was busy, 0–100.
    #[serde(default)]
    pub tensor_active_pct: Option<f64>,
    /// GPM: DRAM bandwidth in use as a share of the peak, 0–100.
    #[serde(default)]
    pub dram_active_pct: Option<f64>,
    /// Critical XID errors seen since the source started, per XID (ascending); `None` when the
    /// driver does not report this GPU's events.
    #[serde(default)]
    pub xid_errors: Option<Vec<XidCount>>,
    /// The Kubernetes pods the GPU is allocated to (one, or several MIG slices' pods); empty
    /// off Kubernetes or when unknown, and then absent from the JSON.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pods: Vec<PodRef>,
    /// The UUIDs of its MIG devices (`MIG-…`), when MIG is on and the driver lists them: how
    /// the kubelet names a MIG slice it hands to a pod. Empty otherwise, and absent from the JSON.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mig_uuids: Vec<SharedStr>,
}

/// How often one XID error was seen on a GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct XidCount {
    /// The XID number (79: fell off the bus, 48: double-bit ECC, 94/95: ECC contained /
    /// uncontained, 119/120: GSP errors, …).
    pub xid: u64,
    pub count: u64,
}

/// When a GPU "reports busy but does no work": NVML's util says a kernel is resident nearly all
/// the time while GPM's SM activity says almost no warp runs and the board draws little more
/// than idle power — a job stuck in a collective or a deadlock. The hung-GPU rule decides over
/// a window; billing counts such samples as idle paid time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StuckThresholds {
    /// util ≥ this (percent)…
    pub util_min_pct: f64,
    /// …while SM activity ≤ this (percent)…
    pub sm_active_max_pct: f64,
    /// …and power ≤ this share of the power limit (0–1).
    pub power_max_share: f64,
    /// Without GPM, memory-controller util ≤ this (percent) stands in for SM activity: a kernel
    /// that computes reads and writes memory, one that spins on a flag (a rank waiting in NCCL
    /// for a peer that died) does not.
    pub mem_util_max_pct: f64,
}

impl Default for StuckThresholds {
    fn default() -> Self {
        Self {
            util_min_pct: 90.0,
            sm_active_max_pct: 5.0,
            power_max_share: 0.3,
            mem_util_max_pct: 2.0,
        }
    }
}

impl GpuReading {
    /// Whether this sample looks busy-but-stuck (see [`StuckThresholds`]); `None` when it
    /// cannot say. With GPM: util high, SM activity near zero, power low (an unknown power
    /// reading is no evidence against). Without GPM util alone cannot tell, so both the memory
    /// controller (idle) and the power (low) must be known and agree.
    pub fn looks_stuck(&self, t: &StuckThresholds) -> Option<bool> {
        if self.state != GpuState::Ok {
            return Some(false);
        }
        let util = f64::from(self.util_gpu_pct?);
        let power = match (self.power_watts, self.power_limit_watts) {
            (Some(w), Some(limit)) if limit > 0.0 => Some(w <= limit * t.power_max_share),
            _ => None,
        };
        let busy = util >= t.util_min_pct;
        match self.sm_active_pct.filter(|v| v.is_finite()) {
            Some(sm) => Some(busy && sm <= t.sm_active_max_pct && power.unwrap_or(true)),
            None => {
                let mem = f64::from(self.util_memory_pct?);
                Some(busy && mem <= t.mem_util_max_pct && power?)
            }
        }
    }

    /// VRAM use as a share of total (0–100), when both are known.
    pub fn memory_used_pct(&self) -> Option<f64> {
        match (self.memory_used_bytes, self.memory_total_bytes) {
            (Some(used), Some(total)) if total > 0 => Some(used as f64 * 100.0 / total as f64),
            _ => None,
        }
    }
}
