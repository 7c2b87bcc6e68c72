//! Events: sets, registration per device, and waiting, with the scenario's `[[xid]]` entries
//! as the critical XID errors a driver reports. An XID is delivered once per set, to a set that
//! registered its device for XID events, once scenario time has reached it (events from before
//! the registration included: the simulated driver queued them). Waiting blocks as a driver's
//! does: asleep on the state's condition variable (the lock released) until the next XID falls
//! due or the timeout passes (`TIMEOUT`), with no wake-ups between; a shutdown or the set's
//! free ends it at once. A monitor's overhead measured on this library then pays for its
//! event thread what it would on a real one.

#![allow(non_snake_case)]

use std::ffi::c_uint;
use std::time::{Duration, Instant};

use crate::abi::{
    ERROR_INVALID_ARGUMENT, ERROR_NOT_SUPPORTED, ERROR_TIMEOUT, ERROR_UNKNOWN,
    EVENT_TYPE_SUPPORTED, EVENT_TYPE_XID, NO_INSTANCE, SUCCESS, nvmlDevice_t, nvmlEventData_t,
    nvmlEventSet_t, nvmlReturn_t,
};
use crate::call::{device_call, device_out, guarded, handle_for, system_call};
use crate::state;

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
    let code = system_call("nvmlEventSetFree", true, |w| {
        w.objects
            .free_set(set)
            .then_some(())
            .ok_or(ERROR_INVALID_ARGUMENT)
    });
    // A thread waiting on the set looks again, finds it gone and returns.
    state::wake_waiters();
    code
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

/// The next due XID for this set, or `TIMEOUT` after `timeout_ms`. Blocks as a driver does:
/// asleep until the deadline or the instant the set's next XID falls due, whichever is first;
/// a shutdown or the set's free wakes it at once (`UNINITIALIZED`, `INVALID_ARGUMENT`). One
/// call is one call for the fault counters, however long it waits.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlEventSetWait_v2(
    set: nvmlEventSet_t,
    data: *mut nvmlEventData_t,
    timeout_ms: c_uint,
) -> nvmlReturn_t {
    let deadline = Instant::now() + Duration::from_millis(u64::from(timeout_ms));
    let mut due = None;
    let code = system_call("nvmlEventSetWait_v2", !data.is_null(), |w| {
        due = w.next_xid(set)?.due;
        Ok(())
    });
    if code != SUCCESS {
        return code;
    }
    if due.is_none() {
        let code = guarded(|| {
            due = Some(blocked_wait(set, deadline)?);
            Ok(())
        });
        if code != SUCCESS {
            return code;
        }
    }
    let Some((gpu, xid)) = due else {
        return ERROR_UNKNOWN;
    };
    guarded(|| {
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
    })
}

/// Sleeps (the lock released) until an XID for `set` is due, which it returns marked delivered,
/// or `deadline` passes (`TIMEOUT`). Looks again on every wake-up: the due instant, a shutdown
/// (`UNINITIALIZED`), the set freed (`INVALID_ARGUMENT`), or a spurious one.
fn blocked_wait(set: nvmlEventSet_t, deadline: Instant) -> Result<(u32, u64), nvmlReturn_t> {
    let mut st = state::lock()?;
    loop {
        let poll = st.world()?.next_xid(set)?;
        if let Some(event) = poll.due {
            return Ok(event);
        }
        if Instant::now() >= deadline {
            return Err(ERROR_TIMEOUT);
        }
        st = state::sleep_until(st, poll.next.map_or(deadline, |at| at.min(deadline)))?;
    }
}
