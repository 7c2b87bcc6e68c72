//! Utilization (GPU, memory controller, encoder, decoder) and memory (the plain struct and the
//! versioned `_v2` one). A scenario that gives only one of GPU and memory-controller
//! utilization makes the pair `NOT_SUPPORTED`: NVML answers both or neither, and inventing the
//! missing one would be a made-up 0.

#![allow(non_snake_case)]

use std::ffi::c_uint;

use crate::abi::{
    ERROR_ARGUMENT_VERSION_MISMATCH, MEMORY_V2_BARE_VERSION, MEMORY_V2_VERSION, nvmlDevice_t,
    nvmlMemory_t, nvmlMemory_v2_t, nvmlReturn_t, nvmlUtilization_t,
};
use crate::call::{Device, device_call, device_out, supported};

/// Encoder/decoder sampling period reported with their utilization (µs).
const CODEC_SAMPLING_US: c_uint = 167_000;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetUtilizationRates(
    device: nvmlDevice_t,
    utilization: *mut nvmlUtilization_t,
) -> nvmlReturn_t {
    device_out("nvmlDeviceGetUtilizationRates", device, utilization, |d| {
        Ok(nvmlUtilization_t {
            gpu: supported(d.gpu.util_gpu_pct)?,
            memory: supported(d.gpu.util_memory_pct)?,
        })
    })
}

/// (total, used) bytes; used never above total.
fn memory(d: &Device<'_>) -> Result<(u64, u64), nvmlReturn_t> {
    let total = supported(d.gpu.memory_total_bytes)?;
    let used = d.gpu.memory_used_bytes.unwrap_or(0).min(total);
    Ok((total, used))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMemoryInfo(
    device: nvmlDevice_t,
    memory_out: *mut nvmlMemory_t,
) -> nvmlReturn_t {
    device_out("nvmlDeviceGetMemoryInfo", device, memory_out, |d| {
        let (total, used) = memory(d)?;
        Ok(nvmlMemory_t {
            total,
            free: total - used,
            used,
        })
    })
}

/// Checks the version the caller put in the struct (0x02000028, or nvtop's bare 2), then fills
/// it in. Nothing is reserved by the simulated driver.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMemoryInfo_v2(
    device: nvmlDevice_t,
    memory_out: *mut nvmlMemory_v2_t,
) -> nvmlReturn_t {
    device_call(
        "nvmlDeviceGetMemoryInfo_v2",
        device,
        !memory_out.is_null(),
        |d| {
            // SAFETY: `memory_out` is non-null (checked) and, by the NVML contract, points to an
            // `nvmlMemory_v2_t` whose `version` the caller set.
            let version = unsafe { (*memory_out).version };
            if version != MEMORY_V2_VERSION && version != MEMORY_V2_BARE_VERSION {
                return Err(ERROR_ARGUMENT_VERSION_MISMATCH);
            }
            let (total, used) = memory(d)?;
            let filled = nvmlMemory_v2_t {
                version,
                total,
                reserved: 0,
                free: total - used,
                used,
            };
            // SAFETY: as above; the struct is writable for the duration of the call.
            unsafe { memory_out.write(filled) };
            Ok(())
        },
    )
}

/// Encoder or decoder: utilization plus the sampling period.
fn codec(
    function: &'static str,
    device: nvmlDevice_t,
    utilization: *mut c_uint,
    period_us: *mut c_uint,
    read: impl FnOnce(&Device<'_>) -> Option<u32>,
) -> nvmlReturn_t {
    let outputs_ok = !utilization.is_null() && !period_us.is_null();
    device_call(function, device, outputs_ok, |d| {
        let pct = supported(read(d))?;
        // SAFETY: both pointers are non-null (checked) and, by the NVML contract, point to
        // writable unsigned ints.
        unsafe {
            utilization.write(pct);
            period_us.write(CODEC_SAMPLING_US);
        }
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetEncoderUtilization(
    device: nvmlDevice_t,
    utilization: *mut c_uint,
    sampling_period_us: *mut c_uint,
) -> nvmlReturn_t {
    codec(
        "nvmlDeviceGetEncoderUtilization",
        device,
        utilization,
        sampling_period_us,
        |d| d.gpu.encoder_util_pct,
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetDecoderUtilization(
    device: nvmlDevice_t,
    utilization: *mut c_uint,
    sampling_period_us: *mut c_uint,
) -> nvmlReturn_t {
    codec(
        "nvmlDeviceGetDecoderUtilization",
        device,
        utilization,
        sampling_period_us,
        |d| d.gpu.decoder_util_pct,
    )
}
