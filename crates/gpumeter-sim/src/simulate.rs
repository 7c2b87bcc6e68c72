//! The [`Simulator`]: a scenario evaluated at an elapsed time. It owns the only mutable state,
//! the energy integrators, which are caches: any elapsed time gives the same answer whatever
//! was asked before.

use gpumeter_model::{CgroupReading, HostReading, ProcessReading, Snapshot, SystemInfo};

use crate::faults::{Fault, function_matches};
use crate::gpu::{GpuInstance, expand_gpus};
use crate::noise;
use crate::processes::{ProcInstance, expand, round2};
use crate::scenario::{GpuSpec, Scenario};
use crate::signal::{Range, Signal};

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// A point in scenario time, with what signal sampling needs.
pub(crate) struct At {
    /// Seconds since the scenario started.
    pub t_s: f64,
    /// Whole second, the noise's time key.
    pub second: i64,
    pub seed: u64,
    /// Unix time (s) of elapsed 0.
    pub start_unix_s: i64,
}

impl At {
    pub(crate) fn new(elapsed_ms: u64, taken_at_unix_ms: i64, seed: u64) -> At {
        let elapsed = i64::try_from(elapsed_ms).unwrap_or(i64::MAX);
        At {
            t_s: elapsed_ms as f64 / 1000.0,
            second: elapsed / 1000,
            seed,
            start_unix_s: taken_at_unix_ms.saturating_sub(elapsed).div_euclid(1000),
        }
    }

    /// `signal` at this time, with the noise of (`kind`, `id`, `channel`).
    pub(crate) fn sample(
        &self,
        signal: &Signal,
        phase_s: f64,
        kind: &str,
        id: u64,
        channel: &str,
        range: Range,
    ) -> f64 {
        let u = noise::unit(self.seed, noise::stream(kind, id, channel), self.second);
        signal.sample(self.t_s, phase_s, u, range)
    }
}

/// A running simulation of one scenario.
#[derive(Debug, Clone)]
pub struct Simulator {
    scenario: Scenario,
    gpus: Vec<GpuInstance>,
    procs: Vec<ProcInstance>,
}

impl Simulator {
    pub fn new(scenario: Scenario) -> Simulator {
        let gpus = expand_gpus(&scenario);
        let procs = expand(&scenario);
        Simulator {
            scenario,
            gpus,
            procs,
        }
    }

    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// The `[[gpu]]` entry device `index` was replicated from (its health keys, for the fake
    /// driver's pre-flight calls).
    pub fn gpu_spec(&self, index: u32) -> Option<&GpuSpec> {
        let gpu = self.gpus.get(usize::try_from(index).ok()?)?;
        self.scenario.gpus.get(gpu.spec_index())
    }

    /// The full reading `elapsed_ms` after the scenario started, with demo faults applied
    /// (lost GPUs marked Lost with readings None; NOT_SUPPORTED faults make that field None).
    /// Deterministic: same elapsed → same snapshot.
    pub fn snapshot_at(&mut self, elapsed_ms: u64, taken_at_unix_ms: i64) -> Snapshot {
        let mut snap = self.truth_at(elapsed_ms, taken_at_unix_ms);
        crate::demo_faults::apply(&mut snap, &self.scenario.faults, elapsed_ms);
        snap
    }

    /// The same reading before faults are applied (what a fake driver holds as its truth).
    pub fn truth_at(&mut self, elapsed_ms: u64, taken_at_unix_ms: i64) -> Snapshot {
        let at = At::new(elapsed_ms, taken_at_unix_ms, self.scenario.seed);
        let mut snap = Snapshot::empty(format!("demo:{}", self.scenario.name), taken_at_unix_ms);
        snap.system = self.system(elapsed_ms, taken_at_unix_ms);
        snap.host = self.host(&at);
        snap.processes = self
            .procs
            .iter()
            .filter_map(|p| p.reading(&self.scenario, &at))
            .collect();
        let scenario = &self.scenario;
        snap.gpus = self
            .gpus
            .iter_mut()
            .map(|g| g.reading(scenario, &at, elapsed_ms, &snap.processes))
            .collect();
        snap
    }

    /// The fault scripted for this NVML C function on this device (None = device-less call) at
    /// this time, given that this is the `call_number`-th call (1-based) of that function on that
    /// device. The first matching `[[fault]]` entry wins.
    pub fn fault(
        &self,
        gpu: Option<u32>,
        function: &str,
        elapsed_ms: u64,
        call_number: u64,
    ) -> Option<Fault> {
        self.scenario
            .faults
            .iter()
            .find(|f| {
                (f.gpu.is_none() || f.gpu == gpu)
                    && function_matches(&f.function, gpu, function)
                    && f.from_s.is_none_or(|s| elapsed_ms as f64 >= s * 1000.0)
                    && f.until_s.is_none_or(|s| (elapsed_ms as f64) < s * 1000.0)
                    && f.after_calls.is_none_or(|n| call_number > n)
            })
            .map(|f| Fault {
                error: f.error.map(|e| e.0).filter(|&c| c != 0),
                latency_ms: f.latency_ms.unwrap_or(0),
            })
    }

    fn system(&self, elapsed_ms: u64, taken_at_unix_ms: i64) -> SystemInfo {
        let s = &self.scenario;
        let uptime_s = s.boot_offset_s.saturating_add(elapsed_ms / 1000);
        SystemInfo {
            hostname: s.hostname.clone(),
            driver_version: s.driver_version.clone(),
            cuda_driver_version: s.cuda_driver_version.clone(),
            uptime_s: Some(uptime_s),
            boot_time_unix_s: Some(
                taken_at_unix_ms
                    .div_euclid(1000)
                    .saturating_sub(i64::try_from(uptime_s).unwrap_or(i64::MAX)),
            ),
            runs_in: s.host.runs_in.clone(),
            interruption: s
                .interruption
                .as_ref()
                .and_then(|n| n.reading(elapsed_ms, taken_at_unix_ms)),
        }
    }

    fn host(&self, at: &At) -> HostReading {
        let h = &self.scenario.host;
        let sample = |s: &Option<Signal>, ch: &str, range: Range| {
            s.as_ref().map(|s| at.sample(s, 0.0, "host", 0, ch, range))
        };
        let mb =
            |s: &Option<Signal>, ch: &str| sample(s, ch, Range::NonNeg).map(|v| (v * 1e6).round());
        let cpu = sample(&h.cpu_util_pct, "cpu", Range::Pct).map(round2);
        // One NIC carries the traffic: its rates against its link speed.
        let nic_speed = h.nic_speed_gbit.map(|g| g * 1e9 / 8.0);
        let net_rx = mb(&h.net_rx_mb_per_s, "net_rx");
        let net_tx = mb(&h.net_tx_mb_per_s, "net_tx");
        let share = |rate: Option<f64>| {
            nic_speed
                .zip(rate)
                .map(|(speed, r)| round2(Range::Pct.clamp(r / speed * 100.0)))
        };
        let per_cpu = match (cpu, h.cpu_count) {
            (Some(cpu), Some(n)) => (0..n)
                .map(|i| {
                    let u = noise::unit(
                        at.seed,
                        noise::stream("cpu", u64::from(i), "util"),
                        at.second,
                    );
                    round2(Range::Pct.clamp(cpu + 6.0 * u))
                })
                .collect(),
            _ => Vec::new(),
        };
        let mem_total = h
            .mem_total_bytes
            .or(h.mem_total_gib.map(|g| (g.max(0.0) * GIB).round() as u64));
        let mem_cap = mem_total.map_or(Range::NonNeg, |t| Range::UpTo(t as f64));
        HostReading {
            cpu_count: h.cpu_count,
            cpu_util_pct: cpu,
            iowait_pct: sample(&h.iowait_pct, "iowait", Range::Pct).map(round2),
            per_cpu_util_pct: per_cpu,
            load_avg_1m: sample(&h.load_avg_1m, "load", Range::NonNeg)
                .or_else(|| Some(cpu? * f64::from(h.cpu_count?) / 100.0))
                .map(round2),
            mem_total_bytes: mem_total,
            mem_used_bytes: sample(&h.mem_used_gib, "mem", Range::NonNeg)
                .map(|g| mem_cap.clamp(g * GIB).round() as u64),
            disk_read_bytes_per_s: mb(&h.disk_read_mb_per_s, "disk_read"),
            disk_write_bytes_per_s: mb(&h.disk_write_mb_per_s, "disk_write"),
            net_rx_bytes_per_s: net_rx,
            net_tx_bytes_per_s: net_tx,
            cpu_quota_cores: h.cpu_quota_cores,
            cgroup: self.cgroup(at),
            cpu_pressure_pct: sample(&h.cpu_pressure_pct, "cpu_psi", Range::Pct).map(round2),
            io_pressure_pct: sample(&h.io_pressure_pct, "io_psi", Range::Pct).map(round2),
            disk_busy_pct: sample(&h.disk_busy_pct, "disk_busy", Range::Pct).map(round2),
            disk_queue_depth: sample(&h.disk_queue_depth, "disk_queue", Range::NonNeg).map(round2),
            mem_pressure_pct: sample(&h.mem_pressure_pct, "mem_psi", Range::Pct).map(round2),
            swap_in_bytes_per_s: mb(&h.swap_in_mb_per_s, "swap_in"),
            major_faults_per_s: sample(&h.major_faults_per_s, "majflt", Range::NonNeg).map(round2),
            nic_speed_bytes_per_s: nic_speed,
            nic_rx_util_pct: share(net_rx),
            nic_tx_util_pct: share(net_tx),
            network_mounts: h.network_mounts.iter().map(|m| m.as_str().into()).collect(),
        }
    }

    fn cgroup(&self, at: &At) -> CgroupReading {
        let h = &self.scenario.host;
        let sample = |s: &Option<Signal>, ch: &str, range: Range| {
            s.as_ref()
                .map(|s| at.sample(s, 0.0, "cgroup", 0, ch, range))
        };
        let throttled = sample(&h.cpu_throttled_pct, "throttled", Range::Pct).map(round2);
        let limit = h
            .cgroup_mem_limit_gib
            .map(|g| (g.max(0.0) * GIB).round() as u64);
        let cap = limit.map_or(Range::NonNeg, |t| Range::UpTo(t as f64));
        CgroupReading {
            cpuset_cpus: h.cpuset_cpus,
            cpu_used_cores: sample(&h.cgroup_cpu_used_cores, "used", Range::NonNeg).map(round2),
            cpu_throttled_pct: throttled,
            // Throttled periods are mostly cut short at the end: about a third of their time.
            cpu_throttled_time_pct: throttled.map(|t| round2(t / 3.0)),
            mem_limit_bytes: limit,
            mem_used_bytes: sample(&h.cgroup_mem_used_gib, "mem", Range::NonNeg)
                .map(|g| cap.clamp(g * GIB).round() as u64),
            oom_kills: sample(&h.oom_kills, "oom", Range::NonNeg).map(|v| v.round() as u64),
        }
    }
}

/// VRAM of live processes on one GPU, when any is known.
pub(crate) fn process_memory_on(processes: &[ProcessReading], index: u32) -> Option<u64> {
    processes
        .iter()
        .flat_map(|p| &p.gpu)
        .filter(|u| u.gpu_index == index)
        .filter_map(|u| u.memory_bytes)
        .reduce(u64::saturating_add)
}
