//! Events: sets, registration per device, and waiting, with the scenario's `[[xid]]` entries
//! as the critical XID errors a driver reports. An XID is delivered once per set, to a set that
//! registered its device for XID events, once scenario time has reached it (events from before
//! the registration included: the simulated driver queued them). Waiting sleeps without holding
//! the lock until the next event falls due or the timeout passes (`TIMEOUT`), in steps of at most
//! [`WAIT_STEP`]: a real driver's wait costs its caller no wake-ups, so neither does this one's,
//! beyond what a monitor's overhead measurement can ignore.

#![allow(non_snake_case)]

use std::ffi::c_uint;
use std::time::{Duration, Instant};

use crate::abi::{
    ERROR_INVALID_ARGUMENT, ERROR_NOT_SUPPORTED, ERROR_TIMEOUT, EVENT_TYPE_SUPPORTED,
    EVENT_TYPE_XID, NO_INSTANCE, nvmlDevice_t, nvmlEventData_t, nvmlEventSet_t, nvmlReturn_t,
};
use crate::call::{device_call, device_out, guarded, handle_for, system_call};
use crate::state;

/// Longest single sleep while waiting, so a shutdown is noticed soon.
const WAIT_STEP: Duration = Duration::from_millis(250);

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlEventSetCreate(set: *mut nvmlEventSet_t) -> nvmlReturn_t {
    system_call("nvmlEventSetCreate", !set.is_null(), |w| {
        let handle = w.objects.create_set();
        // SAFETY: `set` is non-null (checked) and, by the NVML contract, writable.
        unsafe { set.write(handle) };
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlEventSetFree(set: nvmlEventSet_t) -> nvmlReturn_t {
    system_call("nvmlEventSetFree", true, |w| {
        w.objects
            .free_set(set)
            .then_some(())
            .ok_or(ERROR_INVALID_ARGUMENT)
    })
}

/// Single- and double-bit ECC and critical XID events.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetSupportedEventTypes(
    device: nvmlDevice_t,
    types: *mut u64,
) -> nvmlReturn_t {
    device_out("nvmlDeviceGetSupportedEventTypes", device, types, |_| {
        Ok(EVENT_TYPE_SUPPORTED)
    })
}

/// Types outside the supported ones are `NOT_SUPPORTED`, as NVML answers.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceRegisterEvents(
    device: nvmlDevice_t,
    types: u64,
    set: nvmlEventSet_t,
) -> nvmlReturn_t {
    device_call("nvmlDeviceRegisterEvents", device, true, |d| {
        if types & !EVENT_TYPE_SUPPORTED != 0 {
            return Err(ERROR_NOT_SUPPORTED);
        }
        d.world
            .objects
            .register(set, d.index, types)
            .then_some(())
            .ok_or(ERROR_INVALID_ARGUMENT)
    })
}

/// The next due XID for this set, or `TIMEOUT` after `timeout_ms`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlEventSetWait_v2(
    set: nvmlEventSet_t,
    data: *mut nvmlEventData_t,
    timeout_ms: c_uint,
) -> nvmlReturn_t {
    let deadline = Instant::now() + Duration::from_millis(u64::from(timeout_ms));
    loop {
        let mut due = None;
        // Scenario ms from now until the next XID falls due (`None`: none will).
        let mut next_in_ms: Option<f64> = None;
        let code = system_call("nvmlEventSetWait_v2", !data.is_null(), |w| {
            let elapsed = w.elapsed_ms();
            let xids = w.sim().scenario().xids.clone();
            due = w.objects.next_due(set, &xids, elapsed)?;
            // Frozen scenario time never reaches a later XID.
            next_in_ms = w
                .objects
                .next_at_ms(set, &xids)
                .filter(|_| !w.clock_frozen())
                .map(|at| (at - elapsed as f64).max(0.0));
            Ok(())
        });
        if code != 0 {
            return code;
        }
        if let Some((gpu, xid)) = due {
            return guarded(|| {
                let event = nvmlEventData_t {
                    device: handle_for(gpu),
                    eventType: EVENT_TYPE_XID,
                    eventData: xid,
                    gpuInstanceId: NO_INSTANCE,
                    computeInstanceId: NO_INSTANCE,
                };
                // SAFETY: `data` is non-null (checked above) and, by the NVML contract, writable.
                unsafe { data.write(event) };
                Ok(())
            });
        }
        let now = Instant::now();
        if now >= deadline {
            return ERROR_TIMEOUT;
        }
        // A shutdown while waiting ends the wait.
        if state::lock()
            .map(|mut st| st.world().is_err())
            .unwrap_or(true)
        {
            return crate::abi::ERROR_UNINITIALIZED;
        }
        // The wall clock reaches scenario time in 100 ms steps: a little past the due time.
        let until_due = next_in_ms.map_or(WAIT_STEP, |ms| Duration::from_millis(ms as u64 + 101));
        std::thread::sleep(WAIT_STEP.min(until_due).min(deadline - now));
    }
}
