//! Init and shutdown, the refcount, loading once, UNINITIALIZED, bad handles and NULL
//! pointers, scripted faults (after N calls, from time T, on init) and latency that does not
//! block other threads.

use std::ffi::{CStr, c_uint};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::{TWO_GPUS, handle, install, started};
use crate::abi::nvmlDevice_t;
use crate::state::{self, ScenarioClock};
use crate::*;

fn count() -> (u32, c_uint) {
    let mut n: c_uint = 0;
    // SAFETY: valid out pointer.
    let rc = unsafe { nvmlDeviceGetCount_v2(&mut n) };
    (rc, n)
}

fn power(h: nvmlDevice_t) -> u32 {
    let mut mw: c_uint = 0;
    // SAFETY: valid out pointer.
    unsafe { nvmlDeviceGetPowerUsage(h, &mut mw) }
}

#[test]
fn everything_is_uninitialized_before_init_and_after_the_last_shutdown() {
    let _s = install(TWO_GPUS, 0);
    assert_eq!(count().0, 1, "count before init");
    let mut h: nvmlDevice_t = std::ptr::null_mut();
    // SAFETY: valid out pointer.
    assert_eq!(unsafe { nvmlDeviceGetHandleByIndex_v2(0, &mut h) }, 1);
    assert_eq!(power(crate::call::handle_for(0)), 1);
    // SAFETY: no arguments.
    assert_eq!(
        unsafe { nvmlShutdown() },
        1,
        "shutdown with nothing to shut down"
    );

    // SAFETY: no arguments.
    assert_eq!(unsafe { nvmlInit_v2() }, 0);
    assert_eq!(count(), (0, 2));
    // SAFETY: no arguments.
    assert_eq!(unsafe { nvmlShutdown() }, 0);
    assert_eq!(count().0, 1, "count after the last shutdown");
}

#[test]
fn init_is_counted_so_many_users_can_share_it() {
    let _s = install(TWO_GPUS, 0);
    // SAFETY: no arguments / plain flags.
    unsafe {
        assert_eq!(nvmlInit_v2(), 0);
        assert_eq!(nvmlInitWithFlags(0), 0);
        assert_eq!(nvmlInit(), 0);
        assert_eq!(nvmlShutdown(), 0);
        assert_eq!(nvmlShutdown(), 0);
    }
    assert_eq!(count(), (0, 2), "one user left");
    // SAFETY: no arguments.
    assert_eq!(unsafe { nvmlShutdown() }, 0);
    assert_eq!(count().0, 1);
    // gpustat: init and shut down on every refresh.
    for _ in 0..50 {
        // SAFETY: no arguments.
        unsafe {
            assert_eq!(nvmlInit_v2(), 0);
            assert_eq!(nvmlShutdown(), 0);
        }
    }
}

#[test]
fn the_scenario_loads_from_the_environment_once() {
    let _s = install(TWO_GPUS, 0);
    state::clear_for_test();
    // SAFETY: tests that touch the environment hold the serial lock; nothing else in this
    // process reads these variables through C's getenv concurrently.
    unsafe {
        std::env::set_var(SCENARIO_ENV, "mixed");
        std::env::set_var(ELAPSED_ENV, "5000");
    }
    // SAFETY: no arguments.
    assert_eq!(unsafe { nvmlInit_v2() }, 0);
    assert_eq!(count(), (0, 4), "mixed has 4 GPUs");
    // SAFETY: as above.
    unsafe { std::env::set_var(SCENARIO_ENV, "training") };
    // SAFETY: no arguments.
    unsafe {
        assert_eq!(nvmlShutdown(), 0);
        assert_eq!(nvmlInit_v2(), 0);
    }
    assert_eq!(count(), (0, 4), "not reloaded by a later init");

    state::clear_for_test();
    // SAFETY: as above.
    unsafe { std::env::set_var(SCENARIO_ENV, "no-such-scenario") };
    // SAFETY: no arguments.
    assert_eq!(unsafe { nvmlInit_v2() }, 999, "a bad scenario fails init");
    assert_eq!(count().0, 1);

    state::clear_for_test();
    // SAFETY: as above.
    unsafe {
        std::env::remove_var(SCENARIO_ENV);
        std::env::set_var(ELAPSED_ENV, "soon");
    }
    // SAFETY: no arguments.
    assert_eq!(
        unsafe { nvmlInit_v2() },
        999,
        "a bad elapsed time fails init"
    );

    state::clear_for_test();
    // SAFETY: as above.
    unsafe { std::env::remove_var(ELAPSED_ENV) };
    // SAFETY: no arguments.
    assert_eq!(unsafe { nvmlInit_v2() }, 0);
    assert_eq!(count(), (0, 8), "the default scenario is training");
    state::clear_for_test();
}

#[test]
fn bad_handles_indices_and_null_outputs_are_invalid_arguments() {
    let _s = started(TWO_GPUS, 0);
    let mut h: nvmlDevice_t = std::ptr::null_mut();
    // SAFETY: valid out pointer, or NULL on purpose.
    unsafe {
        assert_eq!(nvmlDeviceGetHandleByIndex_v2(2, &mut h), 2);
        assert_eq!(nvmlDeviceGetHandleByIndex_v2(0, std::ptr::null_mut()), 2);
        assert_eq!(nvmlDeviceGetCount_v2(std::ptr::null_mut()), 2);
        assert_eq!(nvmlDeviceGetPowerUsage(handle(0), std::ptr::null_mut()), 2);
    }
    assert_eq!(power(std::ptr::null_mut()), 2);
    assert_eq!(power(std::ptr::without_provenance_mut(0xdead_beef)), 2);
    assert_eq!(
        power(crate::call::handle_for(2)),
        2,
        "a handle past the count"
    );
    assert_eq!(power(handle(1)), 0);
}

#[test]
fn error_strings_are_static_text() {
    // SAFETY: any code is accepted; the result is a static C string.
    let text = |code| {
        unsafe { CStr::from_ptr(nvmlErrorString(code)) }
            .to_str()
            .unwrap()
    };
    assert_eq!(text(15), "GPU is lost");
    assert_eq!(text(0), "Success");
    assert_eq!(text(12345), "Unknown Error");
}

const FAULTS: &str = r#"
[[fault]]
gpu = 0
function = "nvmlDeviceGetPowerUsage"
error = "NO_PERMISSION"
after_calls = 2
[[fault]]
gpu = 1
function = "*"
error = "GPU_IS_LOST"
from_s = 30
[[fault]]
function = "nvmlInit_v2"
error = "DRIVER_NOT_LOADED"
from_s = 100
"#;

#[test]
fn faults_after_n_calls_count_per_device_and_function() {
    let _s = started(&format!("{TWO_GPUS}{FAULTS}"), 10_000);
    let (gpu0, gpu1) = (handle(0), handle(1));
    assert_eq!(power(gpu0), 0, "call 1");
    assert_eq!(power(gpu1), 0, "another device's calls do not count");
    assert_eq!(power(gpu0), 0, "call 2");
    assert_eq!(power(gpu0), 4, "call 3: NO_PERMISSION");
    assert_eq!(power(gpu0), 4, "and from then on");
}

#[test]
fn faults_from_a_time_start_then_and_cover_every_device_function() {
    let _s = started(&format!("{TWO_GPUS}{FAULTS}"), 29_000);
    let gpu1 = handle(1);
    assert_eq!(power(gpu1), 0);
    state::set_clock_for_test(ScenarioClock::Frozen(30_000));
    assert_eq!(power(gpu1), 15);
    let mut temp: c_uint = 0;
    // SAFETY: valid out pointer.
    assert_eq!(unsafe { nvmlDeviceGetTemperature(gpu1, 0, &mut temp) }, 15);
    let mut h: nvmlDevice_t = std::ptr::null_mut();
    // SAFETY: valid out pointer.
    assert_eq!(unsafe { nvmlDeviceGetHandleByIndex_v2(1, &mut h) }, 15);
    assert_eq!(
        count(),
        (0, 2),
        "device-less calls are not device functions"
    );
    assert_eq!(power(handle(0)), 0);
}

#[test]
fn init_faults_fail_init_without_counting_a_user() {
    let _s = install(&format!("{TWO_GPUS}{FAULTS}"), 100_000);
    // SAFETY: no arguments.
    assert_eq!(unsafe { nvmlInit_v2() }, 9);
    assert_eq!(count().0, 1, "a failed init leaves NVML uninitialized");
    // SAFETY: no arguments.
    assert_eq!(
        unsafe { nvmlInitWithFlags(0) },
        0,
        "the fault names nvmlInit_v2 only"
    );
}

#[test]
fn latency_is_slept_without_blocking_other_threads() {
    let slow = r#"
[[fault]]
gpu = 0
function = "nvmlDeviceGetPowerUsage"
latency_ms = 1500
"#;
    let _s = started(&format!("{TWO_GPUS}{slow}"), 0);
    let (gpu0, gpu1) = (handle(0).addr(), handle(1));
    let done = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&done);
    let worker = std::thread::spawn(move || {
        let rc = power(std::ptr::without_provenance_mut(gpu0));
        flag.store(true, Ordering::SeqCst);
        rc
    });
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(power(gpu1), 0);
    assert!(
        !done.load(Ordering::SeqCst),
        "the fast call waited for the slow one: the lock was held while sleeping"
    );
    assert_eq!(worker.join().unwrap(), 0, "latency alone succeeds");
}
