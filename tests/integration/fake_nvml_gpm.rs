//! GPM SM activity and XID events through the real NVML path on the fake library: the values
//! the scenario scripts reach the snapshot JSON (`sm_active_pct` …, `xid_errors`), `null` where
//! the board has no GPM, and every GPM and event call × NOT_SUPPORTED, NO_PERMISSION,
//! GPU_IS_LOST, TIMEOUT on GPU 1 costs GPU 1 those fields only (the others read as before).

use serde_json::Value;

use crate::support::fake_nvml::snapshot;

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
