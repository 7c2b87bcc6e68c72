//! Clocks (current and maximum), throttle reasons, and PCIe (throughput in KB/s, link
//! generation and width). The graphics clock follows the SM clock, as the scenario defines;
//! the video clock is not simulated (`NOT_SUPPORTED`).

#![allow(non_snake_case)]

use std::ffi::c_uint;

use gpumeter_model::ThrottleReason;

use crate::abi::{
    CLOCK_GRAPHICS, CLOCK_MEM, CLOCK_SM, CLOCK_VIDEO, ERROR_INVALID_ARGUMENT, ERROR_NOT_SUPPORTED,
    PCIE_UTIL_RX_BYTES, PCIE_UTIL_TX_BYTES, nvmlDevice_t, nvmlReturn_t,
};
use crate::call::{device_out, supported};

/// Picks a clock by NVML clock type.
fn by_type(
    kind: c_uint,
    graphics: Option<u32>,
    sm: Option<u32>,
    memory: Option<u32>,
) -> Result<u32, nvmlReturn_t> {
    match kind {
        CLOCK_GRAPHICS => supported(graphics),
        CLOCK_SM => supported(sm),
        CLOCK_MEM => supported(memory),
        CLOCK_VIDEO => Err(ERROR_NOT_SUPPORTED),
        _ => Err(ERROR_INVALID_ARGUMENT),
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetClockInfo(
    device: nvmlDevice_t,
    clock_type: c_uint,
    clock: *mut c_uint,
) -> nvmlReturn_t {
    device_out("nvmlDeviceGetClockInfo", device, clock, |d| {
        let g = d.gpu;
        by_type(
            clock_type,
            g.clock_graphics_mhz,
            g.clock_sm_mhz,
            g.clock_memory_mhz,
        )
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMaxClockInfo(
    device: nvmlDevice_t,
    clock_type: c_uint,
    clock: *mut c_uint,
) -> nvmlReturn_t {
    device_out("nvmlDeviceGetMaxClockInfo", device, clock, |d| {
        let g = d.gpu;
        by_type(
            clock_type,
            g.clock_sm_max_mhz,
            g.clock_sm_max_mhz,
            g.clock_memory_max_mhz,
        )
    })
}

fn throttle(function: &'static str, device: nvmlDevice_t, reasons: *mut u64) -> nvmlReturn_t {
    device_out(function, device, reasons, |d| {
        let active = supported(d.gpu.throttle_reasons.as_deref())?;
        Ok(ThrottleReason::to_bits(active))
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetCurrentClocksThrottleReasons(
    device: nvmlDevice_t,
    reasons: *mut u64,
) -> nvmlReturn_t {
    throttle("nvmlDeviceGetCurrentClocksThrottleReasons", device, reasons)
}

/// The newer name of the same bitmask.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetCurrentClocksEventReasons(
    device: nvmlDevice_t,
    reasons: *mut u64,
) -> nvmlReturn_t {
    throttle("nvmlDeviceGetCurrentClocksEventReasons", device, reasons)
}

/// KB/s (1 KB = 1024 bytes) over the last 20 ms; answered at once (no sampling wait).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetPcieThroughput(
    device: nvmlDevice_t,
    counter: c_uint,
    value: *mut c_uint,
) -> nvmlReturn_t {
    device_out("nvmlDeviceGetPcieThroughput", device, value, |d| {
        let bytes = match counter {
            PCIE_UTIL_TX_BYTES => d.gpu.pcie_tx_bytes_per_s,
            PCIE_UTIL_RX_BYTES => d.gpu.pcie_rx_bytes_per_s,
            _ => return Err(ERROR_INVALID_ARGUMENT),
        };
        Ok(c_uint::try_from(supported(bytes)? / 1024).unwrap_or(c_uint::MAX))
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetCurrPcieLinkGeneration(
    device: nvmlDevice_t,
    generation: *mut c_uint,
) -> nvmlReturn_t {
    device_out(
        "nvmlDeviceGetCurrPcieLinkGeneration",
        device,
        generation,
        |d| supported(d.gpu.pcie_link_gen),
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetCurrPcieLinkWidth(
    device: nvmlDevice_t,
    width: *mut c_uint,
) -> nvmlReturn_t {
    device_out("nvmlDeviceGetCurrPcieLinkWidth", device, width, |d| {
        supported(d.gpu.pcie_link_width)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMaxPcieLinkGeneration(
    device: nvmlDevice_t,
    generation: *mut c_uint,
) -> nvmlReturn_t {
    device_out(
        "nvmlDeviceGetMaxPcieLinkGeneration",
        device,
        generation,
        |d| supported(d.gpu.pcie_link_gen_max),
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMaxPcieLinkWidth(
    device: nvmlDevice_t,
    width: *mut c_uint,
) -> nvmlReturn_t {
    device_out("nvmlDeviceGetMaxPcieLinkWidth", device, width, |d| {
        supported(d.gpu.pcie_link_width_max)
    })
}
