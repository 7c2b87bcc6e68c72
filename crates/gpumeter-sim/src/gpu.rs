//! Simulated GPUs: `[[gpu]]` entries replicated into devices, their readings at a time, and the
//! energy counter integrated from the power signal.

use std::collections::BTreeSet;

use gpumeter_model::{GpuReading, GpuState, PodRef, ProcessReading, ThrottleReason};

use crate::gpm::GpmSpec;
use crate::noise;
use crate::scenario::{GpuSignal, GpuSpec, Scenario};
use crate::signal::{Range, Signal};
use crate::simulate::{At, process_memory_on};

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
const MIB: u64 = 1024 * 1024;
/// Energy is integrated in steps of this many milliseconds.
const ENERGY_STEP_MS: u64 = 100;
/// PCI bus numbers of an 8-GPU HGX board, for realistic-looking ids.
const HGX_BUSES: [u32; 8] = [0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB];

/// One device: its index, its `[[gpu]]` entry, its phase and its energy integrator.
#[derive(Debug, Clone)]
pub(crate) struct GpuInstance {
    index: u32,
    spec: usize,
    phase_s: f64,
    energy_start_mj: u64,
    /// Energy (mJ, above the start) integrated over the first `steps` steps.
    steps: u64,
    energy_mj: f64,
}

pub(crate) fn expand_gpus(scenario: &Scenario) -> Vec<GpuInstance> {
    let mut out = Vec::new();
    for (spec_idx, spec) in scenario.gpus.iter().enumerate() {
        for k in 0..spec.count {
            let index = u32::try_from(out.len()).unwrap_or(u32::MAX);
            // Default counter: as if it drew ~75 W since boot, plus a per-device offset.
            let default_start = scenario.boot_offset_s.saturating_mul(75_000)
                + noise::splitmix64(scenario.seed ^ u64::from(index)) % 1_000_000;
            out.push(GpuInstance {
                index,
                spec: spec_idx,
                phase_s: spec.phase_s + f64::from(k) * spec.phase_step_s,
                energy_start_mj: spec.energy_start_mj.unwrap_or(default_start),
                steps: 0,
                energy_mj: 0.0,
            });
        }
    }
    out
}

impl GpuInstance {
    /// Which `[[gpu]]` entry this device was made from.
    pub(crate) fn spec_index(&self) -> usize {
        self.spec
    }

    pub(crate) fn reading(
        &mut self,
        scenario: &Scenario,
        at: &At,
        elapsed_ms: u64,
        processes: &[ProcessReading],
    ) -> GpuReading {
        let Some(spec) = scenario.gpus.get(self.spec) else {
            return GpuReading {
                index: self.index,
                ..GpuReading::default()
            };
        };
        let (index, phase_s) = (self.index, self.phase_s);
        let id = u64::from(index);
        let sample = |s: &Option<Signal>, ch: &str, range: Range| {
            s.as_ref()
                .map(|s| at.sample(s, phase_s, "gpu", id, ch, range))
        };
        let whole = |s: &Option<Signal>, ch: &str, range: Range| {
            sample(s, ch, range).map(|v| v.round() as u32)
        };
        let mhz = |s: &Option<Signal>, ch: &str, max: Option<u32>| {
            whole(
                s,
                ch,
                max.map_or(Range::NonNeg, |m| Range::UpTo(f64::from(m))),
            )
        };
        // NVML reports PCIe throughput in KB/s: keep bytes/s on whole KiB.
        let pcie = |s: &Option<Signal>, ch: &str| {
            sample(s, ch, Range::NonNeg).map(|mb| (mb * 1e6 / 1024.0).round() as u64 * 1024)
        };
        let total = spec.memory_total_bytes.or(spec
            .memory_total_gib
            .map(|g| (g * GIB / MIB as f64).round() as u64 * MIB));
        let cap = total.map_or(Range::NonNeg, |t| Range::UpTo(t as f64));
        let used = match &spec.memory_used_gib {
            Some(s) => Some(at.sample(s, phase_s, "gpu", id, "mem", Range::NonNeg)),
            // No signal: what the processes hold (0 with none, when the total is known).
            None => process_memory_on(processes, index)
                .or(total.map(|_| 0))
                .map(|b| b as f64 / GIB),
        }
        .map(|gib| (cap.clamp(gib * GIB) / MIB as f64).floor() as u64 * MIB);
        let util = whole(&spec.util_gpu_pct, "util", Range::Pct);
        let util_mem = whole(&spec.util_memory_pct, "util_mem", Range::Pct);
        let power = power(spec, index, phase_s, at);
        let temp = whole(&spec.temperature_c, "temp", Range::NonNeg);
        let sm = mhz(&spec.clock_sm_mhz, "clock_sm", spec.clock_sm_max_mhz);
        let watched = |w: GpuSignal| match w {
            GpuSignal::UtilGpuPct => util.map(f64::from),
            GpuSignal::UtilMemoryPct => util_mem.map(f64::from),
            GpuSignal::PowerWatts => power,
            GpuSignal::TemperatureC => temp.map(f64::from),
            GpuSignal::ClockSmMhz => sm.map(f64::from),
        };
        let throttle: Vec<ThrottleReason> = spec
            .throttle
            .iter()
            .filter(|r| match r.when.map(watched) {
                None => true,
                Some(None) => false,
                Some(Some(v)) => r.above.is_none_or(|a| v > a) && r.below.is_none_or(|b| v < b),
            })
            .map(|r| r.reason)
            .collect();
        let energy = power.map(|_| self.energy_at(spec, scenario.seed, elapsed_ms));
        // GPM percentages on whole hundredths, as a driver's doubles would round-trip.
        let gpm = |pick: fn(&GpmSpec) -> &Option<Signal>, ch: &str| {
            let signal = spec.gpm.as_ref().map(pick)?;
            sample(signal, ch, Range::Pct).map(|v| (v * 100.0).round() / 100.0)
        };
        GpuReading {
            index,
            state: GpuState::Ok,
            uuid: Some(uuid(scenario.seed, index).into()),
            name: Some(spec.name.as_str().into()),
            pci_bus_id: Some(pci_bus_id(index).into()),
            util_gpu_pct: util,
            util_memory_pct: util_mem,
            memory_total_bytes: total,
            memory_used_bytes: used,
            power_watts: power,
            power_limit_watts: spec.power_limit_watts,
            power_default_limit_watts: spec.power_default_watts.or(spec.power_limit_watts),
            energy_millijoules: energy,
            temperature_celsius: temp,
            fan_speed_pct: whole(&spec.fan_speed_pct, "fan", Range::Pct),
            clock_graphics_mhz: sm,
            clock_sm_mhz: sm,
            clock_memory_mhz: mhz(
                &spec.clock_memory_mhz,
                "clock_mem",
                spec.clock_memory_max_mhz,
            ),
            clock_sm_max_mhz: spec.clock_sm_max_mhz,
            clock_memory_max_mhz: spec.clock_memory_max_mhz,
            throttle_reasons: Some(throttle),
            pcie_rx_bytes_per_s: pcie(&spec.pcie_rx_mb_per_s, "pcie_rx"),
            pcie_tx_bytes_per_s: pcie(&spec.pcie_tx_mb_per_s, "pcie_tx"),
            pcie_link_gen: spec.pcie_gen.or(spec.pcie_gen_max),
            pcie_link_gen_max: spec.pcie_gen_max,
            pcie_link_width: spec.pcie_width.or(spec.pcie_width_max),
            pcie_link_width_max: spec.pcie_width_max,
            encoder_util_pct: whole(&spec.encoder_util_pct, "enc", Range::Pct),
            decoder_util_pct: whole(&spec.decoder_util_pct, "dec", Range::Pct),
            mig_enabled: spec.mig_enabled,
            sm_active_pct: gpm(|g| &g.sm_active_pct, "gpm_sm"),
            sm_occupancy_pct: gpm(|g| &g.sm_occupancy_pct, "gpm_occ"),
            tensor_active_pct: gpm(|g| &g.tensor_active_pct, "gpm_tensor"),
            dram_active_pct: gpm(|g| &g.dram_active_pct, "gpm_dram"),
            xid_errors: Some(xid_counts(scenario, index, elapsed_ms)),
            pods: pods_on(index, processes),
            mig_uuids: match (spec.mig_enabled, spec.mig_devices) {
                (Some(true), Some(n)) => (0..n)
                    .map(|k| mig_uuid(scenario.seed, index, k).into())
                    .collect(),
                _ => Vec::new(),
            },
        }
    }

    /// The energy counter (mJ) at `elapsed_ms`: the start value plus the power integral in
    /// fixed steps from 0. The running sum is a cache; going back in time restarts it, so the
    /// answer depends only on `elapsed_ms`, and it never decreases as `elapsed_ms` grows.
    fn energy_at(&mut self, spec: &GpuSpec, seed: u64, elapsed_ms: u64) -> u64 {
        let target = elapsed_ms / ENERGY_STEP_MS;
        if target < self.steps {
            self.steps = 0;
            self.energy_mj = 0.0;
        }
        let (index, phase_s) = (self.index, self.phase_s);
        let power_at = |step: u64| {
            let at = At::new(step * ENERGY_STEP_MS, 0, seed);
            power(spec, index, phase_s, &at).unwrap_or(0.0)
        };
        while self.steps < target {
            // W × ms = mJ.
            self.energy_mj += power_at(self.steps) * ENERGY_STEP_MS as f64;
            self.steps += 1;
        }
        let partial = power_at(target) * (elapsed_ms % ENERGY_STEP_MS) as f64;
        self.energy_start_mj
            .saturating_add((self.energy_mj + partial).floor() as u64)
    }
}

/// The scripted XIDs of GPU `index` due by `elapsed_ms`, counted per XID (ascending).
fn xid_counts(scenario: &Scenario, index: u32, elapsed_ms: u64) -> Vec<gpumeter_model::XidCount> {
    let mut counts = std::collections::BTreeMap::new();
    for x in scenario
        .xids
        .iter()
        .filter(|x| x.gpu == index && x.at_s * 1000.0 <= elapsed_ms as f64)
    {
        *counts.entry(x.xid).or_insert(0u64) += 1;
    }
    counts
        .into_iter()
        .map(|(xid, count)| gpumeter_model::XidCount { xid, count })
        .collect()
}

/// Power in watts on whole milliwatts (NVML's unit), so it survives a round trip through the
/// C API exactly.
fn power(spec: &GpuSpec, index: u32, phase_s: f64, at: &At) -> Option<f64> {
    let s = spec.power_watts.as_ref()?;
    let w = at.sample(s, phase_s, "gpu", u64::from(index), "power", Range::NonNeg);
    Some((w * 1000.0).round() / 1000.0)
}

fn uuid(seed: u64, index: u32) -> String {
    let a = noise::splitmix64(seed ^ 0x5555 ^ u64::from(index));
    let b = noise::splitmix64(a);
    format!(
        "GPU-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xffff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}

/// MIG device `k` of GPU `index`: `MIG-` and a UUID of its own, as the driver gives one.
fn mig_uuid(seed: u64, index: u32, k: u32) -> String {
    let base = uuid(seed ^ 0x4d49_4700 ^ (u64::from(k) << 40), index);
    format!("MIG-{}", base.trim_start_matches("GPU-"))
}

fn pci_bus_id(index: u32) -> String {
    let bus = usize::try_from(index)
        .ok()
        .and_then(|i| HGX_BUSES.get(i).copied())
        .unwrap_or(0x10 + (index % 0xE0));
    format!("00000000:{bus:02X}:00.0")
}

/// The pods of the processes on GPU `index`, each once: a GPU's pods as the attribution gives
/// them without a kubelet table (scenario pods carry their names already).
fn pods_on(index: u32, processes: &[ProcessReading]) -> Vec<PodRef> {
    let pods: BTreeSet<&PodRef> = processes
        .iter()
        .filter(|p| p.gpu.iter().any(|u| u.gpu_index == index))
        .filter_map(|p| p.pod.as_ref())
        .collect();
    pods.into_iter().cloned().collect()
}
