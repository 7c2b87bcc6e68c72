//! The host-balance family: are there enough CPU cores and enough memory per GPU for an input
//! pipeline, counted as the job will get them (affinity and cgroup quota, not the host's
//! total), and which GPUs hang off which NUMA node.

use super::facts::Facts;
use super::gpus::list;
use super::verdict::{Family, Level, Verdict};
use gpumeter_core::units::bytes;

/// Usable cores per GPU below which dataloaders commonly starve the GPU.
pub const MIN_CORES_PER_GPU: f64 = 4.0;
/// Host memory per GPU, as a multiple of one GPU's VRAM, below which pinned buffers, page cache
/// and dataloader workers crowd each other.
pub const MIN_RAM_PER_VRAM: f64 = 2.0;

fn v(id: &'static str, level: Level, s: String) -> Verdict {
    Verdict::new(Family::Host, id, level, s)
}

pub fn check(facts: &Facts) -> Vec<Verdict> {
    let gpus = facts.nvml.as_ref().map_or(0, |i| i.gpus.len());
    let vram = facts.nvml.as_ref().ok().and_then(|i| {
        i.gpus
            .iter()
            .filter_map(|g| g.memory_total_bytes.as_ref().ok().copied())
            .max()
    });
    vec![cores(facts, gpus), memory(facts, gpus, vram), numa(facts)]
}

fn cores(facts: &Facts, gpus: usize) -> Verdict {
    let h = &facts.host.limits;
    let Some(usable) = h.usable_cores() else {
        return v(
            "host.cores",
            Level::Skip,
            "usable CPU cores unknown (/proc/self/status unreadable)".into(),
        );
    };
    let mut how = Vec::new();
    if let Some(n) = h.cpus_online {
        how.push(format!("host {n}"));
    }
    if let Some(a) = &h.affinity {
        how.push(format!("affinity {}", a.len()));
    }
    if let Some(q) = h.quota_cores {
        how.push(format!("cgroup quota {q:.1}"));
    }
    let how = how.join(", ");
    if gpus == 0 {
        return v(
            "host.cores",
            Level::Ok,
            format!("{usable:.1} usable cores ({how})"),
        );
    }
    let per = usable / gpus as f64;
    let text = format!("{usable:.1} usable cores for {gpus} GPUs = {per:.1} per GPU ({how})");
    if per < MIN_CORES_PER_GPU {
        v("host.cores", Level::Warn, format!("{text}: below {MIN_CORES_PER_GPU:.0} per GPU, dataloaders will likely starve the GPUs"))
            .fix("ask for more vCPUs, or plan light input pipelines (pre-decoded data, GPU-side augmentation, fewer workers per rank)")
    } else {
        v("host.cores", Level::Ok, text)
    }
}

fn memory(facts: &Facts, gpus: usize, vram: Option<u64>) -> Verdict {
    let h = &facts.host.limits;
    let avail = match (h.mem_total_bytes, h.mem_limit_bytes) {
        (Some(t), Some(l)) => Some(t.min(l)),
        (t, l) => t.or(l),
    };
    let Some(avail) = avail else {
        return v(
            "host.memory",
            Level::Skip,
            "host memory unknown (/proc/meminfo unreadable)".into(),
        );
    };
    let limit = h
        .mem_limit_bytes
        .filter(|l| Some(*l) < h.mem_total_bytes)
        .map_or(String::new(), |l| format!(", cgroup limit {}", bytes(l)));
    let (Some(vram), 1..) = (vram, gpus) else {
        return v(
            "host.memory",
            Level::Ok,
            format!("{} of memory{limit}", bytes(avail)),
        );
    };
    let per = avail / gpus as u64;
    let ratio = per as f64 / vram as f64;
    let text = format!(
        "{} of memory{limit} = {} per GPU, {ratio:.1}× one GPU's {} VRAM",
        bytes(avail),
        bytes(per),
        bytes(vram)
    );
    if ratio < MIN_RAM_PER_VRAM {
        v("host.memory", Level::Warn, format!("{text}: below {MIN_RAM_PER_VRAM:.0}×"))
            .fix("pinned buffers, page cache and workers will crowd each other: ask for more RAM, or keep dataloader prefetch small")
    } else {
        v("host.memory", Level::Ok, text)
    }
}

fn numa(facts: &Facts) -> Verdict {
    let h = &facts.host;
    let Ok(insp) = &facts.nvml else {
        return v(
            "host.numa",
            Level::Skip,
            "no NVML: GPU placement unknown".into(),
        );
    };
    let nodes = h.numa.len().max(1);
    let mut by_node: std::collections::BTreeMap<u32, Vec<u32>> = std::collections::BTreeMap::new();
    for g in insp.gpus.iter().filter(|g| !g.lost) {
        if let Ok(n) = &g.numa_nodes
            && let Some(first) = n.first()
        {
            by_node.entry(*first).or_default().push(g.index);
        }
    }
    if by_node.is_empty() {
        return v(
            "host.numa",
            Level::Skip,
            format!("{nodes} NUMA node(s); the GPUs' NUMA placement is not readable"),
        );
    }
    let placement = by_node
        .iter()
        .map(|(node, gpus)| format!("GPU {} on node {node}", list(gpus.iter().copied())))
        .collect::<Vec<_>>()
        .join(", ");
    // GPUs whose nearby CPUs this process may not use at all.
    let allowed = facts.host.limits.affinity.as_ref();
    let far: Vec<u32> = insp
        .gpus
        .iter()
        .filter(|g| !g.lost)
        .filter(|g| match (&g.cpu_affinity, allowed) {
            (Ok(near), Some(allowed)) if !near.is_empty() => {
                !near.iter().any(|c| allowed.contains(c))
            }
            _ => false,
        })
        .map(|g| g.index)
        .collect();
    let text = format!(
        "{nodes} NUMA node{}: {placement}",
        if nodes == 1 { "" } else { "s" }
    );
    if far.is_empty() {
        v("host.numa", Level::Ok, text)
    } else {
        v("host.numa", Level::Warn, format!("{text}; this process may use none of the CPUs near GPU {}", list(far.into_iter())))
            .fix("feeding those GPUs crosses the CPU interconnect: bind each rank to its GPU's node (numactl, torchrun --numa-binding) or widen the affinity")
    }
}
