//! GPM and events as C callers use them: struct layouts and versions, samples allocated, filled
//! and freed, metrics between two samples, and XIDs delivered once, to registered devices only,
//! once scenario time reaches them; a wait sleeps through to its XID or its timeout in one
//! wake-up, and a shutdown or the set's free ends it at once.

use std::mem::{offset_of, size_of};
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::{handle, started};
use crate::abi::*;
use crate::state::{self, ScenarioClock};
use crate::*;

/// GPU 0 has GPM, GPU 1 does not; GPU 1 raises XID 79 at 30 s, GPU 0 XID 48 at 10 s.
const GPM_XID: &str = r#"
name = "gpm"
description = "GPM on GPU 0, XIDs on both"
[[gpu]]
name = "NVIDIA H100 80GB HBM3"
util_gpu_pct = { const = 100 }
gpm = { sm_active_pct = { const = 4.5 }, tensor_active_pct = { const = 0 } }
[[gpu]]
name = "NVIDIA A100 80GB PCIe"
[[xid]]
gpu = 1
xid = 79
at_s = 30
[[xid]]
gpu = 0
xid = 48
at_s = 10
"#;

#[test]
fn layouts_match_nvml_h() {
    assert_eq!(size_of::<nvmlGpmSupport_t>(), 8);
    assert_eq!(size_of::<nvmlGpmMetric_t>(), 40);
    assert_eq!(offset_of!(nvmlGpmMetric_t, value), 8);
    assert_eq!(offset_of!(nvmlGpmMetricsGet_t, sample1), 8);
    assert_eq!(offset_of!(nvmlGpmMetricsGet_t, metrics), 24);
    assert_eq!(size_of::<nvmlGpmMetricsGet_t>(), 24 + 40 * GPM_METRIC_MAX);
    assert_eq!(size_of::<nvmlEventData_t>(), 32);
    assert_eq!(offset_of!(nvmlEventData_t, eventData), 16);
}

fn support(gpu: u32, version: u32) -> (u32, u32) {
    let mut s = nvmlGpmSupport_t {
        version,
        isSupportedDevice: 7,
    };
    // SAFETY: a valid struct pointer.
    let rc = unsafe { nvmlGpmQueryDeviceSupport(handle(gpu), &mut s) };
    (rc, s.isSupportedDevice)
}

fn sample(gpu: u32) -> (u32, nvmlGpmSample_t) {
    let mut s: nvmlGpmSample_t = std::ptr::null_mut();
    // SAFETY: valid out pointer; the handle is ours.
    unsafe {
        assert_eq!(nvmlGpmSampleAlloc(&mut s), SUCCESS);
        (nvmlGpmSampleGet(handle(gpu), s), s)
    }
}

#[test]
fn gpm_support_samples_and_metrics() {
    let _s = started(GPM_XID, 5_000);
    assert_eq!(support(0, GPM_SUPPORT_VERSION), (SUCCESS, 1));
    assert_eq!(support(1, GPM_SUPPORT_VERSION), (SUCCESS, 0));
    assert_eq!(support(0, 2).0, ERROR_ARGUMENT_VERSION_MISMATCH);
    let (rc, a) = sample(0);
    assert_eq!(rc, SUCCESS);
    let (rc, b) = sample(0);
    assert_eq!(rc, SUCCESS);
    let (rc, c) = sample(1);
    assert_eq!(rc, ERROR_NOT_SUPPORTED);
    // SAFETY: an all-zero request is valid plain data.
    let mut req: Box<nvmlGpmMetricsGet_t> = Box::new(unsafe { std::mem::zeroed() });
    req.version = GPM_METRICS_GET_VERSION;
    req.numMetrics = 3;
    req.sample1 = a;
    req.sample2 = b;
    req.metrics[0].metricId = GPM_METRIC_SM_UTIL;
    req.metrics[1].metricId = GPM_METRIC_TENSOR_UTIL;
    req.metrics[2].metricId = GPM_METRIC_DRAM_BW_UTIL;
    // Beyond numMetrics: left alone.
    req.metrics[3].metricId = GPM_METRIC_SM_UTIL;
    req.metrics[3].value = -1.0;
    // SAFETY: a whole request.
    assert_eq!(unsafe { nvmlGpmMetricsGet(&mut *req) }, SUCCESS);
    assert_eq!(
        (req.metrics[0].nvmlReturn, req.metrics[0].value),
        (SUCCESS, 4.5)
    );
    assert_eq!(
        (req.metrics[1].nvmlReturn, req.metrics[1].value),
        (SUCCESS, 0.0)
    );
    assert_eq!(req.metrics[2].nvmlReturn, ERROR_NOT_SUPPORTED);
    assert_eq!(req.metrics[3].value, -1.0);
    assert!(req.metrics[0].metricInfo.shortName.is_null());
    req.version = 9;
    // SAFETY: as above.
    assert_eq!(
        unsafe { nvmlGpmMetricsGet(&mut *req) },
        ERROR_ARGUMENT_VERSION_MISMATCH
    );
    // SAFETY: handles from this library; freeing twice is refused.
    unsafe {
        for s in [a, b, c] {
            assert_eq!(nvmlGpmSampleFree(s), SUCCESS);
        }
        assert_eq!(nvmlGpmSampleFree(a), ERROR_INVALID_ARGUMENT);
    }
    let live = state::lock()
        .unwrap()
        .world()
        .unwrap()
        .objects
        .live_samples();
    assert_eq!(live, 0);
}

fn wait(set: nvmlEventSet_t, timeout_ms: u32) -> (u32, nvmlEventData_t) {
    // SAFETY: an all-zero event is valid plain data; valid out pointer.
    let mut data: nvmlEventData_t = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let rc = unsafe { nvmlEventSetWait_v2(set, &mut data, timeout_ms) };
    (rc, data)
}

#[test]
fn xids_reach_registered_devices_once_in_their_time() {
    let _s = started(GPM_XID, 20_000);
    let mut set: nvmlEventSet_t = std::ptr::null_mut();
    let mut types = 0u64;
    // SAFETY: valid out pointers, handles from this library.
    unsafe {
        assert_eq!(nvmlEventSetCreate(&mut set), SUCCESS);
        assert_eq!(
            nvmlDeviceGetSupportedEventTypes(handle(0), &mut types),
            SUCCESS
        );
        assert_ne!(types & EVENT_TYPE_XID, 0);
        assert_eq!(
            nvmlDeviceRegisterEvents(handle(0), 1 << 40, set),
            ERROR_NOT_SUPPORTED
        );
        assert_eq!(
            nvmlDeviceRegisterEvents(handle(0), EVENT_TYPE_XID, set),
            SUCCESS
        );
        assert_eq!(
            nvmlDeviceRegisterEvents(handle(1), EVENT_TYPE_XID, set),
            SUCCESS
        );
    }
    // At 20 s: GPU 0's XID 48 (from 10 s) once; GPU 1's 79 is not due yet.
    let (rc, ev) = wait(set, 0);
    assert_eq!(
        (rc, ev.eventType, ev.eventData),
        (SUCCESS, EVENT_TYPE_XID, 48)
    );
    assert_eq!(ev.device, handle(0));
    assert_eq!(wait(set, 30).0, ERROR_TIMEOUT);
    state::set_clock_for_test(ScenarioClock::Frozen(31_000));
    let (rc, ev) = wait(set, 0);
    assert_eq!((rc, ev.eventData, ev.device), (SUCCESS, 79, handle(1)));
    assert_eq!(wait(set, 0).0, ERROR_TIMEOUT);
    // A set nobody registered with gets nothing.
    let mut other: nvmlEventSet_t = std::ptr::null_mut();
    // SAFETY: as above.
    unsafe {
        assert_eq!(nvmlEventSetCreate(&mut other), SUCCESS);
    }
    assert_eq!(wait(other, 0).0, ERROR_TIMEOUT);
    // SAFETY: sets from this library; freed once.
    unsafe {
        assert_eq!(nvmlEventSetFree(set), SUCCESS);
        assert_eq!(nvmlEventSetFree(set), ERROR_INVALID_ARGUMENT);
        assert_eq!(nvmlEventSetFree(other), SUCCESS);
    }
    assert_eq!(wait(set, 0).0, ERROR_INVALID_ARGUMENT);
}

/// A set with GPU 0 registered for XID events.
fn registered_set() -> nvmlEventSet_t {
    let mut set: nvmlEventSet_t = std::ptr::null_mut();
    // SAFETY: valid out pointer, handles from this library.
    unsafe {
        assert_eq!(nvmlEventSetCreate(&mut set), SUCCESS);
        assert_eq!(
            nvmlDeviceRegisterEvents(handle(0), EVENT_TYPE_XID, set),
            SUCCESS
        );
    }
    set
}

fn wake_ups() -> usize {
    state::WAKE_UPS.load(Ordering::Relaxed)
}

#[test]
fn a_wait_with_nothing_due_sleeps_to_its_timeout_in_one_wake_up() {
    // Frozen at 20 s: GPU 0's XID 48 (10 s) is taken first; its XID 79 never comes (GPU 1's).
    let _s = started(GPM_XID, 20_000);
    let set = registered_set();
    assert_eq!(wait(set, 0).1.eventData, 48);
    let before = wake_ups();
    let asked = Instant::now();
    assert_eq!(wait(set, 600).0, ERROR_TIMEOUT);
    assert!(asked.elapsed() >= Duration::from_millis(600));
    // The old loop woke every 250 ms (3 times here); a driver's wait does not.
    assert_eq!(wake_ups() - before, 1);
}

#[test]
fn a_wait_on_the_wall_clock_sleeps_until_its_xid_falls_due() {
    // Scenario time follows the wall clock from the library's load: an XID ~0.4 s from now.
    let now_s = state::loaded_at().0.elapsed().as_secs_f64();
    let toml = GPM_XID.replace("at_s = 10", &format!("at_s = {:.3}", now_s + 0.4));
    let _s = super::started_on(&toml, ScenarioClock::Wall);
    let set = registered_set();
    let before = wake_ups();
    let (rc, ev) = wait(set, 20_000);
    assert_eq!((rc, ev.eventData, ev.device), (SUCCESS, 48, handle(0)));
    // Not before scenario time reached it, and in one sleep (none if the machine was so slow
    // that it was already due).
    assert!(state::loaded_at().0.elapsed().as_secs_f64() >= now_s + 0.4);
    assert!(wake_ups() - before <= 1, "{} wake-ups", wake_ups() - before);
}

/// Starts a wait of a minute on another thread and returns what it answers, failing when that
/// is not within 20 s of `end` ending it.
fn wait_ended_by(set: nvmlEventSet_t, end: impl FnOnce()) -> u32 {
    let (tx, rx) = mpsc::channel();
    let addr = set.addr();
    let waiter = std::thread::spawn(move || {
        let set: nvmlEventSet_t = std::ptr::without_provenance_mut(addr);
        let _ = tx.send(wait(set, 60_000).0);
    });
    // Either order ends the wait: blocked already, or refused at its first look.
    std::thread::sleep(Duration::from_millis(50));
    end();
    let rc = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("the wait did not end");
    waiter.join().unwrap();
    rc
}

#[test]
fn a_shutdown_ends_a_blocked_wait_at_once() {
    let _s = started(GPM_XID, 5_000);
    let set = registered_set();
    // SAFETY: no arguments.
    let rc = wait_ended_by(set, || assert_eq!(unsafe { nvmlShutdown() }, SUCCESS));
    assert_eq!(rc, ERROR_UNINITIALIZED);
}

#[test]
fn freeing_the_set_ends_a_blocked_wait_at_once() {
    let _s = started(GPM_XID, 5_000);
    let set = registered_set();
    // SAFETY: a set from this library, freed once.
    let rc = wait_ended_by(set, || {
        assert_eq!(unsafe { nvmlEventSetFree(set) }, SUCCESS)
    });
    assert_eq!(rc, ERROR_INVALID_ARGUMENT);
}

#[test]
fn moving_the_test_clock_wakes_a_blocked_wait() {
    let _s = started(GPM_XID, 5_000);
    let set = registered_set();
    let rc = wait_ended_by(set, || {
        state::set_clock_for_test(ScenarioClock::Frozen(11_000));
    });
    assert_eq!(rc, SUCCESS);
}
