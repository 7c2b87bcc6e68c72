//! MIG through the real NVML path against the fake library: a board with MIG on lists its MIG
//! devices (`nvmlDeviceGetMaxMigDeviceCount`, `nvmlDeviceGetMigDeviceHandleByIndex`, then each
//! slice's `nvmlDeviceGetUUID`) — the ids the kubelet hands pods — and the fault-matrix cells of
//! those calls: every common error on GPU 1 costs GPU 1 its MIG list and nothing else, is said
//! in a warning (unless the driver lacks the calls), and gpumeter exits 0.

use serde_json::Value;

use crate::support::fake_nvml::{snapshot, truth};

const ELAPSED_MS: u64 = 30_000;

/// Two boards: GPU 0 whole, GPU 1 cut into 3 MIG slices (of 7 slots), both busy.
const MIG: &str = r#"
name = "mig"
description = "GPU 0 whole, GPU 1 in three MIG slices"
seed = 11

[[gpu]]
name = "NVIDIA H100 80GB HBM3"
memory_total_gib = 80
mig_enabled = false
util_gpu_pct = { const = 90 }

[[gpu]]
name = "NVIDIA H100 80GB HBM3"
memory_total_gib = 80
mig_enabled = true
mig_devices = 3
util_gpu_pct = { const = 60 }
"#;

fn mig_uuids(snap: &Value, gpu: usize) -> Vec<String> {
    snap["gpus"][gpu]["mig_uuids"]
        .as_array()
        .map(|a| a.iter().map(|u| u.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

#[test]
fn a_mig_board_lists_its_slices_uuids_and_a_whole_board_none() {
    let want: Vec<String> = truth(MIG, ELAPSED_MS).gpus[1]
        .mig_uuids
        .iter()
        .map(|u| u.to_string())
        .collect();
    assert_eq!(want.len(), 3);
    assert!(want.iter().all(|u| u.starts_with("MIG-")), "{want:?}");
    let snap = snapshot(MIG, ELAPSED_MS, &[]);
    assert_eq!(
        mig_uuids(&snap, 1),
        want,
        "read through NVML, the slots in use"
    );
    assert!(mig_uuids(&snap, 0).is_empty());
    assert_eq!(snap["gpus"][1]["mig_enabled"], true);
    assert_ne!(
        snap["gpus"][1]["uuid"].as_str(),
        Some(want[0].as_str()),
        "the board keeps its own UUID"
    );
}

#[test]
fn each_mig_call_failing_on_gpu_1_costs_gpu_1_its_mig_list_only() {
    let clean = snapshot(MIG, ELAPSED_MS, &[]);
    assert_eq!(mig_uuids(&clean, 1).len(), 3);
    let mut wrong = Vec::new();
    for function in [
        "nvmlDeviceGetMaxMigDeviceCount",
        "nvmlDeviceGetMigDeviceHandleByIndex",
    ] {
        for error in [
            "NOT_SUPPORTED",
            "NO_PERMISSION",
            "GPU_IS_LOST",
            "UNKNOWN",
            "TIMEOUT",
        ] {
            let scenario = format!(
                "{MIG}[[fault]]\ngpu = 1\nfunction = \"{function}\"\nerror = \"{error}\"\n"
            );
            let snap = snapshot(&scenario, ELAPSED_MS, &[]);
            let cell = format!("{function} × {error}");
            if !mig_uuids(&snap, 1).is_empty() {
                wrong.push(format!(
                    "{cell}: GPU 1 still lists {:?}",
                    mig_uuids(&snap, 1)
                ));
            }
            if snap["gpus"][0] != clean["gpus"][0] {
                wrong.push(format!("{cell}: GPU 0 changed"));
            }
            let mut gpu1 = snap["gpus"][1].clone();
            let mut want = clean["gpus"][1].clone();
            for g in [&mut gpu1, &mut want] {
                g.as_object_mut().unwrap().remove("mig_uuids");
            }
            if gpu1 != want {
                wrong.push(format!("{cell}: GPU 1 lost more than its MIG list"));
            }
            // A driver without the calls says nothing; any other failure is said.
            let said = snap["warnings"].as_array().is_some_and(|w| {
                w.iter().any(|l| {
                    l.as_str()
                        .is_some_and(|l| l.starts_with("GPU 1: MIG devices not listed ("))
                })
            });
            if said == (error == "NOT_SUPPORTED") {
                wrong.push(format!("{cell}: warned {said}: {}", snap["warnings"]));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_scenario_with_mig_slices_but_mig_off_is_refused() {
    let bad = MIG.replace("mig_enabled = true", "mig_enabled = false");
    let err = gpumeter_sim::Scenario::from_toml("mig.toml", &bad).unwrap_err();
    assert!(
        err.to_string()
            .contains("MIG devices need mig_enabled = true"),
        "{err}"
    );
    let bad = MIG.replace("mig_devices = 3", "mig_devices = 9");
    let err = gpumeter_sim::Scenario::from_toml("mig.toml", &bad).unwrap_err();
    assert!(err.to_string().contains("at most 7"), "{err}");
}
