//! The GPU family: are these the boards that were paid for, and are they healthy and free?
//! Count, model and VRAM (against `--expect`), lost boards, ECC, retired pages, row remapping,
//! persistence, MIG, compute mode, processes already on the cards (and memory no visible
//! process accounts for), the infoROM.

use super::facts::{Facts, Owner};
use super::verdict::{Family, Level, Verdict};
use gpumeter_core::source::inspect::{ComputeMode, GpuInspection, Inspection, Missing};
use gpumeter_core::units::bytes;

/// VRAM in use beyond what the listed processes hold before it is called someone else's.
const UNACCOUNTED_BYTES: u64 = 1 << 30;
/// Retired pages at which NVIDIA's guidance says the board should be replaced.
const RETIRED_PAGES_LIMIT: u32 = 60;

pub fn check(facts: &Facts) -> Vec<Verdict> {
    let inspection = match &facts.nvml {
        Ok(i) => i,
        Err(why) => {
            return vec![
                Verdict::new(
                    Family::Gpus,
                    "gpu.nvml",
                    Level::Fail,
                    format!("NVML unavailable: {why}"),
                )
                .fix(
                    "install the NVIDIA driver, or run the container with GPUs (docker --gpus all)",
                ),
            ];
        }
    };
    let mut out = count_and_model(facts, inspection);
    let live: Vec<&GpuInspection> = inspection.gpus.iter().filter(|g| !g.lost).collect();
    for g in inspection.gpus.iter().filter(|g| g.lost) {
        out.push(
            Verdict::new(
                Family::Gpus,
                "gpu.lost",
                Level::Fail,
                format!(
                    "GPU {} is lost: it fell off the bus or needs a reset",
                    g.index
                ),
            )
            .gpu(g.index)
            .fix("do not start a job: ask the provider to reset or replace the board"),
        );
    }
    out.extend(per_gpu("gpu.ecc", &live, ecc, |n| {
        format!("ECC on, no uncorrected errors ({n} GPUs)")
    }));
    out.extend(per_gpu("gpu.retired_pages", &live, retired, |n| {
        format!("no retired or pending pages ({n} GPUs)")
    }));
    out.extend(per_gpu("gpu.row_remap", &live, remap, |n| {
        format!("row remapping: nothing pending, no failures ({n} GPUs)")
    }));
    out.extend(per_gpu("gpu.persistence", &live, persistence, |n| {
        format!("persistence mode on ({n} GPUs)")
    }));
    out.extend(per_gpu("gpu.mig", &live, mig, |n| {
        format!("MIG off: whole GPUs ({n} GPUs)")
    }));
    out.extend(per_gpu("gpu.compute_mode", &live, compute_mode, |n| {
        format!("compute mode allows CUDA ({n} GPUs)")
    }));
    out.extend(per_gpu(
        "gpu.processes",
        &live,
        |g| processes(g, facts),
        |n| format!("no processes on the GPUs, no memory held ({n} GPUs)"),
    ));
    out.extend(per_gpu("gpu.inforom", &live, inforom, |n| {
        format!("infoROM valid ({n} GPUs)")
    }));
    out
}

/// One finding for one GPU: level, what, what to do.
type Finding = (Level, String, Option<String>);

/// Runs `judge` on every GPU: one ok (or skip) line for the GPUs that pass, one line per GPU
/// that does not.
fn per_gpu(
    id: &'static str,
    gpus: &[&GpuInspection],
    judge: impl Fn(&GpuInspection) -> Finding,
    all_ok: impl Fn(usize) -> String,
) -> Vec<Verdict> {
    let mut out = Vec::new();
    let mut ok = 0;
    let mut skipped: Vec<(u32, String)> = Vec::new();
    for g in gpus {
        let (level, summary, fix) = judge(g);
        match level {
            Level::Ok => ok += 1,
            Level::Skip => skipped.push((g.index, summary)),
            _ => {
                let mut v = Verdict::new(
                    Family::Gpus,
                    id,
                    level,
                    format!("GPU {}: {summary}", g.index),
                )
                .gpu(g.index);
                v.fix = fix;
                out.push(v);
            }
        }
    }
    if ok > 0 {
        out.insert(0, Verdict::new(Family::Gpus, id, Level::Ok, all_ok(ok)));
    }
    // Skips usually share one reason ("not supported"): one line for them all.
    if let Some((_, reason)) = skipped.first() {
        let same = skipped.iter().all(|(_, r)| r == reason);
        if same {
            let which = if skipped.len() == gpus.len() {
                "all GPUs".to_string()
            } else {
                format!("GPU {}", list(skipped.iter().map(|(i, _)| *i)))
            };
            out.push(Verdict::new(
                Family::Gpus,
                id,
                Level::Skip,
                format!("{which}: {reason}"),
            ));
        } else {
            for (i, r) in &skipped {
                out.push(
                    Verdict::new(Family::Gpus, id, Level::Skip, format!("GPU {i}: {r}")).gpu(*i),
                );
            }
        }
    }
    out
}

/// `0,1,5`.
pub(crate) fn list(items: impl Iterator<Item = u32>) -> String {
    items.map(|i| i.to_string()).collect::<Vec<_>>().join(",")
}

/// A reading that could not be taken: skip when unsupported, warn otherwise.
fn unread(what: &str, why: &Missing) -> Finding {
    match why {
        Missing::NotSupported => (
            Level::Skip,
            format!("{what} not supported by this board or driver"),
            None,
        ),
        other => (
            Level::Warn,
            format!("could not read {what} ({other})"),
            Some(
                "run gpumeter check as a user that may query the GPU (or ask the provider)".into(),
            ),
        ),
    }
}

fn count_and_model(facts: &Facts, insp: &Inspection) -> Vec<Verdict> {
    let mut out = Vec::new();
    let n = u32::try_from(insp.gpus.len()).unwrap_or(u32::MAX);
    if n == 0 {
        out.push(Verdict::new(Family::Gpus, "gpu.count", Level::Fail, "NVML sees no GPUs").fix(
            "check that the container was started with GPUs (docker --gpus all, CUDA_VISIBLE_DEVICES/NVIDIA_VISIBLE_DEVICES)",
        ));
        return out;
    }
    let mut models: Vec<(String, Vec<u32>)> = Vec::new();
    for g in &insp.gpus {
        let name = g
            .name
            .clone()
            .unwrap_or_else(|why| format!("unknown ({why})"));
        let vram = g
            .memory_total_bytes
            .as_ref()
            .map_or_else(|_| "VRAM N/A".to_string(), |b| bytes(*b));
        let key = format!("{name}, {vram}");
        match models.iter_mut().find(|(k, _)| *k == key) {
            Some((_, idx)) => idx.push(g.index),
            None => models.push((key, vec![g.index])),
        }
    }
    let described = models
        .iter()
        .map(|(k, idx)| format!("{} × {k}", idx.len()))
        .collect::<Vec<_>>()
        .join(" + ");
    let expect = facts.expect.as_ref();
    let mut level = if models.len() > 1 {
        Level::Warn
    } else {
        Level::Ok
    };
    let mut summary = format!("{n} GPU{}: {described}", if n == 1 { "" } else { "s" });
    let mut fix = (models.len() > 1)
        .then(|| "mixed boards: pin the job to one kind with CUDA_VISIBLE_DEVICES".to_string());
    if let Some(want) = expect.and_then(|e| e.count)
        && want != n
    {
        level = Level::Fail;
        summary = format!("{summary}; expected {want}");
        fix = Some(
            "this is not the machine that was paid for: ask the provider, or stop it now".into(),
        );
    }
    if let Some(model) = expect.and_then(|e| e.model.as_deref()) {
        let wanted = model.to_ascii_lowercase();
        let wrong: Vec<u32> = insp
            .gpus
            .iter()
            .filter(|g| {
                g.name
                    .as_ref()
                    .is_ok_and(|name| !name.to_ascii_lowercase().contains(&wanted))
            })
            .map(|g| g.index)
            .collect();
        if !wrong.is_empty() {
            level = Level::Fail;
            summary = format!(
                "{summary}; expected {model} (GPU {} differ)",
                list(wrong.into_iter())
            );
            fix = Some(
                "this is not the machine that was paid for: ask the provider, or stop it now"
                    .into(),
            );
        } else if level == Level::Ok {
            summary = format!("{summary}, as expected");
        }
    }
    let mut v = Verdict::new(Family::Gpus, "gpu.count", level, summary);
    v.fix = fix;
    out.push(v);
    out
}

fn ecc(g: &GpuInspection) -> Finding {
    let mode = match &g.ecc {
        Ok(m) => *m,
        Err(why) => return unread("ECC mode", why),
    };
    if let Ok(n @ 1..) = g.ecc_uncorrected_volatile {
        return (
            Level::Fail,
            format!("{n} uncorrected ECC errors since the driver loaded"),
            Some("the board is corrupting memory: ask the provider for another GPU or a reset; do not train on it".into()),
        );
    }
    if !mode.current {
        let then = if mode.pending {
            " (on after the next reboot)"
        } else {
            ""
        };
        return (
            Level::Warn,
            format!("ECC is off{then}: memory errors go undetected"),
            Some(
                "sudo nvidia-smi -i <gpu> -e 1, then reboot (data-center boards ship with ECC on)"
                    .into(),
            ),
        );
    }
    if let Ok(n @ 1..) = g.ecc_uncorrected_aggregate {
        return (
            Level::Warn,
            format!(
                "{n} uncorrected ECC errors in the board's lifetime (none since the driver loaded)"
            ),
            Some("watch it: a board with a history of uncorrected errors fails again".into()),
        );
    }
    if let Err(why) = &g.ecc_uncorrected_volatile {
        return unread("the ECC error counts", why);
    }
    (Level::Ok, String::new(), None)
}

fn retired(g: &GpuInspection) -> Finding {
    if let Ok(true) = g.retired_pending {
        return (
            Level::Fail,
            "memory pages are pending retirement".into(),
            Some(
                "the GPU needs a reset or reboot before the bad pages are taken out of use".into(),
            ),
        );
    }
    match &g.retired_pages {
        Err(why) => unread("retired pages", why),
        Ok(p) if p.double_bit > 0 || p.single_bit + p.double_bit >= RETIRED_PAGES_LIMIT => (
            Level::Warn,
            format!(
                "{} pages retired ({} double-bit, {} single-bit)",
                p.single_bit + p.double_bit,
                p.double_bit,
                p.single_bit
            ),
            Some(format!(
                "a board near {RETIRED_PAGES_LIMIT} retired pages is due for replacement: tell the provider"
            )),
        ),
        Ok(_) => (Level::Ok, String::new(), None),
    }
}

fn remap(g: &GpuInspection) -> Finding {
    match &g.remapped_rows {
        Err(why) => unread("row remapping", why),
        Ok(r) if r.failure => (
            Level::Fail,
            "a row remap failed: the board has run out of spare rows".into(),
            Some("the board needs replacing: ask the provider for another GPU".into()),
        ),
        Ok(r) if r.pending => (
            Level::Fail,
            format!(
                "a row remap is pending ({} rows remapped for uncorrectable errors)",
                r.uncorrectable
            ),
            Some(
                "the GPU needs a reset (nvidia-smi -r, or a reboot) before it is safe to use"
                    .into(),
            ),
        ),
        Ok(r) if r.uncorrectable > 0 => (
            Level::Warn,
            format!(
                "{} rows remapped for uncorrectable errors ({} correctable)",
                r.uncorrectable, r.correctable
            ),
            Some("the remaps worked, but the board has a history of memory errors".into()),
        ),
        Ok(_) => (Level::Ok, String::new(), None),
    }
}

fn persistence(g: &GpuInspection) -> Finding {
    match &g.persistence {
        Err(why) => unread("persistence mode", why),
        Ok(false) => (
            Level::Warn,
            "persistence mode is off: every CUDA start initialises the GPU again (seconds each)"
                .into(),
            Some("sudo nvidia-smi -pm 1, or run nvidia-persistenced".into()),
        ),
        Ok(true) => (Level::Ok, String::new(), None),
    }
}

fn mig(g: &GpuInspection) -> Finding {
    match &g.mig {
        Err(Missing::NotSupported) => (Level::Skip, "MIG not supported by this board".into(), None),
        Err(why) => unread("MIG mode", why),
        Ok(m) if m.current => (
            Level::Warn,
            "MIG is on: CUDA sees MIG instances, not the whole GPU".into(),
            Some("if whole GPUs were paid for: sudo nvidia-smi -i <gpu> -mig 0 and reset, or ask the provider".into()),
        ),
        Ok(m) if m.pending => (
            Level::Warn,
            "MIG turns on at the next GPU reset".into(),
            Some("sudo nvidia-smi -i <gpu> -mig 0 to keep whole GPUs".into()),
        ),
        Ok(_) => (Level::Ok, String::new(), None),
    }
}

fn compute_mode(g: &GpuInspection) -> Finding {
    match &g.compute_mode {
        Err(why) => unread("compute mode", why),
        Ok(ComputeMode::Prohibited) => (
            Level::Fail,
            "compute mode is prohibited: no CUDA process can use this GPU".into(),
            Some("sudo nvidia-smi -i <gpu> -c DEFAULT".into()),
        ),
        Ok(_) => (Level::Ok, String::new(), None),
    }
}

fn processes(g: &GpuInspection, facts: &Facts) -> Finding {
    let procs = match &g.processes {
        Ok(p) => p,
        Err(why) => return unread("the GPU's processes", why),
    };
    let held: u64 = procs.iter().filter_map(|p| p.used_bytes).sum();
    let unaccounted = g
        .memory_used_bytes
        .as_ref()
        .ok()
        .map_or(0, |used| used.saturating_sub(held));
    if !procs.is_empty() {
        let who: Vec<String> = procs
            .iter()
            .take(3)
            .map(|p| describe(p.pid, facts.owners.get(&p.pid), facts.my_uid))
            .collect();
        let more = procs.len().saturating_sub(3);
        let tail = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        let extra = if unaccounted >= UNACCOUNTED_BYTES {
            format!(
                ", plus {} no visible process accounts for",
                bytes(unaccounted)
            )
        } else {
            String::new()
        };
        return (
            Level::Warn,
            format!(
                "{} process{} already on it, holding {}: {}{tail}{extra}",
                procs.len(),
                if procs.len() == 1 { "" } else { "es" },
                bytes(held),
                who.join("; ")
            ),
            Some("they compete for memory and SM time: stop them, or leave this GPU out with CUDA_VISIBLE_DEVICES".into()),
        );
    }
    if unaccounted >= UNACCOUNTED_BYTES {
        return (
            Level::Warn,
            format!("{} of VRAM held by processes this machine can't see (another container or tenant)", bytes(unaccounted)),
            Some("the card is shared or a process outlived its container: ask the provider, or use another GPU".into()),
        );
    }
    (Level::Ok, String::new(), None)
}

/// `pid 4242 python (user bob)`, `pid 4242 (not visible here: another container)`.
fn describe(pid: u32, owner: Option<&Owner>, my_uid: Option<u32>) -> String {
    match owner {
        Some(o) if o.visible => {
            let name = o.name.as_deref().unwrap_or("?");
            let user = o
                .user
                .clone()
                .or(o.uid.map(|u| format!("uid {u}")))
                .unwrap_or_else(|| "?".into());
            let mine = match (o.uid, my_uid) {
                (Some(a), Some(b)) if a == b => ", yours",
                _ => "",
            };
            format!("pid {pid} {name} (user {user}{mine})")
        }
        _ => format!("pid {pid} (not visible here: another container or PID namespace)"),
    }
}

fn inforom(g: &GpuInspection) -> Finding {
    match &g.inforom {
        Ok(_) => (Level::Ok, String::new(), None),
        Err(Missing::NotSupported) => (Level::Skip, "infoROM check not supported".into(), None),
        Err(Missing::Failed(why)) if why.contains("infoROM") => (
            Level::Warn,
            "the infoROM is corrupted: ECC and retirement records may be unreliable".into(),
            Some("ask the provider to reflash or replace the board".into()),
        ),
        Err(why) => unread("the infoROM", why),
    }
}
