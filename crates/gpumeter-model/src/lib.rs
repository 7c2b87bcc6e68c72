//! gpumeter's data model: the versioned [`Snapshot`] that every source produces (NVML + /proc,
//! the built-in simulator) and every consumer reads (the dashboard, `watch`, `serve`, one-shot
//! JSON, recordings and their replay).
//!
//! Rules this crate encodes:
//! - a reading the driver does not support is `None` (serialized as `null`), never 0;
//! - units live in field names (`_bytes`, `_pct`, `_watts`, `_mhz`), numbers stay numbers;
//! - the schema carries a version ([`SCHEMA_VERSION`]) that readers check before trusting a file.
//!
//! It holds plain data only: no I/O, no clocks, no terminal types.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

mod document;
mod throttle;

pub use document::{AlertSummary, BillingSummary, BudgetSummary, Document, Evidence};
pub use throttle::ThrottleReason;

/// A string shared between readings: a process's name, command, user, container and CPU list,
/// and a GPU's uuid, name and PCI bus id, are the same from one tick to the next, so a reading holds a pointer to the one copy the
/// source keeps (cloning it is a count increment, not a copy of its bytes). It serializes as a
/// plain JSON string and parses from one, so the schema is unchanged; `as_deref()` on an
/// `Option<SharedStr>` gives `Option<&str>`.
pub type SharedStr = Arc<str>;

/// Version of the [`Snapshot`] schema. Bump on any change a reader would misread.
///
/// - 1: the first schema.
/// - 2: the JSON document may carry `billing` and `alerts` beside the reading ([`Document`]).
/// - 3: where gpumeter runs (`system.runs_in`), the cgroup's budget and throttling
///   (`host.cgroup`), pressure stall (`host.*_pressure_pct`), disk busy time, and per process the
///   host PID seen from a container (`host_pid`, `pid_match`), the busiest thread and the CPU
///   affinity set. Every new field defaults to absent, so schema-1 and -2 files still parse.
pub const SCHEMA_VERSION: u32 = 3;

/// One reading of the whole machine at one instant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Schema version, always [`SCHEMA_VERSION`] when produced by this build.
    pub schema: u32,
    /// When the reading was taken, milliseconds since the Unix epoch.
    pub taken_at_unix_ms: i64,
    /// Where the reading came from: `nvml`, `demo:<scenario>` (and, once replay exists,
    /// `replay:<file>`).
    pub source: String,
    pub system: SystemInfo,
    pub host: HostReading,
    pub gpus: Vec<GpuReading>,
    /// GPU processes and the host processes that feed them (their descendants).
    pub processes: Vec<ProcessReading>,
    /// Problems the source met while taking this reading (sanitized, human-readable).
    pub warnings: Vec<String>,
}

impl Snapshot {
    /// An empty snapshot of the current schema, for sources to fill in.
    pub fn empty(source: impl Into<String>, taken_at_unix_ms: i64) -> Self {
        Self {
            schema: SCHEMA_VERSION,
            taken_at_unix_ms,
            source: source.into(),
            system: SystemInfo::default(),
            host: HostReading::default(),
            gpus: Vec::new(),
            processes: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// The GPU with this NVML index, if present.
    pub fn gpu(&self, index: u32) -> Option<&GpuReading> {
        self.gpus.iter().find(|g| g.index == index)
    }
}

/// Facts about the machine and driver that rarely change.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SystemInfo {
    pub hostname: Option<String>,
    pub driver_version: Option<String>,
    /// CUDA driver API version, e.g. `12.4`.
    pub cuda_driver_version: Option<String>,
    /// Seconds since the host booted.
    pub uptime_s: Option<u64>,
    /// Boot time, seconds since the Unix epoch (`btime` in /proc/stat).
    pub boot_time_unix_s: Option<i64>,
    /// Where gpumeter itself runs: on a host, in a container, in a VM; `None` when unknown.
    #[serde(default)]
    pub runs_in: Option<RunsIn>,
}

/// The kind of place gpumeter runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlaceKind {
    /// Directly on a machine's kernel (bare metal, or a VM whose hypervisor it cannot see).
    Host,
    /// In a container: another PID namespace and cgroup than the machine's.
    Container,
    /// In a virtual machine (a hypervisor is visible).
    Vm,
}

/// Where gpumeter runs, and what it could tell about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunsIn {
    pub kind: PlaceKind,
    /// The container runtime (`docker`, `podman`, `containerd`, `kubernetes`, `lxc`) or the
    /// hypervisor (`kvm`, `vmware`, `xen`, `hyperv`, …), when it can be told.
    pub runtime: Option<String>,
}

impl RunsIn {
    /// Short words for the header: `host`, `container (docker)`, `VM (kvm)`.
    pub fn label(&self) -> String {
        let kind = match self.kind {
            PlaceKind::Host => "host",
            PlaceKind::Container => "container",
            PlaceKind::Vm => "VM",
        };
        match &self.runtime {
            Some(r) => format!("{kind} ({r})"),
            None => kind.to_string(),
        }
    }
}

/// The CPU and memory budget of the cgroup gpumeter runs in, and how hard it presses on it.
/// Rates are over the last sample interval. Each field is `None` when the kernel does not
/// expose it (or it could not be read).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CgroupReading {
    /// CPUs in the cgroup's cpuset (`cpuset.cpus.effective`).
    pub cpuset_cpus: Option<u32>,
    /// Cores the whole cgroup used over the interval (`cpu.stat` usage).
    pub cpu_used_cores: Option<f64>,
    /// Share of CFS periods in which the cgroup hit its quota and was throttled (0–100).
    pub cpu_throttled_pct: Option<f64>,
    /// Share of the interval the cgroup's tasks spent throttled (`throttled_usec`), 0–100.
    pub cpu_throttled_time_pct: Option<f64>,
    /// `memory.max` (v1 `memory.limit_in_bytes`); `None` when unlimited.
    pub mem_limit_bytes: Option<u64>,
    pub mem_used_bytes: Option<u64>,
    /// OOM kills in this cgroup since it was created (`memory.events` `oom_kill`).
    pub oom_kills: Option<u64>,
}

/// Host-side readings from /proc, averaged over the last sample interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostReading {
    /// Logical CPUs online.
    pub cpu_count: Option<u32>,
    /// Busy share of all CPUs over the interval (0–100).
    pub cpu_util_pct: Option<f64>,
    /// Share of CPU time spent waiting on I/O over the interval (0–100).
    pub iowait_pct: Option<f64>,
    /// Busy share per logical CPU (0–100), in CPU order.
    pub per_cpu_util_pct: Vec<f64>,
    pub load_avg_1m: Option<f64>,
    pub mem_total_bytes: Option<u64>,
    pub mem_used_bytes: Option<u64>,
    pub disk_read_bytes_per_s: Option<f64>,
    pub disk_write_bytes_per_s: Option<f64>,
    /// Non-loopback network traffic.
    pub net_rx_bytes_per_s: Option<f64>,
    pub net_tx_bytes_per_s: Option<f64>,
    /// CPU time the cgroup gpumeter runs in may use, in cores (cgroup v2 `cpu.max`, v1 CFS
    /// quota / period, the tightest along the path); `None` when unlimited or unknown.
    #[serde(default)]
    pub cpu_quota_cores: Option<f64>,
    /// The cgroup's CPU and memory budget and throttling (see [`CgroupReading`]).
    #[serde(default)]
    pub cgroup: CgroupReading,
    /// Share of the interval in which some task waited for a CPU (PSI `cpu.pressure` some), 0–100.
    #[serde(default)]
    pub cpu_pressure_pct: Option<f64>,
    /// Share of the interval in which some task waited on I/O (PSI `io.pressure` some), 0–100.
    #[serde(default)]
    pub io_pressure_pct: Option<f64>,
    /// Busy time of the busiest physical disk over the interval (`/proc/diskstats` io_ticks), 0–100.
    #[serde(default)]
    pub disk_busy_pct: Option<f64>,
    /// Mean requests in flight on the busiest physical disk over the interval (`/proc/diskstats`
    /// weighted I/O time / interval, iostat's `aqu-sz`): well above 1, requests wait in its queue.
    #[serde(default)]
    pub disk_queue_depth: Option<f64>,
}

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
}

impl Default for StuckThresholds {
    fn default() -> Self {
        Self {
            util_min_pct: 90.0,
            sm_active_max_pct: 5.0,
            power_max_share: 0.3,
        }
    }
}

impl GpuReading {
    /// Whether this sample looks busy-but-stuck (see [`StuckThresholds`]); `None` without the
    /// util or SM-activity reading (no GPM: util alone cannot tell). An unknown power reading is
    /// no evidence against.
    pub fn looks_stuck(&self, t: &StuckThresholds) -> Option<bool> {
        if self.state != GpuState::Ok {
            return Some(false);
        }
        let util = f64::from(self.util_gpu_pct?);
        let sm = self.sm_active_pct.filter(|v| v.is_finite())?;
        let power_low = match (self.power_watts, self.power_limit_watts) {
            (Some(w), Some(limit)) if limit > 0.0 => w <= limit * t.power_max_share,
            _ => true,
        };
        Some(util >= t.util_min_pct && sm <= t.sm_active_max_pct && power_low)
    }

    /// VRAM use as a share of total (0–100), when both are known.
    pub fn memory_used_pct(&self) -> Option<f64> {
        match (self.memory_used_bytes, self.memory_total_bytes) {
            (Some(used), Some(total)) if total > 0 => Some(used as f64 * 100.0 / total as f64),
            _ => None,
        }
    }
}

/// How a process uses a GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GpuProcessKind {
    Compute,
    Graphics,
    /// Listed by the driver as both compute and graphics.
    Mixed,
}

/// One process's use of one GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuUse {
    pub gpu_index: u32,
    pub kind: GpuProcessKind,
    /// `None` when the driver cannot say (WDDM, MIG, permissions).
    pub memory_bytes: Option<u64>,
    pub sm_util_pct: Option<u32>,
    pub memory_util_pct: Option<u32>,
}

/// A process on the host: either a GPU process (non-empty `gpu`) or one feeding it
/// (a descendant of a GPU process, such as a dataloader worker).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessReading {
    /// PID as the driver reports it (host PID namespace).
    pub pid: u32,
    /// False when /proc cannot see this PID (another PID namespace, or it just exited):
    /// host fields are then `None`.
    pub visible: bool,
    /// PID inside the process's own namespace when it differs (containers), from `NSpid`.
    pub ns_pid: Option<u32>,
    pub ppid: Option<u32>,
    pub user: Option<SharedStr>,
    /// Short container id or name, from the cgroup path.
    pub container: Option<SharedStr>,
    /// Short name (comm), sanitized.
    pub name: Option<SharedStr>,
    /// Command line, sanitized and length-capped.
    pub command: Option<SharedStr>,
    /// CPU use over the sample interval, in percent of one core (may exceed 100).
    pub cpu_pct: Option<f64>,
    pub rss_bytes: Option<u64>,
    /// Process start time, seconds since the Unix epoch.
    pub start_time_unix_s: Option<i64>,
    /// Scheduler state letter (`R`, `S`, `D`, …).
    pub state: Option<char>,
    pub threads: Option<u32>,
    pub gpu: Vec<GpuUse>,
    /// How many CPUs the scheduler may run it on (`Cpus_allowed_list`, its affinity).
    #[serde(default)]
    pub cpus_allowed: Option<u32>,
    /// The CPUs it may run on, as the kernel lists them (`0-7,16`): jobs take the union.
    #[serde(default)]
    pub cpus_allowed_list: Option<SharedStr>,
    /// The driver's (host) PID when it differs from `pid`: gpumeter runs in a container and
    /// `pid` is the PID here.
    #[serde(default)]
    pub host_pid: Option<u32>,
    /// How `host_pid` was tied to this process.
    #[serde(default)]
    pub pid_match: Option<PidMatch>,
    /// Its busiest thread over the interval (sampled for GPU processes only).
    #[serde(default)]
    pub busiest_thread: Option<ThreadReading>,
}

/// How a driver PID was tied to a process seen from inside a container.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PidMatch {
    /// The process's `NSpid` names the driver's PID: certain.
    Nspid,
    /// The only process here with that GPU's device open, for the only driver PID on it.
    Device,
    /// Several processes share the GPU: paired by start order and memory. Labelled a guess.
    Guess,
}

/// One thread's CPU use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadReading {
    pub tid: u32,
    /// Thread name (comm), sanitized.
    pub name: Option<SharedStr>,
    /// Percent of one core over the interval.
    pub cpu_pct: Option<f64>,
}

impl ProcessReading {
    /// A process the driver named but /proc cannot see.
    pub fn invisible(pid: u32) -> Self {
        Self {
            pid,
            visible: false,
            ns_pid: None,
            ppid: None,
            user: None,
            container: None,
            name: None,
            command: None,
            cpu_pct: None,
            rss_bytes: None,
            start_time_unix_s: None,
            state: None,
            threads: None,
            gpu: Vec::new(),
            cpus_allowed: None,
            cpus_allowed_list: None,
            host_pid: None,
            pid_match: None,
            busiest_thread: None,
        }
    }

    /// The PID the driver reports for it (the host's).
    pub fn driver_pid(&self) -> u32 {
        self.host_pid.unwrap_or(self.pid)
    }

    /// Total VRAM this process holds across GPUs, when any part is known.
    pub fn gpu_memory_bytes(&self) -> Option<u64> {
        self.gpu
            .iter()
            .filter_map(|g| g.memory_bytes)
            .reduce(|a, b| a.saturating_add(b))
    }

    /// Highest SM utilization over the GPUs it uses.
    pub fn sm_util_pct(&self) -> Option<u32> {
        self.gpu.iter().filter_map(|g| g.sm_util_pct).max()
    }

    /// Whether this process holds a GPU (rather than only feeding one).
    pub fn is_gpu_process(&self) -> bool {
        !self.gpu.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsupported_readings_serialize_as_null_not_zero() {
        let mut snap = Snapshot::empty("test", 1_000);
        snap.gpus.push(GpuReading {
            index: 0,
            util_gpu_pct: Some(0),
            ..GpuReading::default()
        });
        let json = serde_json::to_value(&snap).unwrap();
        assert_eq!(json["schema"], SCHEMA_VERSION);
        assert_eq!(json["gpus"][0]["util_gpu_pct"], 0);
        assert!(json["gpus"][0]["power_watts"].is_null());
        let back: Snapshot = serde_json::from_value(json).unwrap();
        assert_eq!(back, snap);
    }

    #[test]
    fn readings_without_affinity_or_quota_fields_still_parse() {
        let mut snap = Snapshot::empty("test", 1_000);
        snap.processes.push(ProcessReading::invisible(7));
        let mut json = serde_json::to_value(&snap).unwrap();
        json["host"]
            .as_object_mut()
            .unwrap()
            .remove("cpu_quota_cores");
        json["processes"][0]
            .as_object_mut()
            .unwrap()
            .remove("cpus_allowed");
        let back: Snapshot = serde_json::from_value(json).unwrap();
        assert_eq!(back.host.cpu_quota_cores, None);
        assert_eq!(back.processes[0].cpus_allowed, None);
        assert_eq!(back, snap);
    }

    #[test]
    fn schema_1_readings_parse_with_the_new_fields_absent() {
        let mut snap = Snapshot::empty("test", 1_000);
        snap.processes.push(ProcessReading::invisible(7));
        let mut json = serde_json::to_value(&snap).unwrap();
        json["schema"] = 1.into();
        json["system"].as_object_mut().unwrap().remove("runs_in");
        let host = json["host"].as_object_mut().unwrap();
        for key in [
            "cgroup",
            "cpu_pressure_pct",
            "io_pressure_pct",
            "disk_busy_pct",
            "disk_queue_depth",
        ] {
            assert!(host.remove(key).is_some(), "{key}");
        }
        let p = json["processes"][0].as_object_mut().unwrap();
        for key in [
            "cpus_allowed_list",
            "host_pid",
            "pid_match",
            "busiest_thread",
        ] {
            assert!(p.remove(key).is_some(), "{key}");
        }
        let back: Snapshot = serde_json::from_value(json).unwrap();
        assert_eq!(back.schema, 1);
        assert_eq!(back.host.cgroup, CgroupReading::default());
        assert_eq!(back.system.runs_in, None);
        assert_eq!(back.processes[0].host_pid, None);
        assert_eq!(back.processes[0].driver_pid(), 7);
    }

    #[test]
    fn shared_strings_serialize_as_plain_strings_and_parse_back() {
        let mut p = ProcessReading::invisible(42);
        p.visible = true;
        p.user = Some("alice".into());
        p.container = Some("3f2a9c1b7d0e".into());
        p.name = Some("python".into());
        p.command = Some("python train.py --lr \"3e-4\"".into());
        p.cpus_allowed = Some(9);
        p.cpus_allowed_list = Some("0-7,16".into());
        p.busiest_thread = Some(ThreadReading {
            tid: 43,
            name: Some("pt_main_thread".into()),
            cpu_pct: Some(99.5),
        });
        // The exact text the schema's `String` fields gave: a shared string is a JSON string.
        let golden = concat!(
            r#"{"pid":42,"visible":true,"ns_pid":null,"ppid":null,"user":"alice","#,
            r#""container":"3f2a9c1b7d0e","name":"python","#,
            r#""command":"python train.py --lr \"3e-4\"","cpu_pct":null,"rss_bytes":null,"#,
            r#""start_time_unix_s":null,"state":null,"threads":null,"gpu":[],"#,
            r#""cpus_allowed":9,"cpus_allowed_list":"0-7,16","host_pid":null,"#,
            r#""pid_match":null,"busiest_thread":{"tid":43,"name":"pt_main_thread","#,
            r#""cpu_pct":99.5}}"#
        );
        assert_eq!(serde_json::to_string(&p).unwrap(), golden);
        let g = GpuReading {
            uuid: Some("GPU-5f3e".into()),
            name: Some("NVIDIA H100 80GB HBM3".into()),
            pci_bus_id: Some("00000000:18:00.0".into()),
            ..GpuReading::default()
        };
        let json = serde_json::to_value(&g).unwrap();
        assert_eq!(json["uuid"], "GPU-5f3e");
        assert_eq!(json["name"], "NVIDIA H100 80GB HBM3");
        assert_eq!(json["pci_bus_id"], "00000000:18:00.0");
        assert_eq!(serde_json::from_value::<GpuReading>(json).unwrap(), g);
        let back: ProcessReading = serde_json::from_str(golden).unwrap();
        assert_eq!(back, p);
        assert_eq!(
            back.command.as_deref(),
            Some("python train.py --lr \"3e-4\"")
        );
        // Clones share the bytes rather than copy them.
        let copy = p.clone();
        let (a, b) = (p.name.unwrap(), copy.name.unwrap());
        assert!(Arc::ptr_eq(&a, &b));
    }

    #[test]
    fn runs_in_labels() {
        let c = RunsIn {
            kind: PlaceKind::Container,
            runtime: Some("docker".into()),
        };
        assert_eq!(c.label(), "container (docker)");
        let h = RunsIn {
            kind: PlaceKind::Host,
            runtime: None,
        };
        assert_eq!(h.label(), "host");
    }

    #[test]
    fn memory_used_pct_needs_both_values_and_nonzero_total() {
        let mut g = GpuReading {
            memory_used_bytes: Some(40),
            memory_total_bytes: Some(80),
            ..GpuReading::default()
        };
        assert_eq!(g.memory_used_pct(), Some(50.0));
        g.memory_total_bytes = Some(0);
        assert_eq!(g.memory_used_pct(), None);
        g.memory_total_bytes = None;
        assert_eq!(g.memory_used_pct(), None);
    }

    #[test]
    fn process_gpu_memory_sums_known_parts_only() {
        let mut p = ProcessReading::invisible(7);
        assert_eq!(p.gpu_memory_bytes(), None);
        p.gpu.push(GpuUse {
            gpu_index: 0,
            kind: GpuProcessKind::Compute,
            memory_bytes: Some(10),
            sm_util_pct: Some(3),
            memory_util_pct: None,
        });
        p.gpu.push(GpuUse {
            gpu_index: 1,
            kind: GpuProcessKind::Compute,
            memory_bytes: None,
            sm_util_pct: Some(9),
            memory_util_pct: None,
        });
        assert_eq!(p.gpu_memory_bytes(), Some(10));
        assert_eq!(p.sm_util_pct(), Some(9));
        assert!(p.is_gpu_process());
    }
}
