//! The facts of a demo scenario: its GPUs as the fake driver would describe them
//! (`source::inspect::demo`), its host, and its `[preflight]` table for what lies around the
//! GPUs (torch build, storage, software, instance type). Nothing on this machine is read.

use std::path::PathBuf;

use gpumeter_sim::{Scenario, Simulator};

use gpumeter_core::sanitize::sanitize;
use gpumeter_core::source::host::HostLimits;

use super::facts::{
    BillingFacts, Expect, Facts, HostFacts, Mount, NumaNode, Owner, Probe, SoftwareFacts,
    StorageFacts, Torch, TorchBuild,
};

/// How far into the scenario the GPUs are read.
const AT_MS: u64 = 60_000;

pub fn gather(
    scenario: Scenario,
    expect: Option<Expect>,
    data: Option<PathBuf>,
    mut billing: BillingFacts,
    now_unix_ms: i64,
) -> Facts {
    let source = format!("demo:{}", scenario.name);
    let pre = scenario.preflight.clone();
    // A scenario that posts a spot notice is a spot box, its notice watched.
    if scenario.interruption.is_some() {
        billing.spot = Some(true);
        billing.metadata_asked = true;
    }
    let host_spec = scenario.host.clone();
    let mut sim = Simulator::new(scenario);
    let snap = sim.snapshot_at(AT_MS, now_unix_ms);
    let inspection = gpumeter_core::source::inspect::demo::inspect(&sim, &snap);
    let owners = snap
        .processes
        .iter()
        .map(|p| {
            (
                p.pid,
                Owner {
                    visible: p.visible,
                    uid: None,
                    user: p.user.as_deref().map(|u| sanitize(u, 32)),
                    name: p.name.as_deref().map(|n| sanitize(n, 32)),
                },
            )
        })
        .collect();
    let gpus = u32::try_from(inspection.gpus.len()).unwrap_or(u32::MAX);
    let nodes = pre.numa_nodes.unwrap_or(1).max(1);
    let numa = host_spec.cpu_count.map_or(Vec::new(), |cpus| {
        let per = cpus / nodes;
        (0..nodes)
            .map(|id| NumaNode {
                id,
                cpus: (id * per..(id + 1) * per).collect(),
            })
            .collect()
    });
    let torch = match &pre.torch {
        Some(v) => Torch::Found {
            python: PathBuf::from("/usr/bin/python3"),
            build: Some(TorchBuild {
                version: v.clone(),
                cuda: pre.torch_cuda.clone(),
            }),
        },
        None => Torch::NotSimulated,
    };
    let storage = match (&pre.data_fs, data) {
        (None, None) => None,
        (fs, path) => {
            let path = path.unwrap_or_else(|| PathBuf::from("/data"));
            Some(StorageFacts {
                mount: fs.as_ref().map(|f| Mount {
                    point: path.clone(),
                    fs_type: f.clone(),
                    source: if super::storage::is_network(f) {
                        "fileserver:/datasets".into()
                    } else {
                        "/dev/nvme1n1".into()
                    },
                }),
                probe: match pre.data_seq_mb_per_s {
                    Some(mb) => Ok(Probe {
                        seq_bytes_per_s: mb * 1e6,
                        seq_bytes: 256 << 20,
                        random_iops: pre.data_random_iops,
                        uncached: true,
                        existing_files: true,
                    }),
                    None => Err("the scenario gives no storage figures".into()),
                },
                path,
            })
        }
    };
    billing.instance = pre.instance_type.clone();
    Facts {
        source,
        expect,
        nvml: Ok(inspection),
        owners,
        my_uid: None,
        torch,
        host: HostFacts {
            limits: HostLimits {
                cpus_online: host_spec.cpu_count,
                affinity: None,
                quota_cores: host_spec.cpu_quota_cores,
                mem_total_bytes: host_spec.mem_total_bytes.or(host_spec
                    .mem_total_gib
                    .map(|g| (g * f64::from(1u32 << 30)) as u64)),
                mem_limit_bytes: None,
            },
            numa,
        },
        storage,
        software: SoftwareFacts {
            nouveau: pre.nouveau,
            dev_gpus_present: gpus,
            dev_gpus_usable: gpus,
            dev_ctl: true,
            dev_uvm: true,
            libcuda: Ok(()),
            env: pre.env.into_iter().collect(),
        },
        billing,
    }
}
