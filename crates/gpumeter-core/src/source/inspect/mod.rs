//! A one-time inspection of the GPUs for a pre-flight check (`gpumeter check`): who each board
//! is, its health (ECC, retired pages, row remapping, infoROM), its setup (persistence, MIG,
//! compute mode), what already runs on it, and how it is wired (PCIe, NVLink, topology, NUMA).
//! Unlike a [`crate::model::Snapshot`] this is taken once, asks for things a monitor never needs,
//! and keeps *why* a reading is missing, because the verdict differs: "not supported" is fine
//! on a consumer card, "no permission" and "GPU lost" are not.
//!
//! Holds the plain data types and [`demo`] (the same facts from a simulated scenario); the NVML
//! reader is `source::nvml::inspect`. No I/O here.

pub mod demo;

/// Why a reading is missing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missing {
    /// The board or driver cannot give it (or the library lacks the function).
    NotSupported,
    NoPermission,
    /// The GPU fell off the bus (or needs a reset): nothing more can be read from it.
    GpuLost,
    /// Any other error, described ("timeout", "unknown driver error").
    Failed(String),
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Missing::NotSupported => f.write_str("not supported"),
            Missing::NoPermission => f.write_str("no permission"),
            Missing::GpuLost => f.write_str("GPU lost"),
            Missing::Failed(why) => f.write_str(why),
        }
    }
}

/// A reading, or why it is missing.
pub type Fact<T> = Result<T, Missing>;

/// The whole inspection: the driver and every GPU NVML enumerates.
#[derive(Debug, Clone, PartialEq)]
pub struct Inspection {
    pub driver_version: Fact<String>,
    /// CUDA driver API version, `12.4`.
    pub cuda_driver_version: Fact<String>,
    pub gpus: Vec<GpuInspection>,
    /// `topology[i][j]`: the closest common PCIe ancestor of GPUs i and j (i ≠ j).
    pub topology: Vec<Vec<Fact<Topology>>>,
}

/// One GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuInspection {
    pub index: u32,
    /// The GPU fell off the bus (or needs a reset) during the inspection.
    pub lost: bool,
    pub name: Fact<String>,
    pub uuid: Fact<String>,
    pub pci_bus_id: Fact<String>,
    pub memory_total_bytes: Fact<u64>,
    pub memory_used_bytes: Fact<u64>,
    pub ecc: Fact<EccMode>,
    pub ecc_corrected_volatile: Fact<u64>,
    pub ecc_uncorrected_volatile: Fact<u64>,
    pub ecc_uncorrected_aggregate: Fact<u64>,
    pub retired_pages: Fact<RetiredPages>,
    pub retired_pending: Fact<bool>,
    pub remapped_rows: Fact<RemappedRows>,
    pub persistence: Fact<bool>,
    pub mig: Fact<MigMode>,
    pub compute_mode: Fact<ComputeMode>,
    pub processes: Fact<Vec<GpuProcess>>,
    /// `Ok(version)` when the infoROM validates (the version where readable).
    pub inforom: Fact<InfoRom>,
    pub pcie: PcieLink,
    /// Every link the board reports; empty `Ok` when it has none that answer.
    pub nvlinks: Fact<Vec<NvLinkInfo>>,
    /// CPUs (numbers) near the GPU, from its CPU affinity.
    pub cpu_affinity: Fact<Vec<u32>>,
    /// NUMA nodes near the GPU, from its memory affinity.
    pub numa_nodes: Fact<Vec<u32>>,
}

impl GpuInspection {
    /// A GPU that could not even be opened: every reading carries `why`.
    pub fn unreachable(index: u32, why: Missing) -> GpuInspection {
        GpuInspection {
            index,
            lost: why == Missing::GpuLost,
            name: Err(why.clone()),
            uuid: Err(why.clone()),
            pci_bus_id: Err(why.clone()),
            memory_total_bytes: Err(why.clone()),
            memory_used_bytes: Err(why.clone()),
            ecc: Err(why.clone()),
            ecc_corrected_volatile: Err(why.clone()),
            ecc_uncorrected_volatile: Err(why.clone()),
            ecc_uncorrected_aggregate: Err(why.clone()),
            retired_pages: Err(why.clone()),
            retired_pending: Err(why.clone()),
            remapped_rows: Err(why.clone()),
            persistence: Err(why.clone()),
            mig: Err(why.clone()),
            compute_mode: Err(why.clone()),
            processes: Err(why.clone()),
            inforom: Err(why.clone()),
            pcie: PcieLink {
                current_gen: Err(why.clone()),
                width: Err(why.clone()),
                gen_max: Err(why.clone()),
                width_max: Err(why.clone()),
                gen_card_max: Err(why.clone()),
                replays: Err(why.clone()),
            },
            nvlinks: Err(why.clone()),
            cpu_affinity: Err(why.clone()),
            numa_nodes: Err(why.clone()),
        }
    }
}

/// ECC mode now and after the next reboot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EccMode {
    pub current: bool,
    pub pending: bool,
}

/// Pages retired (pre-Ampere boards) for multiple single-bit errors / a double-bit error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetiredPages {
    pub single_bit: u32,
    pub double_bit: u32,
}

/// Row remapping (Ampere and newer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RemappedRows {
    pub correctable: u32,
    pub uncorrectable: u32,
    /// A remap waits for a GPU reset.
    pub pending: bool,
    /// A remap failed: the board should be replaced.
    pub failure: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MigMode {
    pub current: bool,
    pub pending: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComputeMode {
    Default,
    ExclusiveThread,
    Prohibited,
    ExclusiveProcess,
}

impl ComputeMode {
    pub fn label(self) -> &'static str {
        match self {
            ComputeMode::Default => "default (shared)",
            ComputeMode::ExclusiveThread => "exclusive thread",
            ComputeMode::Prohibited => "prohibited",
            ComputeMode::ExclusiveProcess => "exclusive process",
        }
    }
}

/// A process holding a context on the GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuProcess {
    /// Host PID (NVML's numbering).
    pub pid: u32,
    /// `None`: the driver cannot say (MIG, permissions).
    pub used_bytes: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InfoRom {
    /// The infoROM image version, where readable.
    pub version: Option<String>,
}

/// PCIe link state. `gen_max`/`width_max` are the lower of card and slot; `gen_card_max` is the
/// card's own maximum.
#[derive(Debug, Clone, PartialEq)]
pub struct PcieLink {
    pub current_gen: Fact<u32>,
    pub width: Fact<u32>,
    pub gen_max: Fact<u32>,
    pub width_max: Fact<u32>,
    pub gen_card_max: Fact<u32>,
    pub replays: Fact<u32>,
}

/// One NVLink link.
#[derive(Debug, Clone, PartialEq)]
pub struct NvLinkInfo {
    pub link: u32,
    pub active: bool,
    /// NVML's version code (4 = NVLink 3, 6 = NVLink 4, 7 = NVLink 5).
    pub version: Fact<u32>,
    /// PCI bus id of the far end (another GPU or an NVSwitch).
    pub remote_bus_id: Fact<String>,
}

/// `nvidia-smi topo -m`'s PCIe levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topology {
    /// The same board (a multi-GPU card).
    Internal,
    /// One PCIe switch between them (PIX).
    Single,
    /// Several PCIe switches, no host bridge (PXB).
    Multiple,
    /// A PCIe host bridge (PHB).
    HostBridge,
    /// Host bridges within one NUMA node (NODE).
    Node,
    /// Across NUMA nodes, over the CPU interconnect (SYS).
    System,
}

impl Topology {
    /// The legend's code.
    pub fn code(self) -> &'static str {
        match self {
            Topology::Internal => "X",
            Topology::Single => "PIX",
            Topology::Multiple => "PXB",
            Topology::HostBridge => "PHB",
            Topology::Node => "NODE",
            Topology::System => "SYS",
        }
    }
}
