//! GPU processes: the compute and graphics lists (a `mixed` process is in both, as NVML lists
//! it), the MPS list (always empty: no MPS server is simulated), and per-process utilization
//! samples read with a last-seen cursor.
//!
//! Lists follow NVML's count protocol: a NULL buffer or one too small gets `INSUFFICIENT_SIZE`
//! and the count needed; no processes is `SUCCESS` with a count of 0.
//!
//! Utilization samples: one per busy process (SM or memory use above 0), stamped with the
//! driver timestamp of the current instant (µs; it moves in 100 ms steps, or not at all under a
//! frozen clock). A caller whose cursor is at or past that stamp gets `NOT_FOUND` ("nothing
//! new"), as from a driver whose processes were idle. A GPU whose processes have no
//! utilization in the scenario at all, or one in MIG mode, answers `NOT_SUPPORTED`.

#![allow(non_snake_case)]

use std::ffi::c_uint;

use gpumeter_model::{GpuProcessKind, GpuUse};

use crate::abi::{
    ERROR_INSUFFICIENT_SIZE, ERROR_NOT_FOUND, ERROR_NOT_SUPPORTED, ERROR_UNKNOWN, NO_INSTANCE,
    VALUE_NOT_AVAILABLE_ULL, nvmlDevice_t, nvmlProcessInfo_t, nvmlProcessUtilizationSample_t,
    nvmlReturn_t,
};
use crate::call::{Answer, Device, device_call};

/// Which list a function returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum List {
    Compute,
    Graphics,
    Mps,
}

/// The entries of one list on one device, in the scenario's process order.
fn entries(d: &Device<'_>, list: List) -> Vec<nvmlProcessInfo_t> {
    let wanted = |kind: GpuProcessKind| match list {
        List::Compute => matches!(kind, GpuProcessKind::Compute | GpuProcessKind::Mixed),
        List::Graphics => matches!(kind, GpuProcessKind::Graphics | GpuProcessKind::Mixed),
        List::Mps => false,
    };
    d.truth
        .processes
        .iter()
        .flat_map(|p| p.gpu.iter().map(move |u| (p.driver_pid(), u)))
        .filter(|(_, u)| u.gpu_index == d.index && wanted(u.kind))
        .map(|(pid, u)| nvmlProcessInfo_t {
            pid,
            usedGpuMemory: u.memory_bytes.unwrap_or(VALUE_NOT_AVAILABLE_ULL),
            gpuInstanceId: NO_INSTANCE,
            computeInstanceId: NO_INSTANCE,
        })
        .collect()
}

/// Writes `items` through NVML's (count in/out, buffer) protocol.
///
/// # Safety
/// `count` is non-null and readable/writable; `buffer`, when non-null, is valid for `*count`
/// writes of `T`.
unsafe fn hand_over<T: Copy>(items: &[T], count: *mut c_uint, buffer: *mut T) -> Answer {
    let needed = c_uint::try_from(items.len()).map_err(|_| ERROR_UNKNOWN)?;
    // SAFETY: `count` is non-null and readable (the caller's contract).
    let capacity = unsafe { count.read() };
    // SAFETY: as above, writable.
    unsafe { count.write(needed) };
    if buffer.is_null() || capacity < needed {
        return if needed == 0 {
            Ok(())
        } else {
            Err(ERROR_INSUFFICIENT_SIZE)
        };
    }
    for (i, item) in items.iter().enumerate() {
        // SAFETY: `buffer` holds `capacity >= needed > i` elements (the caller's contract).
        unsafe { buffer.add(i).write(*item) };
    }
    Ok(())
}

fn process_list(
    function: &'static str,
    device: nvmlDevice_t,
    count: *mut c_uint,
    infos: *mut nvmlProcessInfo_t,
    list: List,
) -> nvmlReturn_t {
    device_call(function, device, !count.is_null(), |d| {
        let items = entries(d, list);
        // SAFETY: `count` is non-null (checked); `infos` is NULL or, by the NVML contract,
        // holds `*count` entries.
        unsafe { hand_over(&items, count, infos) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetComputeRunningProcesses_v3(
    device: nvmlDevice_t,
    count: *mut c_uint,
    infos: *mut nvmlProcessInfo_t,
) -> nvmlReturn_t {
    let name = "nvmlDeviceGetComputeRunningProcesses_v3";
    process_list(name, device, count, infos, List::Compute)
}

/// Same struct as `_v3`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetComputeRunningProcesses_v2(
    device: nvmlDevice_t,
    count: *mut c_uint,
    infos: *mut nvmlProcessInfo_t,
) -> nvmlReturn_t {
    let name = "nvmlDeviceGetComputeRunningProcesses_v2";
    process_list(name, device, count, infos, List::Compute)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetGraphicsRunningProcesses_v3(
    device: nvmlDevice_t,
    count: *mut c_uint,
    infos: *mut nvmlProcessInfo_t,
) -> nvmlReturn_t {
    let name = "nvmlDeviceGetGraphicsRunningProcesses_v3";
    process_list(name, device, count, infos, List::Graphics)
}

/// Same struct as `_v3`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetGraphicsRunningProcesses_v2(
    device: nvmlDevice_t,
    count: *mut c_uint,
    infos: *mut nvmlProcessInfo_t,
) -> nvmlReturn_t {
    let name = "nvmlDeviceGetGraphicsRunningProcesses_v2";
    process_list(name, device, count, infos, List::Graphics)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMPSComputeRunningProcesses_v3(
    device: nvmlDevice_t,
    count: *mut c_uint,
    infos: *mut nvmlProcessInfo_t,
) -> nvmlReturn_t {
    let name = "nvmlDeviceGetMPSComputeRunningProcesses_v3";
    process_list(name, device, count, infos, List::Mps)
}

/// The samples newer than `last_seen` on one device.
fn samples(
    d: &Device<'_>,
    last_seen: u64,
) -> Result<Vec<nvmlProcessUtilizationSample_t>, nvmlReturn_t> {
    if d.gpu.mig_enabled == Some(true) {
        return Err(ERROR_NOT_SUPPORTED);
    }
    let uses: Vec<_> = d
        .truth
        .processes
        .iter()
        .flat_map(|p| p.gpu.iter().map(move |u| (p.driver_pid(), u)))
        .filter(|(_, u)| u.gpu_index == d.index)
        .collect();
    let unknown = |u: &GpuUse| u.sm_util_pct.is_none() && u.memory_util_pct.is_none();
    if !uses.is_empty() && uses.iter().all(|(_, u)| unknown(u)) {
        return Err(ERROR_NOT_SUPPORTED);
    }
    let stamp = d.world.timestamp_us();
    if stamp <= last_seen {
        return Ok(Vec::new());
    }
    Ok(uses
        .iter()
        .map(|(pid, u)| nvmlProcessUtilizationSample_t {
            pid: *pid,
            timeStamp: stamp,
            smUtil: u.sm_util_pct.unwrap_or(0),
            memUtil: u.memory_util_pct.unwrap_or(0),
            encUtil: 0,
            decUtil: 0,
        })
        .filter(|s| s.smUtil > 0 || s.memUtil > 0)
        .collect())
}

/// Samples newer than `last_seen` (µs; 0 = all buffered); `NOT_FOUND` when there are none.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetProcessUtilization(
    device: nvmlDevice_t,
    utilization: *mut nvmlProcessUtilizationSample_t,
    count: *mut c_uint,
    last_seen: u64,
) -> nvmlReturn_t {
    let name = "nvmlDeviceGetProcessUtilization";
    device_call(name, device, !count.is_null(), |d| {
        let items = samples(d, last_seen)?;
        if items.is_empty() {
            // SAFETY: `count` is non-null (checked) and writable.
            unsafe { count.write(0) };
            return Err(ERROR_NOT_FOUND);
        }
        // SAFETY: `count` is non-null (checked); `utilization` is NULL or, by the NVML
        // contract, holds `*count` samples.
        unsafe { hand_over(&items, count, utilization) }
    })
}
