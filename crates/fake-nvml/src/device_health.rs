//! A device's health and setup, as a pre-flight check asks for them: persistence and compute
//! mode, ECC mode and error counts, retired pages, row remapping, the infoROM. Answered from
//! the scenario's `health` keys of the device's `[[gpu]]` entry (defaults: a healthy board).

#![allow(non_snake_case)]

use std::ffi::{c_char, c_uint};

use gpumeter_sim::GpuHealthSpec;

use crate::abi::{
    ECC_KINDS, ERROR_CORRUPTED_INFOROM, ERROR_INSUFFICIENT_SIZE, ERROR_INVALID_ARGUMENT,
    ERROR_UNKNOWN, RETIRED_DBE, RETIRED_SBE, nvmlDevice_t, nvmlReturn_t,
};
use crate::call::{Device, copy_c_string, device_call, device_out};

/// The health keys of the device's `[[gpu]]` entry.
pub(crate) fn health<'a>(d: &'a Device<'_>) -> Result<&'a GpuHealthSpec, nvmlReturn_t> {
    d.world
        .sim()
        .gpu_spec(d.index)
        .map(|spec| &spec.health)
        .ok_or(ERROR_UNKNOWN)
}

/// Writes two enable states (`NVML_FEATURE_ENABLED` = 1).
///
/// # Safety
/// Both pointers are non-null and writable.
unsafe fn write_pair(a: *mut c_uint, b: *mut c_uint, va: bool, vb: bool) {
    // SAFETY: as the caller promises.
    unsafe {
        a.write(c_uint::from(va));
        b.write(c_uint::from(vb));
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetPersistenceMode(
    device: nvmlDevice_t,
    mode: *mut c_uint,
) -> nvmlReturn_t {
    device_out("nvmlDeviceGetPersistenceMode", device, mode, |d| {
        Ok(c_uint::from(health(d)?.persistence))
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetComputeMode(
    device: nvmlDevice_t,
    mode: *mut c_uint,
) -> nvmlReturn_t {
    device_out("nvmlDeviceGetComputeMode", device, mode, |d| {
        Ok(health(d)?.compute_mode.nvml_code())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetEccMode(
    device: nvmlDevice_t,
    current: *mut c_uint,
    pending: *mut c_uint,
) -> nvmlReturn_t {
    let outputs_ok = !current.is_null() && !pending.is_null();
    device_call("nvmlDeviceGetEccMode", device, outputs_ok, |d| {
        let h = health(d)?;
        // SAFETY: both pointers are non-null (checked) and, by the NVML contract, writable.
        unsafe {
            write_pair(
                current,
                pending,
                h.ecc_enabled,
                h.ecc_pending.unwrap_or(h.ecc_enabled),
            );
        }
        Ok(())
    })
}

/// Error type 0 corrected / 1 uncorrected, counter 0 volatile / 1 aggregate (corrected ones
/// are never cleared in the simulation: aggregate = volatile). Anything else is
/// `INVALID_ARGUMENT`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetTotalEccErrors(
    device: nvmlDevice_t,
    error_type: c_uint,
    counter_type: c_uint,
    count: *mut u64,
) -> nvmlReturn_t {
    device_out("nvmlDeviceGetTotalEccErrors", device, count, |d| {
        if error_type >= ECC_KINDS || counter_type >= ECC_KINDS {
            return Err(ERROR_INVALID_ARGUMENT);
        }
        let h = health(d)?;
        Ok(match (error_type, counter_type) {
            (0, _) => h.ecc_corrected_volatile,
            (_, 0) => h.ecc_uncorrected_volatile,
            _ => h.ecc_uncorrected_aggregate.max(h.ecc_uncorrected_volatile),
        })
    })
}

/// Retired pages of one cause: how many (as nvml-wrapper first asks, with a count of 0), or
/// their addresses and, for `_v2`, timestamps.
fn retired(
    function: &'static str,
    device: nvmlDevice_t,
    cause: c_uint,
    count: *mut c_uint,
    addresses: *mut u64,
    timestamps: *mut u64,
) -> nvmlReturn_t {
    device_call(function, device, !count.is_null(), |d| {
        let h = health(d)?;
        let have = match cause {
            RETIRED_SBE => h.retired_pages_sbe,
            RETIRED_DBE => h.retired_pages_dbe,
            _ => return Err(ERROR_INVALID_ARGUMENT),
        };
        // SAFETY: `count` is non-null (checked) and, by the NVML contract, readable and writable.
        let room = unsafe { count.read() };
        // SAFETY: as above.
        unsafe { count.write(have) };
        if room < have {
            return Err(ERROR_INSUFFICIENT_SIZE);
        }
        if have > 0 && addresses.is_null() {
            return Err(ERROR_INVALID_ARGUMENT);
        }
        for k in 0..have {
            let i = usize::try_from(k).map_err(|_| ERROR_UNKNOWN)?;
            // SAFETY: the caller's arrays hold `room` ≥ `have` entries (NVML contract);
            // `timestamps` is only written when non-null.
            unsafe {
                addresses
                    .add(i)
                    .write(0x1_0000_0000 + u64::from(cause) * 0x100_0000 + u64::from(k) * 0x1000);
                if !timestamps.is_null() {
                    timestamps.add(i).write(1_700_000_000 + u64::from(k));
                }
            }
        }
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetRetiredPages(
    device: nvmlDevice_t,
    cause: c_uint,
    count: *mut c_uint,
    addresses: *mut u64,
) -> nvmlReturn_t {
    retired(
        "nvmlDeviceGetRetiredPages",
        device,
        cause,
        count,
        addresses,
        std::ptr::null_mut(),
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetRetiredPages_v2(
    device: nvmlDevice_t,
    cause: c_uint,
    count: *mut c_uint,
    addresses: *mut u64,
    timestamps: *mut u64,
) -> nvmlReturn_t {
    retired(
        "nvmlDeviceGetRetiredPages_v2",
        device,
        cause,
        count,
        addresses,
        timestamps,
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetRetiredPagesPendingStatus(
    device: nvmlDevice_t,
    pending: *mut c_uint,
) -> nvmlReturn_t {
    device_out(
        "nvmlDeviceGetRetiredPagesPendingStatus",
        device,
        pending,
        |d| Ok(c_uint::from(health(d)?.retired_pending)),
    )
}

/// Rows remapped for correctable / uncorrectable errors, a remap pending (needs a GPU reset),
/// a remap that failed (the board should be replaced).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetRemappedRows(
    device: nvmlDevice_t,
    corr_rows: *mut c_uint,
    unc_rows: *mut c_uint,
    is_pending: *mut c_uint,
    failure_occurred: *mut c_uint,
) -> nvmlReturn_t {
    let outputs_ok = !corr_rows.is_null()
        && !unc_rows.is_null()
        && !is_pending.is_null()
        && !failure_occurred.is_null();
    device_call("nvmlDeviceGetRemappedRows", device, outputs_ok, |d| {
        let h = health(d)?;
        // SAFETY: all four pointers are non-null (checked) and, by the NVML contract, writable.
        unsafe {
            corr_rows.write(h.remapped_correctable);
            unc_rows.write(h.remapped_uncorrectable);
            write_pair(
                is_pending,
                failure_occurred,
                h.remap_pending,
                h.remap_failure,
            );
        }
        Ok(())
    })
}

/// `SUCCESS` for a valid infoROM, `CORRUPTED_INFOROM` otherwise.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceValidateInforom(device: nvmlDevice_t) -> nvmlReturn_t {
    device_call("nvmlDeviceValidateInforom", device, true, |d| {
        if health(d)?.inforom_valid {
            Ok(())
        } else {
            Err(ERROR_CORRUPTED_INFOROM)
        }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetInforomImageVersion(
    device: nvmlDevice_t,
    version: *mut c_char,
    length: c_uint,
) -> nvmlReturn_t {
    device_call(
        "nvmlDeviceGetInforomImageVersion",
        device,
        !version.is_null(),
        |d| {
            let text = health(d)?.inforom_version.clone();
            // SAFETY: `version` is non-null (checked) and, by the NVML contract, valid for
            // `length` bytes.
            unsafe { copy_c_string(version, length, &text) }
        },
    )
}
