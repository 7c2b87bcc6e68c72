//! The fault matrix: every NVML function gpumeter calls × every error a driver commonly
//! returns, injected on GPU 1 of a 4-GPU machine through the fake library. In every cell
//! gpumeter exits 0; GPU 1 loses exactly the readings that function feeds (or is marked lost);
//! GPUs 0, 2 and 3 read exactly as without the fault; processes lose only what the function
//! told; and a warning names GPU 1 and the error where one is due (unsupported is quiet).
//! All cells run, then every failing cell is reported together.

use std::sync::Mutex;

use serde_json::Value;

use crate::support::fake_nvml::{FULL, gpu_processes, snapshot};

const ELAPSED_MS: u64 = 42_000;

/// The functions gpumeter calls per device, and the GPU fields each one feeds.
const FUNCTIONS: &[(&str, &[&str])] = &[
    ("nvmlDeviceGetHandleByIndex_v2", &["*"]),
    ("nvmlDeviceGetName", &["name"]),
    ("nvmlDeviceGetUUID", &["uuid"]),
    ("nvmlDeviceGetPciInfo_v3", &["pci_bus_id"]),
    (
        "nvmlDeviceGetMaxClockInfo",
        &["clock_sm_max_mhz", "clock_memory_max_mhz"],
    ),
    ("nvmlDeviceGetMaxPcieLinkGeneration", &["pcie_link_gen_max"]),
    ("nvmlDeviceGetMaxPcieLinkWidth", &["pcie_link_width_max"]),
    // Asked only to skip fan speed on fanless boards: a failure leaves fan speed readable.
    ("nvmlDeviceGetNumFans", &[]),
    (
        "nvmlDeviceGetUtilizationRates",
        &["util_gpu_pct", "util_memory_pct"],
    ),
    (
        "nvmlDeviceGetMemoryInfo_v2",
        &["memory_total_bytes", "memory_used_bytes"],
    ),
    ("nvmlDeviceGetPowerUsage", &["power_watts"]),
    ("nvmlDeviceGetEnforcedPowerLimit", &["power_limit_watts"]),
    (
        "nvmlDeviceGetPowerManagementDefaultLimit",
        &["power_default_limit_watts"],
    ),
    (
        "nvmlDeviceGetTotalEnergyConsumption",
        &["energy_millijoules"],
    ),
    ("nvmlDeviceGetTemperature", &["temperature_celsius"]),
    ("nvmlDeviceGetFanSpeed_v2", &["fan_speed_pct"]),
    (
        "nvmlDeviceGetClockInfo",
        &["clock_graphics_mhz", "clock_sm_mhz", "clock_memory_mhz"],
    ),
    (
        "nvmlDeviceGetCurrentClocksThrottleReasons",
        &["throttle_reasons"],
    ),
    (
        "nvmlDeviceGetPcieThroughput",
        &["pcie_rx_bytes_per_s", "pcie_tx_bytes_per_s"],
    ),
    ("nvmlDeviceGetCurrPcieLinkGeneration", &["pcie_link_gen"]),
    ("nvmlDeviceGetCurrPcieLinkWidth", &["pcie_link_width"]),
    ("nvmlDeviceGetEncoderUtilization", &["encoder_util_pct"]),
    ("nvmlDeviceGetDecoderUtilization", &["decoder_util_pct"]),
    ("nvmlDeviceGetMigMode", &["mig_enabled"]),
    ("nvmlDeviceGetComputeRunningProcesses_v3", &[]),
    ("nvmlDeviceGetGraphicsRunningProcesses_v3", &[]),
    ("nvmlDeviceGetProcessUtilization", &[]),
];

/// The errors, with the words gpumeter's warning must use (`None`: no warning due).
const ERRORS: &[(&str, Option<&str>)] = &[
    ("NOT_SUPPORTED", None),
    ("NO_PERMISSION", Some("no permission")),
    ("GPU_IS_LOST", Some("lost")),
    ("UNKNOWN", Some("unknown driver error")),
    ("TIMEOUT", Some("timeout")),
];

/// GPU fields that are measurements (identity aside).
fn measured(gpu: &Value) -> Vec<(&String, &Value)> {
    const IDENTITY: [&str; 5] = ["index", "state", "uuid", "name", "pci_bus_id"];
    gpu.as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| !IDENTITY.contains(&k.as_str()))
        .collect()
}

/// What GPU 1's processes should look like after `function` failed on GPU 1 (or the GPU is
/// gone), from the fault-free list.
fn expected_processes(clean: &Value, function: &str, gone: bool) -> Vec<(u64, Vec<Value>)> {
    let mut out = Vec::new();
    for (pid, uses) in gpu_processes(clean) {
        let mut kept = Vec::new();
        for mut u in uses {
            if u["gpu_index"] == 1 {
                if gone {
                    continue;
                }
                let kind = u["kind"].as_str().unwrap().to_string();
                match function {
                    "nvmlDeviceGetComputeRunningProcesses_v3" => match kind.as_str() {
                        "compute" => continue,
                        "mixed" => u["kind"] = "graphics".into(),
                        _ => {}
                    },
                    "nvmlDeviceGetGraphicsRunningProcesses_v3" => match kind.as_str() {
                        "graphics" => continue,
                        "mixed" => u["kind"] = "compute".into(),
                        _ => {}
                    },
                    "nvmlDeviceGetProcessUtilization" => {
                        u["sm_util_pct"] = Value::Null;
                        u["memory_util_pct"] = Value::Null;
                    }
                    _ => {}
                }
            }
            kept.push(u);
        }
        if !kept.is_empty() {
            out.push((pid, kept));
        }
    }
    out
}

/// Checks one cell; returns what is wrong.
fn check_cell(
    clean: &Value,
    function: &str,
    fields: &[&str],
    error: &str,
    words: Option<&str>,
) -> Vec<String> {
    let scenario =
        format!("{FULL}[[fault]]\ngpu = 1\nfunction = \"{function}\"\nerror = \"{error}\"\n");
    let snap = snapshot(&scenario, ELAPSED_MS, &[]);
    let mut wrong = Vec::new();
    let gpus = snap["gpus"].as_array().unwrap();
    for i in [0, 2, 3] {
        if gpus[i] != clean["gpus"][i] {
            wrong.push(format!(
                "GPU {i} changed: {} vs {}",
                gpus[i], clean["gpus"][i]
            ));
        }
    }
    let gpu1 = &gpus[1];
    let lost = error == "GPU_IS_LOST";
    let handle_failed = fields == ["*"];
    if lost {
        if gpu1["state"] != "lost" {
            wrong.push(format!("GPU 1 state {} (want lost)", gpu1["state"]));
        }
        // XID counts come from the event thread, not the device: a lost GPU keeps them (XID
        // 79 is what says it fell off the bus).
        let left: Vec<_> = measured(gpu1)
            .into_iter()
            .filter(|(k, v)| !v.is_null() && k.as_str() != "xid_errors")
            .collect();
        if !left.is_empty() {
            wrong.push(format!("lost GPU 1 still has readings: {left:?}"));
        }
    } else if handle_failed {
        let mut want = serde_json::json!({ "index": 1, "state": "error" });
        for (k, _) in clean["gpus"][1].as_object().unwrap() {
            if k != "index" && k != "state" {
                want[k] = Value::Null;
            }
        }
        if *gpu1 != want {
            wrong.push(format!(
                "GPU 1 = {gpu1}, want every field null and state error"
            ));
        }
    } else {
        let mut want = clean["gpus"][1].clone();
        for f in fields {
            want[*f] = Value::Null;
        }
        if *gpu1 != want {
            wrong.push(format!("GPU 1 = {gpu1}\n      want {want}"));
        }
    }
    let procs = gpu_processes(&snap);
    let want = expected_processes(clean, function, lost || handle_failed);
    if procs != want {
        wrong.push(format!("processes {procs:?}\n      want {want:?}"));
    }
    let warnings: Vec<&str> = snap["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .filter(|w| w.starts_with("GPU 1"))
        .collect();
    match (words, handle_failed) {
        (None, false) if !warnings.is_empty() => {
            wrong.push(format!("unsupported should be quiet: {warnings:?}"));
        }
        (Some(words), _) if !warnings.iter().any(|w| w.contains(words)) => {
            wrong.push(format!(
                "no warning saying `{words}` about GPU 1: {}",
                snap["warnings"]
            ));
        }
        (None, true) if warnings.is_empty() => {
            wrong.push(format!("no warning about GPU 1: {}", snap["warnings"]));
        }
        _ => {}
    }
    wrong
}

#[test]
fn every_function_times_every_error_keeps_gpumeter_going() {
    let clean = snapshot(FULL, ELAPSED_MS, &[]);
    let about_gpus = |w: &Value| w.as_str().is_some_and(|w| w.starts_with("GPU "));
    assert!(
        !clean["warnings"].as_array().unwrap().iter().any(about_gpus),
        "{}",
        clean["warnings"]
    );
    let cells: Vec<(&str, &[&str], &str, Option<&str>)> = FUNCTIONS
        .iter()
        .flat_map(|(f, fields)| ERRORS.iter().map(move |(e, w)| (*f, *fields, *e, *w)))
        .collect();
    let failures = Mutex::new(Vec::new());
    let next = Mutex::new(cells.iter());
    // Each cell is one gpumeter run that mostly waits: a few at a time.
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                loop {
                    let Some(&(function, fields, error, words)) = next.lock().unwrap().next()
                    else {
                        return;
                    };
                    let wrong = check_cell(&clean, function, fields, error, words);
                    if !wrong.is_empty() {
                        failures.lock().unwrap().push(format!(
                            "{function} × {error}:\n    {}",
                            wrong.join("\n    ")
                        ));
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {} cells failed:\n{}",
        failures.len(),
        cells.len(),
        failures.join("\n")
    );
}

/// Device-less calls: the version readings fail alone (the other version, every GPU and every
/// process stay as without the fault); the device count failing is NVML failing as a whole.
#[test]
fn system_functions_fail_alone() {
    let clean = snapshot(FULL, ELAPSED_MS, &[]);
    let mut failures = Vec::new();
    let functions = [
        (
            "nvmlSystemGetDriverVersion",
            "driver_version",
            "cuda_driver_version",
        ),
        (
            "nvmlSystemGetCudaDriverVersion_v2",
            "cuda_driver_version",
            "driver_version",
        ),
    ];
    let words = [
        ("NOT_SUPPORTED", None),
        ("NO_PERMISSION", Some("no permission")),
        ("GPU_IS_LOST", Some("GPU lost")),
        ("UNKNOWN", Some("unknown driver error")),
        ("TIMEOUT", Some("timeout")),
    ];
    for (function, field, other) in functions {
        for (error, said) in words {
            let scenario =
                format!("{FULL}[[fault]]\nfunction = \"{function}\"\nerror = \"{error}\"\n");
            let snap = snapshot(&scenario, ELAPSED_MS, &[]);
            let mut wrong = Vec::new();
            if !snap["system"][field].is_null() {
                wrong.push(format!("{field} = {}", snap["system"][field]));
            }
            if snap["system"][other] != clean["system"][other] {
                wrong.push(format!("{other} = {}", snap["system"][other]));
            }
            if snap["gpus"] != clean["gpus"] || gpu_processes(&snap) != gpu_processes(&clean) {
                wrong.push("GPUs or processes changed".into());
            }
            let nvml: Vec<&str> = snap["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(Value::as_str)
                .filter(|w| w.starts_with("NVML"))
                .collect();
            match said {
                None if !nvml.is_empty() => wrong.push(format!("should be quiet: {nvml:?}")),
                Some(s) if !nvml.iter().any(|w| w.contains(s)) => {
                    wrong.push(format!(
                        "no NVML warning saying `{s}`: {}",
                        snap["warnings"]
                    ));
                }
                _ => {}
            }
            if !wrong.is_empty() {
                failures.push(format!("{function} × {error}: {}", wrong.join("; ")));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_failing_device_count_is_a_whole_failure_with_its_reason() {
    let scenario =
        format!("{FULL}[[fault]]\nfunction = \"nvmlDeviceGetCount_v2\"\nerror = \"TIMEOUT\"\n");
    let out = crate::support::fake_nvml::gpumeter(&["snapshot", "--json"], &scenario, 0, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("reading the GPU count failed (timeout)"),
        "{err}"
    );
}
