//! What `gpumeter check` judges: the facts gathered once, from this machine (`gather`) or from a
//! demo scenario (`demo`). Plain data; the check families read it and never touch the system.

use std::collections::BTreeMap;
use std::path::PathBuf;

use gpumeter_core::source::host::HostLimits;
use gpumeter_core::source::inspect::Inspection;

pub use gpumeter_core::expect::Expect;

/// Everything gathered.
#[derive(Debug, Clone, PartialEq)]
pub struct Facts {
    /// `nvml` or `demo:<scenario>`.
    pub source: String,
    pub expect: Option<Expect>,
    /// The GPUs, or why NVML could not be used.
    pub nvml: Result<Inspection, String>,
    /// Who runs the GPU processes, per host PID.
    pub owners: BTreeMap<u32, Owner>,
    /// The user gpumeter runs as.
    pub my_uid: Option<u32>,
    pub torch: Torch,
    pub host: HostFacts,
    /// `None`: no `--data PATH` given.
    pub storage: Option<StorageFacts>,
    pub software: SoftwareFacts,
    pub billing: BillingFacts,
}

/// A GPU process as /proc shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// False: /proc cannot see the PID (another container or PID namespace).
    pub visible: bool,
    pub uid: Option<u32>,
    pub user: Option<String>,
    pub name: Option<String>,
}

/// The Python that would run the job and the torch it has.
#[derive(Debug, Clone, PartialEq)]
pub enum Torch {
    /// No `python3` / `python` on PATH and none given.
    NoPython,
    /// A demo scenario that declares no Python: nothing is known, not "none on PATH".
    NotSimulated,
    /// The probe ran; `build` is `None` when that Python has no torch.
    Found {
        python: PathBuf,
        build: Option<TorchBuild>,
    },
    /// The Python could not be asked (did not start, timed out, answered nonsense).
    ProbeFailed { python: PathBuf, why: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TorchBuild {
    /// `torch.__version__`, e.g. `2.8.0+cu129`.
    pub version: String,
    /// `torch.version.cuda`, e.g. `12.9`; `None` for a CPU-only build.
    pub cuda: Option<String>,
}

/// CPU and memory available to the job, and the NUMA layout.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostFacts {
    /// CPUs online, affinity, cgroup CPU quota, memory and its cgroup limit.
    pub limits: HostLimits,
    /// NUMA nodes with their CPUs.
    pub numa: Vec<NumaNode>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumaNode {
    pub id: u32,
    pub cpus: Vec<u32>,
}

/// The data directory: where it lives and how fast it reads.
#[derive(Debug, Clone, PartialEq)]
pub struct StorageFacts {
    pub path: PathBuf,
    pub mount: Option<Mount>,
    pub probe: Result<Probe, String>,
}

/// A mount from `/proc/self/mountinfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    pub point: PathBuf,
    pub fs_type: String,
    pub source: String,
}

/// What the bounded read probe measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    pub seq_bytes_per_s: f64,
    pub seq_bytes: u64,
    /// 4 KiB random reads per second (`None` when too little was there to read at random).
    pub random_iops: Option<f64>,
    /// Whether the page cache could be dropped for what was read (else: the figures may be
    /// the cache's, not the disk's).
    pub uncached: bool,
    /// Read existing files (true) or a temporary file it wrote and deleted (false).
    pub existing_files: bool,
}

/// Things around the driver that break or slow CUDA.
#[derive(Debug, Clone, PartialEq)]
pub struct SoftwareFacts {
    /// The nouveau module is loaded.
    pub nouveau: bool,
    /// `/dev/nvidia<N>` nodes present, and those this user may open read-write.
    pub dev_gpus_present: u32,
    pub dev_gpus_usable: u32,
    pub dev_ctl: bool,
    pub dev_uvm: bool,
    /// `libcuda.so.1` loaded (or why not).
    pub libcuda: Result<(), String>,
    /// Environment variables that change CUDA's behaviour, as set.
    pub env: Vec<(String, String)>,
}

/// Pricing as configured, and what the machine says it is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BillingFacts {
    pub rate: Option<String>,
    pub budget: Option<String>,
    /// Where the rate comes from (`--rate`, the config file, the demo scenario).
    pub origin: Option<String>,
    /// The config could not be read.
    pub config_error: Option<String>,
    /// Vendor and product from DMI (`/sys/class/dmi/id`).
    pub instance: Option<String>,
    /// The rate is the catalog's list price for this machine: where it came from.
    pub list_price: Option<String>,
    /// Where gpumeter found itself (`AWS p5.48xlarge on-demand us-east-1`) and from what.
    pub cloud: Option<String>,
    /// Spot (true), on-demand (false), or unknown.
    pub spot: Option<bool>,
    /// The user declared it (`[cloud] lifecycle`) rather than metadata telling.
    pub spot_declared: bool,
    /// Whether the instance metadata service was asked.
    pub metadata_asked: bool,
}
