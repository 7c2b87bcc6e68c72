//! Protocol tests: the exported functions called directly, as a C caller would, against
//! scenarios installed through a test-only reset of the global state (tests share that state,
//! so each takes the `serial` lock first).

mod counts;
mod gpm_events;
mod lifecycle;
mod readings;

use std::sync::{Mutex, MutexGuard, PoisonError};

use gpumeter_sim::{Scenario, Simulator};

use crate::abi::nvmlDevice_t;
use crate::state::{self, ScenarioClock, World};

static SERIAL: Mutex<()> = Mutex::new(());

/// Holds the global state for one test.
pub(crate) struct Session {
    _guard: MutexGuard<'static, ()>,
}

/// Installs `toml` (frozen at `elapsed_ms`) without initialising NVML.
pub(crate) fn install(toml: &str, elapsed_ms: u64) -> Session {
    install_on(toml, ScenarioClock::Frozen(elapsed_ms))
}

/// Installs `toml` on `clock` without initialising NVML.
pub(crate) fn install_on(toml: &str, clock: ScenarioClock) -> Session {
    let guard = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let scenario = Scenario::from_toml("test.toml", toml).unwrap();
    state::reset_for_test(World::new(Simulator::new(scenario), clock));
    Session { _guard: guard }
}

/// Installs on `clock` and initialises.
pub(crate) fn started_on(toml: &str, clock: ScenarioClock) -> Session {
    let s = install_on(toml, clock);
    // SAFETY: no arguments.
    assert_eq!(unsafe { crate::nvmlInit_v2() }, 0);
    s
}

/// Installs and initialises.
pub(crate) fn started(toml: &str, elapsed_ms: u64) -> Session {
    let s = install(toml, elapsed_ms);
    // SAFETY: no arguments.
    assert_eq!(unsafe { crate::nvmlInit_v2() }, 0);
    s
}

pub(crate) fn handle(index: u32) -> nvmlDevice_t {
    let mut h: nvmlDevice_t = std::ptr::null_mut();
    // SAFETY: `h` is a valid out pointer.
    assert_eq!(
        unsafe { crate::nvmlDeviceGetHandleByIndex_v2(index, &mut h) },
        0
    );
    h
}

/// Two GPUs: GPU 0 with three processes (compute, graphics, mixed; one idle), GPU 1 idle.
pub(crate) const TWO_GPUS: &str = r#"
name = "unit"
description = "unit test machine"
driver_version = "550.90.07"
cuda_driver_version = "12.4"
[[gpu]]
count = 2
name = "NVIDIA H100 80GB HBM3"
memory_total_bytes = 85520809984
power_limit_watts = 700
clock_sm_max_mhz = 1980
clock_memory_max_mhz = 2619
util_gpu_pct = { const = 90 }
util_memory_pct = { const = 40 }
power_watts = { sine = { min = 300, max = 600, period_s = 10 } }
temperature_c = { const = 60 }
clock_sm_mhz = { const = 1900 }
clock_memory_mhz = { const = 2619 }
[[process]]
pid = 1000
gpus = [{ gpu = 0, memory_gib = { const = 10 }, sm_util_pct = { const = 70 }, mem_util_pct = { const = 30 } }]
[[process]]
pid = 2000
kind = "graphics"
gpus = [{ gpu = 0, memory_gib = { const = 0.5 }, sm_util_pct = { const = 0 }, mem_util_pct = { const = 0 } }]
[[process]]
pid = 3000
kind = "mixed"
gpus = [{ gpu = 0, sm_util_pct = { const = 5 }, mem_util_pct = { const = 1 } }]
"#;
