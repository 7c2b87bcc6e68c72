//! gpumeter's real NVML path (nvml-wrapper, a real dlopen) against the fake NVML library:
//! readings equal the scenario field by field, scripted faults after N calls or from a time,
//! init failures and a missing library, thousands of processes, hostile process names.
//! The function × error matrix is in `fake_nvml_faults`, the TUI latency check in
//! `fake_nvml_tui`.

use std::process::{Child, Command, Stdio};

use gpumeter_model::ThrottleReason;
use serde_json::{Value, json};

use crate::support::fake_nvml::{FULL, gpu_processes, gpumeter, library, snapshot, truth};

/// Throttle reasons in NVML bit order (the scenario lists them in rule order).
fn canonical_throttle(gpu: &mut Value) {
    if let Some(list) = gpu["throttle_reasons"].as_array() {
        let reasons: Vec<ThrottleReason> = list
            .iter()
            .map(|r| serde_json::from_value(r.clone()).unwrap())
            .collect();
        let sorted = ThrottleReason::from_bits(ThrottleReason::to_bits(&reasons));
        gpu["throttle_reasons"] = serde_json::to_value(sorted).unwrap();
    }
}

/// Every GPU field and every GPU process of `gpumeter snapshot` equal the scenario's truth.
fn assert_matches_truth(scenario: &str, elapsed_ms: u64) {
    let snap = snapshot(scenario, elapsed_ms, &[]);
    let truth = truth(scenario, elapsed_ms);
    let mut want = serde_json::to_value(&truth).unwrap();
    let got_gpus = snap["gpus"].as_array().unwrap();
    assert_eq!(got_gpus.len(), truth.gpus.len());
    for (got, want) in got_gpus.iter().zip(want["gpus"].as_array_mut().unwrap()) {
        let mut got = got.clone();
        canonical_throttle(&mut got);
        canonical_throttle(want);
        for (field, value) in want.as_object().unwrap() {
            assert_eq!(
                &got[field], value,
                "{scenario:.40}: GPU {} {field}",
                want["index"]
            );
        }
        assert_eq!(
            got.as_object().unwrap().len(),
            want.as_object().unwrap().len()
        );
    }
    assert_eq!(
        gpu_processes(&snap),
        gpu_processes(&want),
        "GPU processes (pid, gpu, kind, memory, SM and memory utilization)"
    );
    assert_eq!(
        snap["system"]["driver_version"],
        want["system"]["driver_version"]
    );
    assert_eq!(
        snap["system"]["cuda_driver_version"],
        want["system"]["cuda_driver_version"]
    );
    assert_eq!(snap["source"], "nvml");
}

#[test]
fn snapshot_equals_the_scenario_field_by_field() {
    assert_matches_truth(FULL, 61_700);
    assert_matches_truth(FULL, 3_000);
}

#[test]
fn snapshot_of_builtin_scenarios_equals_their_truth() {
    // Fault-free built-ins: 8×H100 training, and the shared box with invisible PIDs.
    assert_matches_truth("training", 45_000);
    assert_matches_truth("mixed", 90_000);
}

#[test]
fn pids_that_proc_cannot_see_are_listed_and_labelled() {
    let snap = snapshot("mixed", 10_000, &[]);
    let invisible = snap["processes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["pid"] == 771_204)
        .expect("NVML's PID 771204 is kept");
    assert_eq!(invisible["visible"], false);
    assert_eq!(invisible["gpu"][0]["gpu_index"], 3);
    let warnings = snap["warnings"].to_string();
    assert!(warnings.contains("not visible in /proc"), "{warnings}");
}

fn power_of_gpu1(extra: &str, elapsed_ms: u64) -> (Value, String) {
    let snap = snapshot(&format!("{FULL}{extra}"), elapsed_ms, &[]);
    (
        snap["gpus"][1]["power_watts"].clone(),
        snap["warnings"].to_string(),
    )
}

#[test]
fn a_fault_after_n_calls_hits_the_second_reading() {
    // `snapshot` reads twice: PowerUsage is called once per reading.
    let fault = |n| {
        format!(
            "[[fault]]\ngpu = 1\nfunction = \"nvmlDeviceGetPowerUsage\"\nerror = \"TIMEOUT\"\nafter_calls = {n}\n"
        )
    };
    let (power, warnings) = power_of_gpu1(&fault(1), 5_000);
    assert_eq!(power, Value::Null, "call 2 failed");
    assert!(
        warnings.contains("GPU 1: could not read power (timeout)"),
        "{warnings}"
    );
    let (power, warnings) = power_of_gpu1(&fault(2), 5_000);
    assert!(power.is_number(), "calls 1 and 2 succeed");
    assert!(!warnings.contains("GPU 1"), "{warnings}");
}

#[test]
fn a_fault_from_a_time_starts_then() {
    let fault = "[[fault]]\ngpu = 1\nfunction = \"nvmlDeviceGetPowerUsage\"\nerror = \"UNKNOWN\"\nfrom_s = 30\n";
    let (power, _) = power_of_gpu1(fault, 29_900);
    assert!(power.is_number(), "before 30 s");
    let (power, warnings) = power_of_gpu1(fault, 30_000);
    assert_eq!(power, Value::Null, "from 30 s");
    assert!(warnings.contains("unknown driver error"), "{warnings}");
}

#[test]
fn the_gpu_lost_scenario_marks_gpu_2_and_keeps_the_others() {
    let snap = snapshot("gpu-lost", 60_000, &[]);
    let gpus = snap["gpus"].as_array().unwrap();
    assert_eq!(gpus[2]["state"], "lost");
    assert_eq!(gpus[2]["util_gpu_pct"], Value::Null);
    for i in [0, 1, 3] {
        assert_eq!(gpus[i]["state"], "ok");
        assert!(gpus[i]["util_gpu_pct"].is_number(), "GPU {i}");
    }
    assert!(
        gpu_processes(&snap)
            .iter()
            .all(|(_, uses)| uses.iter().all(|u| u["gpu_index"] != 2))
    );
    let warnings = snap["warnings"].to_string();
    assert!(
        warnings.contains("GPU 2") && warnings.contains("lost"),
        "{warnings}"
    );
}

/// Exit code and stderr of `gpumeter snapshot` that must fail to open NVML.
fn open_failure(scenario: &str) -> (Option<i32>, String) {
    let out = gpumeter(&["snapshot", "--json"], scenario, 0, &[]);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn init_failure_exits_3_with_the_documented_message() {
    let fault = |e: &str| format!("{FULL}[[fault]]\nfunction = \"nvmlInit_v2\"\nerror = \"{e}\"\n");
    let (code, err) = open_failure(&fault("DRIVER_NOT_LOADED"));
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("NVIDIA kernel driver is not running"), "{err}");
    assert!(err.contains(&*library().to_string_lossy()), "{err}");
    assert!(err.contains("gpumeter --demo"), "{err}");
    let (code, err) = open_failure(&fault("UNKNOWN"));
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("failed to initialise"), "{err}");
    let (code, err) = open_failure(&fault("NO_PERMISSION"));
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("/dev/nvidia*"), "{err}");
}

#[test]
fn a_bad_scenario_fails_init_and_says_why() {
    let (code, err) = open_failure("no-such-scenario");
    assert_eq!(code, Some(3), "{err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("fake-nvml:"))
        .unwrap_or_default();
    assert!(
        line.contains("unknown scenario `no-such-scenario`"),
        "{err}"
    );
    assert!(err.contains("failed to initialise"), "{err}");
}

#[test]
fn a_missing_library_exits_3_naming_it() {
    let out = Command::new(env!("CARGO_BIN_EXE_gpumeter"))
        .args([
            "snapshot",
            "--json",
            "--nvml-lib",
            "/nonexistent/libnvidia-ml.so.1",
        ])
        .env_remove("GPUMETER_NVML_LIB")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("NVIDIA driver library not found"), "{err}");
    assert!(err.contains("/nonexistent/libnvidia-ml.so.1"), "{err}");
    assert!(err.contains("gpumeter --demo"), "{err}");
}

#[test]
fn thousands_of_processes_reach_the_snapshot() {
    let many = "[[process]]\npid = 3500000\ncount = 3000\ngpu_stride = 0\n\
                gpus = [{ gpu = 2, memory_gib = { const = 0.02 }, sm_util_pct = { const = 1 } }]\n";
    let snap = snapshot(&format!("{FULL}{many}"), 1_000, &[]);
    let on_gpu2: Vec<u64> = gpu_processes(&snap)
        .into_iter()
        .filter(|(pid, uses)| *pid >= 3_500_000 && uses.iter().any(|u| u["gpu_index"] == 2))
        .map(|(pid, _)| pid)
        .collect();
    assert_eq!(on_gpu2.len(), 3000);
    assert_eq!((on_gpu2[0], on_gpu2[2999]), (3_500_000, 3_502_999));
}

/// A live process whose name (comm) and command line are hostile: `sh` run through a symlink
/// named with an OSC title sequence, with escape sequences and a bidi override as arguments.
fn hostile_process(dir: &std::path::Path) -> Child {
    let name = "\u{1b}]0;pwned\u{7}evil\u{1b}[2J";
    let link = dir.join(name);
    std::os::unix::fs::symlink("/bin/sh", &link).unwrap();
    Command::new(&link)
        .args([
            "-c",
            "sleep 30; :",
            "x",
            "\u{1b}[31m--tag=\u{202e}exe.txt\u{1b}]52;c;Zm9v\u{7}",
        ])
        .stdin(Stdio::null())
        .spawn()
        .unwrap()
}

/// Every string in `v`, recursively.
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

#[test]
fn hostile_process_names_reach_the_snapshot_sanitized() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = hostile_process(dir.path());
    std::thread::sleep(std::time::Duration::from_millis(200)); // let it exec
    let child_pid = child.id();
    let pid = child_pid.to_string();
    let scenario = format!(
        "{FULL}[[process]]\npid = 3600000\npid_env = \"HOSTILE_PID\"\n\
         gpus = [{{ gpu = 2, memory_gib = {{ const = 1 }}, sm_util_pct = {{ const = 5 }} }}]\n"
    );
    let env = [("HOSTILE_PID", pid.as_str())];
    let snap = snapshot(&scenario, 1_000, &env);
    let table = gpumeter(&["snapshot", "--interval", "100ms"], &scenario, 1_000, &env);
    let _ = child.kill();
    let _ = child.wait();

    let proc_ = snap["processes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["pid"].as_u64() == Some(u64::from(child_pid)))
        .unwrap_or_else(|| panic!("pid {pid} missing: {}", snap["processes"]));
    assert_eq!(proc_["visible"], true, "a real PID is read from /proc");
    assert_eq!(proc_["gpu"][0]["gpu_index"], json!(2));
    assert!(
        proc_["command"].as_str().unwrap().contains("exe.txt"),
        "{proc_}"
    );
    let mut all = Vec::new();
    strings(&snap, &mut all);
    for s in &all {
        assert!(
            !s.chars()
                .any(|c| c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c)),
            "unsanitized string in the snapshot: {s:?}"
        );
    }
    assert!(table.status.success());
    assert!(!table.stdout.contains(&0x1b), "ESC in the table output");
    assert!(!table.stdout.contains(&0x07), "BEL in the table output");
}

/// The union of the symbol sets nvml-wrapper, nvidia-ml-py and nvtop need (shared/NVML.md).
const REQUIRED_SYMBOLS: &str = "nvmlInit_v2 nvmlInitWithFlags nvmlShutdown nvmlErrorString \
    nvmlSystemGetDriverVersion nvmlSystemGetCudaDriverVersion_v2 nvmlDeviceGetCount_v2 \
    nvmlDeviceGetHandleByIndex_v2 nvmlDeviceGetName nvmlDeviceGetUUID nvmlDeviceGetPciInfo_v3 \
    nvmlDeviceGetUtilizationRates nvmlDeviceGetMemoryInfo_v2 nvmlDeviceGetPowerUsage \
    nvmlDeviceGetEnforcedPowerLimit nvmlDeviceGetPowerManagementLimit \
    nvmlDeviceGetPowerManagementDefaultLimit \
    nvmlDeviceGetTotalEnergyConsumption nvmlDeviceGetTemperature nvmlDeviceGetNumFans \
    nvmlDeviceGetFanSpeed_v2 nvmlDeviceGetClockInfo nvmlDeviceGetMaxClockInfo \
    nvmlDeviceGetCurrentClocksThrottleReasons nvmlDeviceGetPcieThroughput \
    nvmlDeviceGetCurrPcieLinkGeneration nvmlDeviceGetCurrPcieLinkWidth \
    nvmlDeviceGetMaxPcieLinkGeneration nvmlDeviceGetMaxPcieLinkWidth \
    nvmlDeviceGetEncoderUtilization nvmlDeviceGetDecoderUtilization nvmlDeviceGetMigMode \
    nvmlDeviceGetComputeRunningProcesses_v3 nvmlDeviceGetGraphicsRunningProcesses_v3 \
    nvmlDeviceGetProcessUtilization nvmlSystemGetCudaDriverVersion nvmlDeviceGetFanSpeed \
    nvmlDeviceGetIndex nvmlDeviceGetPerformanceState nvmlDeviceGetPersistenceMode \
    nvmlDeviceGetDisplayActive nvmlDeviceGetDisplayMode nvmlDeviceGetComputeMode \
    nvmlDeviceGetCudaComputeCapability nvmlDeviceGetTotalEccErrors nvmlDeviceIsMigDeviceHandle \
    nvmlInit nvmlDeviceGetTemperatureThreshold nvmlDeviceGetMPSComputeRunningProcesses_v3 \
    nvmlDeviceGetMaxMigDeviceCount nvmlDeviceGetMigDeviceHandleByIndex";

#[test]
fn the_library_exports_what_its_clients_need_and_nothing_that_misleads_them() {
    let out = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(library())
        .output()
        .expect("nm (binutils) lists the library's exports");
    assert!(out.status.success());
    let exported: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2).map(str::to_string))
        .collect();
    let missing: Vec<&str> = REQUIRED_SYMBOLS
        .split_whitespace()
        .filter(|s| !exported.iter().any(|e| e == s))
        .collect();
    assert!(missing.is_empty(), "not exported: {missing:?}");
    // GPM samples and event sets come with their free functions (nvml-wrapper's Drop calls
    // them unchecked).
    for (make, free) in [
        ("nvmlGpmSampleAlloc", "nvmlGpmSampleFree"),
        ("nvmlEventSetCreate", "nvmlEventSetFree"),
    ] {
        let has = |name: &str| exported.iter().any(|e| e == name);
        assert_eq!(has(make), has(free), "{make} without {free}");
    }
    // nvitop switches struct layouts when it sees these.
    let misleading = [
        "nvmlDeviceGetTemperatureV",
        "nvmlDeviceGetConfComputeMemSizeInfo",
    ];
    for partial in misleading {
        assert!(
            !exported.iter().any(|e| e.contains(partial)),
            "exports {partial}"
        );
    }
}
