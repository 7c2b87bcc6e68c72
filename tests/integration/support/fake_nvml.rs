//! The fake NVML library for tests: built once per test run (`cargo build -p
//! gpumeter-fake-nvml`, with the cargo running the tests) and copied next to the build output as
//! `libnvidia-ml.so.1` and `libnvidia-ml.so`; plus running `gpumeter snapshot` against it on a
//! scenario written to a temporary file, and the scenario's own truth to compare with.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use gpumeter_model::Snapshot;
use gpumeter_sim::{Scenario, Simulator};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_gpumeter");
const WORKSPACE: &str = env!("CARGO_MANIFEST_DIR");

/// The fake library, as `…/fake-nvml-test/libnvidia-ml.so.1` (its folder also holds
/// `libnvidia-ml.so`). Built on first use.
pub fn library() -> &'static Path {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    LIB.get_or_init(build)
}

fn build() -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "build",
            "--quiet",
            "--message-format=json",
            "-p",
            "gpumeter-fake-nvml",
        ])
        .arg("--manifest-path")
        .arg(Path::new(WORKSPACE).join("Cargo.toml"))
        .output()
        .expect("running cargo to build the fake NVML library");
    assert!(
        out.status.success(),
        "building gpumeter-fake-nvml failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The cdylib's path, from cargo's artifact messages.
    let built = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact")
        .filter(|m| m["target"]["name"] == "gpumeter_fake_nvml")
        .flat_map(|m| m["filenames"].as_array().cloned().unwrap_or_default())
        .filter_map(|f| f.as_str().map(PathBuf::from))
        .find(|f| f.extension().is_some_and(|e| e == "so"))
        .expect("cargo reported no .so for gpumeter-fake-nvml");
    let dir = built.parent().unwrap().join("fake-nvml-test");
    std::fs::create_dir_all(&dir).unwrap();
    // Copy then rename: another test run sharing this target dir may have the old file loaded.
    for name in ["libnvidia-ml.so.1", "libnvidia-ml.so"] {
        let tmp = dir.join(format!("{name}.{}", std::process::id()));
        std::fs::copy(&built, &tmp).unwrap();
        std::fs::rename(&tmp, dir.join(name)).unwrap();
    }
    dir.join("libnvidia-ml.so.1")
}

/// A scenario in a temporary file, for the library to load.
pub struct ScenarioFile {
    _dir: tempfile::TempDir,
    pub path: PathBuf,
}

pub fn scenario_file(toml: &str) -> ScenarioFile {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scenario.toml");
    std::fs::write(&path, toml).unwrap();
    ScenarioFile { _dir: dir, path }
}

/// `gpumeter <args> --nvml-lib <fake>` on `scenario` (a built-in name or TOML text) frozen at
/// `elapsed_ms`, with extra environment.
pub fn gpumeter(args: &[&str], scenario: &str, elapsed_ms: u64, env: &[(&str, &str)]) -> Output {
    let file;
    let name = if scenario.contains('\n') {
        file = scenario_file(scenario);
        file.path.to_str().unwrap().to_string()
    } else {
        scenario.to_string()
    };
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .arg("--nvml-lib")
        .arg(library())
        .env_remove("GPUMETER_NVML_LIB")
        .env("GPUMETER_FAKE_NVML_SCENARIO", name)
        .env("GPUMETER_FAKE_NVML_ELAPSED_MS", elapsed_ms.to_string())
        .env("GPUMETER_DMI_ROOT", "")
        .env("GPUMETER_BLOCK_ROOT", "")
        .env("GPUMETER_NVIDIA_GPUS_ROOT", "");
    for var in gpumeter_core::cloud::local::POD_VARS {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// `gpumeter snapshot --json` (two readings 100 ms apart) against the fake; must exit 0.
pub fn snapshot(scenario: &str, elapsed_ms: u64, env: &[(&str, &str)]) -> Value {
    let out = gpumeter(
        &["snapshot", "--json", "--interval", "100ms"],
        scenario,
        elapsed_ms,
        env,
    );
    assert!(
        out.status.success(),
        "gpumeter exited {:?}:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// What the scenario itself says at `elapsed_ms` (before faults).
pub fn truth(scenario: &str, elapsed_ms: u64) -> Snapshot {
    let scenario = if scenario.contains('\n') {
        Scenario::from_toml("test.toml", scenario).unwrap()
    } else {
        Scenario::builtin(scenario).unwrap()
    };
    Simulator::new(scenario).truth_at(elapsed_ms, 0)
}

/// The GPU processes of a JSON snapshot as (pid, uses sorted by GPU), sorted by pid: what NVML
/// contributes to the process list.
pub fn gpu_processes(snap: &Value) -> Vec<(u64, Vec<Value>)> {
    let mut out: Vec<(u64, Vec<Value>)> = snap["processes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| !p["gpu"].as_array().unwrap().is_empty())
        .map(|p| {
            let mut uses = p["gpu"].as_array().unwrap().clone();
            uses.sort_by_key(|u| u["gpu_index"].as_u64());
            (p["pid"].as_u64().unwrap(), uses)
        })
        .collect();
    out.sort_by_key(|(pid, _)| *pid);
    out
}

/// A 4-GPU machine where every reading is supported and every process kind appears on GPU 1
/// (compute, graphics, mixed, one idle, one with memory the driver cannot report, one on two
/// GPUs). Fault-free: the tests add `[[fault]]` entries.
pub const FULL: &str = r#"
name = "full"
description = "4 GPUs, every reading supported, every process kind on GPU 1"
driver_version = "550.90.07"
cuda_driver_version = "12.4"
seed = 3

[[gpu]]
count = 4
name = "NVIDIA A100 80GB PCIe"
memory_total_bytes = 85899345920
power_limit_watts = 300
clock_sm_max_mhz = 1410
clock_memory_max_mhz = 1512
pcie_gen_max = 4
pcie_width_max = 16
pcie_gen = 3
pcie_width = 8
mig_enabled = false
phase_step_s = 1.3
util_gpu_pct = { sine = { min = 40, max = 95, period_s = 13 }, noise = 3 }
util_memory_pct = { sine = { min = 10, max = 45, period_s = 13 }, noise = 2 }
power_watts = { sine = { min = 120, max = 290, period_s = 13 }, noise = 5 }
temperature_c = { sine = { min = 50, max = 70, period_s = 60 }, noise = 1 }
clock_sm_mhz = { sine = { min = 1200, max = 1410, period_s = 13 }, noise = 10 }
clock_memory_mhz = { const = 1512 }
pcie_rx_mb_per_s = { sine = { min = 200, max = 1600, period_s = 13 }, noise = 40 }
pcie_tx_mb_per_s = { const = 150, noise = 20 }
fan_speed_pct = { sine = { min = 35, max = 60, period_s = 60 }, noise = 2 }
encoder_util_pct = { const = 3 }
decoder_util_pct = { square = { low = 0, high = 20, period_s = 6 } }
throttle = [{ reason = "sw_power_cap", when = "power_watts", above = 200 }, { reason = "sync_boost" }]

[[process]]
pid = 3100001
count = 4
gpus = [{ gpu = 0, memory_gib = { const = 20, noise = 0.5 }, sm_util_pct = { sine = { min = 30, max = 90, period_s = 13 } }, mem_util_pct = { const = 12, noise = 3 } }]

[[process]]
pid = 3100101
kind = "graphics"
gpus = [{ gpu = 1, memory_gib = { const = 0.03 }, sm_util_pct = { const = 2 }, mem_util_pct = { const = 1 } }]

[[process]]
pid = 3100102
kind = "mixed"
gpus = [{ gpu = 1, memory_gib = { const = 4 }, sm_util_pct = { const = 15 }, mem_util_pct = { const = 4 } }]

[[process]]
pid = 3100103
gpus = [{ gpu = 1, memory_gib = { const = 6 }, sm_util_pct = { const = 0 }, mem_util_pct = { const = 0 } }]

[[process]]
pid = 3100104
gpus = [{ gpu = 1, sm_util_pct = { const = 7 }, mem_util_pct = { const = 2 } }]

[[process]]
pid = 3100105
gpus = [
  { gpu = 1, memory_gib = { const = 2 }, sm_util_pct = { const = 33 }, mem_util_pct = { const = 9 } },
  { gpu = 3, memory_gib = { const = 3 }, sm_util_pct = { const = 44 }, mem_util_pct = { const = 11 } },
]
"#;

/// The readings (lines with `gpus`) of `record --for 1s --interval 200ms` on `scenario` at
/// `elapsed_ms`; the run must succeed and give at least 3 readings.
pub fn recorded_readings(scenario: &str, elapsed_ms: u64) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rec.ndjson");
    let out = gpumeter(
        &[
            "record",
            file.to_str().unwrap(),
            "--for",
            "1s",
            "--interval",
            "200ms",
        ],
        scenario,
        elapsed_ms,
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v.get("gpus").is_some())
        .collect();
    assert!(lines.len() >= 3, "{text}");
    lines
}
