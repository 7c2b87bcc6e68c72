//! The host side of a reading, from /proc: CPU, iowait, memory, disk and network rates, and the
//! processes feeding the GPUs (the GPU processes themselves plus their descendants, such as
//! dataloader workers).
//!
//! This room reads files under one proc root (`/proc`, or a fixture tree in tests) and, beside
//! it, `../sys` (to tell physical disks and NICs from virtual ones; our cgroup's CPU and memory
//! budget, throttling and pressure), `../etc` (`passwd` for user names, `hostname`), `../dev`
//! (the GPU device nodes, or `$GPUMETER_DEV_DIR`) and marker files in `..` that say whether we
//! run in a container or a VM. It never writes anything and never fails a whole sample: a file
//! it cannot read leaves its fields `None` and adds one short warning.
//!
//! Rates (CPU %, iowait, disk and network bytes/s, per-process CPU %) need two samples: the
//! first call gives `None` for them, later calls average over the interval since the previous
//! call (jiffy deltas for the CPU lines, `now_unix_ms` deltas for the rest).
//!
//! Cost per call: a handful of machine-wide files, kept open (one `pread` each, `kept`; the
//! cgroup limits every 10 s, the hostname and uptime every minute: `system`; between two
//! readings of `diskstats` and `net/dev`, a minute apart, only the counted disks' and NICs' own
//! sysfs files: `device_files`); then, while the driver names any GPU process, one `stat` read
//! per GPU process the front-end shows every tick (all of them unless it says otherwise through
//! [`crate::source::focus`]; the others every 5 s), the rest of their trees' `stat` and
//! `children` every 5 s (`children` only while pids are given out: `births`), a listing of /proc
//! every 10 s that reads only processes not seen before (`scan`; after a whole listing, only
//! the pids handed out since, and the whole of /proc every 60 s: `proc_dir`), and, only for the
//! processes in the result, `status`, `cmdline` and `cgroup` once per process lifetime (cached
//! per pid, start time and comm).
//!
//! PID namespaces: NVML reports PIDs of the host namespace.
//! - gpumeter on the host (the normal case) sees every process directly; a process inside a
//!   container also gets `ns_pid`, its PID inside the container (innermost `NSpid` entry).
//! - A GPU PID missing from this /proc is matched against the outermost `NSpid` entry of the
//!   visible processes. The kernel numbers that entry in the namespace of this procfs, so in
//!   practice it equals the directory name and the match only helps with proc trees that
//!   re-export another namespace's numbering; it is kept as a cheap safety net.
//! - gpumeter inside a container without `--pid=host` cannot see host PIDs at all: the
//!   processes here holding `/dev/nvidia<N>` open are matched to them per GPU (`gpu_fds`,
//!   `pid_match`) and listed by their local PID with `host_pid` set; what nothing here holds
//!   comes back as [`ProcessReading::invisible`] with its GPU use, never dropped.
//!
//! Apart from the readings, [`inspect`] reads one process's working directory and the GPU part
//! of its environment on demand (the dashboard's process detail), never on a tick.

mod births;
mod budget;
mod cgroup;
mod cgroup_usage;
mod containers;
mod cpu;
mod device_files;
mod gpu_fds;
pub mod inspect;
mod io;
mod kept;
mod limits;
mod memory;
mod mounts;
mod nic;
mod nspid;
mod parents;
mod per_device;
mod pid_match;
mod place;
mod proc_dir;
mod processes;
mod scan;
mod stat;
mod statics;
mod system;
mod threads;
mod tree;
mod users;
mod vmstat;

#[cfg(test)]
pub(crate) mod fixture;
#[cfg(test)]
mod tests;

pub use budget::{CpuBudget, CpuLimit};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gpumeter_model::{GpuUse, HostReading, ProcessReading, RunsIn, SystemInfo};

pub use limits::{HostLimits, parse_cpu_list};

use crate::sanitize::sanitize;

/// Longest warning kept, in characters.
const MAX_WARNING_CHARS: usize = 200;

/// Samples the host through /proc. Keeps the previous counters to turn them into rates.
#[derive(Debug)]
pub struct HostSampler {
    roots: Roots,
    cpu: cpu::CpuTracker,
    cpu_files: cpu::CpuFiles,
    system: system::SystemFiles,
    io: io::IoTracker,
    cgroup: cgroup_usage::CgroupTracker,
    vmstat: vmstat::VmstatTracker,
    mounts: mounts::Mounts,
    processes: processes::ProcessTracker,
    /// Where we run, decided once.
    runs_in: RunsIn,
}

/// One host reading: what goes into a [`gpumeter_model::Snapshot`] beside the GPU readings.
#[derive(Debug, Clone, PartialEq)]
pub struct HostSample {
    /// Hostname, uptime and boot time (the driver fields stay `None`: NVML fills them).
    pub system: SystemInfo,
    /// CPU, memory, disk, network and pressure readings of the host (or its cgroup).
    pub host: HostReading,
    /// GPU processes (visible or not) and the visible descendants of the visible ones.
    pub processes: Vec<ProcessReading>,
    /// Short, sanitized notes about what could not be read this time.
    pub warnings: Vec<String>,
}

/// Where the files live: the proc root and its siblings.
#[derive(Debug, Clone)]
pub(crate) struct Roots {
    /// The directory the proc root sits in (`/`): marker files such as `/.dockerenv`.
    pub(crate) root: PathBuf,
    /// The device directory whose `nvidia<N>` nodes GPU processes hold (`/dev`).
    pub(crate) dev: PathBuf,
    pub(crate) proc: PathBuf,
    /// `sys` beside the proc root (`/sys` for `/proc`).
    pub(crate) sys: PathBuf,
    /// `etc` beside the proc root (`/etc` for `/proc`).
    pub(crate) etc: PathBuf,
}

impl Roots {
    fn new(proc: PathBuf) -> Self {
        let parent = proc.parent().unwrap_or(Path::new("/")).to_path_buf();
        Self {
            sys: parent.join("sys"),
            etc: parent.join("etc"),
            dev: parent.join("dev"),
            root: parent,
            proc,
        }
    }
}

impl Default for HostSampler {
    fn default() -> Self {
        Self::new()
    }
}

impl HostSampler {
    /// Reads the live `/proc` (with `/sys` and `/etc` beside it). The device directory is
    /// `/dev`, or `$GPUMETER_DEV_DIR` when set (tests put fake device nodes there).
    pub fn new() -> HostSampler {
        let mut s = Self::with_proc_root("/proc");
        if let Some(dev) = std::env::var_os("GPUMETER_DEV_DIR").filter(|d| !d.is_empty()) {
            s.roots.dev = PathBuf::from(dev);
            s.processes = processes::ProcessTracker::new(
                &s.roots,
                procfs::ticks_per_second().max(1),
                procfs::page_size(),
            );
        }
        s
    }

    /// Reads another proc tree: a fixture in tests, or a host's /proc mounted elsewhere
    /// (`/host/proc`). `sys` and `etc` are looked for beside it (`/host/sys`, `/host/etc`).
    /// Clock ticks and page size are the running kernel's.
    pub fn with_proc_root(root: impl Into<PathBuf>) -> HostSampler {
        Self::with_units(root.into(), procfs::ticks_per_second(), procfs::page_size())
    }

    /// Fixture trees pin the kernel's units so tests do not depend on the machine.
    pub(crate) fn with_units(root: PathBuf, ticks_per_s: u64, page_size: u64) -> HostSampler {
        let roots = Roots::new(root);
        HostSampler {
            cpu: cpu::CpuTracker::default(),
            cpu_files: cpu::CpuFiles::new(&roots.proc),
            system: system::SystemFiles::new(&roots),
            io: io::IoTracker::new(&roots),
            cgroup: cgroup_usage::CgroupTracker::new(&roots.proc, &roots.sys),
            vmstat: vmstat::VmstatTracker::new(&roots.proc, page_size),
            mounts: mounts::Mounts::new(&roots.proc),
            processes: processes::ProcessTracker::new(&roots, ticks_per_s.max(1), page_size),
            runs_in: place::detect(&roots),
            roots,
        }
    }

    /// Which GPU processes are read every tick (default: all; see [`crate::source::focus`]).
    pub fn set_focus(&mut self, focus: crate::source::focus::ProcessFocus) {
        self.processes.set_focus(focus);
    }

    /// Host readings (rates over the interval since the previous call) and the processes feeding
    /// the GPUs: every PID in `gpu_procs` (visible or not: invisible ones become
    /// [`ProcessReading::invisible`] with their GPU use) plus all visible descendants of the
    /// visible ones.
    pub fn sample(
        &mut self,
        now_unix_ms: i64,
        gpu_procs: &BTreeMap<u32, Vec<GpuUse>>,
    ) -> HostSample {
        self.sample_taking(now_unix_ms, &mut gpu_procs.clone())
    }

    /// As [`HostSampler::sample`], moving each GPU process's uses out of `gpu_procs` into its
    /// reading (the map is left with empty lists) instead of copying them: the per-tick path.
    pub fn sample_taking(
        &mut self,
        now_unix_ms: i64,
        gpu_procs: &mut BTreeMap<u32, Vec<GpuUse>>,
    ) -> HostSample {
        let mut warnings = Warnings::default();
        let stats = match self.cpu_files.kernel_stats() {
            Ok(stats) => Some(stats),
            Err(e) => {
                warnings.push(format!("cannot read CPU counters: {e}"));
                None
            }
        };
        let boot_time_unix_s = stats
            .as_ref()
            .and_then(|s| s.btime)
            .and_then(|b| i64::try_from(b).ok());
        let cpu = self.cpu.update(stats);

        let memory = self.system.memory().unwrap_or_else(|e| {
            warnings.push(format!("cannot read memory counters: {e}"));
            memory::Memory::default()
        });
        let io = self.io.update(now_unix_ms, &mut warnings);
        let cg = self.cgroup.update(now_unix_ms);
        let vm = self.vmstat.update(now_unix_ms);
        // Before the processes: their `children` reads use this tick's last pid.
        let load = self.cpu_files.load_avg();

        let host = HostReading {
            cpu_count: cpu.count,
            cpu_util_pct: cpu.util_pct,
            iowait_pct: cpu.iowait_pct,
            per_cpu_util_pct: cpu.per_cpu_util_pct,
            load_avg_1m: load.one_min,
            mem_total_bytes: memory.total_bytes,
            mem_used_bytes: memory.used_bytes,
            disk_read_bytes_per_s: io.disk_read_bytes_per_s,
            disk_write_bytes_per_s: io.disk_write_bytes_per_s,
            net_rx_bytes_per_s: io.net_rx_bytes_per_s,
            net_tx_bytes_per_s: io.net_tx_bytes_per_s,
            cpu_quota_cores: cg.quota_cores,
            cgroup: cg.reading,
            cpu_pressure_pct: cg.cpu_pressure_pct,
            io_pressure_pct: cg.io_pressure_pct,
            disk_busy_pct: io.disk_busy_pct,
            disk_queue_depth: io.disk_queue_depth,
            mem_pressure_pct: cg.mem_pressure_pct,
            swap_in_bytes_per_s: vm.swap_in_bytes_per_s,
            major_faults_per_s: vm.major_faults_per_s,
            nic_speed_bytes_per_s: io.nic_busiest.map(|(speed, _, _)| speed),
            nic_rx_util_pct: io.nic_busiest.map(|(_, rx, _)| rx),
            nic_tx_util_pct: io.nic_busiest.and_then(|(_, _, tx)| tx),
            network_mounts: self.mounts.network(now_unix_ms),
        };
        let system = SystemInfo {
            hostname: self.system.hostname(now_unix_ms),
            uptime_s: self.system.uptime_s(now_unix_ms),
            boot_time_unix_s,
            runs_in: Some(self.runs_in.clone()),
            ..SystemInfo::default()
        };
        let processes = self.processes.sample(
            now_unix_ms,
            gpu_procs,
            boot_time_unix_s,
            load.last_pid,
            &mut warnings,
        );

        HostSample {
            system,
            host,
            processes,
            warnings: warnings.into_vec(),
        }
    }
}

/// Warnings for one sample: sanitized, capped in length and de-duplicated.
#[derive(Debug, Default)]
pub(crate) struct Warnings(Vec<String>);

impl Warnings {
    pub(crate) fn push(&mut self, message: String) {
        let message = sanitize(&format!("host: {message}"), MAX_WARNING_CHARS);
        if !self.0.contains(&message) {
            self.0.push(message);
        }
    }

    fn into_vec(self) -> Vec<String> {
        self.0
    }
}
