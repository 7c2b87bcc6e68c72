//! What a pre-flight check (`gpumeter check`) asks of a simulated machine beyond the readings a
//! monitor takes: per GPU its health and setup (`[[gpu]] health = { … }`: ECC, retired pages,
//! row remapping, persistence, compute mode, infoROM, PCIe replays and the card's own link
//! maximum, NVLink, NUMA node and PCIe switch), and per scenario what the demo shows of the host
//! and software around the GPUs (`[preflight]`). Every key is optional and its default is a
//! healthy data-center box, so a scenario states only its hazards.

use serde::Deserialize;

/// One GPU's health and setup. Defaults: ECC on with no errors, nothing retired or remapped,
/// persistence on, default compute mode, a valid infoROM, no replays, no NVLink.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GpuHealthSpec {
    pub ecc_enabled: bool,
    /// ECC mode after the next reboot; the current mode when absent.
    pub ecc_pending: Option<bool>,
    pub ecc_corrected_volatile: u64,
    pub ecc_uncorrected_volatile: u64,
    pub ecc_uncorrected_aggregate: u64,
    /// Pages retired for multiple single-bit errors / a double-bit error.
    pub retired_pages_sbe: u32,
    pub retired_pages_dbe: u32,
    pub retired_pending: bool,
    /// Row remapping (Ampere and newer): rows remapped, a remap waiting for a reset, a failed one.
    pub remapped_correctable: u32,
    pub remapped_uncorrectable: u32,
    pub remap_pending: bool,
    pub remap_failure: bool,
    pub persistence: bool,
    pub compute_mode: ComputeModeSpec,
    pub inforom_valid: bool,
    pub inforom_version: String,
    pub pcie_replays: u32,
    /// The card's own PCIe maximum (the slot may be lower); `pcie_gen_max` when absent.
    pub pcie_gen_card_max: Option<u32>,
    pub nvlink: Option<NvLinkSpec>,
    /// NUMA node the GPU hangs off (0 when absent).
    pub numa_node: Option<u32>,
    /// GPUs with the same switch number share a PCIe switch.
    pub pcie_switch: Option<u32>,
}

impl Default for GpuHealthSpec {
    fn default() -> Self {
        GpuHealthSpec {
            ecc_enabled: true,
            ecc_pending: None,
            ecc_corrected_volatile: 0,
            ecc_uncorrected_volatile: 0,
            ecc_uncorrected_aggregate: 0,
            retired_pages_sbe: 0,
            retired_pages_dbe: 0,
            retired_pending: false,
            remapped_correctable: 0,
            remapped_uncorrectable: 0,
            remap_pending: false,
            remap_failure: false,
            persistence: true,
            compute_mode: ComputeModeSpec::Default,
            inforom_valid: true,
            inforom_version: "G520.0200.00.05".to_string(),
            pcie_replays: 0,
            pcie_gen_card_max: None,
            nvlink: None,
            numa_node: None,
            pcie_switch: None,
        }
    }
}

/// NVML's compute modes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ComputeModeSpec {
    #[default]
    Default,
    ExclusiveProcess,
    Prohibited,
}

impl ComputeModeSpec {
    /// `nvmlComputeMode_t` (1, exclusive-thread, is deprecated and not modelled).
    pub fn nvml_code(self) -> u32 {
        match self {
            ComputeModeSpec::Default => 0,
            ComputeModeSpec::Prohibited => 2,
            ComputeModeSpec::ExclusiveProcess => 3,
        }
    }
}

/// A GPU's NVLink links, all to NVSwitches (as on HGX boards).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NvLinkSpec {
    pub links: u32,
    /// NVML's version code: 4 = NVLink 3, 6 = NVLink 4 (H100), 7 = NVLink 5.
    #[serde(default = "nvlink4")]
    pub version: u32,
    /// Link numbers that are down.
    #[serde(default)]
    pub down: Vec<u32>,
}

fn nvlink4() -> u32 {
    6
}

/// What `gpumeter check --demo` shows of the host and software around the GPUs; the live
/// check reads these from the machine itself.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreflightSpec {
    /// `torch.__version__` of the Python on PATH, e.g. `2.8.0+cu129` (absent: no torch found).
    pub torch: Option<String>,
    /// `torch.version.cuda`, e.g. `12.9`.
    pub torch_cuda: Option<String>,
    /// Instance type as DMI shows it (`/sys/class/dmi/id/product_name`).
    pub instance_type: Option<String>,
    /// NUMA nodes of the host (1 when absent).
    pub numa_nodes: Option<u32>,
    /// The data directory's file system type (`ext4`, `nfs4`, …) and measured rates.
    pub data_fs: Option<String>,
    pub data_seq_mb_per_s: Option<f64>,
    pub data_random_iops: Option<f64>,
    /// Environment variables set in the demo's shell, e.g. `{ CUDA_LAUNCH_BLOCKING = "1" }`.
    #[serde(default)]
    pub env: std::collections::BTreeMap<String, String>,
    /// The nouveau driver is bound.
    #[serde(default)]
    pub nouveau: bool,
}
