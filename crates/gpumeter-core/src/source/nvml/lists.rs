//! One GPU's process lists (compute, graphics) and per-process utilization samples, each in
//! one NVML call a tick.
//!
//! NVML's list calls take a buffer and its length, and answer `INSUFFICIENT_SIZE` with the
//! count needed when it is too short. nvml-wrapper asks for the count first and then for the
//! list: two calls (two driver round trips on real hardware) for every list, every tick. Here
//! each list keeps the room its last answer needed (plus a few), so a steady tick makes one
//! call per list, and a second only when the list grew past the room. Calls go through the
//! raw symbols of the same library (`nvml.lib()`), with nvml-wrapper's error mapping.

use std::os::raw::c_uint;

use nvml_wrapper::Device;
use nvml_wrapper::error::{NvmlError, nvml_sym, nvml_try};
use nvml_wrapper::struct_wrappers::device::{ProcessInfo, ProcessUtilizationSample};
use nvml_wrapper_sys::bindings::{
    nvmlProcessInfo_t, nvmlProcessUtilizationSample_t,
    nvmlReturn_enum_NVML_ERROR_INSUFFICIENT_SIZE, nvmlReturn_t,
};

/// Room for this many entries beyond the last answer's count (processes starting between two
/// ticks then still fit).
const HEADROOM: usize = 8;

/// The most entries a list is given room for: a driver naming more gets an error, not the
/// memory it asks for.
const MAX_ROOM: usize = 1 << 16;

/// Tries per list and tick (the list may grow again between two tries).
const TRIES: usize = 3;

/// The buffers of one GPU's lists, kept between ticks.
#[derive(Debug, Default, Clone)]
pub(crate) struct ListRoom {
    compute: Vec<nvmlProcessInfo_t>,
    graphics: Vec<nvmlProcessInfo_t>,
    utilization: Vec<nvmlProcessUtilizationSample_t>,
}

const NO_PROCESS: nvmlProcessInfo_t = nvmlProcessInfo_t {
    pid: 0,
    usedGpuMemory: 0,
    gpuInstanceId: 0,
    computeInstanceId: 0,
};

const NO_SAMPLE: nvmlProcessUtilizationSample_t = nvmlProcessUtilizationSample_t {
    pid: 0,
    timeStamp: 0,
    smUtil: 0,
    memUtil: 0,
    encUtil: 0,
    decUtil: 0,
};

impl ListRoom {
    /// The processes with a compute context on `dev`.
    pub(crate) fn compute(&mut self, dev: &Device<'_>) -> Result<Vec<ProcessInfo>, NvmlError> {
        let sym = nvml_sym(
            dev.nvml()
                .lib()
                .nvmlDeviceGetComputeRunningProcesses_v3
                .as_ref(),
        )?;
        running(*sym, dev, &mut self.compute)
    }

    /// The processes with a graphics context on `dev`.
    pub(crate) fn graphics(&mut self, dev: &Device<'_>) -> Result<Vec<ProcessInfo>, NvmlError> {
        let sym = nvml_sym(
            dev.nvml()
                .lib()
                .nvmlDeviceGetGraphicsRunningProcesses_v3
                .as_ref(),
        )?;
        running(*sym, dev, &mut self.graphics)
    }

    /// The utilization samples newer than `last_seen` (µs; `None`: every buffered one).
    /// `NOT_FOUND` when no process was busy since.
    pub(crate) fn utilization(
        &mut self,
        dev: &Device<'_>,
        last_seen: Option<u64>,
    ) -> Result<Vec<ProcessUtilizationSample>, NvmlError> {
        let sym = nvml_sym(dev.nvml().lib().nvmlDeviceGetProcessUtilization.as_ref())?;
        let handle = handle(dev);
        let since = last_seen.unwrap_or(0);
        let n = fill(&mut self.utilization, NO_SAMPLE, |count, buf| {
            // SAFETY: as in `running`.
            unsafe { sym(handle, buf, count, since) }
        })?;
        Ok(self.utilization[..n]
            .iter()
            .copied()
            .map(ProcessUtilizationSample::from)
            .collect())
    }
}

/// The signature both running-process lists share.
type RunningFn = unsafe extern "C" fn(
    nvml_wrapper_sys::bindings::nvmlDevice_t,
    *mut c_uint,
    *mut nvmlProcessInfo_t,
) -> nvmlReturn_t;

/// One running-process list through `sym`, in `room`.
fn running(
    sym: RunningFn,
    dev: &Device<'_>,
    room: &mut Vec<nvmlProcessInfo_t>,
) -> Result<Vec<ProcessInfo>, NvmlError> {
    let handle = handle(dev);
    let n = fill(room, NO_PROCESS, |count, buf| {
        // SAFETY: the handle belongs to this live `Nvml`; `buf` has room for `*count`
        // entries (see `fill`).
        unsafe { sym(handle, count, buf) }
    })?;
    Ok(room[..n].iter().copied().map(ProcessInfo::from).collect())
}

fn handle(dev: &Device<'_>) -> nvml_wrapper_sys::bindings::nvmlDevice_t {
    // SAFETY: the raw handle is only passed back to the library it came from, while the
    // `Device` (and so its `Nvml`) lives.
    unsafe { dev.handle() }
}

/// Calls `call` with `room`'s length and buffer until the answer fits, growing the room to
/// the count NVML asks for; the number of entries it wrote.
fn fill<T: Copy>(
    room: &mut Vec<T>,
    empty: T,
    mut call: impl FnMut(&mut c_uint, *mut T) -> nvmlReturn_t,
) -> Result<usize, NvmlError> {
    if room.len() < HEADROOM {
        room.resize(HEADROOM, empty);
    }
    let mut needed = room.len();
    for _ in 0..TRIES {
        let mut count = c_uint::try_from(room.len()).unwrap_or(c_uint::MAX);
        let answer = call(&mut count, room.as_mut_ptr());
        needed = usize::try_from(count).unwrap_or(usize::MAX);
        if answer != nvmlReturn_enum_NVML_ERROR_INSUFFICIENT_SIZE {
            nvml_try(answer)?;
            return Ok(needed.min(room.len()));
        }
        let grown = needed.saturating_add(HEADROOM);
        if grown > MAX_ROOM {
            break;
        }
        room.resize(grown.max(room.len()), empty);
    }
    Err(NvmlError::InsufficientSize(Some(needed)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use nvml_wrapper_sys::bindings::{
        nvmlReturn_enum_NVML_ERROR_GPU_IS_LOST, nvmlReturn_enum_NVML_SUCCESS,
    };

    /// A driver holding `have` entries: fills a buffer that fits, else asks for room.
    fn driver(have: &[u32]) -> impl FnMut(&mut c_uint, *mut u32) -> nvmlReturn_t + '_ {
        move |count, buf| {
            let room = *count as usize;
            *count = have.len() as c_uint;
            if room < have.len() {
                return nvmlReturn_enum_NVML_ERROR_INSUFFICIENT_SIZE;
            }
            for (i, &v) in have.iter().enumerate() {
                unsafe { *buf.add(i) = v };
            }
            nvmlReturn_enum_NVML_SUCCESS
        }
    }

    #[test]
    fn a_list_that_fits_the_room_is_one_call_and_a_longer_one_grows_it_once() {
        let mut room = Vec::new();
        let mut calls = 0;
        let few = [1, 2, 3];
        let mut d = driver(&few);
        let n = fill(&mut room, 0, |c, b| {
            calls += 1;
            d(c, b)
        })
        .unwrap();
        assert_eq!((n, &room[..n], calls), (3, &few[..], 1));

        let many: Vec<u32> = (0..40).collect();
        let mut d = driver(&many);
        calls = 0;
        let n = fill(&mut room, 0, |c, b| {
            calls += 1;
            d(c, b)
        })
        .unwrap();
        assert_eq!((n, &room[..n], calls), (40, &many[..], 2));
        assert_eq!(room.len(), 40 + HEADROOM);

        // The room stays: the same list again is one call.
        let mut d = driver(&many);
        calls = 0;
        fill(&mut room, 0, |c, b| {
            calls += 1;
            d(c, b)
        })
        .unwrap();
        assert_eq!(calls, 1);
    }

    #[test]
    fn an_empty_list_is_no_entries_and_an_error_is_the_error() {
        let mut room = Vec::new();
        assert_eq!(fill(&mut room, 0, driver(&[])).unwrap(), 0);
        let lost = fill(&mut room, 0u32, |_, _| {
            nvmlReturn_enum_NVML_ERROR_GPU_IS_LOST
        });
        assert!(matches!(lost, Err(NvmlError::GpuLost)), "{lost:?}");
    }

    #[test]
    fn a_driver_asking_for_endless_room_gets_an_error_not_the_memory() {
        let mut room = Vec::new();
        let greedy = fill(&mut room, 0u32, |count, _| {
            *count = c_uint::MAX;
            nvmlReturn_enum_NVML_ERROR_INSUFFICIENT_SIZE
        });
        assert!(
            matches!(greedy, Err(NvmlError::InsufficientSize(Some(_)))),
            "{greedy:?}"
        );
        assert!(room.len() <= MAX_ROOM);
        // One that keeps growing past each room gives up after a few tries.
        let mut grows = 10;
        let mut tries = 0;
        let result = fill(&mut room, 0u32, |count, _| {
            tries += 1;
            grows += 100;
            *count = grows;
            nvmlReturn_enum_NVML_ERROR_INSUFFICIENT_SIZE
        });
        assert!(result.is_err());
        assert_eq!(tries, TRIES);
    }

    #[test]
    fn a_count_above_the_room_with_success_is_cut_to_the_room() {
        let mut room = Vec::new();
        let n = fill(&mut room, 0u32, |count, _| {
            *count = 1_000;
            nvmlReturn_enum_NVML_SUCCESS
        })
        .unwrap();
        assert_eq!(n, room.len());
    }
}
