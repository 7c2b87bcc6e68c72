//! Device-less functions: init and shutdown (with the refcount), error strings, driver / CUDA /
//! NVML versions, process names, the device count and handles by index.

#![allow(non_snake_case)]

use std::ffi::{c_char, c_int, c_uint};

use crate::abi::{
    ERROR_INVALID_ARGUMENT, ERROR_NOT_FOUND, ERROR_UNKNOWN, error_string, nvmlDevice_t,
    nvmlReturn_t,
};
use crate::call::{copy_c_string, guarded, handle_for, supported, system_call, system_out};
use crate::state::{self, World};

/// Initialises: loads the scenario on the very first call (a problem is printed as one line
/// and answered `UNKNOWN`), applies a scripted init fault, then counts one more user.
fn init(function: &'static str) -> nvmlReturn_t {
    guarded(|| {
        let fault = {
            let mut st = state::lock()?;
            if !st.has_world() {
                let world = crate::load::world_from_env().map_err(|problem| {
                    eprintln!("fake-nvml: {problem}");
                    ERROR_UNKNOWN
                })?;
                st.set_world(world);
            }
            st.fault(None, function)
        };
        state::suffer(fault)?;
        state::lock()?.add_init();
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlInit_v2() -> nvmlReturn_t {
    init("nvmlInit_v2")
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlInit() -> nvmlReturn_t {
    init("nvmlInit")
}

/// Flags (`NO_GPUS`, `NO_ATTACH`) change nothing for a simulated machine.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlInitWithFlags(_flags: c_uint) -> nvmlReturn_t {
    init("nvmlInitWithFlags")
}

/// One user fewer; the scenario stays loaded (a later init goes on with the same clock).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlShutdown() -> nvmlReturn_t {
    guarded(|| {
        let fault = {
            let mut st = state::lock()?;
            st.world()?;
            st.fault(None, "nvmlShutdown")
        };
        state::suffer(fault)?;
        state::lock()?.release_init()?;
        // An event wait in another thread ends on it (`UNINITIALIZED`), as it would in a driver.
        state::wake_waiters();
        Ok(())
    })
}

/// Static text for a return code; valid without init.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlErrorString(result: nvmlReturn_t) -> *const c_char {
    error_string(result).as_ptr()
}

/// A string-returning system function.
fn system_string(
    function: &'static str,
    buf: *mut c_char,
    length: c_uint,
    read: impl FnOnce(&mut World) -> Result<String, nvmlReturn_t>,
) -> nvmlReturn_t {
    system_call(function, !buf.is_null(), |w| {
        let text = read(w)?;
        // SAFETY: `buf` is non-null (checked) and, by the NVML contract, valid for `length`
        // bytes.
        unsafe { copy_c_string(buf, length, &text) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlSystemGetDriverVersion(
    version: *mut c_char,
    length: c_uint,
) -> nvmlReturn_t {
    system_string("nvmlSystemGetDriverVersion", version, length, |w| {
        supported(w.sim().scenario().driver_version.clone())
    })
}

/// `<CUDA major>.<driver version>`, the shape real NVML reports (`12.550.90.07`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlSystemGetNVMLVersion(
    version: *mut c_char,
    length: c_uint,
) -> nvmlReturn_t {
    system_string("nvmlSystemGetNVMLVersion", version, length, |w| {
        let s = w.sim().scenario();
        let driver = supported(s.driver_version.clone())?;
        Ok(
            match s.cuda_driver_version.as_deref().and_then(cuda_number) {
                Some(cuda) => format!("{}.{driver}", cuda / 1000),
                None => driver,
            },
        )
    })
}

/// `"12.4"` → 12040 (major × 1000 + minor × 10), NVML's encoding.
fn cuda_number(text: &str) -> Option<c_int> {
    let (major, minor) = text.trim().split_once('.').unwrap_or((text.trim(), "0"));
    let major: c_int = major.parse().ok()?;
    let minor: c_int = minor.parse().ok()?;
    major.checked_mul(1000)?.checked_add(minor.checked_mul(10)?)
}

fn cuda_version(function: &'static str, out: *mut c_int) -> nvmlReturn_t {
    system_out(function, out, |w| {
        let text = w.sim().scenario().cuda_driver_version.as_deref();
        supported(text.and_then(cuda_number))
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlSystemGetCudaDriverVersion(version: *mut c_int) -> nvmlReturn_t {
    cuda_version("nvmlSystemGetCudaDriverVersion", version)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlSystemGetCudaDriverVersion_v2(version: *mut c_int) -> nvmlReturn_t {
    cuda_version("nvmlSystemGetCudaDriverVersion_v2", version)
}

/// The scenario's process name, raw (hostile names included: they are test data).
/// `NOT_FOUND` for a pid the scenario does not run now, or one it gives no name.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlSystemGetProcessName(
    pid: c_uint,
    name: *mut c_char,
    length: c_uint,
) -> nvmlReturn_t {
    system_string("nvmlSystemGetProcessName", name, length, |w| {
        w.truth()
            .processes
            .iter()
            .find(|p| p.driver_pid() == pid)
            .and_then(|p| p.name.as_deref().map(str::to_string))
            .ok_or(ERROR_NOT_FOUND)
    })
}

fn device_count(function: &'static str, out: *mut c_uint) -> nvmlReturn_t {
    system_out(function, out, |w| Ok(w.gpu_count()))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetCount_v2(count: *mut c_uint) -> nvmlReturn_t {
    device_count("nvmlDeviceGetCount_v2", count)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetCount(count: *mut c_uint) -> nvmlReturn_t {
    device_count("nvmlDeviceGetCount", count)
}

/// A handle names a device: its faults are that device's (`gpu = index`).
fn handle_by_index(function: &'static str, index: c_uint, out: *mut nvmlDevice_t) -> nvmlReturn_t {
    guarded(|| {
        let fault = {
            let mut st = state::lock()?;
            let count = st.world()?.gpu_count();
            if index >= count || out.is_null() {
                return Err(ERROR_INVALID_ARGUMENT);
            }
            st.fault(Some(index), function)
        };
        state::suffer(fault)?;
        // SAFETY: `out` is non-null (checked) and, by the NVML contract, points to a writable
        // `nvmlDevice_t`.
        unsafe { out.write(handle_for(index)) };
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetHandleByIndex_v2(
    index: c_uint,
    device: *mut nvmlDevice_t,
) -> nvmlReturn_t {
    handle_by_index("nvmlDeviceGetHandleByIndex_v2", index, device)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetHandleByIndex(
    index: c_uint,
    device: *mut nvmlDevice_t,
) -> nvmlReturn_t {
    handle_by_index("nvmlDeviceGetHandleByIndex", index, device)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuda_versions_encode_like_nvml() {
        assert_eq!(cuda_number("12.4"), Some(12040));
        assert_eq!(cuda_number("11.8"), Some(11080));
        assert_eq!(cuda_number("13"), Some(13000));
        assert_eq!(cuda_number("x.y"), None);
    }
}
