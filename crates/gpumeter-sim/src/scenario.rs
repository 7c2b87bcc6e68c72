//! The scenario schema as it appears in TOML. Every table denies unknown fields so a typo is an
//! error with its line, not a silently ignored setting. A signal that is absent makes that
//! reading unsupported (`None`, shown as N/A), exactly like a driver that cannot report it.
//! Units are in the field names; the simulator converts to the model's units (bytes, watts).

use gpumeter_model::{PidMatch, RunsIn, ThrottleReason};
use serde::Deserialize;

use crate::faults::NvmlError;
use crate::gpm::{GpmSpec, XidSpec};
use crate::health::{GpuHealthSpec, PreflightSpec};
use crate::notice::InterruptionSpec;
use crate::pricing::Pricing;
use crate::signal::Signal;

/// A simulated machine: host, GPUs, processes, scripted faults and its price.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    /// One line, shown by `--demo --list`.
    pub description: String,
    pub hostname: Option<String>,
    pub driver_version: Option<String>,
    pub cuda_driver_version: Option<String>,
    /// Host uptime in seconds at elapsed 0.
    #[serde(default = "default_boot_offset")]
    pub boot_offset_s: u64,
    /// Seed of the deterministic noise.
    #[serde(default)]
    pub seed: u64,
    #[serde(default)]
    pub host: HostSpec,
    #[serde(default, rename = "gpu")]
    pub gpus: Vec<GpuSpec>,
    #[serde(default, rename = "process")]
    pub processes: Vec<ProcessSpec>,
    #[serde(default, rename = "fault")]
    pub faults: Vec<FaultSpec>,
    /// Critical XID errors the fake driver reports through its event API.
    #[serde(default, rename = "xid")]
    pub xids: Vec<XidSpec>,
    pub pricing: Option<Pricing>,
    /// A spot interruption notice the provider posts mid-run (the `spot` demo).
    pub interruption: Option<InterruptionSpec>,
    /// What `gpumeter check --demo` shows beyond the GPUs.
    #[serde(default)]
    pub preflight: PreflightSpec,
    /// What the alert rules must say about this timeline (the labelled corpus); `--demo`
    /// and the fake NVML ignore it.
    pub labels: Option<Labels>,
}

/// A timeline's labels: how long to run it, which alerts must fire (and when), and which rules
/// must stay quiet. Any alert that fires without a label that covers it is a false alarm.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Labels {
    /// The kind of case, for the results table (`healthy look-alike`, `starved: CPU`, …).
    pub case: Option<String>,
    /// Seconds to fast-forward.
    pub duration_s: u64,
    #[serde(default)]
    pub fire: Vec<FireLabel>,
    /// Rules (`starved`, `idle`, `forgotten`, `throttle`, `checkpoint`, `autostop`, …) that
    /// must not fire.
    #[serde(default)]
    pub quiet: Vec<String>,
    /// Run with autostop on after this much idle time (`"30m"`, as `--autostop` takes it): its
    /// stop counts as a fire of the rule `autostop`.
    pub autostop: Option<String>,
}

/// An alert that must fire.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FireLabel {
    /// The rule (the alert kind's name).
    pub rule: String,
    /// Its verdict (the `verdict` evidence: `CPU-bound input`, …), at every fire and update.
    pub verdict: Option<String>,
    /// The GPUs it names (as its util evidence lists them).
    pub gpus: Option<Vec<u32>>,
    /// Text its `job` evidence contains.
    pub job: Option<String>,
    /// It must first fire within [from, to] seconds.
    pub within_s: [f64; 2],
    /// How many times it may fire (more is flapping); default 1.
    #[serde(default = "one")]
    pub max_fires: u32,
    /// It may also not fire at all (at most `max_fires` notices).
    #[serde(default)]
    pub optional: bool,
    /// Words its first fire must contain, each somewhere in its title, detail or evidence
    /// ("CPU-bound within the job's 8 allowed cores", "periodic").
    #[serde(default)]
    pub says: Vec<String>,
}

fn default_boot_offset() -> u64 {
    3_600
}

/// The host side: CPU, memory, disk, network.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostSpec {
    pub cpu_count: Option<u32>,
    pub mem_total_bytes: Option<u64>,
    pub mem_total_gib: Option<f64>,
    pub cpu_util_pct: Option<Signal>,
    pub iowait_pct: Option<Signal>,
    /// Derived from CPU use × CPU count when absent.
    pub load_avg_1m: Option<Signal>,
    pub mem_used_gib: Option<Signal>,
    /// MB = 10^6 bytes.
    pub disk_read_mb_per_s: Option<Signal>,
    pub disk_write_mb_per_s: Option<Signal>,
    pub net_rx_mb_per_s: Option<Signal>,
    pub net_tx_mb_per_s: Option<Signal>,
    /// CPU quota of gpumeter's cgroup, in cores (absent: unlimited).
    pub cpu_quota_cores: Option<f64>,
    /// Where gpumeter runs (`{ kind = "container", runtime = "docker" }`); absent: unknown.
    pub runs_in: Option<RunsIn>,
    /// CPUs in gpumeter's cgroup cpuset.
    pub cpuset_cpus: Option<u32>,
    /// Cores the whole cgroup uses.
    pub cgroup_cpu_used_cores: Option<Signal>,
    /// Share of CFS periods the cgroup was throttled in (0–100); the time share follows it.
    pub cpu_throttled_pct: Option<Signal>,
    /// The cgroup's memory limit and use.
    pub cgroup_mem_limit_gib: Option<f64>,
    pub cgroup_mem_used_gib: Option<Signal>,
    /// OOM kills so far (a counter: use `steps`).
    pub oom_kills: Option<Signal>,
    /// PSI: share of time some task waited for a CPU / on I/O (0–100).
    pub cpu_pressure_pct: Option<Signal>,
    pub io_pressure_pct: Option<Signal>,
    /// Busy time of the busiest disk (0–100).
    pub disk_busy_pct: Option<Signal>,
    /// Mean requests in flight on the busiest disk (iostat's aqu-sz).
    pub disk_queue_depth: Option<Signal>,
    /// Link speed of the NIC that carries `net_rx`/`net_tx`, Gbit/s (absent: unknown).
    pub nic_speed_gbit: Option<f64>,
    /// PSI: share of time some task waited for memory (reclaim, swap-in), 0–100.
    pub mem_pressure_pct: Option<Signal>,
    /// Pages swapped in, MB/s.
    pub swap_in_mb_per_s: Option<Signal>,
    /// Major page faults per second (pages read from disk: a data set beyond the page cache).
    pub major_faults_per_s: Option<Signal>,
    /// Network file systems mounted, `fstype mountpoint` (`"nfs4 /data"`).
    #[serde(default)]
    pub network_mounts: Vec<String>,
}

/// One kind of GPU, replicated `count` times (indices assigned in file order).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuSpec {
    #[serde(default = "one")]
    pub count: u32,
    pub name: String,
    pub memory_total_bytes: Option<u64>,
    pub memory_total_gib: Option<f64>,
    pub power_limit_watts: Option<f64>,
    /// The board's default power limit; the power limit when absent (not lowered).
    pub power_default_watts: Option<f64>,
    pub clock_sm_max_mhz: Option<u32>,
    pub clock_memory_max_mhz: Option<u32>,
    pub pcie_gen_max: Option<u32>,
    pub pcie_width_max: Option<u32>,
    /// Current link generation/width; the maximum when absent.
    pub pcie_gen: Option<u32>,
    pub pcie_width: Option<u32>,
    pub mig_enabled: Option<bool>,
    /// MIG devices (slices) on each board of this entry, with `mig_enabled = true` (at most 7,
    /// as an A100/H100 has): their UUIDs are what the kubelet hands a pod.
    pub mig_devices: Option<u32>,
    /// Energy counter at elapsed 0 (mJ); derived from the uptime when absent.
    pub energy_start_mj: Option<u64>,
    /// Phase shift of periodic signals for the first GPU of this entry, and the extra shift of
    /// each next one (so 8 replicated GPUs are not identical).
    #[serde(default)]
    pub phase_s: f64,
    #[serde(default)]
    pub phase_step_s: f64,
    pub util_gpu_pct: Option<Signal>,
    pub util_memory_pct: Option<Signal>,
    /// VRAM used; the sum of this GPU's processes when absent.
    pub memory_used_gib: Option<Signal>,
    pub power_watts: Option<Signal>,
    pub temperature_c: Option<Signal>,
    /// SM clock (the graphics clock follows it).
    pub clock_sm_mhz: Option<Signal>,
    pub clock_memory_mhz: Option<Signal>,
    /// MB = 10^6 bytes.
    pub pcie_rx_mb_per_s: Option<Signal>,
    pub pcie_tx_mb_per_s: Option<Signal>,
    /// Absent = no fans (SXM boards): reads N/A.
    pub fan_speed_pct: Option<Signal>,
    pub encoder_util_pct: Option<Signal>,
    pub decoder_util_pct: Option<Signal>,
    /// Throttle reasons: always on, or on while a signal is above/below a level.
    #[serde(default)]
    pub throttle: Vec<ThrottleRule>,
    /// Health and setup for `gpumeter check` (ECC, remaps, NVLink …); healthy when absent.
    #[serde(default)]
    pub health: GpuHealthSpec,
    /// GPM metrics (Hopper and newer); absent: the board does not support GPM.
    pub gpm: Option<GpmSpec>,
}

fn one() -> u32 {
    1
}

/// A throttle reason that is active always (only `reason`), or while `when` is above `above`
/// and/or below `below`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThrottleRule {
    pub reason: ThrottleReason,
    pub when: Option<GpuSignal>,
    pub above: Option<f64>,
    pub below: Option<f64>,
}

/// A GPU reading a [`ThrottleRule`] can watch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GpuSignal {
    UtilGpuPct,
    UtilMemoryPct,
    PowerWatts,
    TemperatureC,
    ClockSmMhz,
}

/// How a process uses its GPUs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProcessKind {
    #[default]
    Compute,
    Graphics,
    Mixed,
}

/// A GPU process (or `count` of them: ranks), optionally with dataloader `workers`.
/// With `count > 1`, rank k gets pid `pid + k × pid_stride`, its GPU indices shifted by
/// `k × gpu_stride`, and `{rank}` in name/command replaced by k. `gpu_stride = 0` keeps every
/// rank on the same GPUs: `count = 3000, gpu_stride = 0` is 3000 processes with consecutive pids.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProcessSpec {
    pub pid: u32,
    /// Take the pid from this environment variable when it is set (see
    /// [`Scenario::resolve_pid_env`]): lets a test make the fake NVML report a real process.
    /// `pid` is used when the variable is unset; `--demo` never reads the environment.
    pub pid_env: Option<String>,
    #[serde(default = "one")]
    pub count: u32,
    /// Default: 1 + the number of workers (workers take the pids right after their parent).
    pub pid_stride: Option<u32>,
    #[serde(default = "one")]
    pub gpu_stride: u32,
    pub ppid: Option<u32>,
    /// The parent's short name as a sampler reads it (`bash` for a run started from a
    /// shell, `torchrun`, `wandb`); absent: unknown.
    pub parent: Option<String>,
    /// PID inside its container's namespace.
    pub ns_pid: Option<u32>,
    pub user: Option<String>,
    pub container: Option<String>,
    pub name: Option<String>,
    /// Passed through raw (hostile strings allowed: they are test data).
    pub command: Option<String>,
    /// One letter (`"S"`), or how it changes: `{ steps = [[0, "R"], [300, "D"]] }`.
    pub state: Option<StateSpec>,
    pub threads: Option<u32>,
    pub rss_gib: Option<f64>,
    /// Percent of one core (may exceed 100).
    pub cpu_pct: Option<Signal>,
    /// Start time relative to elapsed 0 (negative: started before the scenario).
    #[serde(default = "default_start")]
    pub start_offset_s: i64,
    /// The process exits at this elapsed time (it and its workers disappear).
    pub until_s: Option<f64>,
    /// Run again and again (a sweep's trials, a cron job): copy k starts `k × every_s` later.
    pub repeat: Option<RepeatSpec>,
    /// False: /proc cannot see this PID (another PID namespace); host fields are absent.
    #[serde(default = "yes")]
    pub visible: bool,
    #[serde(default)]
    pub kind: ProcessKind,
    #[serde(default)]
    pub gpus: Vec<ProcessGpuSpec>,
    pub workers: Option<WorkersSpec>,
    /// CPUs its affinity allows (its workers inherit it); absent: unknown.
    pub cpus_allowed: Option<u32>,
    /// Its affinity as a kernel CPU list (`0-7`); sets `cpus_allowed` to its size when that
    /// is absent. Workers inherit it.
    pub cpus_allowed_list: Option<String>,
    /// The driver's PID when gpumeter runs in a container and `pid` is the PID there (rank k:
    /// `host_pid + k × pid_stride`).
    pub host_pid: Option<u32>,
    /// How that host PID was tied to the process (`nspid`, `device`, `guess`); default `device`.
    pub pid_match: Option<PidMatch>,
    /// The busiest thread of each rank (its CPU is part of the rank's `cpu_pct`).
    pub busiest_thread: Option<ThreadSpec>,
    /// The Kubernetes pod its ranks and workers run in, as the kubelet names it; the GPUs
    /// they use are that pod's. Absent: in no pod.
    pub pod: Option<PodSpec>,
}

/// A process's Kubernetes pod: its name (as the pod-resources API gives it) or, for a pod
/// known only by its cgroup path, its UID; the namespace and the container's name.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PodSpec {
    pub name: Option<String>,
    pub namespace: Option<String>,
    /// Absent: the process's `container` (its id, as a cgroup path gives it).
    pub container: Option<String>,
    pub uid: Option<String>,
}

/// Repeats of a process entry: copy k (0-based) starts and exits `k × every_s` after the
/// first, with pids `k × pid_step` higher (default: the entry's whole pid range) and `{trial}`
/// in its strings replaced by k.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepeatSpec {
    pub every_s: i64,
    pub times: u32,
    pub pid_step: Option<u32>,
}

/// A GPU process's busiest thread: tid = the rank's pid (the main thread) unless `tid_offset`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThreadSpec {
    pub name: Option<String>,
    /// tid = pid + tid_offset (default 0: the main thread).
    #[serde(default)]
    pub tid_offset: u32,
    pub cpu_pct: Option<Signal>,
}

fn default_start() -> i64 {
    -600
}

fn yes() -> bool {
    true
}

/// One process's use of one GPU.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProcessGpuSpec {
    pub gpu: u32,
    /// Absent: the driver cannot say (reads N/A).
    pub memory_gib: Option<Signal>,
    pub sm_util_pct: Option<Signal>,
    pub mem_util_pct: Option<Signal>,
}

/// Child processes of a GPU process (dataloader workers): consecutive pids after the parent,
/// same user and container, no GPU of their own. `{worker}` in name/command → worker number.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkersSpec {
    pub count: u32,
    pub name: Option<String>,
    pub command: Option<String>,
    pub cpu_pct: Option<Signal>,
    pub state: Option<StateSpec>,
    pub threads: Option<u32>,
    pub rss_gib: Option<f64>,
}

/// A process state (`/proc/PID/stat`'s letter): fixed, or stepping over time as real
/// processes do (a loader running, then blocked on a read, then asleep).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum StateSpec {
    One(char),
    Steps {
        /// `[elapsed_s, letter]`, in time order; before the first step the first letter holds.
        steps: Vec<(f64, char)>,
    },
}

impl StateSpec {
    /// The letter at `t_s` seconds.
    pub fn at(&self, t_s: f64) -> Option<char> {
        match self {
            StateSpec::One(c) => Some(*c),
            StateSpec::Steps { steps } => steps
                .iter()
                .take_while(|(from, _)| *from <= t_s)
                .last()
                .or(steps.first())
                .map(|(_, c)| *c),
        }
    }
}

/// A scripted NVML failure or delay.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultSpec {
    /// Device index; absent = every device (and device-less calls).
    pub gpu: Option<u32>,
    /// NVML C symbol (`nvmlDeviceGetPowerUsage`) or `"*"` for every device function.
    pub function: String,
    /// Absent with `latency_ms` set: the call succeeds, slowly.
    pub error: Option<NvmlError>,
    /// Calls 1..=after_calls succeed; later ones fail.
    pub after_calls: Option<u64>,
    /// Active from this elapsed time on.
    pub from_s: Option<f64>,
    /// Active before this elapsed time only (absent: to the end): a transient failure.
    pub until_s: Option<f64>,
    pub latency_ms: Option<u64>,
}
