//! Scripted faults as the demo dashboard sees them: what a well-behaved NVML source would
//! report after the driver refused a call. A lost GPU keeps only its identity; a refused
//! function blanks the fields it feeds; each fault leaves a warning. `after_calls` is ignored
//! (the demo makes no calls: a fault counts as already past its threshold) and latency has no
//! effect here.

use std::collections::BTreeSet;

use gpumeter_model::{GpuReading, GpuState, Snapshot};

use crate::faults::{GPU_IS_LOST, NvmlError, RESET_REQUIRED};
use crate::scenario::FaultSpec;

/// Functions whose failure means NVML as a whole is unusable.
const WHOLE_LIBRARY: &[&str] = &[
    "nvmlInit",
    "nvmlInit_v2",
    "nvmlInitWithFlags",
    "nvmlDeviceGetCount",
    "nvmlDeviceGetCount_v2",
];

pub(crate) fn apply(snap: &mut Snapshot, faults: &[FaultSpec], elapsed_ms: u64) {
    for f in faults {
        let Some(err) = f.error.filter(|e| e.0 != 0) else {
            continue;
        };
        if f.from_s.is_some_and(|s| (elapsed_ms as f64) < s * 1000.0)
            || f.until_s.is_some_and(|s| elapsed_ms as f64 >= s * 1000.0)
        {
            continue;
        }
        let func = f.function.as_str();
        if WHOLE_LIBRARY.contains(&func) {
            snap.gpus.clear();
            snap.processes.clear();
            snap.warnings
                .push(format!("NVML: {func} returned {}", err.label()));
        } else if func.starts_with("nvmlSystem") {
            match func {
                "nvmlSystemGetDriverVersion" => snap.system.driver_version = None,
                "nvmlSystemGetCudaDriverVersion" | "nvmlSystemGetCudaDriverVersion_v2" => {
                    snap.system.cuda_driver_version = None;
                }
                _ => {}
            }
            snap.warnings
                .push(format!("NVML: {func} returned {}", err.label()));
        } else {
            let targets: Vec<u32> = snap
                .gpus
                .iter()
                .map(|g| g.index)
                .filter(|i| f.gpu.is_none_or(|g| g == *i))
                .collect();
            for index in targets {
                apply_to_gpu(snap, index, func, err);
            }
        }
    }
    drop_processes_on_dead_gpus(snap);
}

fn apply_to_gpu(snap: &mut Snapshot, index: u32, func: &str, err: NvmlError) {
    let Some(gpu) = snap.gpus.iter_mut().find(|g| g.index == index) else {
        return;
    };
    if gpu.state != GpuState::Ok {
        return; // already lost or failed: nothing more to take away
    }
    let warning = match err.0 {
        GPU_IS_LOST => {
            blank(gpu, GpuState::Lost);
            format!("GPU {index}: lost ({func} returned GPU_IS_LOST)")
        }
        RESET_REQUIRED => {
            blank(gpu, GpuState::ResetRequired);
            format!("GPU {index}: needs a reset ({func} returned RESET_REQUIRED)")
        }
        _ if func == "*" => {
            blank(gpu, GpuState::Error);
            format!("GPU {index}: every call returned {}", err.label())
        }
        _ => {
            clear_field(snap, index, func);
            format!("GPU {index}: {func} returned {}", err.label())
        }
    };
    snap.warnings.push(warning);
}

/// Keeps index, name, uuid and PCI id, and the XID counts (they come from the driver's event
/// thread, not the device); everything measured becomes unknown.
fn blank(gpu: &mut GpuReading, state: GpuState) {
    *gpu = GpuReading {
        index: gpu.index,
        state,
        uuid: gpu.uuid.take(),
        name: gpu.name.take(),
        pci_bus_id: gpu.pci_bus_id.take(),
        xid_errors: gpu.xid_errors.take(),
        ..GpuReading::default()
    };
}

/// Blanks what one refused NVML function feeds.
fn clear_field(snap: &mut Snapshot, index: u32, func: &str) {
    let name = func.strip_prefix("nvmlDeviceGet").unwrap_or(func);
    match name {
        "ComputeRunningProcesses"
        | "ComputeRunningProcesses_v2"
        | "ComputeRunningProcesses_v3"
        | "GraphicsRunningProcesses"
        | "GraphicsRunningProcesses_v2"
        | "GraphicsRunningProcesses_v3" => {
            let mut gone = BTreeSet::new();
            for p in snap.processes.iter_mut().filter(|p| !p.gpu.is_empty()) {
                p.gpu.retain(|u| u.gpu_index != index);
                if p.gpu.is_empty() {
                    gone.insert(p.pid);
                }
            }
            drop_with_children(snap, gone);
            return;
        }
        "ProcessUtilization" => {
            for u in snap.processes.iter_mut().flat_map(|p| &mut p.gpu) {
                if u.gpu_index == index {
                    u.sm_util_pct = None;
                    u.memory_util_pct = None;
                }
            }
            return;
        }
        _ => {}
    }
    let Some(g) = snap.gpus.iter_mut().find(|g| g.index == index) else {
        return;
    };
    match name {
        "PowerUsage" => g.power_watts = None,
        "EnforcedPowerLimit" | "PowerManagementLimit" => g.power_limit_watts = None,
        "PowerManagementDefaultLimit" => g.power_default_limit_watts = None,
        "TotalEnergyConsumption" => g.energy_millijoules = None,
        "Temperature" => g.temperature_celsius = None,
        "FanSpeed" | "FanSpeed_v2" | "NumFans" => g.fan_speed_pct = None,
        "PcieThroughput" => {
            g.pcie_rx_bytes_per_s = None;
            g.pcie_tx_bytes_per_s = None;
        }
        "ClockInfo" => {
            g.clock_graphics_mhz = None;
            g.clock_sm_mhz = None;
            g.clock_memory_mhz = None;
        }
        "MaxClockInfo" => {
            g.clock_sm_max_mhz = None;
            g.clock_memory_max_mhz = None;
        }
        "CurrentClocksThrottleReasons" | "CurrentClocksEventReasons" => g.throttle_reasons = None,
        "UtilizationRates" => {
            g.util_gpu_pct = None;
            g.util_memory_pct = None;
        }
        "MemoryInfo" | "MemoryInfo_v2" => {
            g.memory_total_bytes = None;
            g.memory_used_bytes = None;
        }
        "EncoderUtilization" => g.encoder_util_pct = None,
        "DecoderUtilization" => g.decoder_util_pct = None,
        "CurrPcieLinkGeneration" => g.pcie_link_gen = None,
        "CurrPcieLinkWidth" => g.pcie_link_width = None,
        "MaxPcieLinkGeneration" => g.pcie_link_gen_max = None,
        "MaxPcieLinkWidth" => g.pcie_link_width_max = None,
        "MigMode" => g.mig_enabled = None,
        "Name" => g.name = None,
        "UUID" => g.uuid = None,
        "PciInfo" | "PciInfo_v3" => g.pci_bus_id = None,
        _ => {}
    }
}

/// NVML cannot list processes on a GPU that does not answer: their uses of it vanish, and a
/// GPU process left with no GPU disappears together with its workers.
fn drop_processes_on_dead_gpus(snap: &mut Snapshot) {
    let alive: BTreeSet<u32> = snap
        .gpus
        .iter()
        .filter(|g| g.state == GpuState::Ok)
        .map(|g| g.index)
        .collect();
    let mut gone = BTreeSet::new();
    for p in &mut snap.processes {
        if p.gpu.is_empty() {
            continue;
        }
        p.gpu.retain(|u| alive.contains(&u.gpu_index));
        if p.gpu.is_empty() {
            gone.insert(p.pid);
        }
    }
    drop_with_children(snap, gone);
}

fn drop_with_children(snap: &mut Snapshot, mut gone: BTreeSet<u32>) {
    if gone.is_empty() {
        return;
    }
    // Workers follow their parents (the list holds parents before children).
    for p in &snap.processes {
        if p.ppid.is_some_and(|pp| gone.contains(&pp)) {
            gone.insert(p.pid);
        }
    }
    snap.processes.retain(|p| !gone.contains(&p.pid));
}
