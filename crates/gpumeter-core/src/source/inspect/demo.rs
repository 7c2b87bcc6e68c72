//! The inspection of a simulated machine: what the fake NVML library would answer for the same
//! scenario (the `health` keys of each `[[gpu]]` entry; readings and processes at one instant),
//! without loading a library. `gpumeter check --demo` runs on it.

use gpumeter_model::{GpuState, Snapshot};
use gpumeter_sim::{ComputeModeSpec, GpuSpec, Simulator};

use super::{
    ComputeMode, EccMode, GpuInspection, GpuProcess, InfoRom, Inspection, MigMode, Missing,
    NvLinkInfo, PcieLink, RemappedRows, RetiredPages, Topology,
};

/// The inspection of `sim` as its `snap` (taken from it) shows the readings.
pub fn inspect(sim: &Simulator, snap: &Snapshot) -> Inspection {
    let scenario = sim.scenario();
    let known = |v: &Option<String>| v.clone().ok_or(Missing::NotSupported);
    let gpus: Vec<GpuInspection> = snap
        .gpus
        .iter()
        .map(|g| match (g.state, sim.gpu_spec(g.index)) {
            (GpuState::Ok, Some(spec)) => gpu(sim, snap, g.index, spec),
            (GpuState::Ok, None) => GpuInspection::unreachable(g.index, Missing::NotSupported),
            _ => GpuInspection::unreachable(g.index, Missing::GpuLost),
        })
        .collect();
    let topology = (0..gpus.len())
        .map(|i| {
            (0..gpus.len())
                .map(|j| topology(sim, &gpus, i, j))
                .collect()
        })
        .collect();
    Inspection {
        driver_version: known(&scenario.driver_version),
        cuda_driver_version: known(&scenario.cuda_driver_version),
        gpus,
        topology,
    }
}

fn gpu(sim: &Simulator, snap: &Snapshot, index: u32, spec: &GpuSpec) -> GpuInspection {
    let h = &spec.health;
    let reading = snap.gpus.iter().find(|g| g.index == index);
    let known = |v: Option<u32>| v.ok_or(Missing::NotSupported);
    let nodes = sim.scenario().preflight.numa_nodes.unwrap_or(1).max(1);
    let node = h.numa_node.unwrap_or(0).min(nodes - 1);
    let cpus = sim.scenario().host.cpu_count.ok_or(Missing::NotSupported);
    let processes = snap
        .processes
        .iter()
        .filter_map(|p| {
            let u = p.gpu.iter().find(|u| u.gpu_index == index)?;
            Some(GpuProcess {
                pid: p.pid,
                used_bytes: u.memory_bytes,
            })
        })
        .collect();
    GpuInspection {
        index,
        lost: false,
        name: Ok(spec.name.clone()),
        uuid: reading
            .and_then(|r| r.uuid.as_deref().map(str::to_string))
            .ok_or(Missing::NotSupported),
        pci_bus_id: reading
            .and_then(|r| r.pci_bus_id.as_deref().map(str::to_string))
            .ok_or(Missing::NotSupported),
        memory_total_bytes: reading
            .and_then(|r| r.memory_total_bytes)
            .ok_or(Missing::NotSupported),
        memory_used_bytes: reading
            .and_then(|r| r.memory_used_bytes)
            .ok_or(Missing::NotSupported),
        ecc: Ok(EccMode {
            current: h.ecc_enabled,
            pending: h.ecc_pending.unwrap_or(h.ecc_enabled),
        }),
        ecc_corrected_volatile: Ok(h.ecc_corrected_volatile),
        ecc_uncorrected_volatile: Ok(h.ecc_uncorrected_volatile),
        ecc_uncorrected_aggregate: Ok(h.ecc_uncorrected_aggregate.max(h.ecc_uncorrected_volatile)),
        retired_pages: Ok(RetiredPages {
            single_bit: h.retired_pages_sbe,
            double_bit: h.retired_pages_dbe,
        }),
        retired_pending: Ok(h.retired_pending),
        remapped_rows: Ok(RemappedRows {
            correctable: h.remapped_correctable,
            uncorrectable: h.remapped_uncorrectable,
            pending: h.remap_pending,
            failure: h.remap_failure,
        }),
        persistence: Ok(h.persistence),
        mig: spec
            .mig_enabled
            .map(|m| MigMode {
                current: m,
                pending: m,
            })
            .ok_or(Missing::NotSupported),
        compute_mode: Ok(match h.compute_mode {
            ComputeModeSpec::Default => ComputeMode::Default,
            ComputeModeSpec::ExclusiveProcess => ComputeMode::ExclusiveProcess,
            ComputeModeSpec::Prohibited => ComputeMode::Prohibited,
        }),
        processes: Ok(processes),
        inforom: if h.inforom_valid {
            Ok(InfoRom {
                version: Some(h.inforom_version.clone()),
            })
        } else {
            Err(Missing::Failed("corrupted infoROM".into()))
        },
        pcie: PcieLink {
            current_gen: known(reading.and_then(|r| r.pcie_link_gen)),
            width: known(reading.and_then(|r| r.pcie_link_width)),
            gen_max: known(spec.pcie_gen_max),
            width_max: known(spec.pcie_width_max),
            gen_card_max: known(h.pcie_gen_card_max.or(spec.pcie_gen_max)),
            replays: Ok(h.pcie_replays),
        },
        nvlinks: match &h.nvlink {
            None => Err(Missing::NotSupported),
            Some(nv) => Ok((0..nv.links)
                .map(|link| NvLinkInfo {
                    link,
                    active: !nv.down.contains(&link),
                    version: Ok(nv.version),
                    remote_bus_id: Ok(format!("00000000:{:02X}:00.0", 0xC0 + link % 4)),
                })
                .collect()),
        },
        cpu_affinity: cpus.map(|c| {
            let per = c / nodes;
            (node * per..(node + 1) * per).collect()
        }),
        numa_nodes: Ok(vec![h.numa_node.unwrap_or(0)]),
    }
}

/// As the fake library answers: same switch PIX, same NUMA node NODE, else SYS.
fn topology(sim: &Simulator, gpus: &[GpuInspection], i: usize, j: usize) -> super::Fact<Topology> {
    if i == j {
        return Ok(Topology::Internal);
    }
    if gpus.get(i).is_none_or(|g| g.lost) || gpus.get(j).is_none_or(|g| g.lost) {
        return Err(Missing::GpuLost);
    }
    let spec = |k: usize| {
        u32::try_from(k)
            .ok()
            .and_then(|k| sim.gpu_spec(k))
            .map(|s| &s.health)
    };
    let (Some(a), Some(b)) = (spec(i), spec(j)) else {
        return Err(Missing::NotSupported);
    };
    Ok(match (a.pcie_switch, b.pcie_switch) {
        (Some(x), Some(y)) if x == y => Topology::Single,
        _ if a.numa_node.unwrap_or(0) == b.numa_node.unwrap_or(0) => Topology::Node,
        _ => Topology::System,
    })
}
