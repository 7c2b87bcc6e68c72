//! Power, energy, temperature, fans and performance state. Units as NVML reports them:
//! milliwatts, millijoules (a counter that only grows), °C, percent.

#![allow(non_snake_case)]

use std::ffi::c_uint;

use crate::abi::{
    ERROR_INVALID_ARGUMENT, ERROR_NOT_SUPPORTED, TEMPERATURE_GPU, TEMPERATURE_THRESHOLD_SHUTDOWN,
    TEMPERATURE_THRESHOLD_SLOWDOWN, nvmlDevice_t, nvmlReturn_t,
};
use crate::call::{device_out, supported};

/// Temperatures at which a data-center board slows down and shuts down (°C); the scenario
/// does not model them, so every board reports these.
const SLOWDOWN_C: c_uint = 89;
const SHUTDOWN_C: c_uint = 92;

/// Watts (the scenario keeps three decimals) to NVML's milliwatts.
fn milliwatts(watts: f64) -> c_uint {
    let mw = (watts * 1000.0).round();
    if mw <= 0.0 {
        0
    } else if mw >= f64::from(c_uint::MAX) {
        c_uint::MAX
    } else {
        mw as c_uint
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetPowerUsage(
    device: nvmlDevice_t,
    power: *mut c_uint,
) -> nvmlReturn_t {
    device_out("nvmlDeviceGetPowerUsage", device, power, |d| {
        supported(d.gpu.power_watts).map(milliwatts)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetEnforcedPowerLimit(
    device: nvmlDevice_t,
    limit: *mut c_uint,
) -> nvmlReturn_t {
    device_out("nvmlDeviceGetEnforcedPowerLimit", device, limit, |d| {
        supported(d.gpu.power_limit_watts).map(milliwatts)
    })
}

/// The management limit equals the enforced one (no separate cap in the scenario).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetPowerManagementLimit(
    device: nvmlDevice_t,
    limit: *mut c_uint,
) -> nvmlReturn_t {
    device_out("nvmlDeviceGetPowerManagementLimit", device, limit, |d| {
        supported(d.gpu.power_limit_watts).map(milliwatts)
    })
}

/// The board's default limit: the scenario's `power_default_watts`, else its limit.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetPowerManagementDefaultLimit(
    device: nvmlDevice_t,
    limit: *mut c_uint,
) -> nvmlReturn_t {
    device_out(
        "nvmlDeviceGetPowerManagementDefaultLimit",
        device,
        limit,
        |d| supported(d.gpu.power_default_limit_watts).map(milliwatts),
    )
}

/// Millijoules since the (simulated) driver loaded; never lower than a previous answer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetTotalEnergyConsumption(
    device: nvmlDevice_t,
    energy: *mut u64,
) -> nvmlReturn_t {
    device_out("nvmlDeviceGetTotalEnergyConsumption", device, energy, |d| {
        let mj = supported(d.gpu.energy_millijoules)?;
        Ok(d.world.energy(d.index, mj))
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetTemperature(
    device: nvmlDevice_t,
    sensor: c_uint,
    temp: *mut c_uint,
) -> nvmlReturn_t {
    device_out("nvmlDeviceGetTemperature", device, temp, |d| {
        if sensor != TEMPERATURE_GPU {
            return Err(ERROR_INVALID_ARGUMENT);
        }
        supported(d.gpu.temperature_celsius)
    })
}

/// Shutdown and slowdown thresholds where the board reports a temperature at all.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetTemperatureThreshold(
    device: nvmlDevice_t,
    threshold: c_uint,
    temp: *mut c_uint,
) -> nvmlReturn_t {
    device_out("nvmlDeviceGetTemperatureThreshold", device, temp, |d| {
        supported(d.gpu.temperature_celsius)?;
        match threshold {
            TEMPERATURE_THRESHOLD_SHUTDOWN => Ok(SHUTDOWN_C),
            TEMPERATURE_THRESHOLD_SLOWDOWN => Ok(SLOWDOWN_C),
            _ => Err(ERROR_NOT_SUPPORTED),
        }
    })
}

/// One fan when the scenario gives a fan speed, none otherwise (SXM boards).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetNumFans(
    device: nvmlDevice_t,
    fans: *mut c_uint,
) -> nvmlReturn_t {
    device_out("nvmlDeviceGetNumFans", device, fans, |d| {
        Ok(c_uint::from(d.gpu.fan_speed_pct.is_some()))
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetFanSpeed(
    device: nvmlDevice_t,
    speed: *mut c_uint,
) -> nvmlReturn_t {
    device_out("nvmlDeviceGetFanSpeed", device, speed, |d| {
        supported(d.gpu.fan_speed_pct)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetFanSpeed_v2(
    device: nvmlDevice_t,
    fan: c_uint,
    speed: *mut c_uint,
) -> nvmlReturn_t {
    device_out("nvmlDeviceGetFanSpeed_v2", device, speed, |d| {
        let pct = supported(d.gpu.fan_speed_pct)?;
        if fan != 0 {
            return Err(ERROR_INVALID_ARGUMENT);
        }
        Ok(pct)
    })
}

/// P0 while kernels run, P8 when idle (what boards do at rest).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetPerformanceState(
    device: nvmlDevice_t,
    state: *mut c_uint,
) -> nvmlReturn_t {
    device_out("nvmlDeviceGetPerformanceState", device, state, |d| {
        Ok(match d.gpu.util_gpu_pct {
            Some(0) => 8,
            _ => 0,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watts_become_exact_milliwatts() {
        assert_eq!(milliwatts(612.345), 612_345);
        assert_eq!(milliwatts(700.0), 700_000);
        assert_eq!(milliwatts(-1.0), 0);
        assert_eq!(milliwatts(1e12), c_uint::MAX);
    }
}
