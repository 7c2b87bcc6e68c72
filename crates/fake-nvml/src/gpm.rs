//! GPM (GPU Performance Monitoring, Hopper and newer): device support, samples, and metrics
//! between two samples, with the real struct layouts and versions. A device supports GPM when
//! its scenario entry has a `gpm` table; a metric is the scenario's value at the later sample's
//! time (the simulation holds it steady between two samples). Metrics the scenario does not
//! model answer `NOT_SUPPORTED` in their own entry.

#![allow(non_snake_case)]

use std::ffi::c_uint;

use crate::abi::{
    ERROR_ARGUMENT_VERSION_MISMATCH, ERROR_INVALID_ARGUMENT, ERROR_NOT_SUPPORTED, ERROR_UNKNOWN,
    GPM_METRIC_DRAM_BW_UTIL, GPM_METRIC_MAX, GPM_METRIC_SM_OCCUPANCY, GPM_METRIC_SM_UTIL,
    GPM_METRIC_TENSOR_UTIL, GPM_METRICS_GET_VERSION, GPM_SUPPORT_VERSION, SUCCESS, nvmlDevice_t,
    nvmlGpmMetricsGet_t, nvmlGpmSample_t, nvmlGpmSupport_t, nvmlReturn_t,
};
use crate::call::{device_call, system_call};

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlGpmQueryDeviceSupport(
    device: nvmlDevice_t,
    support: *mut nvmlGpmSupport_t,
) -> nvmlReturn_t {
    device_call(
        "nvmlGpmQueryDeviceSupport",
        device,
        !support.is_null(),
        |d| {
            // SAFETY: `support` is non-null (checked) and, by the NVML contract, points to a
            // struct whose version the caller set.
            let version = unsafe { (*support).version };
            if version != GPM_SUPPORT_VERSION {
                return Err(ERROR_ARGUMENT_VERSION_MISMATCH);
            }
            let supported = d
                .world
                .sim()
                .gpu_spec(d.index)
                .is_some_and(|s| s.gpm.is_some());
            // SAFETY: as above, writable for the duration of the call.
            unsafe { (*support).isSupportedDevice = c_uint::from(supported) };
            Ok(())
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlGpmSampleAlloc(sample: *mut nvmlGpmSample_t) -> nvmlReturn_t {
    system_call("nvmlGpmSampleAlloc", !sample.is_null(), |w| {
        let handle = w.objects.alloc_sample();
        // SAFETY: `sample` is non-null (checked) and, by the NVML contract, writable.
        unsafe { sample.write(handle) };
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlGpmSampleFree(sample: nvmlGpmSample_t) -> nvmlReturn_t {
    system_call("nvmlGpmSampleFree", true, |w| {
        w.objects
            .free_sample(sample)
            .then_some(())
            .ok_or(ERROR_INVALID_ARGUMENT)
    })
}

/// Records which device and when; a device without GPM is `NOT_SUPPORTED`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlGpmSampleGet(
    device: nvmlDevice_t,
    sample: nvmlGpmSample_t,
) -> nvmlReturn_t {
    device_call("nvmlGpmSampleGet", device, true, |d| {
        if d.world
            .sim()
            .gpu_spec(d.index)
            .is_none_or(|s| s.gpm.is_none())
        {
            return Err(ERROR_NOT_SUPPORTED);
        }
        let at = d.world.elapsed_ms();
        d.world
            .objects
            .fill_sample(sample, d.index, at)
            .then_some(())
            .ok_or(ERROR_INVALID_ARGUMENT)
    })
}

/// Fills the first `numMetrics` entries (never more) from the later sample's instant.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlGpmMetricsGet(request: *mut nvmlGpmMetricsGet_t) -> nvmlReturn_t {
    system_call("nvmlGpmMetricsGet", !request.is_null(), |w| {
        // SAFETY: `request` is non-null (checked) and, by the NVML contract, points to a whole
        // `nvmlGpmMetricsGet_t` the caller owns for the duration of the call.
        let req = unsafe { &mut *request };
        if req.version != GPM_METRICS_GET_VERSION {
            return Err(ERROR_ARGUMENT_VERSION_MISMATCH);
        }
        let n = usize::try_from(req.numMetrics).map_err(|_| ERROR_INVALID_ARGUMENT)?;
        if n > GPM_METRIC_MAX {
            return Err(ERROR_INVALID_ARGUMENT);
        }
        let (Some((gpu1, t1)), Some((gpu2, t2))) =
            (w.objects.sample(req.sample1), w.objects.sample(req.sample2))
        else {
            return Err(ERROR_INVALID_ARGUMENT);
        };
        if gpu1 != gpu2 {
            return Err(ERROR_INVALID_ARGUMENT);
        }
        let later = t1.max(t2);
        let unix_ms = i64::try_from(w.timestamp_us() / 1_000).unwrap_or(i64::MAX);
        let truth = w.sim_at(later, unix_ms);
        let gpu = usize::try_from(gpu1)
            .ok()
            .and_then(|i| truth.gpus.get(i))
            .ok_or(ERROR_UNKNOWN)?;
        for m in req.metrics.iter_mut().take(n) {
            let value = match m.metricId {
                GPM_METRIC_SM_UTIL => gpu.sm_active_pct,
                GPM_METRIC_SM_OCCUPANCY => gpu.sm_occupancy_pct,
                GPM_METRIC_TENSOR_UTIL => gpu.tensor_active_pct,
                GPM_METRIC_DRAM_BW_UTIL => gpu.dram_active_pct,
                _ => None,
            };
            m.nvmlReturn = if value.is_some() {
                SUCCESS
            } else {
                ERROR_NOT_SUPPORTED
            };
            m.value = value.unwrap_or(0.0);
            // No names: NULL pointers read as empty strings.
            m.metricInfo.shortName = std::ptr::null_mut();
            m.metricInfo.longName = std::ptr::null_mut();
            m.metricInfo.unit = std::ptr::null_mut();
        }
        Ok(())
    })
}
