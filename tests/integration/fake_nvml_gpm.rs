//! GPM SM activity and XID events through the real NVML path on the fake library: the values
//! the scenario scripts reach the snapshot JSON (`sm_active_pct` …, `xid_errors`), `null` where
//! the board has no GPM, and every GPM and event call × NOT_SUPPORTED, NO_PERMISSION,
//! GPU_IS_LOST, TIMEOUT on GPU 1 costs GPU 1 those fields only (the others read as before); the
//! calls without a device (sample alloc/free, metrics, event set create/wait) cost their fields
//! on every GPU and nothing else; unsupported XID events are said once.

use serde_json::Value;

use crate::support::fake_nvml::{recorded_readings, snapshot};

const ELAPSED_MS: u64 = 40_000;

/// GPUs 0–2 with GPM (GPU 2 without DRAM bandwidth), GPU 3 without; XIDs on GPUs 1 and 2.
const GPM: &str = r#"
name = "gpm"
description = "GPM and XIDs"
driver_version = "550.90.07"
[[gpu]]
count = 3
name = "NVIDIA H100 80GB HBM3"
util_gpu_pct = { const = 100 }
util_memory_pct = { const = 20 }
gpm = { sm_active_pct = { const = 3.25 }, sm_occupancy_pct = { const = 2 }, tensor_active_pct = { const = 0 }, dram_active_pct = { const = 7.5 } }
[[gpu]]
name = "NVIDIA A100 80GB PCIe"
util_gpu_pct = { const = 90 }
util_memory_pct = { const = 20 }
[[xid]]
gpu = 1
xid = 79
at_s = 30
[[xid]]
gpu = 2
xid = 48
at_s = 10
[[xid]]
gpu = 2
xid = 48
at_s = 20
[[xid]]
gpu = 2
xid = 94
at_s = 90
"#;

const FIELDS: [&str; 4] = [
    "sm_active_pct",
    "sm_occupancy_pct",
    "tensor_active_pct",
    "dram_active_pct",
];

#[test]
fn gpm_metrics_and_xid_counts_reach_the_snapshot() {
    let snap = snapshot(GPM, ELAPSED_MS, &[]);
    let gpus = snap["gpus"].as_array().unwrap();
    assert_eq!(gpus[0]["sm_active_pct"], 3.25);
    assert_eq!(gpus[0]["tensor_active_pct"], 0.0);
    assert_eq!(gpus[0]["dram_active_pct"], 7.5);
    for f in FIELDS {
        assert_eq!(gpus[3][f], Value::Null, "GPU 3 has no GPM: {f}");
    }
    assert_eq!(gpus[0]["xid_errors"], serde_json::json!([]));
    assert_eq!(
        gpus[1]["xid_errors"],
        serde_json::json!([{ "xid": 79, "count": 1 }])
    );
    // XID 94 is not due before 90 s.
    assert_eq!(
        gpus[2]["xid_errors"],
        serde_json::json!([{ "xid": 48, "count": 2 }])
    );
}

#[test]
fn gpm_and_event_faults_on_gpu_1_cost_gpu_1_only() {
    let clean = snapshot(GPM, ELAPSED_MS, &[]);
    let cells: &[(&str, &[&str])] = &[
        ("nvmlGpmQueryDeviceSupport", &FIELDS),
        ("nvmlGpmSampleGet", &FIELDS),
        ("nvmlDeviceRegisterEvents", &["xid_errors"]),
        ("nvmlDeviceGetSupportedEventTypes", &["xid_errors"]),
    ];
    let mut wrong = Vec::new();
    for (function, fields) in cells {
        for error in ["NOT_SUPPORTED", "NO_PERMISSION", "GPU_IS_LOST", "TIMEOUT"] {
            let scenario = format!(
                "{GPM}[[fault]]\ngpu = 1\nfunction = \"{function}\"\nerror = \"{error}\"\n"
            );
            let snap = snapshot(&scenario, ELAPSED_MS, &[]);
            let cell = format!("{function} × {error}");
            for i in [0, 2, 3] {
                if snap["gpus"][i] != clean["gpus"][i] {
                    wrong.push(format!("{cell}: GPU {i} changed"));
                }
            }
            let g1 = &snap["gpus"][1];
            // GPM calls are device readings: a lost answer marks the GPU lost. Event calls run
            // on the event thread: they cost the XID counts only.
            let lost_here = error == "GPU_IS_LOST" && function.starts_with("nvmlGpm");
            if lost_here {
                if g1["state"] != "lost" {
                    wrong.push(format!("{cell}: GPU 1 not lost: {g1}"));
                }
                continue;
            }
            for f in *fields {
                if g1[*f] != Value::Null {
                    wrong.push(format!("{cell}: GPU 1 {f} = {}", g1[*f]));
                }
            }
            for (k, v) in clean["gpus"][1].as_object().unwrap() {
                if !fields.contains(&k.as_str()) && g1[k] != *v {
                    wrong.push(format!("{cell}: GPU 1 {k} changed: {} → {}", v, g1[k]));
                }
            }
            let warned = snap["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|w| w.as_str().unwrap().contains("GPU 1"));
            if error != "NOT_SUPPORTED" && !warned && function.starts_with("nvmlDevice") {
                wrong.push(format!(
                    "{cell}: no warning names GPU 1: {}",
                    snap["warnings"]
                ));
            }
        }
    }
    // Device-less calls fail for every GPU: GPM fields go N/A everywhere, the rest stays.
    for function in ["nvmlGpmMetricsGet", "nvmlGpmSampleAlloc"] {
        for error in ["NOT_SUPPORTED", "NO_PERMISSION", "TIMEOUT"] {
            let scenario =
                format!("{GPM}[[fault]]\nfunction = \"{function}\"\nerror = \"{error}\"\n");
            let snap = snapshot(&scenario, ELAPSED_MS, &[]);
            for i in 0..4 {
                if snap["gpus"][i]["sm_active_pct"] != Value::Null
                    || snap["gpus"][i]["util_gpu_pct"] != clean["gpus"][i]["util_gpu_pct"]
                {
                    wrong.push(format!(
                        "{function} × {error}: GPU {i}: {}",
                        snap["gpus"][i]
                    ));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} cells wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn device_less_gpm_and_event_calls_cost_only_their_fields_everywhere() {
    // The cells the per-GPU test above cannot script: calls without a device handle.
    let clean = snapshot(GPM, ELAPSED_MS, &[]);
    // (function, error, what GPM reads, what the XID counts read): "same" = as without the
    // fault, "null" = N/A on every GPU, "lost" = the GPM cards answer lost (the driver said so
    // about their samples), the others read as before.
    let cells: &[(&str, &[&str], &str, &str)] = &[
        ("nvmlGpmMetricsGet", &["GPU_IS_LOST"], "lost", "same"),
        ("nvmlGpmSampleAlloc", &["GPU_IS_LOST"], "lost", "same"),
        // Freeing a sample that failed to free changes no reading.
        (
            "nvmlGpmSampleFree",
            &["NOT_SUPPORTED", "NO_PERMISSION", "GPU_IS_LOST", "TIMEOUT"],
            "same",
            "same",
        ),
        // No event set: no XID counts, the readings go on.
        (
            "nvmlEventSetCreate",
            &["NOT_SUPPORTED", "NO_PERMISSION", "GPU_IS_LOST", "TIMEOUT"],
            "same",
            "null",
        ),
        // A wait that times out is a quiet interval; any other answer ends the watch.
        ("nvmlEventSetWait_v2", &["TIMEOUT"], "same", "empty"),
        (
            "nvmlEventSetWait_v2",
            &["NOT_SUPPORTED", "NO_PERMISSION", "GPU_IS_LOST"],
            "same",
            "null",
        ),
    ];
    let mut wrong = Vec::new();
    for (function, errors, gpm, xid) in cells {
        for error in *errors {
            let scenario =
                format!("{GPM}[[fault]]\nfunction = \"{function}\"\nerror = \"{error}\"\n");
            let snap = snapshot(&scenario, ELAPSED_MS, &[]);
            let cell = format!("{function} × {error}");
            for i in 0..4 {
                let (g, c) = (&snap["gpus"][i], &clean["gpus"][i]);
                let has_gpm = c["sm_active_pct"] != Value::Null;
                if *gpm == "lost" && has_gpm {
                    if g["state"] != "lost" || g["xid_errors"] != c["xid_errors"] {
                        wrong.push(format!("{cell}: GPU {i} not lost with its XIDs: {g}"));
                    }
                    continue;
                }
                if g["util_gpu_pct"] != c["util_gpu_pct"] || g["state"] != c["state"] {
                    wrong.push(format!("{cell}: GPU {i} readings changed: {g}"));
                }
                let sm_ok = match *gpm {
                    "null" | "lost" => g["sm_active_pct"] == Value::Null,
                    _ => g["sm_active_pct"] == c["sm_active_pct"],
                };
                if !sm_ok {
                    wrong.push(format!(
                        "{cell}: GPU {i} sm_active_pct = {}",
                        g["sm_active_pct"]
                    ));
                }
                let xid_ok = match *xid {
                    "null" => g["xid_errors"] == Value::Null,
                    // Events registered, none delivered (a GPU without events stays N/A).
                    "empty" if c["xid_errors"].is_null() => g["xid_errors"] == Value::Null,
                    "empty" => g["xid_errors"] == serde_json::json!([]),
                    _ => g["xid_errors"] == c["xid_errors"],
                };
                if !xid_ok {
                    wrong.push(format!("{cell}: GPU {i} xid_errors = {}", g["xid_errors"]));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} cells wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn unsupported_xid_events_are_said_once() {
    let scenario = format!(
        "{GPM}[[fault]]\ngpu = 1\nfunction = \"nvmlDeviceRegisterEvents\"\nerror = \"NOT_SUPPORTED\"\n"
    );
    let lines = recorded_readings(&scenario, ELAPSED_MS);
    let said: usize = lines
        .iter()
        .flat_map(|s| s["warnings"].as_array().cloned().unwrap_or_default())
        .filter(|w| {
            w.as_str()
                .is_some_and(|w| w.starts_with("XID events not supported on GPU 1:"))
        })
        .count();
    assert_eq!(said, 1, "{lines:?}");
    assert!(
        lines
            .iter()
            .all(|s| s["gpus"][1]["xid_errors"] == Value::Null)
    );
}
