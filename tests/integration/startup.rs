//! Start-up through the real binary on the fake NVML library: the dashboard paints, and says
//! what it waits for, while `nvmlInit` hangs; an init that fails after the screen is up ends
//! the dashboard with the same message and exit code as a failure before it (one before it
//! is `cli::dashboard_without_driver_fails_before_touching_the_terminal`).

use std::time::{Duration, Instant};

use crate::support::fake_nvml::{library, scenario_file};
use crate::support::tmux::{self, Tmux};

const BIN: &str = env!("CARGO_BIN_EXE_gpumeter");

/// Two GPUs whose driver takes `latency_ms` to initialise, then fails with `error` if given.
fn slow_init(latency_ms: u64, error: Option<&str>) -> String {
    let error = error.map_or(String::new(), |e| format!("error = \"{e}\"\n"));
    format!(
        r#"
name = "slow-init"
description = "nvmlInit_v2 takes {latency_ms} ms"
driver_version = "550.90.07"
cuda_driver_version = "12.4"
[[gpu]]
count = 2
name = "NVIDIA H100 80GB HBM3"
memory_total_gib = 80
util_gpu_pct = {{ const = 97 }}
power_watts = {{ const = 650 }}
power_limit_watts = 700
[[fault]]
function = "nvmlInit_v2"
latency_ms = {latency_ms}
{error}"#
    )
}

fn start(scenario: &str) -> Tmux {
    let lib = library().to_str().unwrap().to_string();
    Tmux::start(
        &format!("exec {BIN} --interval 1s --no-ledger"),
        140,
        40,
        &[
            ("GPUMETER_NVML_LIB", &lib),
            ("GPUMETER_FAKE_NVML_SCENARIO", scenario),
        ],
    )
}

/// How long the fake driver's init hangs; the waiting screen must come well before.
const HANG: Duration = Duration::from_secs(4);

#[test]
fn a_hung_nvml_init_still_paints_and_says_what_it_waits_for() {
    if !tmux::available() {
        return;
    }
    let file = scenario_file(&slow_init(HANG.as_millis() as u64, None));
    let launched = Instant::now();
    let t = start(file.path.to_str().unwrap());
    let screen = t.wait_for("the waiting screen", Duration::from_secs(15), |s| {
        s.contains("waiting for NVML to start")
    });
    let seen = launched.elapsed();
    assert!(
        seen < HANG,
        "the check came after the init returned ({seen:?}): it proves nothing\n{screen}"
    );
    assert!(screen.contains("gpumeter"), "{screen}");
    // Keys are answered meanwhile.
    t.keys(&["?"]);
    t.wait_for("the help overlay", Duration::from_secs(15), |s| {
        s.contains("this help")
    });
    t.keys(&["Escape"]);
    // The init returns and the readings come.
    let screen = t.wait_for("the first reading", Duration::from_secs(30), |s| {
        s.contains("H100") && !s.contains("waiting for")
    });
    assert!(screen.contains("650"), "{screen}");
    t.keys(&["q"]);
    t.wait_dead(Duration::from_secs(15));
    assert!(!t.alternate_on(), "the terminal was not restored");
    assert_eq!(t.exit_status(), Some(0));
}

#[test]
fn an_init_failing_after_the_screen_is_up_ends_it_with_the_message_and_exit_3() {
    if !tmux::available() {
        return;
    }
    let file = scenario_file(&slow_init(1_500, Some("DRIVER_NOT_LOADED")));
    let t = start(file.path.to_str().unwrap());
    t.wait_for("the waiting screen", Duration::from_secs(15), |s| {
        s.contains("waiting for NVML to start")
    });
    t.wait_dead(Duration::from_secs(30));
    assert!(!t.alternate_on(), "the terminal was not restored");
    assert_eq!(t.exit_status(), Some(3), "{}", t.screen());
    let screen = t.history();
    // The message wraps at the pane's width (where depends on the library's path).
    let flat: String = screen.chars().filter(|c| !c.is_whitespace()).collect();
    assert!(flat.contains("NVIDIAkerneldriverisnotrunning"), "{screen}");
    assert!(flat.contains("DRIVER_NOT_LOADED"), "{screen}");
    assert!(flat.contains("gpumeter--demo"), "{screen}");
}
