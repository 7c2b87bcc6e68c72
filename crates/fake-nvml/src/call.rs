//! How every exported function runs: inside `catch_unwind` (a panic never crosses the C
//! boundary; it reads as `UNKNOWN`), with the state checks in NVML's order (initialised, a
//! valid handle, non-NULL outputs), then the scripted fault for this symbol (latency slept
//! with the lock released), then the answer computed from the scenario's truth under the lock.
//! Also: device handles, and copying strings into caller buffers.

use std::ffi::{c_char, c_uint};
use std::panic::{AssertUnwindSafe, catch_unwind};

use gpumeter_model::{GpuReading, Snapshot};

use crate::abi::{
    ERROR_INSUFFICIENT_SIZE, ERROR_NOT_SUPPORTED, ERROR_UNKNOWN, SUCCESS, nvmlDevice_t,
    nvmlReturn_t,
};
use crate::state::{self, World};

/// An answer in progress: `Err(code)` ends the call with that return code.
pub(crate) type Answer = Result<(), nvmlReturn_t>;

/// Handles are addresses in a range nothing is mapped at, never dereferenced: base + (index+1)
/// × stride. Non-null, aligned, and a stray pointer is very unlikely to decode.
const HANDLE_BASE: usize = 0x4e56_4d4c_0000;
const HANDLE_STRIDE: usize = 0x100;

/// The handle of device `index`.
pub(crate) fn handle_for(index: u32) -> nvmlDevice_t {
    let slot = usize::try_from(index)
        .unwrap_or(usize::MAX)
        .saturating_add(1);
    std::ptr::without_provenance_mut(HANDLE_BASE.saturating_add(slot.saturating_mul(HANDLE_STRIDE)))
}

/// A MIG device's handle lies inside its parent's stride: parent + (k + 1) × this.
const MIG_STRIDE: usize = 0x10;

/// The handle of MIG device `k` (0-based, below 15) of device `parent`.
pub(crate) fn mig_handle_for(parent: u32, k: u32) -> nvmlDevice_t {
    let k = usize::try_from(k).unwrap_or(usize::MAX).saturating_add(1);
    std::ptr::without_provenance_mut(
        handle_for(parent)
            .addr()
            .saturating_add(k.saturating_mul(MIG_STRIDE)),
    )
}

/// The parent device and slot a MIG handle encodes; `None` for a whole device's handle or a
/// stranger.
pub(crate) fn mig_of(handle: nvmlDevice_t) -> Option<(u32, u32)> {
    let offset = handle.addr().checked_sub(HANDLE_BASE)?;
    let within = offset % HANDLE_STRIDE;
    if within == 0 || !within.is_multiple_of(MIG_STRIDE) {
        return None;
    }
    let parent = u32::try_from((offset / HANDLE_STRIDE).checked_sub(1)?).ok()?;
    Some((parent, u32::try_from(within / MIG_STRIDE - 1).ok()?))
}

/// The index a handle encodes, if it is one of ours (the count is checked by the caller).
pub(crate) fn index_of(handle: nvmlDevice_t) -> Option<u32> {
    let offset = handle.addr().checked_sub(HANDLE_BASE)?;
    if offset % HANDLE_STRIDE != 0 {
        return None;
    }
    u32::try_from((offset / HANDLE_STRIDE).checked_sub(1)?).ok()
}

/// Runs `body` so that no panic unwinds into C.
pub(crate) fn guarded(body: impl FnOnce() -> Answer) -> nvmlReturn_t {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => SUCCESS,
        Ok(Err(code)) => code,
        Err(_) => ERROR_UNKNOWN,
    }
}

/// One device's view for one call.
pub(crate) struct Device<'a> {
    pub(crate) index: u32,
    pub(crate) gpu: &'a GpuReading,
    pub(crate) truth: &'a Snapshot,
    pub(crate) world: &'a mut World,
}

/// A device function: checks, fault, then `answer` with the device's truth.
/// `outputs_ok` is false when a required output pointer is NULL.
pub(crate) fn device_call(
    function: &'static str,
    handle: nvmlDevice_t,
    outputs_ok: bool,
    answer: impl FnOnce(&mut Device<'_>) -> Answer,
) -> nvmlReturn_t {
    guarded(|| {
        let (index, fault) = {
            let mut st = state::lock()?;
            let index = st.device_index(handle)?;
            if !outputs_ok {
                return Err(crate::abi::ERROR_INVALID_ARGUMENT);
            }
            (index, st.fault(Some(index), function))
        };
        state::suffer(fault)?;
        let mut st = state::lock()?;
        // Initialised again: a shutdown may have come while this call slept.
        let world = st.world()?;
        let truth = world.truth();
        let gpu = usize::try_from(index)
            .ok()
            .and_then(|i| truth.gpus.get(i))
            .ok_or(ERROR_UNKNOWN)?;
        answer(&mut Device {
            index,
            gpu,
            truth: &truth,
            world,
        })
    })
}

/// A device function with one output: writes what `read` returns.
pub(crate) fn device_out<T>(
    function: &'static str,
    handle: nvmlDevice_t,
    out: *mut T,
    read: impl FnOnce(&mut Device<'_>) -> Result<T, nvmlReturn_t>,
) -> nvmlReturn_t {
    device_call(function, handle, !out.is_null(), |d| {
        let value = read(d)?;
        // SAFETY: `out` is non-null (checked above) and, by the NVML contract, points to a
        // writable, aligned `T` owned by the caller for the duration of the call.
        unsafe { out.write(value) };
        Ok(())
    })
}

/// A device-less function: initialised NVML, fault (device `None`), then `answer`.
pub(crate) fn system_call(
    function: &'static str,
    outputs_ok: bool,
    answer: impl FnOnce(&mut World) -> Answer,
) -> nvmlReturn_t {
    guarded(|| {
        let fault = {
            let mut st = state::lock()?;
            st.world()?;
            if !outputs_ok {
                return Err(crate::abi::ERROR_INVALID_ARGUMENT);
            }
            st.fault(None, function)
        };
        state::suffer(fault)?;
        let mut st = state::lock()?;
        answer(st.world()?)
    })
}

/// A device-less function with one output.
pub(crate) fn system_out<T>(
    function: &'static str,
    out: *mut T,
    read: impl FnOnce(&mut World) -> Result<T, nvmlReturn_t>,
) -> nvmlReturn_t {
    system_call(function, !out.is_null(), |w| {
        let value = read(w)?;
        // SAFETY: `out` is non-null (checked above) and, by the NVML contract, points to a
        // writable, aligned `T` owned by the caller for the duration of the call.
        unsafe { out.write(value) };
        Ok(())
    })
}

/// A reading the scenario leaves out is `NOT_SUPPORTED`, as a driver says it.
pub(crate) fn supported<T>(value: Option<T>) -> Result<T, nvmlReturn_t> {
    value.ok_or(ERROR_NOT_SUPPORTED)
}

/// Copies `text` (up to its first NUL) and a terminating NUL into the caller's `length`-byte
/// buffer; `INSUFFICIENT_SIZE` when it does not fit, as NVML does.
///
/// # Safety
/// `buf` is non-null and valid for `length` bytes of writes.
pub(crate) unsafe fn copy_c_string(buf: *mut c_char, length: c_uint, text: &str) -> Answer {
    let bytes = text.as_bytes();
    let bytes = bytes
        .iter()
        .position(|&b| b == 0)
        .map_or(bytes, |nul| bytes.get(..nul).unwrap_or(bytes));
    let capacity = usize::try_from(length).unwrap_or(0);
    if bytes.len() >= capacity {
        return Err(ERROR_INSUFFICIENT_SIZE);
    }
    // SAFETY: the caller guarantees `buf` is valid for `length` bytes; we write
    // `bytes.len() + 1 <= length` of them, from a slice that cannot overlap a C buffer we
    // were handed (it lives in our own memory).
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf.cast::<u8>(), bytes.len());
        buf.add(bytes.len()).write(0);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mig_handles_name_their_parent_and_slot_and_are_no_device_handles() {
        for (parent, k) in [(0, 0), (1, 2), (7, 6)] {
            let h = mig_handle_for(parent, k);
            assert_eq!(mig_of(h), Some((parent, k)));
            assert_eq!(index_of(h), None, "a MIG handle is not its parent's");
        }
        assert_eq!(mig_of(handle_for(3)), None);
        assert_eq!(
            mig_of(std::ptr::without_provenance_mut(HANDLE_BASE + 0x108)),
            None
        );
    }

    #[test]
    fn handles_round_trip_and_strangers_do_not_decode() {
        for i in [0, 1, 7, 1000] {
            let h = handle_for(i);
            assert!(!h.is_null());
            assert_eq!(index_of(h), Some(i));
        }
        assert_eq!(index_of(std::ptr::null_mut()), None);
        assert_eq!(
            index_of(std::ptr::without_provenance_mut(HANDLE_BASE)),
            None
        );
        assert_eq!(
            index_of(std::ptr::without_provenance_mut(
                HANDLE_BASE + HANDLE_STRIDE + 8
            )),
            None
        );
    }
}
