//! The interconnect family: each GPU's PCIe link against what card and slot allow (a board at
//! Gen3 x8 instead of Gen5 x16 is a silent slowdown; an idle board's *current* generation
//! drops to save power, so only the width and the maxima are judged), the PCIe replay counter,
//! NVLink links, and the GPU-to-GPU topology matrix in `nvidia-smi topo -m`'s terms.

use super::facts::Facts;
use super::gpus::list;
use super::verdict::{Family, Level, Verdict};
use gpumeter_core::source::inspect::{GpuInspection, Inspection, Missing};

/// Replays counted since the driver loaded at which the link is called marginal.
const REPLAYS_WARN: u32 = 100;

/// The legend printed under the matrix.
const LEGEND: &str = "X = self, NV# = # NVLinks, PIX = one PCIe switch, PXB = several PCIe \
switches, PHB = a PCIe host bridge, NODE = host bridges within a NUMA node, SYS = across NUMA \
nodes (the CPU interconnect)";

pub fn check(facts: &Facts) -> Vec<Verdict> {
    let Ok(insp) = &facts.nvml else {
        return vec![Verdict::new(
            Family::Interconnect,
            "pcie.link",
            Level::Skip,
            "no NVML: links not checked",
        )];
    };
    let live: Vec<&GpuInspection> = insp.gpus.iter().filter(|g| !g.lost).collect();
    let mut out = pcie(&live);
    out.extend(replays(&live));
    let buses: Vec<&str> = insp
        .gpus
        .iter()
        .filter_map(|g| g.pci_bus_id.as_deref().ok())
        .collect();
    out.extend(nvlink(&live, &buses));
    if insp.gpus.len() > 1 {
        out.push(matrix(insp));
    }
    out
}

fn v(id: &'static str, level: Level, s: String) -> Verdict {
    Verdict::new(Family::Interconnect, id, level, s)
}

fn pcie(gpus: &[&GpuInspection]) -> Vec<Verdict> {
    let mut out = Vec::new();
    let mut ok: Vec<String> = Vec::new();
    for g in gpus {
        let p = &g.pcie;
        let (Ok(gen_max), Ok(width_max)) = (&p.gen_max, &p.width_max) else {
            let why = p
                .gen_max
                .clone()
                .err()
                .or(p.width_max.clone().err())
                .unwrap_or(Missing::NotSupported);
            out.push(
                v(
                    "pcie.link",
                    Level::Skip,
                    format!("GPU {}: PCIe link not readable ({why})", g.index),
                )
                .gpu(g.index),
            );
            continue;
        };
        let card = p.gen_card_max.as_ref().ok().copied();
        let width = p.width.as_ref().ok().copied();
        let mut problems = Vec::new();
        if let Some(card) = card.filter(|c| c > gen_max) {
            problems.push(format!(
                "the slot holds it to Gen{gen_max} (the card does Gen{card})"
            ));
        }
        if let Some(w) = width.filter(|w| w < width_max) {
            problems.push(format!("it runs x{w} of x{width_max} lanes"));
        }
        if problems.is_empty() {
            ok.push(format!("Gen{gen_max} x{width_max}"));
            continue;
        }
        let now = p.current_gen.as_ref().map_or(String::new(), |g| {
            format!(" (now Gen{g} x{})", width.unwrap_or(0))
        });
        out.push(
            v("pcie.link", Level::Warn, format!("GPU {}: degraded PCIe link: {}{now}", g.index, problems.join(" and ")))
                .gpu(g.index)
                .fix("host-to-GPU copies run slower: reseat or move the card, check the BIOS's PCIe setting, or ask the provider"),
        );
    }
    if !ok.is_empty() {
        ok.dedup();
        let n = gpus.len() - out.iter().filter(|x| x.gpu.is_some()).count();
        out.insert(0, v("pcie.link", Level::Ok, format!("PCIe {} at full width ({n} GPUs; an idle card's current generation drops to save power)", ok.join("/"))));
    }
    out
}

fn replays(gpus: &[&GpuInspection]) -> Vec<Verdict> {
    let mut out = Vec::new();
    let mut read = 0;
    for g in gpus {
        match &g.pcie.replays {
            Ok(n) if *n >= REPLAYS_WARN => out.push(
                v("pcie.replays", Level::Warn, format!("GPU {}: {n} PCIe replays since the driver loaded: a marginal link", g.index))
                    .gpu(g.index)
                    .fix("watch whether it grows under load (nvidia-smi -q -d PCIE); a riser or slot problem is the provider's to fix"),
            ),
            Ok(_) => read += 1,
            Err(Missing::NotSupported) => {}
            Err(why) => out.push(v("pcie.replays", Level::Skip, format!("GPU {}: PCIe replay counter not readable ({why})", g.index)).gpu(g.index)),
        }
    }
    if read > 0 {
        out.insert(
            0,
            v(
                "pcie.replays",
                Level::Ok,
                format!("PCIe replay counters below {REPLAYS_WARN} ({read} GPUs)"),
            ),
        );
    }
    out
}

/// Active links per GPU, and the far ends that are GPUs of this machine.
fn nvlink(gpus: &[&GpuInspection], buses: &[&str]) -> Vec<Verdict> {
    let mut out = Vec::new();
    let mut fine = Vec::new();
    let mut none = 0;
    for g in gpus {
        let links = match &g.nvlinks {
            Ok(l) if !l.is_empty() => l,
            Ok(_) | Err(Missing::NotSupported) => {
                none += 1;
                continue;
            }
            Err(why) => {
                out.push(
                    v(
                        "nvlink.links",
                        Level::Warn,
                        format!("GPU {}: NVLink not readable ({why})", g.index),
                    )
                    .gpu(g.index),
                );
                continue;
            }
        };
        let active = links.iter().filter(|l| l.active).count();
        let down: Vec<u32> = links.iter().filter(|l| !l.active).map(|l| l.link).collect();
        if down.is_empty() {
            let version = links
                .first()
                .and_then(|l| l.version.as_ref().ok())
                .map_or("?".into(), |c| nvlink_name(*c));
            // The far ends: this machine's GPUs, or NVSwitches (anything else).
            let to_gpus = links
                .iter()
                .filter_map(|l| l.remote_bus_id.as_deref().ok())
                .filter(|r| buses.iter().any(|b| b.eq_ignore_ascii_case(r)))
                .count();
            let to = match to_gpus {
                0 => "to NVSwitches",
                n if n == links.len() => "to other GPUs",
                _ => "to GPUs and NVSwitches",
            };
            fine.push(format!("{active} links {to}, {version}"));
            continue;
        }
        let level = if active == 0 {
            Level::Fail
        } else {
            Level::Warn
        };
        out.push(
            v("nvlink.links", level, format!("GPU {}: {active} of {} NVLink links active (link {} down): GPU-to-GPU bandwidth drops", g.index, links.len(), list(down.into_iter())))
                .gpu(g.index)
                .fix("collectives (all-reduce) slow down or fall back to PCIe: ask the provider (nvidia-smi nvlink -s); a GPU reset may bring the link back"),
        );
    }
    if !fine.is_empty() {
        fine.dedup();
        out.insert(
            0,
            v(
                "nvlink.links",
                Level::Ok,
                format!(
                    "NVLink: {} on each of {} GPUs",
                    fine.join("/"),
                    gpus.len() - none - out.len()
                ),
            ),
        );
    }
    if none == gpus.len() && !gpus.is_empty() {
        out.push(v(
            "nvlink.links",
            Level::Skip,
            "no NVLink (PCIe boards): GPU-to-GPU traffic goes over PCIe".into(),
        ));
    }
    out
}

/// NVML's version code as the NVLink generation.
fn nvlink_name(code: u32) -> String {
    match code {
        1 => "NVLink 1".into(),
        2 => "NVLink 2".into(),
        3 | 4 => "NVLink 3".into(),
        5 | 6 => "NVLink 4".into(),
        7 => "NVLink 5".into(),
        other => format!("NVLink (version code {other})"),
    }
}

/// The GPU-to-GPU matrix: NV# where both GPUs have active NVLinks (direct links to each other
/// counted; links to NVSwitches give each pair the smaller of the two counts), else the PCIe
/// level.
fn matrix(insp: &Inspection) -> Verdict {
    let n = insp.gpus.len();
    let bus: Vec<Option<&str>> = insp
        .gpus
        .iter()
        .map(|g| g.pci_bus_id.as_deref().ok())
        .collect();
    let nv = |i: usize, j: usize| -> u32 {
        let (Some(a), Some(b)) = (insp.gpus.get(i), insp.gpus.get(j)) else {
            return 0;
        };
        let active = |g: &GpuInspection| -> Vec<String> {
            g.nvlinks.as_ref().map_or(Vec::new(), |l| {
                l.iter()
                    .filter(|l| l.active)
                    .filter_map(|l| l.remote_bus_id.clone().ok())
                    .collect()
            })
        };
        let (ra, rb) = (active(a), active(b));
        let is_gpu = |remote: &String| bus.iter().flatten().any(|b| b.eq_ignore_ascii_case(remote));
        let direct = ra
            .iter()
            .filter(|r| {
                bus.get(j)
                    .copied()
                    .flatten()
                    .is_some_and(|b| b.eq_ignore_ascii_case(r))
            })
            .count();
        if direct > 0 {
            return u32::try_from(direct).unwrap_or(u32::MAX);
        }
        let (sa, sb) = (
            ra.iter().filter(|r| !is_gpu(r)).count(),
            rb.iter().filter(|r| !is_gpu(r)).count(),
        );
        u32::try_from(sa.min(sb)).unwrap_or(u32::MAX)
    };
    let header = (0..n)
        .map(|j| format!("{:<6}", format!("GPU{j}")))
        .collect::<String>();
    let mut rows = vec![format!("{:<6}{}", "", header.trim_end())];
    let mut codes = Vec::new();
    for i in 0..n {
        let mut row = format!("{:<6}", format!("GPU{i}"));
        for j in 0..n {
            let code = if i == j {
                "X".to_string()
            } else {
                match nv(i, j) {
                    0 => match insp.topology.get(i).and_then(|r| r.get(j)) {
                        Some(Ok(t)) => t.code().to_string(),
                        _ => "N/A".to_string(),
                    },
                    k => format!("NV{k}"),
                }
            };
            if i != j {
                codes.push(code.clone());
            }
            row.push_str(&format!("{code:<6}"));
        }
        rows.push(row.trim_end().to_string());
    }
    rows.push(format!("Legend: {LEGEND}"));
    codes.sort();
    codes.dedup();
    let summary = match codes.as_slice() {
        [one] => format!("GPU-to-GPU topology: {one} between every pair"),
        many => format!("GPU-to-GPU topology: {}", many.join(", ")),
    };
    let mut verdict = v("topology.matrix", Level::Ok, summary);
    verdict.detail = rows;
    verdict
}
