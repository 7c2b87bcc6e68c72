//! The words and numbers of a starved-GPU alert: the title, the "consistent with" sentence, the
//! evidence table and the next step for each cause. Pure formatting of what the rule
//! ([`super`]) found.

use super::cause::{Cause, cause_label, cause_words};
use super::cgroup::{
    budget_sentence, cgroup_budget, cgroup_evidence, cores_text, job_main_text, thread_sentence,
};
use super::state::{Host, JobState, Verdict};
use crate::engine::rules::Ctx;
use crate::engine::rules::alert::{Alert, AlertKind, Severity};
use crate::engine::rules::config::StarvedConfig;
use crate::engine::rules::job::{busiest, busiest_thread, gpu_ranges};
use crate::engine::rules::workload::{inference_server, notebook};
use crate::units;
use gpumeter_model::Snapshot;

/// Processes named in the evidence, busiest first.
const NAMED_PROCESSES: usize = 16;

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| units::NA.into(), |v| format!("{v:.0} %"))
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Whether most of the job's workers were pegged over the window (the CPU-bound sign that
/// says "more workers").
fn pegged_workers(js: &JobState) -> bool {
    js.workers_pegged
        .mean()
        .is_some_and(|s| s >= super::state::WORKERS_PEGGED_SHARE)
}

/// Whether the job's tree leaves cores it may use unused (it is not the CPU budget that binds).
fn cores_to_spare(snap: &Snapshot, cfg: &StarvedConfig, js: &JobState) -> bool {
    let online = snap.host.cpu_count.map(f64::from);
    match (js.cores_used.mean(), js.cores_allowed.mean()) {
        (Some(used), Some(allowed)) => {
            let narrowed = online.is_some_and(|o| allowed + 0.5 < o);
            !narrowed && used / allowed * 100.0 < cfg.cpu_saturated_pct
        }
        _ => false,
    }
}

fn next_step(snap: &Snapshot, cfg: &StarvedConfig, js: &JobState, v: &Verdict<'_>) -> String {
    let step = cause_step(snap, cfg, js, v);
    match notebook(snap, v.job.main) {
        Some(kernel) => format!(
            "{step} It runs in a notebook ({kernel}): a long run is steadier as a script under \
             tmux or nohup (jupyter nbconvert --to script), which survives a closed tab and a \
             restarted kernel; DataLoader workers do work in a notebook on Linux, so \
             num_workers > 0 is safe there."
        ),
        None => step,
    }
}

fn cause_step(snap: &Snapshot, cfg: &StarvedConfig, js: &JobState, v: &Verdict<'_>) -> String {
    let online = snap.host.cpu_count.map(f64::from);
    if let Some(server) = inference_server(snap, v.job.main) {
        return format!(
            "{server} is an inference server: it waits for requests, not for a data pipeline. \
             Batch more requests per step (dynamic batching, a larger max batch or more \
             concurrent requests from the clients), or serve this load on fewer GPUs."
        );
    }
    match v.cause {
        Cause::Offload => {
            "The optimizer step runs on the CPU (ZeRO-offload): offload less (only the optimizer \
             states, not the parameters), use DeepSpeed's CPU Adam with pinned memory, overlap \
             the step with communication, or use enough GPUs for the states to stay on device."
                .into()
        }
        Cause::Decoder => {
            "The video decoders are the limit: decode at a lower resolution or frame rate, \
             pre-decode clips once into frames or tensors, or split decoding between NVDEC and \
             CPU workers; more GPUs with decoders (or cards with more NVDEC engines) scale it."
                .into()
        }
        Cause::MemoryPressure => {
            "The host is short of memory: fewer DataLoader workers or a smaller prefetch_factor \
             (each worker holds its own copy of what it caches), share the dataset through \
             memory-mapped files instead of per-worker copies, or rent a box with more RAM."
                .into()
        }
        Cause::Communication => {
            "The GPUs wait on the network between nodes: the gradient exchange fills the NIC \
             both ways. Check that NCCL uses the fast fabric (InfiniBand or EFA: NCCL_DEBUG=INFO \
             shows the transport; NCCL_SOCKET_IFNAME and NCCL_IB_HCA pick it), exchange less \
             often (gradient accumulation) or less (bf16 or compressed gradients), overlap it \
             with compute (DDP bucket_cap_mb, FSDP prefetch), or fit the job on fewer nodes."
                .into()
        }
        Cause::NetworkBound => {
            "The network link is full: cache the dataset on local NVMe after the first epoch, \
             store it compressed (fewer bytes over the wire), read from a closer bucket or \
             region, or rent a box with a faster NIC."
                .into()
        }
        Cause::CpuBound if pegged_workers(js) && cores_to_spare(snap, cfg, js) => {
            "Every data worker is at a full core: raise DataLoader num_workers (the cores are \
             there), keep pin_memory=True and persistent_workers=True, and make each sample \
             cheaper if the cores run out (decode/augment on the GPU, pre-process once)."
                .into()
        }
        Cause::CpuBound => {
            let main_busy = js
                .main_core_pct
                .mean()
                .is_some_and(|m| m >= cfg.main_core_pct);
            let allowed = js.cores_allowed.mean();
            let narrowed = matches!((allowed, online), (Some(a), Some(o)) if a + 0.5 < o);
            if let Some((cores, what)) = cgroup_budget(snap, allowed).filter(|_| narrowed) {
                let workers = (cores.floor() - 1.0).max(1.0);
                format!(
                    "The job may use {} cores ({what}; the host has {}): num_workers > usable \
                     cores oversubscribes, so keep the DataLoader workers of all ranks at about \
                     {workers:.0} in total (not os.cpu_count()), make each batch cheaper, or ask \
                     for more CPU (docker --cpus, the pod's CPU limit).",
                    cores_text(cores),
                    online.map_or_else(|| "?".into(), |o| format!("{o:.0}"))
                )
            } else if main_busy && v.job.tree.len() <= v.job.roots.len() {
                "The main process loads the data itself: raise DataLoader num_workers (e.g. 4–8 per \
                 GPU), with pin_memory=True, persistent_workers=True and prefetch_factor=4."
                    .into()
            } else if narrowed {
                format!(
                    "The job may use only {} of {} cores (CPU affinity): widen it (taskset, \
                     numactl), then raise DataLoader num_workers; keep pin_memory=True.",
                    allowed.map_or_else(|| "?".into(), |a| format!("{a:.1}")),
                    online.map_or_else(|| "?".into(), |o| format!("{o:.0}"))
                )
            } else {
                "The workers already use the cores they have, so more num_workers will not help: \
                 make each batch cheaper (decode/augment on the GPU, e.g. DALI; pre-resize or \
                 pre-tokenise the data once), keep pin_memory=True and prefetch_factor=2–4, or \
                 rent more CPU per GPU."
                    .into()
            }
        }
        Cause::SingleThread => {
            "The data pipeline runs on one thread: raise DataLoader num_workers (e.g. 4–8 per GPU) \
             so loading leaves the training loop, with pin_memory=True and \
             persistent_workers=True; if workers are on already, move per-step Python work \
             (tokenising, augmenting, .item(), logging) out of the loop."
                .into()
        }
        Cause::IoBound | Cause::DiskThroughput => {
            let from = match (v.cause, snap.host.network_mounts.first()) {
                (Cause::IoBound, Some(m)) => format!(
                    "If the data is on a network file system ({m}), copy it to local NVMe before \
                     training. "
                ),
                _ => String::new(),
            };
            format!(
                "{from}Move or cache the dataset on local NVMe (or in RAM, /dev/shm), pack small \
                 files into shards (WebDataset, tar), and raise DataLoader prefetch_factor and \
                 num_workers so reads overlap compute."
            )
        }
        Cause::HostToDevice => {
            "Copy from pinned memory (pin_memory=True) with .to(device, non_blocking=True), keep \
             data that fits on the GPU, and overlap copies with compute (a prefetcher on a side \
             CUDA stream)."
                .into()
        }
        Cause::Unclassified => {
            "Check the batch size (too small to fill the GPU), host syncs in the step (.item(), \
             printing, per-step logging) and communication between GPUs; profile one step with \
             torch.profiler."
                .into()
        }
    }
}

/// The alert for one starved job (severity, since and cost are set by the caller).
pub(super) fn alert(
    ctx: &Ctx<'_>,
    cfg: &StarvedConfig,
    host: &Host,
    js: &JobState,
    v: &Verdict<'_>,
) -> Alert {
    let snap = ctx.snap;
    let gpus = gpu_ranges(v.starved);
    let gpu_word = if v.starved.len() == 1 { "GPU" } else { "GPUs" };
    let window = crate::units::duration(cfg.window_ms, crate::units::DurationStyle::Words);

    let used = js.cores_used.mean();
    let allowed = js.cores_allowed.mean();
    let cores = match (used, allowed) {
        (Some(u), Some(a)) => format!("{u:.1} of {a:.1} cores ({:.0} %)", u / a * 100.0),
        (Some(u), None) => format!("{u:.1} cores (cores allowed unknown)"),
        _ => units::NA.into(),
    };
    let main_pid = v.job.main;
    let main_text = job_main_text(snap, main_pid);
    let named: Vec<String> = busiest(snap, v.job, NAMED_PROCESSES)
        .into_iter()
        .map(|(pid, name, cpu)| format!("{pid} {name} {}", pct(cpu)))
        .collect();
    let more = v.job.tree.len().saturating_sub(NAMED_PROCESSES);

    let c = &v.classified;
    let joined = |v: &[String], none: &str| {
        if v.is_empty() {
            none.to_string()
        } else {
            v.join("; ")
        }
    };
    let measure = if v.activity.gpm {
        "SM activity"
    } else {
        "util"
    };
    let source = if v.activity.gpm {
        "(GPM)"
    } else {
        "(NVML utilization; no GPM on this card)"
    };
    let mut evidence: Vec<(String, String)> = vec![
        ("verdict".into(), cause_label(v.cause).into()),
        (
            format!("GPU activity ({window} mean)"),
            format!("{} {source} on {gpu_word} {gpus}", v.activity.short()),
        ),
        (
            "decided by".into(),
            joined(&c.decided, "no sign of an input bottleneck held"),
        ),
        (
            "weighed and rejected".into(),
            joined(&c.rejected, "nothing"),
        ),
        (
            "job".into(),
            format!(
                "{main_text}, {}, {} in all",
                plural(v.job.roots.len(), "GPU process", "GPU processes"),
                plural(v.job.tree.len(), "process", "processes")
            ),
        ),
        ("job CPU".into(), cores),
        (
            "main process CPU".into(),
            js.main_core_pct
                .mean()
                .map_or_else(|| units::NA.into(), |m| format!("{m:.0} % of one core")),
        ),
        (
            "busiest thread".into(),
            match (busiest_thread(snap, v.job), js.thread_pct.mean()) {
                (Some((pid, t)), Some(m)) => format!(
                    "{} (tid {}, pid {pid}) {m:.0} % of one core",
                    t.name.as_deref().unwrap_or("?"),
                    t.tid
                ),
                _ => units::NA.into(),
            },
        ),
        ("iowait".into(), pct(host.iowait.mean())),
        (
            "D state (uninterruptible I/O)".into(),
            js.dstate.mean().map_or_else(
                || units::NA.into(),
                |d| format!("{:.0} % of the window", d * 100.0),
            ),
        ),
        (
            "disk reads".into(),
            host.disk_read.mean().map_or_else(
                || units::NA.into(),
                |d| format!("{} (peak {})", units::rate(d), units::rate(host.disk_peak)),
            ),
        ),
        (
            "busiest disk".into(),
            match (host.disk_busy.mean(), host.disk_queue.mean()) {
                (Some(b), Some(q)) => format!("{b:.0} % busy, {q:.1} requests in flight"),
                (Some(b), None) => format!("{b:.0} % busy (queue depth unknown)"),
                (None, Some(q)) => format!("{q:.1} requests in flight (busy time unknown)"),
                (None, None) => units::NA.into(),
            },
        ),
        (
            "PCIe RX per GPU".into(),
            js.pcie_rx
                .mean()
                .map_or_else(|| units::NA.into(), units::rate),
        ),
        (
            "starved share (last hour)".into(),
            format!("{:.0} %", v.share * 100.0),
        ),
        (
            "processes (pid name CPU)".into(),
            if more > 0 {
                format!("{}, … {more} more", named.join(", "))
            } else {
                named.join(", ")
            },
        ),
    ];
    if !c.also.is_empty() {
        evidence.insert(4, ("also seen".into(), c.also.join("; ")));
    }
    if v.activity.gpm
        && let Some(u) = v.nvml_util
    {
        evidence.push((
            "NVML util".into(),
            format!("{u:.0} % (a kernel ran, however little of the GPU it used)"),
        ));
    }
    evidence.extend(cgroup_evidence(snap, host, &window));
    // Where waiting reads most often come from when the local disk is quiet.
    if v.cause == Cause::IoBound && !snap.host.network_mounts.is_empty() {
        evidence.push((
            "network file systems".into(),
            snap.host.network_mounts.join(", "),
        ));
    }
    if let (Some(w), Some(rate)) = (v.wasting_per_hour, ctx.rate_micros_per_h()) {
        evidence.push((
            "GPU time wasted".into(),
            format!(
                "{:.0} % waiting ≈ {} of {}",
                v.waiting * 100.0,
                ctx.per_hour(w),
                ctx.per_hour(rate)
            ),
        ));
    }
    Alert {
        id: format!("starved:{}", v.job.key.id()),
        kind: AlertKind::Starved,
        severity: Severity::Info,
        gpu: (v.starved.len() == 1).then(|| v.starved[0]),
        title: match v.cause {
            Cause::Unclassified => format!(
                "{gpu_word} {gpus} starved ({:.0} % {measure}) — no input bottleneck in the host numbers",
                v.util_mean
            ),
            cause => format!(
                "{gpu_word} {gpus} starved ({:.0} % {measure}) — consistent with {}",
                v.util_mean,
                cause_words(cause)
            ),
        },
        detail: {
            let they = if v.starved.len() == 1 { "it" } else { "they" };
            let mut d = format!(
                "The job holds {gpu_word} {gpus}, but {they} {} only {:.0} % of the last \
                 {window}; the host numbers are consistent with {}",
                if v.activity.gpm {
                    "kept their SMs active"
                } else {
                    "ran kernels"
                },
                v.util_mean,
                cause_words(v.cause)
            );
            let extra = match v.cause {
                Cause::CpuBound => budget_sentence(snap, host, js, &window),
                Cause::SingleThread => thread_sentence(snap, js, v),
                _ => None,
            };
            if let Some(e) = extra {
                d.push_str(": ");
                d.push_str(&e);
            }
            d.push('.');
            d
        },
        evidence,
        cost_micros: None,
        next_step: Some(next_step(snap, cfg, js, v)),
        since_unix_ms: ctx.now_ms,
        currency: ctx.currency,
    }
}
