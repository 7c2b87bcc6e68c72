//! What a snapshot says of the processes: each one's use of the GPUs ([`GpuUse`]), its host
//! numbers and place ([`ProcessReading`], [`PidMatch`]) and its busiest threads. Plain data.

use serde::{Deserialize, Serialize};

use crate::{PodRef, SharedStr};

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
    /// Its Kubernetes pod (cgroup path, named from the pod-resources API where it can be);
    /// absent off Kubernetes, in the JSON too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<PodRef>,
    /// Its parent's short name (comm, sanitized), read for GPU processes: a shell or a
    /// terminal multiplexer (a run started by hand) or a launcher (torchrun, a sweep agent).
    /// Absent when unknown, in the JSON too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_name: Option<SharedStr>,
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
            pod: None,
            parent_name: None,
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
