//! The real dashboard on the fake NVML library with a slow driver: every power reading takes
//! 500 ms on each of 8 GPUs, so one NVML sample takes at least 4 s. Keys must still be answered
//! at once: NVML runs on the collector thread, never on the one that handles input.

use std::time::{Duration, Instant};

use crate::support::fake_nvml::{library, scenario_file};
use crate::support::tmux::{self, Tmux};

const BIN: &str = env!("CARGO_BIN_EXE_gpumeter");

/// 8 GPUs; `nvmlDeviceGetPowerUsage` sleeps 500 ms on every one of them.
const SLOW: &str = r#"
name = "slow-driver"
description = "8 GPUs whose power readings take 500 ms each"
driver_version = "550.90.07"
cuda_driver_version = "12.4"
[[gpu]]
count = 8
name = "NVIDIA H100 80GB HBM3"
memory_total_gib = 80
util_gpu_pct = { const = 97 }
util_memory_pct = { const = 40 }
power_watts = { const = 650 }
power_limit_watts = 700
[[process]]
pid = 3700000
count = 8
gpus = [{ gpu = 0, memory_gib = { const = 70 }, sm_util_pct = { const = 95 }, mem_util_pct = { const = 40 } }]
[[fault]]
function = "nvmlDeviceGetPowerUsage"
latency_ms = 500
"#;

/// A sample cannot finish sooner than this after launch (8 × 500 ms of sleeps).
const SAMPLE_AT_LEAST: Duration = Duration::from_secs(4);
/// How soon a key must be answered: well inside one sample.
const KEY_WITHIN: Duration = Duration::from_secs(1);

#[test]
fn a_500_ms_driver_call_never_delays_the_keys() {
    if !tmux::available() {
        return;
    }
    let file = scenario_file(SLOW);
    let lib = library().to_str().unwrap().to_string();
    let scenario = file.path.to_str().unwrap().to_string();
    let launched = Instant::now();
    let t = Tmux::start(
        &format!("exec {BIN} --interval 1s"),
        140,
        40,
        &[
            ("GPUMETER_NVML_LIB", &lib),
            ("GPUMETER_FAKE_NVML_SCENARIO", &scenario),
            ("GPUMETER_FAKE_NVML_ELAPSED_MS", "10000"),
        ],
    );
    t.wait_for("the dashboard", Duration::from_secs(15), |s| {
        s.contains("nvml")
    });
    let pressed = Instant::now();
    t.keys(&["?"]);
    let screen = t.wait_for("the help overlay", Duration::from_secs(15), |s| {
        s.contains("this help")
    });
    let answered = pressed.elapsed();
    let since_launch = launched.elapsed();
    assert!(
        since_launch < SAMPLE_AT_LEAST,
        "the check came too late to prove anything ({since_launch:?} after launch):\n{screen}"
    );
    assert!(
        answered < KEY_WITHIN,
        "`?` took {answered:?} while NVML was busy: key handling waits for the driver\n{screen}"
    );
    t.keys(&["Escape"]);
    // The first reading does arrive, slowly, with every GPU and its power.
    let screen = t.wait_for("the first reading", Duration::from_secs(30), |s| {
        s.contains("H100") && !s.contains("waiting for the first reading")
    });
    assert!(
        screen.contains("650"),
        "power read through the slow call:\n{screen}"
    );
    t.keys(&["q"]);
    t.wait_dead(Duration::from_secs(15));
    assert_eq!(t.exit_status(), Some(0));
}
