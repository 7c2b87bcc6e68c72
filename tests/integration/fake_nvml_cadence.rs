//! How often gpumeter asks the driver, seen through the fake library's call-numbered faults:
//! a fault `after_calls = 1` fails every call after the first, so a reading that stays good
//! over several readings was not asked again. Settings (power limit, PCIe link, MIG mode) are
//! read once per 10 s; measurements every reading.

use serde_json::Value;

use crate::support::fake_nvml::{FULL, recorded_readings};

const ELAPSED_MS: u64 = 42_000;

/// The readings of `record --for 1s --interval 200ms` with `function` failing on GPU 1 from
/// its second call on.
fn readings_with_later_calls_failing(function: &str) -> Vec<Value> {
    let scenario = format!(
        "{FULL}[[fault]]\ngpu = 1\nfunction = \"{function}\"\nerror = \"UNKNOWN\"\nafter_calls = 1\n"
    );
    recorded_readings(&scenario, ELAPSED_MS)
}

fn gpu1_warnings(snap: &Value) -> Vec<String> {
    snap["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .filter(|w| w.starts_with("GPU 1"))
        .map(str::to_string)
        .collect()
}

#[test]
fn settings_are_read_once_per_interval_not_every_reading() {
    for (function, field) in [
        ("nvmlDeviceGetEnforcedPowerLimit", "power_limit_watts"),
        ("nvmlDeviceGetCurrPcieLinkGeneration", "pcie_link_gen"),
        ("nvmlDeviceGetCurrPcieLinkWidth", "pcie_link_width"),
    ] {
        let lines = readings_with_later_calls_failing(function);
        let first = &lines[0]["gpus"][1][field];
        assert!(!first.is_null(), "{function}: first reading has {field}");
        for (i, snap) in lines.iter().enumerate() {
            assert_eq!(
                &snap["gpus"][1][field], first,
                "{function}: reading {i} carries {field} forward (it was not asked again)"
            );
            assert!(
                gpu1_warnings(snap).is_empty(),
                "{function}: reading {i}: {:?}",
                gpu1_warnings(snap)
            );
        }
    }
}

#[test]
fn measurements_are_read_every_reading() {
    // The control: the same fault on a per-reading call shows from the second reading on.
    let lines = readings_with_later_calls_failing("nvmlDeviceGetPowerUsage");
    assert!(!lines[0]["gpus"][1]["power_watts"].is_null());
    for (i, snap) in lines.iter().enumerate().skip(1) {
        assert!(
            snap["gpus"][1]["power_watts"].is_null(),
            "reading {i}: {}",
            snap["gpus"][1]
        );
        let warnings = gpu1_warnings(snap);
        assert!(
            warnings.iter().any(|w| w.contains("power")),
            "reading {i}: {warnings:?}"
        );
    }
}

#[test]
fn a_process_list_is_one_call_a_reading() {
    // One call per reading (the room kept from the last answer): calls 1–4 are readings 1–4,
    // and the fault from the fifth call on shows first in reading 5. Asking for the count
    // first would have made it reading 3.
    for function in [
        "nvmlDeviceGetComputeRunningProcesses_v3",
        "nvmlDeviceGetProcessUtilization",
    ] {
        let scenario = format!(
            "{FULL}[[fault]]\ngpu = 1\nfunction = \"{function}\"\nerror = \"UNKNOWN\"\nafter_calls = 4\n"
        );
        let lines = recorded_readings(&scenario, ELAPSED_MS);
        assert!(lines.len() >= 5, "{function}: {} readings", lines.len());
        let first_failing = lines
            .iter()
            .position(|snap| !gpu1_warnings(snap).is_empty())
            .map(|i| (i, gpu1_warnings(&lines[i])));
        assert!(
            first_failing.as_ref().is_some_and(|(i, _)| *i == 4),
            "{function}: {first_failing:?}"
        );
    }
}
