//! nvidia-ml-py (`pynvml`, what nvitop and gpustat use) against the fake library: a client
//! nobody here wrote checks the fake's ABI. It loads `libnvidia-ml.so.1` through
//! `LD_LIBRARY_PATH`, and its answers must equal the scenario's truth.
//!
//! Python: `GPUMETER_PYTHON` when set (CI makes a venv with nvidia-ml-py), else `python3` if it
//! can import pynvml; otherwise the test is skipped, unless `GPUMETER_REQUIRE_PYNVML` is set.

use std::path::{Path, PathBuf};
use std::process::Command;

use gpumeter_model::GpuProcessKind;
use serde_json::{Value, json};

use crate::support::fake_nvml::{FULL, library, scenario_file, truth};

const ELAPSED_MS: u64 = 42_000;

/// A client session: init, gpustat-style init/shutdown churn, every device read, shutdown.
const SCRIPT: &str = r#"
import json, pynvml as n
n.nvmlInit()
for _ in range(20):
    n.nvmlInit(); n.nvmlShutdown()
s = lambda x: x.decode() if isinstance(x, bytes) else x
v = lambda x: getattr(x, "value", x)  # some calls return a ctypes int
out = {"driver": s(n.nvmlSystemGetDriverVersion()), "cuda": n.nvmlSystemGetCudaDriverVersion(), "gpus": []}
for i in range(n.nvmlDeviceGetCount()):
    h = n.nvmlDeviceGetHandleByIndex(i)
    m = n.nvmlDeviceGetMemoryInfo(h)
    m2 = n.nvmlDeviceGetMemoryInfo(h, version=n.nvmlMemory_v2)
    u = n.nvmlDeviceGetUtilizationRates(h)
    procs = lambda f: [[p.pid, p.usedGpuMemory] for p in f(h)]
    try:
        samples = [[x.pid, x.smUtil, x.memUtil] for x in n.nvmlDeviceGetProcessUtilization(h, 0)]
    except n.NVMLError_NotFound:
        samples = []
    out["gpus"].append({
        "index": n.nvmlDeviceGetIndex(h),
        "name": s(n.nvmlDeviceGetName(h)),
        "uuid": s(n.nvmlDeviceGetUUID(h)),
        "bus_id": s(n.nvmlDeviceGetPciInfo(h).busId),
        "memory": [m.total, m.used, m.free],
        "memory_v2": [m2.total, m2.used, m2.free],
        "util": [u.gpu, u.memory],
        "power_mw": n.nvmlDeviceGetPowerUsage(h),
        "temperature": n.nvmlDeviceGetTemperature(h, n.NVML_TEMPERATURE_GPU),
        "fan": n.nvmlDeviceGetFanSpeed(h),
        "compute": procs(n.nvmlDeviceGetComputeRunningProcesses),
        "graphics": procs(n.nvmlDeviceGetGraphicsRunningProcesses),
        "samples": samples,
        "cc": list(n.nvmlDeviceGetCudaComputeCapability(h)),
        "extras": [n.nvmlDeviceGetPerformanceState(h), n.nvmlDeviceGetPersistenceMode(h),
                   n.nvmlDeviceGetDisplayActive(h), n.nvmlDeviceGetDisplayMode(h),
                   n.nvmlDeviceGetComputeMode(h), v(n.nvmlDeviceIsMigDeviceHandle(h)),
                   n.nvmlDeviceGetTotalEccErrors(h, n.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, n.NVML_VOLATILE_ECC)],
    })
n.nvmlShutdown()
try:
    n.nvmlDeviceGetCount()
    out["after_shutdown"] = "answered"
except n.NVMLError_Uninitialized:
    out["after_shutdown"] = "uninitialized"
print(json.dumps(out))
"#;

/// The Python to use, or `None` to skip.
fn python() -> Option<PathBuf> {
    let required = std::env::var_os("GPUMETER_REQUIRE_PYNVML").is_some();
    let (python, configured) = match std::env::var_os("GPUMETER_PYTHON") {
        // Relative paths are the repository's (CI: target/pyvenv/bin/python).
        Some(p) => (Path::new(env!("CARGO_MANIFEST_DIR")).join(p), true),
        None => (PathBuf::from("python3"), false),
    };
    let has_pynvml = Command::new(&python)
        .args(["-c", "import pynvml"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_pynvml {
        assert!(
            !(required || configured),
            "{} cannot import pynvml (GPUMETER_PYTHON / GPUMETER_REQUIRE_PYNVML is set)",
            python.display()
        );
        eprintln!(
            "skipping: python3 has no pynvml (pip install nvidia-ml-py, or set GPUMETER_PYTHON)"
        );
        return None;
    }
    Some(python)
}

/// The processes of one list on one GPU, as pynvml gives them: [pid, memory or null].
fn listed(truth: &gpumeter_model::Snapshot, gpu: u32, graphics: bool) -> Value {
    let wanted = |k: GpuProcessKind| match k {
        GpuProcessKind::Mixed => true,
        GpuProcessKind::Graphics => graphics,
        GpuProcessKind::Compute => !graphics,
    };
    let list: Vec<Value> = truth
        .processes
        .iter()
        .flat_map(|p| p.gpu.iter().map(move |u| (p.pid, u)))
        .filter(|(_, u)| u.gpu_index == gpu && wanted(u.kind))
        .map(|(pid, u)| json!([pid, u.memory_bytes]))
        .collect();
    Value::Array(list)
}

#[test]
fn nvidia_ml_py_reads_the_scenario() {
    let Some(python) = python() else { return };
    let file = scenario_file(FULL);
    let out = Command::new(python)
        .args(["-c", SCRIPT])
        .env("LD_LIBRARY_PATH", library().parent().unwrap())
        .env("GPUMETER_FAKE_NVML_SCENARIO", &file.path)
        .env("GPUMETER_FAKE_NVML_ELAPSED_MS", ELAPSED_MS.to_string())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pynvml failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    let truth = truth(FULL, ELAPSED_MS);

    assert_eq!(got["driver"], "550.90.07");
    assert_eq!(got["cuda"], 12040);
    assert_eq!(got["after_shutdown"], "uninitialized");
    let gpus = got["gpus"].as_array().unwrap();
    assert_eq!(gpus.len(), truth.gpus.len());
    for (g, t) in gpus.iter().zip(&truth.gpus) {
        let i = t.index;
        let (total, used) = (t.memory_total_bytes.unwrap(), t.memory_used_bytes.unwrap());
        assert_eq!(g["index"], i);
        assert_eq!(g["name"], json!(t.name), "GPU {i}");
        assert_eq!(g["uuid"], json!(t.uuid), "GPU {i}");
        assert_eq!(g["bus_id"], json!(t.pci_bus_id), "GPU {i}");
        assert_eq!(g["memory"], json!([total, used, total - used]), "GPU {i}");
        assert_eq!(g["memory_v2"], g["memory"], "GPU {i}");
        assert_eq!(
            g["util"],
            json!([t.util_gpu_pct, t.util_memory_pct]),
            "GPU {i}"
        );
        assert_eq!(
            g["power_mw"],
            (t.power_watts.unwrap() * 1000.0).round() as u64,
            "GPU {i}"
        );
        assert_eq!(g["temperature"], json!(t.temperature_celsius), "GPU {i}");
        assert_eq!(g["fan"], json!(t.fan_speed_pct), "GPU {i}");
        assert_eq!(g["compute"], listed(&truth, i, false), "GPU {i} compute");
        assert_eq!(g["graphics"], listed(&truth, i, true), "GPU {i} graphics");
        let busy: Vec<Value> = truth
            .processes
            .iter()
            .flat_map(|p| p.gpu.iter().map(move |u| (p.pid, u)))
            .filter(|(_, u)| u.gpu_index == i)
            .map(|(pid, u)| {
                (
                    pid,
                    u.sm_util_pct.unwrap_or(0),
                    u.memory_util_pct.unwrap_or(0),
                )
            })
            .filter(|&(_, sm, mem)| sm > 0 || mem > 0)
            .map(|(pid, sm, mem)| json!([pid, sm, mem]))
            .collect();
        assert_eq!(
            g["samples"],
            Value::Array(busy),
            "GPU {i} utilization samples"
        );
        assert_eq!(g["cc"], json!([8, 0]), "an A100");
        assert_eq!(
            g["extras"],
            json!([0, 1, 0, 0, 0, 0, 0]),
            "GPU {i} P-state, modes, ECC"
        );
    }
}
