//! `gpumeter check` through the real binary on the fake NVML library: a healthy machine passes
//! (exit 0), each hazard a scenario key can script makes its verdict fire with the numbers and
//! the documented exit code, and every NVML function the check adds × NOT_SUPPORTED,
//! NO_PERMISSION, GPU_IS_LOST, TIMEOUT on GPU 1 leaves the other GPUs' verdicts as they were.
//! The host side is a fixture tree (`GPUMETER_CHECK_ROOT`), torch a stub `python`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::fake_nvml::{gpumeter, library};

/// Four healthy H100 SXM boards on NVLink, two NUMA nodes, nothing running.
const HEALTHY: &str = r#"
name = "check-healthy"
description = "4 healthy H100s"
driver_version = "550.90.07"
cuda_driver_version = "12.4"
[host]
cpu_count = 64
[preflight]
numa_nodes = 2
[[gpu]]
count = 2
name = "NVIDIA H100 80GB HBM3"
memory_total_bytes = 85520809984
pcie_gen_max = 5
pcie_width_max = 16
pcie_gen = 1
mig_enabled = false
util_gpu_pct = { const = 0 }
util_memory_pct = { const = 0 }
health = { numa_node = 0, nvlink = { links = 18 }, retired_pages_sbe = 1 }
[[gpu]]
count = 2
name = "NVIDIA H100 80GB HBM3"
memory_total_bytes = 85520809984
pcie_gen_max = 5
pcie_width_max = 16
pcie_gen = 1
mig_enabled = false
util_gpu_pct = { const = 0 }
util_memory_pct = { const = 0 }
health = { numa_node = 1, nvlink = { links = 18 }, retired_pages_sbe = 1 }
"#;

/// A fake machine around the GPUs, and a stub Python.
struct Host {
    dir: tempfile::TempDir,
}

impl Host {
    fn new(torch: &str) -> Host {
        let dir = tempfile::tempdir().unwrap();
        let h = Host { dir };
        h.write(
            "proc/self/status",
            "Name:\tgpumeter\nUid:\t1000\t1000\t1000\t1000\nCpus_allowed_list:\t0-63\n",
        );
        h.write("proc/meminfo", "MemTotal:       1073741824 kB\n");
        h.write("sys/devices/system/cpu/online", "0-63\n");
        h.write("sys/devices/system/node/node0/cpulist", "0-31\n");
        h.write("sys/devices/system/node/node1/cpulist", "32-63\n");
        h.write("sys/class/dmi/id/sys_vendor", "Example Cloud\n");
        h.write("sys/class/dmi/id/product_name", "gpu-4x-h100\n");
        h.write(
            "etc/passwd",
            "root:x:0:0::/root:/bin/sh\nbob:x:1001:1001::/home/bob:/bin/sh\n",
        );
        for d in [
            "nvidia0",
            "nvidia1",
            "nvidia2",
            "nvidia3",
            "nvidiactl",
            "nvidia-uvm",
        ] {
            h.write(&format!("dev/{d}"), "");
        }
        let py = h.dir.path().join("bin/python3");
        h.write("bin/python3", &format!("#!/bin/sh\necho '{torch}'\n"));
        std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o755)).unwrap();
        h
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn python(&self) -> PathBuf {
        self.dir.path().join("bin/python3")
    }
}

const TORCH_OK: &str = r#"{"torch": "2.6.0+cu124", "cuda": "12.4"}"#;

/// `gpumeter check --json` on `scenario` with `host`: (report, exit code).
fn check_on(scenario: &str, host: &Host, extra: &[&str], env: &[(&str, &str)]) -> (Value, i32) {
    let root = host.root().to_str().unwrap().to_string();
    let python = host.python().to_str().unwrap().to_string();
    let config = host.root().join("no-config");
    let mut args = vec![
        "check", "--rate", "12/h", "--budget", "300/day", "--json", "--python", &python,
    ];
    args.extend_from_slice(extra);
    let lib = library().to_str().unwrap().to_string();
    let mut all_env: Vec<(&str, &str)> = vec![
        ("GPUMETER_CHECK_ROOT", &root),
        // Any loadable library stands in for libcuda.so.1.
        ("GPUMETER_CHECK_LIBCUDA", &lib),
        ("XDG_CONFIG_HOME", config.to_str().unwrap()),
        ("CUDA_LAUNCH_BLOCKING", ""),
    ];
    all_env.extend_from_slice(env);
    let out = gpumeter(&args, scenario, 30_000, &all_env);
    let code = out.status.code().unwrap_or(-1);
    assert!(
        [0, 4, 5].contains(&code),
        "exit {code}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    (report, code)
}

fn check(scenario: &str) -> (Value, i32) {
    check_on(scenario, &Host::new(TORCH_OK), &[], &[])
}

/// The verdicts with this id.
fn with_id<'a>(report: &'a Value, id: &str) -> Vec<&'a Value> {
    report["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["id"] == id)
        .collect()
}

/// The one verdict with this id about this GPU.
fn on_gpu<'a>(report: &'a Value, id: &str, gpu: u64) -> &'a Value {
    let found: Vec<&Value> = with_id(report, id)
        .into_iter()
        .filter(|v| v["gpu"] == gpu)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "{id} on GPU {gpu}: {:#?}",
        report["verdicts"]
    );
    found[0]
}

fn not_ok(report: &Value) -> Vec<String> {
    report["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["level"] == "warn" || v["level"] == "fail")
        .map(|v| format!("{} {}", v["id"], v["summary"]))
        .collect()
}

/// HEALTHY with the `[[gpu]]` entry of GPUs 2–3 split so GPU 3 gets `gpu3` keys and `health`.
fn gpu3(keys: &str, health: &str) -> String {
    let base = HEALTHY.replace("[[gpu]]\ncount = 2\nname = \"NVIDIA H100 80GB HBM3\"\nmemory_total_bytes = 85520809984\npcie_gen_max = 5\npcie_width_max = 16\npcie_gen = 1\nmig_enabled = false\nutil_gpu_pct = { const = 0 }\nutil_memory_pct = { const = 0 }\nhealth = { numa_node = 1, nvlink = { links = 18 }, retired_pages_sbe = 1 }\n", "");
    format!(
        "{base}[[gpu]]\ncount = 1\nname = \"NVIDIA H100 80GB HBM3\"\nmemory_total_bytes = 85520809984\npcie_gen_max = 5\npcie_width_max = 16\nmig_enabled = false\nutil_gpu_pct = {{ const = 0 }}\nutil_memory_pct = {{ const = 0 }}\nhealth = {{ numa_node = 1, nvlink = {{ links = 18 }} }}\n\
         [[gpu]]\ncount = 1\nname = \"NVIDIA H100 80GB HBM3\"\nmemory_total_bytes = 85520809984\npcie_width_max = 16\nutil_gpu_pct = {{ const = 0 }}\nutil_memory_pct = {{ const = 0 }}\n{keys}\nhealth = {{ numa_node = 1{health} }}\n"
    )
}

#[test]
fn a_healthy_machine_passes_with_exit_0() {
    let (r, code) = check(HEALTHY);
    assert_eq!(not_ok(&r), Vec::<String>::new());
    assert_eq!(code, 0);
    assert_eq!(r["exit_code"], 0);
    assert_eq!(r["schema"], 1);
    assert_eq!(r["source"], "nvml");
    // The idle card's Gen1 is not held against it; NVLink and NUMA as scripted.
    assert!(
        with_id(&r, "pcie.link")[0]["summary"]
            .as_str()
            .unwrap()
            .contains("Gen5 x16")
    );
    assert!(
        with_id(&r, "topology.matrix")[0]["summary"]
            .as_str()
            .unwrap()
            .contains("NV18")
    );
    let numa = with_id(&r, "host.numa")[0]["summary"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        numa.contains("GPU 0,1 on node 0, GPU 2,3 on node 1"),
        "{numa}"
    );
    assert!(
        with_id(&r, "billing.instance")[0]["summary"]
            .as_str()
            .unwrap()
            .contains("Example Cloud gpu-4x-h100")
    );
    assert_eq!(with_id(&r, "host.cores")[0]["level"], "ok");
}

#[test]
fn a_degraded_pcie_link_warns_with_the_numbers() {
    let (r, code) = check(&gpu3(
        "pcie_gen_max = 4\npcie_gen = 3\npcie_width = 8",
        ", pcie_gen_card_max = 5, nvlink = { links = 18 }",
    ));
    let v = on_gpu(&r, "pcie.link", 3);
    assert_eq!(v["level"], "warn");
    let s = v["summary"].as_str().unwrap();
    assert!(
        s.contains("Gen4") && s.contains("Gen5") && s.contains("x8 of x16"),
        "{s}"
    );
    assert_eq!(code, 4);
}

#[test]
fn ecc_errors_fail() {
    let (r, code) = check(&gpu3(
        "pcie_gen_max = 5",
        ", ecc_uncorrected_volatile = 3, nvlink = { links = 18 }",
    ));
    let v = on_gpu(&r, "gpu.ecc", 3);
    assert_eq!(v["level"], "fail");
    assert!(
        v["summary"]
            .as_str()
            .unwrap()
            .contains("3 uncorrected ECC errors")
    );
    assert_eq!(code, 5);
    let (r, _) = check(&gpu3(
        "pcie_gen_max = 5",
        ", ecc_enabled = false, nvlink = { links = 18 }",
    ));
    assert_eq!(on_gpu(&r, "gpu.ecc", 3)["level"], "warn");
}

#[test]
fn pending_remaps_and_failures_fail() {
    let (r, code) = check(&gpu3(
        "pcie_gen_max = 5",
        ", remap_pending = true, remapped_uncorrectable = 2, nvlink = { links = 18 }",
    ));
    let v = on_gpu(&r, "gpu.row_remap", 3);
    assert_eq!(v["level"], "fail");
    assert!(
        v["summary"].as_str().unwrap().contains("pending (2 rows"),
        "{v}"
    );
    assert_eq!(code, 5);
    let (r, _) = check(&gpu3(
        "pcie_gen_max = 5",
        ", remap_failure = true, nvlink = { links = 18 }",
    ));
    assert!(
        on_gpu(&r, "gpu.row_remap", 3)["summary"]
            .as_str()
            .unwrap()
            .contains("failed")
    );
    let (r, _) = check(&gpu3(
        "pcie_gen_max = 5",
        ", retired_pending = true, nvlink = { links = 18 }",
    ));
    assert_eq!(on_gpu(&r, "gpu.retired_pages", 3)["level"], "fail");
}

#[test]
fn mig_on_persistence_off_and_prohibited_compute_mode_are_flagged() {
    let (r, _) = check(&gpu3(
        "pcie_gen_max = 5\nmig_enabled = true",
        ", nvlink = { links = 18 }",
    ));
    assert_eq!(on_gpu(&r, "gpu.mig", 3)["level"], "warn");
    let (r, _) = check(&gpu3(
        "pcie_gen_max = 5",
        ", persistence = false, compute_mode = \"prohibited\", nvlink = { links = 18 }",
    ));
    assert_eq!(on_gpu(&r, "gpu.persistence", 3)["level"], "warn");
    assert_eq!(on_gpu(&r, "gpu.compute_mode", 3)["level"], "fail");
    let (r, _) = check(&gpu3(
        "pcie_gen_max = 5",
        ", inforom_valid = false, nvlink = { links = 18 }",
    ));
    assert!(
        on_gpu(&r, "gpu.inforom", 3)["summary"]
            .as_str()
            .unwrap()
            .contains("corrupted")
    );
}

#[test]
fn a_foreign_process_is_named_with_its_user() {
    let host = Host::new(TORCH_OK);
    host.write(
        "proc/777001/status",
        "Name:\tpython\nUid:\t1001\t1001\t1001\t1001\n",
    );
    let scenario = format!(
        "{HEALTHY}[[process]]\npid = 777001\ngpus = [{{ gpu = 2, memory_gib = {{ const = 12 }} }}]\n[[process]]\npid = 777002\ngpus = [{{ gpu = 2, memory_gib = {{ const = 1 }} }}]\n"
    );
    let (r, code) = check_on(&scenario, &host, &[], &[]);
    let s = on_gpu(&r, "gpu.processes", 2)["summary"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(s.contains("2 processes") && s.contains("13.0GiB"), "{s}");
    assert!(s.contains("pid 777001 python (user bob)"), "{s}");
    assert!(s.contains("pid 777002 (not visible here"), "{s}");
    assert_eq!(code, 4);
}

#[test]
fn memory_held_by_invisible_processes_warns() {
    let (r, _) = check(&gpu3(
        "pcie_gen_max = 5\nmemory_used_gib = { const = 12 }",
        ", nvlink = { links = 18 }",
    ));
    let s = on_gpu(&r, "gpu.processes", 3)["summary"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        s.contains("12.0GiB of VRAM held by processes this machine can't see"),
        "{s}"
    );
}

#[test]
fn a_driver_too_old_for_the_installed_torch() {
    // cu129 on 550.90.07: minor-version compatibility only → warn with the driver needed.
    let host = Host::new(r#"{"torch": "2.8.0+cu129", "cuda": "12.9"}"#);
    let (r, code) = check_on(HEALTHY, &host, &[], &[]);
    let v = &with_id(&r, "driver.torch")[0];
    assert_eq!(v["level"], "warn");
    let s = v["summary"].as_str().unwrap();
    assert!(s.contains("575.51.03") && s.contains("550.90.07"), "{s}");
    assert!(
        v["fix"]
            .as_str()
            .unwrap()
            .contains("download.pytorch.org/whl/cu"),
        "{v}"
    );
    assert_eq!(code, 4);
    // cu130 needs 580: another major version, no compatibility → fail.
    let host = Host::new(r#"{"torch": "2.9.0+cu130", "cuda": "13.0"}"#);
    let (r, code) = check_on(HEALTHY, &host, &[], &[]);
    assert_eq!(with_id(&r, "driver.torch")[0]["level"], "fail");
    assert_eq!(code, 5);
    // A CPU-only build fails too.
    let host = Host::new(r#"{"torch": "2.8.0+cpu", "cuda": null}"#);
    let (r, _) = check_on(HEALTHY, &host, &[], &[]);
    assert!(
        with_id(&r, "driver.torch")[0]["summary"]
            .as_str()
            .unwrap()
            .contains("CPU-only")
    );
}

#[test]
fn nvlink_down_on_one_link() {
    let (r, code) = check(&gpu3(
        "pcie_gen_max = 5",
        ", nvlink = { links = 18, down = [5] }",
    ));
    let v = on_gpu(&r, "nvlink.links", 3);
    assert_eq!(v["level"], "warn");
    assert!(
        v["summary"]
            .as_str()
            .unwrap()
            .contains("17 of 18 NVLink links active (link 5 down)"),
        "{v}"
    );
    // The matrix counts what is up: GPU 3's pairs get 17.
    let m = &with_id(&r, "topology.matrix")[0];
    assert!(
        m["detail"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l.as_str().unwrap().starts_with("GPU3  NV17")),
        "{m}"
    );
    assert_eq!(code, 4);
}

#[test]
fn expectations_host_software_and_storage_hazards() {
    let host = Host::new(TORCH_OK);
    host.write("sys/module/nouveau/refcnt", "1\n");
    std::fs::remove_file(host.root().join("dev/nvidia-uvm")).unwrap();
    host.write(
        "proc/self/status",
        "Name:\tgpumeter\nUid:\t1000\t1000\t1000\t1000\nCpus_allowed_list:\t0-5\n",
    );
    let data = host.root().join("data");
    std::fs::create_dir(&data).unwrap();
    host.write(
        "proc/self/mountinfo",
        &format!("22 1 0:40 / {} rw - nfs4 fs-1:/export rw\n", data.display()),
    );
    let data = data.to_str().unwrap().to_string();
    let (r, code) = check_on(
        HEALTHY,
        &host,
        &["--expect", "8xH100", "--data", &data],
        &[("CUDA_LAUNCH_BLOCKING", "1")],
    );
    let count = &with_id(&r, "gpu.count")[0];
    assert_eq!(count["level"], "fail");
    assert!(count["summary"].as_str().unwrap().contains("expected 8"));
    assert_eq!(with_id(&r, "software.nouveau")[0]["level"], "fail");
    assert!(
        with_id(&r, "software.devices")[0]["summary"]
            .as_str()
            .unwrap()
            .contains("/dev/nvidia-uvm")
    );
    assert!(
        with_id(&r, "software.env")[0]["summary"]
            .as_str()
            .unwrap()
            .starts_with("CUDA_LAUNCH_BLOCKING=1")
    );
    let cores = &with_id(&r, "host.cores")[0];
    assert_eq!(cores["level"], "warn");
    assert!(
        cores["summary"].as_str().unwrap().contains("1.5 per GPU"),
        "{cores}"
    );
    let fs = &with_id(&r, "storage.fs")[0];
    assert!(
        fs["summary"]
            .as_str()
            .unwrap()
            .contains("nfs4 from fs-1:/export"),
        "{fs}"
    );
    assert!(!with_id(&r, "storage.probe").is_empty());
    assert_eq!(code, 5);
    // The probe left nothing behind in the data directory.
    assert_eq!(std::fs::read_dir(&data).unwrap().count(), 0);
}

#[test]
fn without_nvml_the_check_still_runs_and_fails() {
    let host = Host::new(TORCH_OK);
    let home = tempfile::tempdir().unwrap();
    let out = crate::support::gpumeter(home.path())
        .args([
            "check",
            "--json",
            "--nvml-lib",
            "/nonexistent/libnvidia-ml.so.1",
            "--python",
        ])
        .arg(host.python())
        .env("GPUMETER_CHECK_ROOT", host.root())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        with_id(&r, "gpu.nvml")[0]["summary"]
            .as_str()
            .unwrap()
            .contains("/nonexistent/libnvidia-ml.so.1")
    );
    assert_eq!(with_id(&r, "host.cores")[0]["level"], "ok");
}

#[test]
fn the_demo_shows_two_hazards_in_text_and_json_with_a_stable_schema() {
    let home = tempfile::tempdir().unwrap();
    let out = crate::support::gpumeter(home.path())
        .args(["check", "--demo"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    let text = String::from_utf8(out.stdout).unwrap();
    let warns: Vec<&str> = text.lines().filter(|l| l.starts_with("warn ")).collect();
    assert_eq!(warns.len(), 2, "{text}");
    assert!(text.contains("GPU 5: degraded PCIe link"), "{text}");
    assert!(text.contains("torch 2.8.0+cu129"), "{text}");
    let out = crate::support::gpumeter(home.path())
        .args(["check", "--demo", "rented", "--json"])
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut top: Vec<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
    top.sort_unstable();
    assert_eq!(top, ["exit_code", "schema", "source", "tally", "verdicts"]);
    let mut keys: Vec<&str> = r["verdicts"][0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["detail", "family", "fix", "gpu", "id", "level", "summary"]
    );
    assert_eq!(r["tally"]["warn"], 2);
    // The healthy demo stays quiet.
    let out = crate::support::gpumeter(home.path())
        .args(["check", "--demo", "idle", "--json"])
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["tally"]["fail"], 0, "{r:#}");
}

/// The NVML functions the check adds, the verdict each feeds, and whether a refusal or a
/// timeout must be named on GPU 1 (readings only used for wording may go quietly).
const FUNCTIONS: &[(&str, bool)] = &[
    ("nvmlDeviceGetEccMode", true),
    ("nvmlDeviceGetTotalEccErrors", true),
    ("nvmlDeviceGetRetiredPages", true),
    ("nvmlDeviceGetRetiredPages_v2", true),
    ("nvmlDeviceGetRetiredPagesPendingStatus", false),
    ("nvmlDeviceGetRemappedRows", true),
    ("nvmlDeviceGetPersistenceMode", true),
    ("nvmlDeviceGetComputeMode", true),
    ("nvmlDeviceValidateInforom", true),
    ("nvmlDeviceGetInforomImageVersion", false),
    ("nvmlDeviceGetPcieReplayCounter", true),
    ("nvmlDeviceGetGpuMaxPcieLinkGeneration", false),
    ("nvmlDeviceGetNvLinkState", true),
    ("nvmlDeviceGetNvLinkVersion", false),
    ("nvmlDeviceGetNvLinkRemotePciInfo_v2", false),
    ("nvmlDeviceGetTopologyCommonAncestor", false),
    ("nvmlDeviceGetCpuAffinity", false),
    ("nvmlDeviceGetMemoryAffinity", false),
];

/// Verdicts about GPUs 0, 2 and 3.
fn others(r: &Value) -> Vec<String> {
    r["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| [0, 2, 3].contains(&v["gpu"].as_u64().unwrap_or(99)))
        .map(|v| format!("{} {} {}", v["id"], v["level"], v["summary"]))
        .collect()
}

#[test]
fn fault_matrix_for_the_check_calls() {
    let (clean, _) = check(HEALTHY);
    let host = Host::new(TORCH_OK);
    let mut wrong = Vec::new();
    for (function, named) in FUNCTIONS {
        for (error, words) in [
            ("NOT_SUPPORTED", None),
            ("NO_PERMISSION", Some("no permission")),
            ("GPU_IS_LOST", Some("lost")),
            ("TIMEOUT", Some("timeout")),
        ] {
            let scenario = format!(
                "{HEALTHY}[[fault]]\ngpu = 1\nfunction = \"{function}\"\nerror = \"{error}\"\n"
            );
            let (r, _) = check_on(&scenario, &host, &[], &[]);
            let cell = format!("{function} × {error}");
            if others(&r) != others(&clean) {
                wrong.push(format!("{cell}: other GPUs changed: {:?}", others(&r)));
            }
            let about_gpu1: Vec<String> = r["verdicts"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|v| v["gpu"] == 1 || v["summary"].as_str().unwrap().contains("GPU 1"))
                .map(|v| v["summary"].as_str().unwrap().to_string())
                .collect();
            let marked_lost = with_id(&r, "gpu.lost").iter().any(|v| v["gpu"] == 1);
            match (error, words) {
                ("GPU_IS_LOST", _) if !marked_lost => {
                    wrong.push(format!("{cell}: GPU 1 not marked lost: {about_gpu1:?}"));
                }
                ("GPU_IS_LOST", _) => {}
                (_, Some(w)) if *named && !about_gpu1.iter().any(|s| s.contains(w)) => {
                    wrong.push(format!("{cell}: no verdict names '{w}': {about_gpu1:?}"));
                }
                _ => {}
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

/// A demo scenario that declares no torch says it did not check, never that this machine has
/// no Python (it may well have one on PATH).
#[test]
fn a_demo_without_torch_says_not_checked() {
    let home = tempfile::tempdir().unwrap();
    let out = crate::support::gpumeter(home.path())
        .args(["check", "--demo", "training", "--json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let torch = with_id(&report, "driver.torch");
    assert_eq!(torch.len(), 1, "{report}");
    let text = torch[0].to_string();
    assert!(
        text.contains("torch not checked: the demo scenario"),
        "{text}"
    );
    assert!(!text.contains("on PATH"), "{text}");
}
