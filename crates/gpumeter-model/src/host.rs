//! What a snapshot says of the host: the machine's facts that rarely change ([`SystemInfo`]:
//! where it runs, a container, a VM), the cgroup the job is confined to, and this reading's
//! CPU, memory, disk and network numbers ([`HostReading`]). Plain data.

use serde::{Deserialize, Serialize};

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
    /// The provider's notice that it takes this spot/preemptible machine back; absent when
    /// none stands or nobody asked (written only when present, so older readers are unaffected).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interruption: Option<Interruption>,
}

/// A spot or preemption notice read from the instance metadata service.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interruption {
    /// The provider as people write it (`AWS`, `GCP`, `Azure`).
    pub provider: String,
    /// `terminate`, `stop`, `hibernate` (AWS), `preempted` (GCP), `Preempt` (Azure).
    pub action: String,
    /// When the machine is taken back, ms since the Unix epoch, when the provider says.
    pub at_unix_ms: Option<i64>,
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
    /// Share of the interval in which some task waited for memory (PSI `memory.pressure` some:
    /// reclaim, swap-in, refaults), 0–100.
    #[serde(default)]
    pub mem_pressure_pct: Option<f64>,
    /// Bytes swapped in per second (`/proc/vmstat` `pswpin`): the box is short of memory.
    #[serde(default)]
    pub swap_in_bytes_per_s: Option<f64>,
    /// Major page faults per second (`/proc/vmstat` `pgmajfault`): pages read from disk because
    /// they were not in memory (a data set larger than the page cache, swapped-out pages).
    #[serde(default)]
    pub major_faults_per_s: Option<f64>,
    /// The NIC receiving the most: its link speed (sysfs `speed`), bytes per second…
    #[serde(default)]
    pub nic_speed_bytes_per_s: Option<f64>,
    /// …and what it received over the interval as a share of that speed (0–100).
    #[serde(default)]
    pub nic_rx_util_pct: Option<f64>,
    /// …and what that same NIC sent, as a share of its speed (0–100): a collective
    /// (all-reduce between nodes) fills both directions, an input stream mostly one.
    #[serde(default)]
    pub nic_tx_util_pct: Option<f64>,
    /// The network file systems mounted here, `fstype mountpoint` (`nfs4 /data`,
    /// `fuse.gcsfuse /gcs`), from `/proc/self/mountinfo`: where an I/O-bound job's data may
    /// live. Empty when there are none or they are unknown (absent from the JSON then).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network_mounts: Vec<crate::SharedStr>,
}
