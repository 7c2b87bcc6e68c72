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
    /// The caller lacks the privilege to read it (often root-only readings).
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
    /// The NVIDIA driver version, e.g. `550.54.15`.
    pub driver_version: Fact<String>,
    /// CUDA driver API version, `12.4`.
    pub cuda_driver_version: Fact<String>,
    /// Every GPU NVML enumerates, in index order.
    pub gpus: Vec<GpuInspection>,
    /// `topology[i][j]`: the closest common PCIe ancestor of GPUs i and j (i ≠ j).
    pub topology: Vec<Vec<Fact<Topology>>>,
}

/// One GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuInspection {
    /// NVML's device index.
    pub index: u32,
    /// The GPU fell off the bus (or needs a reset) during the inspection.
    pub lost: bool,
    /// The board's name, e.g. `NVIDIA H100 80GB HBM3`.
    pub name: Fact<String>,
    /// The GPU's UUID (`GPU-…`).
    pub uuid: Fact<String>,
    /// PCI bus id, e.g. `00000000:17:00.0`.
    pub pci_bus_id: Fact<String>,
    /// Total VRAM, in bytes.
    pub memory_total_bytes: Fact<u64>,
    /// VRAM in use, in bytes.
    pub memory_used_bytes: Fact<u64>,
    /// Whether ECC is on now and after the next reboot.
    pub ecc: Fact<EccMode>,
    /// Corrected ECC errors since the driver last loaded.
    pub ecc_corrected_volatile: Fact<u64>,
    /// Uncorrected ECC errors since the driver last loaded.
    pub ecc_uncorrected_volatile: Fact<u64>,
    /// Uncorrected ECC errors over the board's lifetime.
    pub ecc_uncorrected_aggregate: Fact<u64>,
    /// Pages retired so far (pre-Ampere boards).
    pub retired_pages: Fact<RetiredPages>,
    /// Whether a page retirement waits for a reboot or reset.
    pub retired_pending: Fact<bool>,
    /// Row remapping counts and state (Ampere and newer).
    pub remapped_rows: Fact<RemappedRows>,
    /// Whether persistence mode is on.
    pub persistence: Fact<bool>,
    /// Whether MIG is on now and after the next reset.
    pub mig: Fact<MigMode>,
    /// Who may create contexts on it.
    pub compute_mode: Fact<ComputeMode>,
    /// Processes already holding a context on it.
    pub processes: Fact<Vec<GpuProcess>>,
    /// `Ok(version)` when the infoROM validates (the version where readable).
    pub inforom: Fact<InfoRom>,
    /// The PCIe link now and at most.
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
    /// ECC is on now.
    pub current: bool,
    /// ECC will be on after the next reboot.
    pub pending: bool,
}

/// Pages retired (pre-Ampere boards) for multiple single-bit errors / a double-bit error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetiredPages {
    /// Pages retired for multiple single-bit ECC errors.
    pub single_bit: u32,
    /// Pages retired for a double-bit ECC error.
    pub double_bit: u32,
}

/// Row remapping (Ampere and newer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RemappedRows {
    /// Rows remapped after correctable errors.
    pub correctable: u32,
    /// Rows remapped after uncorrectable errors.
    pub uncorrectable: u32,
    /// A remap waits for a GPU reset.
    pub pending: bool,
    /// A remap failed: the board should be replaced.
    pub failure: bool,
}

/// How MIG mode is set, now and after the next GPU reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MigMode {
    /// MIG is on now.
    pub current: bool,
    /// MIG will be on after the next GPU reset.
    pub pending: bool,
}

/// Who may create compute contexts on a GPU (NVML's compute mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComputeMode {
    /// Any number of processes may share the GPU.
    Default,
    /// One context, usable from one thread at a time.
    ExclusiveThread,
    /// No compute context may be created.
    Prohibited,
    /// One process at a time may hold a context.
    ExclusiveProcess,
}

impl ComputeMode {
    /// How `gpumeter check` prints it (`default (shared)`, `exclusive process`, …).
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

/// The infoROM's state: it validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InfoRom {
    /// The infoROM image version, where readable.
    pub version: Option<String>,
}

/// PCIe link state. `gen_max`/`width_max` are the lower of card and slot; `gen_card_max` is the
/// card's own maximum.
#[derive(Debug, Clone, PartialEq)]
pub struct PcieLink {
    /// PCIe generation the link runs at now (it can drop at idle to save power).
    pub current_gen: Fact<u32>,
    /// Lanes the link runs at now.
    pub width: Fact<u32>,
    /// Highest PCIe generation of card and slot together.
    pub gen_max: Fact<u32>,
    /// Most lanes of card and slot together.
    pub width_max: Fact<u32>,
    /// The card's own highest PCIe generation.
    pub gen_card_max: Fact<u32>,
    /// PCIe replay counter: link-level retransmissions (a sign of a bad link or riser).
    pub replays: Fact<u32>,
}

/// One NVLink link.
#[derive(Debug, Clone, PartialEq)]
pub struct NvLinkInfo {
    /// The link's number on the board.
    pub link: u32,
    /// Whether the link is up.
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
