//! Who a device is: name, UUID, PCI info, index, minor number, CUDA compute capability, MIG
//! mode, and the display modes nvidia-ml-py clients (nvitop, gpustat) show (no display). The
//! health and setup a pre-flight asks for (persistence, compute mode, ECC) are in
//! `device_health`.

#![allow(non_snake_case)]

use std::ffi::{c_char, c_int, c_uint};

use crate::abi::{
    ERROR_INVALID_ARGUMENT, ERROR_NOT_FOUND, ERROR_NOT_SUPPORTED, nvmlDevice_t, nvmlPciInfo_t,
    nvmlReturn_t,
};
use crate::call::{
    Device, copy_c_string, device_call, device_out, handle_for, mig_handle_for, mig_of, supported,
};

/// A string-returning device function.
fn device_string(
    function: &'static str,
    handle: nvmlDevice_t,
    buf: *mut c_char,
    length: c_uint,
    read: impl FnOnce(&Device<'_>) -> Result<String, nvmlReturn_t>,
) -> nvmlReturn_t {
    device_call(function, handle, !buf.is_null(), |d| {
        let text = read(d)?;
        // SAFETY: `buf` is non-null (checked) and, by the NVML contract, valid for `length`
        // bytes.
        unsafe { copy_c_string(buf, length, &text) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetName(
    device: nvmlDevice_t,
    name: *mut c_char,
    length: c_uint,
) -> nvmlReturn_t {
    device_string("nvmlDeviceGetName", device, name, length, |d| {
        supported(d.gpu.name.as_deref().map(str::to_string))
    })
}

/// A whole board's UUID, or a MIG device's (asked through its parent: a fault on the parent
/// reaches its slices too, as a lost board takes them with it).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetUUID(
    device: nvmlDevice_t,
    uuid: *mut c_char,
    length: c_uint,
) -> nvmlReturn_t {
    if let Some((parent, k)) = mig_of(device) {
        return device_string("nvmlDeviceGetUUID", handle_for(parent), uuid, length, |d| {
            let slot = usize::try_from(k).map_err(|_| ERROR_INVALID_ARGUMENT)?;
            d.gpu
                .mig_uuids
                .get(slot)
                .map(|u| u.to_string())
                .ok_or(ERROR_INVALID_ARGUMENT)
        });
    }
    device_string("nvmlDeviceGetUUID", device, uuid, length, |d| {
        supported(d.gpu.uuid.as_deref().map(str::to_string))
    })
}

/// How many MIG devices the board can hold, with MIG on (`NOT_SUPPORTED` otherwise); the
/// slots not in use answer `NOT_FOUND` below.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMaxMigDeviceCount(
    device: nvmlDevice_t,
    count: *mut c_uint,
) -> nvmlReturn_t {
    device_out(
        "nvmlDeviceGetMaxMigDeviceCount",
        device,
        count,
        |d| match d.gpu.mig_enabled {
            Some(true) => Ok(gpumeter_sim::MAX_MIG_DEVICES),
            _ => Err(ERROR_NOT_SUPPORTED),
        },
    )
}

/// MIG device `index` of the board: its handle, or `NOT_FOUND` for a slot no slice is in.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMigDeviceHandleByIndex(
    device: nvmlDevice_t,
    index: c_uint,
    mig_device: *mut nvmlDevice_t,
) -> nvmlReturn_t {
    device_out(
        "nvmlDeviceGetMigDeviceHandleByIndex",
        device,
        mig_device,
        |d| {
            if d.gpu.mig_enabled != Some(true) {
                return Err(ERROR_NOT_SUPPORTED);
            }
            if index >= gpumeter_sim::MAX_MIG_DEVICES {
                return Err(ERROR_INVALID_ARGUMENT);
            }
            let used = u32::try_from(d.gpu.mig_uuids.len()).unwrap_or(u32::MAX);
            if index >= used {
                return Err(ERROR_NOT_FOUND);
            }
            Ok(mig_handle_for(d.index, index))
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetPciInfo_v3(
    device: nvmlDevice_t,
    pci: *mut nvmlPciInfo_t,
) -> nvmlReturn_t {
    device_out("nvmlDeviceGetPciInfo_v3", device, pci, |d| {
        let bus_id = supported(d.gpu.pci_bus_id.as_deref())?;
        Ok(pci_info(bus_id, d.gpu.name.as_deref().unwrap_or("")))
    })
}

/// The struct for a bus id such as `00000000:18:00.0`.
pub(crate) fn pci_info(bus_id: &str, name: &str) -> nvmlPciInfo_t {
    let mut parts = bus_id.split([':', '.']);
    let mut hex = || {
        parts
            .next()
            .and_then(|p| u32::from_str_radix(p, 16).ok())
            .unwrap_or(0)
    };
    let (domain, bus, device) = (hex(), hex(), hex());
    let mut info = nvmlPciInfo_t {
        busIdLegacy: [0; 16],
        domain,
        bus,
        device,
        pciDeviceId: (device_id(name) << 16) | 0x10DE,
        pciSubSystemId: 0x16C1_10DE,
        busId: [0; 32],
    };
    fill(&mut info.busId, bus_id);
    fill(
        &mut info.busIdLegacy,
        &format!("{:04X}:{bus:02X}:{device:02X}.0", domain & 0xFFFF),
    );
    info
}

/// Copies `text` into a fixed char array, always leaving a NUL.
fn fill(dst: &mut [u8], text: &str) {
    let room = dst.len().saturating_sub(1);
    for (d, s) in dst.iter_mut().zip(text.bytes().take(room)) {
        *d = s;
    }
}

/// A plausible PCI device id for the board's name (cosmetic).
fn device_id(name: &str) -> u32 {
    const IDS: &[(&str, u32)] = &[
        ("H200", 0x2335),
        ("H100", 0x2330),
        ("A100", 0x20B2),
        ("A10", 0x2236),
        ("L40", 0x26B5),
        ("L4", 0x27B8),
        ("T4", 0x1EB8),
        ("V100", 0x1DB4),
    ];
    IDS.iter()
        .find(|(n, _)| name.contains(n))
        .map_or(0x2330, |(_, id)| *id)
}

/// Compute capability from the board's name (first match; H100 before A10 before …).
fn compute_capability(name: &str) -> (c_int, c_int) {
    const CAPS: &[(&str, (c_int, c_int))] = &[
        ("B200", (10, 0)),
        ("B100", (10, 0)),
        ("H200", (9, 0)),
        ("H100", (9, 0)),
        ("A100", (8, 0)),
        ("A30", (8, 0)),
        ("L40", (8, 9)),
        ("L4", (8, 9)),
        ("RTX 40", (8, 9)),
        ("A10", (8, 6)),
        ("A40", (8, 6)),
        ("RTX 30", (8, 6)),
        ("T4", (7, 5)),
        ("V100", (7, 0)),
    ];
    CAPS.iter()
        .find(|(n, _)| name.contains(n))
        .map_or((8, 0), |(_, cc)| *cc)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetIndex(
    device: nvmlDevice_t,
    index: *mut c_uint,
) -> nvmlReturn_t {
    device_out("nvmlDeviceGetIndex", device, index, |d| Ok(d.index))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMinorNumber(
    device: nvmlDevice_t,
    minor: *mut c_uint,
) -> nvmlReturn_t {
    device_out("nvmlDeviceGetMinorNumber", device, minor, |d| Ok(d.index))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetCudaComputeCapability(
    device: nvmlDevice_t,
    major: *mut c_int,
    minor: *mut c_int,
) -> nvmlReturn_t {
    let outputs_ok = !major.is_null() && !minor.is_null();
    device_call(
        "nvmlDeviceGetCudaComputeCapability",
        device,
        outputs_ok,
        |d| {
            let (ma, mi) = compute_capability(d.gpu.name.as_deref().unwrap_or(""));
            // SAFETY: both pointers are non-null (checked) and, by the NVML contract, point to
            // writable ints.
            unsafe {
                major.write(ma);
                minor.write(mi);
            }
            Ok(())
        },
    )
}

/// 1 for a MIG device's handle (from `nvmlDeviceGetMigDeviceHandleByIndex`), 0 for a board's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceIsMigDeviceHandle(
    device: nvmlDevice_t,
    is_mig: *mut c_uint,
) -> nvmlReturn_t {
    match mig_of(device) {
        Some((parent, k)) => device_out(
            "nvmlDeviceIsMigDeviceHandle",
            handle_for(parent),
            is_mig,
            |d| {
                let known = usize::try_from(k).is_ok_and(|k| k < d.gpu.mig_uuids.len());
                if known {
                    Ok(1)
                } else {
                    Err(ERROR_INVALID_ARGUMENT)
                }
            },
        ),
        None => device_out("nvmlDeviceIsMigDeviceHandle", device, is_mig, |_| Ok(0)),
    }
}

/// Current and pending MIG mode (`NVML_DEVICE_MIG_ENABLE` = 1); N/A when the scenario is silent.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMigMode(
    device: nvmlDevice_t,
    current: *mut c_uint,
    pending: *mut c_uint,
) -> nvmlReturn_t {
    let outputs_ok = !current.is_null() && !pending.is_null();
    device_call("nvmlDeviceGetMigMode", device, outputs_ok, |d| {
        let mode = c_uint::from(supported(d.gpu.mig_enabled)?);
        // SAFETY: both pointers are non-null (checked) and, by the NVML contract, point to
        // writable unsigned ints.
        unsafe {
            current.write(mode);
            pending.write(mode);
        }
        Ok(())
    })
}

/// `NVML_FEATURE_DISABLED`: no monitor attached.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetDisplayMode(
    device: nvmlDevice_t,
    mode: *mut c_uint,
) -> nvmlReturn_t {
    device_out("nvmlDeviceGetDisplayMode", device, mode, |_| Ok(0))
}

/// `NVML_FEATURE_DISABLED`: no display initialised.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetDisplayActive(
    device: nvmlDevice_t,
    active: *mut c_uint,
) -> nvmlReturn_t {
    device_out("nvmlDeviceGetDisplayActive", device, active, |_| Ok(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pci_info_parses_the_bus_id() {
        let info = pci_info("00000000:9A:00.0", "NVIDIA H100 80GB HBM3");
        assert_eq!((info.domain, info.bus, info.device), (0, 0x9A, 0));
        assert_eq!(&info.busId[..17], b"00000000:9A:00.0\0");
        assert_eq!(&info.busIdLegacy[..13], b"0000:9A:00.0\0");
        assert_eq!(info.pciDeviceId, 0x2330_10DE);
    }

    #[test]
    fn compute_capability_prefers_the_longer_name() {
        assert_eq!(compute_capability("NVIDIA A100 80GB PCIe"), (8, 0));
        assert_eq!(compute_capability("NVIDIA A10"), (8, 6));
        assert_eq!(compute_capability("NVIDIA H100 80GB HBM3"), (9, 0));
        assert_eq!(compute_capability("Mystery"), (8, 0));
    }
}
