//! Scripted faults: `fault()` answers call by call; `snapshot_at` shows their effect.
// Always true in a test crate; it lets clippy.toml's allow-*-in-tests cover helpers, not only #[test] fns.
#![cfg(test)]

use gpumeter_model::GpuState;
use gpumeter_sim::{Fault, Scenario, Simulator};

const BASE: &str = r#"
name = "t"
description = "test"
[[gpu]]
count = 2
name = "Test GPU"
memory_total_gib = 16
util_gpu_pct = { const = 50 }
power_watts = { const = 100 }
temperature_c = { const = 40 }
[[process]]
pid = 100
gpus = [{ gpu = 1, memory_gib = { const = 2 }, sm_util_pct = { const = 30 } }]
workers = { count = 2 }
"#;

fn sim(faults: &str) -> Simulator {
    Simulator::new(Scenario::from_toml("t.toml", &format!("{BASE}{faults}")).unwrap())
}

const POWER: &str = "nvmlDeviceGetPowerUsage";

#[test]
fn after_calls_from_s_and_latency_are_honoured() {
    let s = sim(r#"
[[fault]]
gpu = 0
function = "nvmlDeviceGetPowerUsage"
error = "UNKNOWN"
after_calls = 3
[[fault]]
gpu = 1
function = "nvmlDeviceGetPowerUsage"
error = 4
from_s = 10
[[fault]]
function = "nvmlDeviceGetTemperature"
latency_ms = 500
[[fault]]
function = "nvmlInit_v2"
error = "DRIVER_NOT_LOADED"
after_calls = 1
"#);
    assert_eq!(s.fault(Some(0), POWER, 0, 3), None);
    assert_eq!(
        s.fault(Some(0), POWER, 0, 4),
        Some(Fault {
            error: Some(999),
            latency_ms: 0
        })
    );
    assert_eq!(s.fault(Some(1), POWER, 9_999, 100), None);
    assert_eq!(
        s.fault(Some(1), POWER, 10_000, 1),
        Some(Fault {
            error: Some(4),
            latency_ms: 0
        })
    );
    let slow = Some(Fault {
        error: None,
        latency_ms: 500,
    });
    assert_eq!(s.fault(Some(1), "nvmlDeviceGetTemperature", 0, 1), slow);
    assert_eq!(s.fault(None, "nvmlInit_v2", 0, 1), None);
    assert_eq!(s.fault(None, "nvmlInit_v2", 0, 2).unwrap().error, Some(9));
    assert_eq!(s.fault(Some(0), "nvmlDeviceGetName", 50_000, 9), None);
}

#[test]
fn first_matching_entry_wins_and_star_covers_devices_only() {
    let s = sim(r#"
[[fault]]
gpu = 1
function = "nvmlDeviceGetPowerUsage"
latency_ms = 20
[[fault]]
gpu = 1
function = "*"
error = "GPU_IS_LOST"
"#);
    assert_eq!(
        s.fault(Some(1), POWER, 0, 1),
        Some(Fault {
            error: None,
            latency_ms: 20
        })
    );
    assert_eq!(
        s.fault(Some(1), "nvmlDeviceGetName", 0, 1).unwrap().error,
        Some(15)
    );
    assert_eq!(s.fault(Some(0), POWER, 0, 1), None);
    assert_eq!(s.fault(None, "nvmlSystemGetDriverVersion", 0, 1), None);
}

#[test]
fn not_supported_blanks_one_field_and_warns() {
    let mut s = sim(r#"
[[fault]]
gpu = 0
function = "nvmlDeviceGetPowerUsage"
error = "NOT_SUPPORTED"
[[fault]]
gpu = 1
function = "nvmlDeviceGetProcessUtilization"
error = "NO_PERMISSION"
"#);
    let snap = s.snapshot_at(1_000, 0);
    let g0 = &snap.gpus[0];
    assert_eq!(g0.state, GpuState::Ok);
    assert_eq!(g0.power_watts, None);
    assert_eq!(g0.temperature_celsius, Some(40));
    assert_eq!(snap.gpus[1].power_watts, Some(100.0));
    let p = snap.processes.iter().find(|p| p.pid == 100).unwrap();
    assert_eq!(p.gpu[0].sm_util_pct, None);
    assert_eq!(p.gpu[0].memory_bytes, Some(2 << 30));
    assert_eq!(snap.warnings.len(), 2);
    assert!(
        snap.warnings[0].contains("nvmlDeviceGetPowerUsage")
            && snap.warnings[0].contains("NOT_SUPPORTED")
    );
    // The truth is untouched.
    assert_eq!(s.truth_at(1_000, 0).gpus[0].power_watts, Some(100.0));
}

#[test]
fn a_lost_gpu_takes_its_processes_and_their_workers_along() {
    let mut s = sim(r#"
[[fault]]
gpu = 1
function = "nvmlDeviceGetUtilizationRates"
error = "GPU_IS_LOST"
from_s = 5
"#);
    assert_eq!(s.snapshot_at(4_999, 0).processes.len(), 3);
    let snap = s.snapshot_at(5_000, 0);
    assert_eq!(snap.gpus[1].state, GpuState::Lost);
    assert_eq!(snap.gpus[1].memory_used_bytes, None);
    assert_eq!(snap.gpus[0].state, GpuState::Ok);
    assert!(snap.processes.is_empty());
}

/// `until_s` ends a fault: a transient error blanks the GPU (Error, not Lost) only inside
/// [from_s, until_s), for the call-by-call answers and the snapshots alike.
#[test]
fn until_s_makes_a_fault_transient() {
    let mut s = sim(r#"
[[fault]]
gpu = 0
function = "*"
error = "UNKNOWN"
from_s = 5
until_s = 8
"#);
    assert_eq!(s.fault(Some(0), POWER, 4_999, 1), None);
    assert_eq!(s.fault(Some(0), POWER, 5_000, 1).unwrap().error, Some(999));
    assert_eq!(s.fault(Some(0), POWER, 7_999, 1).unwrap().error, Some(999));
    assert_eq!(s.fault(Some(0), POWER, 8_000, 1), None);
    assert_eq!(s.snapshot_at(6_000, 0).gpus[0].state, GpuState::Error);
    assert_eq!(s.snapshot_at(6_000, 0).gpus[0].power_watts, None);
    let back = s.snapshot_at(8_000, 0);
    assert_eq!(back.gpus[0].state, GpuState::Ok);
    assert_eq!(back.gpus[0].power_watts, Some(100.0));
}

#[test]
fn until_s_must_come_after_from_s() {
    let bad = format!(
        "{BASE}[[fault]]\nfunction = \"*\"\nerror = \"UNKNOWN\"\nfrom_s = 5\nuntil_s = 5\n"
    );
    let err = Scenario::from_toml("t.toml", &bad).unwrap_err().to_string();
    assert!(err.contains("until_s"), "{err}");
}
