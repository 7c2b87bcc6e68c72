//! What a starved GPU waits on: the job's and the host's window means weighed sign by sign
//! into one [`Cause`], with each sign in words — the ones that decided it and the ones weighed
//! and rejected ("disk reads 200 MB/s, steady at their peak, disk 40 % busy: not at a limit";
//! "iowait 0 %: not waiting on disk"). Pure: numbers in, a verdict and sentences out. The
//! order of the causes and their thresholds are in the module doc of [`super`].

use super::cgroup::cores_text;
use super::state::{
    CPU_PRESSURE_PCT, DECODER_SATURATED_PCT, Host, IO_PRESSURE_PCT, JobState, MAJOR_FAULTS_PER_S,
    MEM_FULL_PCT, MEM_PRESSURE_PCT, NIC_BOTH_WAYS_PCT, NIC_SATURATED_PCT, OFFLOAD_PCIE_BYTES_PER_S,
    OFFLOAD_RANK_PCT, PCIE_LINK_SATURATED_PCT, SWAP_IN_BYTES_PER_S, THROTTLED_PCT,
    WORKERS_PEGGED_SHARE,
};
use crate::engine::rules::config::StarvedConfig;
use crate::units;

/// What the evidence is consistent with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Cause {
    /// The optimizer step on the CPU (ZeRO-offload): the ranks compute on many cores while
    /// states cross PCIe both ways.
    Offload,
    /// The GPU's video decoders (NVDEC) at their limit: the loader decodes on the GPU.
    Decoder,
    /// The host short of memory: pages reclaimed and swapped back in under the loader.
    MemoryPressure,
    /// The NIC that brings the data in at its link speed (object store, network file system).
    NetworkBound,
    /// A NIC at its limit both ways: a collective between nodes (all-reduce of a multi-node
    /// job), not input.
    Communication,
    /// The job's processes use nearly all the cores they may use (or the cgroup throttles them, or
    /// CPU pressure starves them): input prepared on the CPU too slowly.
    CpuBound,
    /// One thread of the GPU process at a full core: the pipeline does not run in parallel.
    SingleThread,
    /// Waiting on storage: iowait high, a process in D state, or I/O pressure (PSI).
    IoBound,
    /// Host-to-device copies: PCIe RX near the link's capacity, or high while the GPU computes
    /// little.
    HostToDevice,
    /// Disk reads high while the disk shows saturation (busy, requests queued).
    DiskThroughput,
    /// No sign decided it: starved, cause unknown.
    Unclassified,
}

impl Cause {
    /// Every cause, in the order the verdict checks them (offload first, unclassified last).
    pub const ALL: [Cause; 11] = [
        Cause::Offload,
        Cause::Decoder,
        Cause::MemoryPressure,
        Cause::Communication,
        Cause::NetworkBound,
        Cause::CpuBound,
        Cause::SingleThread,
        Cause::IoBound,
        Cause::HostToDevice,
        Cause::DiskThroughput,
        Cause::Unclassified,
    ];

    /// Stable snake-case name (metric labels, JSON).
    pub fn name(self) -> &'static str {
        match self {
            Cause::Offload => "optimizer_offload",
            Cause::Decoder => "decoder",
            Cause::MemoryPressure => "memory_pressure",
            Cause::NetworkBound => "network_bound",
            Cause::Communication => "communication",
            Cause::CpuBound => "cpu_bound",
            Cause::SingleThread => "single_thread",
            Cause::IoBound => "io_bound",
            Cause::HostToDevice => "host_to_device",
            Cause::DiskThroughput => "disk_throughput",
            Cause::Unclassified => "unclassified",
        }
    }
}

/// The GPU activity the verdict rests on, as a window mean.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Activity {
    pub(super) pct: f64,
    /// From GPM's SM activity (else NVML's utilization).
    pub(super) gpm: bool,
}

impl Activity {
    /// "SM activity 31 %" / "util 40 %".
    pub(super) fn short(self) -> String {
        if self.gpm {
            format!("SM activity {:.0} %", self.pct)
        } else {
            format!("util {:.0} %", self.pct)
        }
    }
}

/// One sign weighed for a cause.
#[derive(Debug, Clone, PartialEq)]
struct Sign {
    cause: Cause,
    held: bool,
    text: String,
}

/// A cause with the signs behind it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Classified {
    pub(super) cause: Cause,
    /// The signs of the chosen cause that held.
    pub(super) decided: Vec<String>,
    /// Signs of later causes that held too (the first cause in order wins).
    pub(super) also: Vec<String>,
    /// Signs weighed that did not hold.
    pub(super) rejected: Vec<String>,
}

fn pct(v: f64) -> String {
    format!("{v:.0} %")
}

/// Weighs every sign (a sign whose reading is unknown is left out) and picks the first cause
/// in order with one that held. `decoder`: the starved GPUs' NVDEC utilization.
pub(super) fn classify(
    c: &StarvedConfig,
    host: &Host,
    js: &JobState,
    activity: Activity,
    decoder: Option<f64>,
    cpus_online: Option<f64>,
) -> Classified {
    let mut signs: Vec<Sign> = Vec::new();
    let mut sign = |cause, held, text: String| signs.push(Sign { cause, held, text });
    let thread = js.thread_pct.mean();
    if let Some(d) = decoder {
        let held = d >= DECODER_SATURATED_PCT;
        sign(
            Cause::Decoder,
            held,
            if held {
                format!(
                    "video decoders (NVDEC) {} busy: decoding is the limit",
                    pct(d)
                )
            } else {
                format!("video decoders (NVDEC) {} busy: not at a limit", pct(d))
            },
        );
    }
    memory_signs(host, &mut sign);
    if let Some(u) = host.nic_util.mean() {
        nic_signs(host, u, &mut sign);
    }

    if let (Some(rank), Some(rx), Some(tx)) = (
        js.main_core_pct.mean(),
        js.pcie_rx.mean(),
        js.pcie_tx.mean(),
    ) {
        let both = rx >= OFFLOAD_PCIE_BYTES_PER_S && tx >= OFFLOAD_PCIE_BYTES_PER_S;
        let held = rank >= OFFLOAD_RANK_PCT && both;
        let text = if held {
            format!(
                "the GPU processes compute on the CPU ({} of one core each) while PCIe carries \
                 {}/GPU in and {}/GPU out: an optimizer step offloaded to the CPU",
                pct(rank),
                units::rate(rx),
                units::rate(tx)
            )
        } else if both {
            format!(
                "PCIe {}/GPU in, {}/GPU out, but the GPU processes at {} of one core: no CPU \
                 optimizer step",
                units::rate(rx),
                units::rate(tx),
                pct(rank)
            )
        } else {
            format!(
                "PCIe {}/GPU in, {}/GPU out: no offload traffic both ways",
                units::rate(rx),
                units::rate(tx)
            )
        };
        sign(Cause::Offload, held, text);
    }
    if let (Some(share), Some(n)) = (js.workers_pegged.mean(), js.workers.mean()) {
        let n = n.round().max(1.0);
        let pegged = (share * n).round();
        let held = share >= WORKERS_PEGGED_SHARE;
        let all = if pegged >= n {
            "all ".to_string()
        } else {
            format!("{pegged:.0} of ")
        };
        let text = if held {
            format!(
                "{all}{n:.0} data workers at ≥ {:.0} % of one core: each worker is one thread at \
                 its limit (more workers would help)",
                super::super::job::PEGGED_PCT
            )
        } else {
            format!(
                "{pegged:.0} of {n:.0} data workers at ≥ {:.0} % of one core: the workers keep up",
                super::super::job::PEGGED_PCT
            )
        };
        sign(Cause::CpuBound, held, text);
    }
    if let (Some(used), Some(allowed)) = (js.cores_used.mean(), js.cores_allowed.mean()) {
        // A reading interval's rounding can put the tree a hair over its cores: never over 100 %.
        let used = used.min(allowed);
        let share = used / allowed * 100.0;
        let narrowed = cpus_online.is_some_and(|o| allowed + 0.5 < o);
        let held = share >= c.cpu_saturated_pct;
        let text = match (held, narrowed) {
            (true, true) => format!(
                "CPU-bound within the job's {} allowed cores: {used:.1} used ({})",
                cores_text(allowed),
                pct(share)
            ),
            (true, false) => format!("job CPU {used:.1} of {allowed:.1} cores ({})", pct(share)),
            (false, _) => format!(
                "job CPU {used:.1} of {allowed:.1} cores ({}): cores to spare",
                pct(share)
            ),
        };
        sign(Cause::CpuBound, held, text);
    }
    if let Some(t) = host.throttled.mean() {
        let held = t >= THROTTLED_PCT;
        sign(
            Cause::CpuBound,
            held,
            if held {
                format!("cgroup throttled in {} of its CFS periods", pct(t))
            } else {
                format!(
                    "cgroup throttled in {} of its periods: quota not binding",
                    pct(t)
                )
            },
        );
    }
    if let Some(p) = host.cpu_pressure.mean() {
        let runnable = js.runnable.mean().is_some_and(|r| r >= 0.5);
        let held = runnable && p >= CPU_PRESSURE_PCT;
        sign(
            Cause::CpuBound,
            held,
            if held {
                format!(
                    "CPU pressure {} with most of the job runnable: its cores are shared",
                    pct(p)
                )
            } else {
                format!("CPU pressure {}: no contended cores", pct(p))
            },
        );
    }
    // Without thread samples a main process near one core proves nothing: ten threads at
    // 11 % each read the same. It is weighed and said to be unseen, never a verdict.
    if thread.is_none()
        && let Some(m) = js.main_core_pct.mean()
    {
        let near_one = m >= c.main_core_pct;
        sign(
            Cause::SingleThread,
            false,
            format!(
                "main process {} of one core{}",
                pct(m),
                if near_one {
                    ": its threads are unseen (no thread samples), so one thread's limit cannot be told"
                } else {
                    ": not loading alone"
                }
            ),
        );
    }
    if let Some(t) = thread {
        let held = t >= c.main_core_pct;
        sign(
            Cause::SingleThread,
            held,
            if held {
                format!("busiest thread {} of one core", pct(t))
            } else {
                format!(
                    "busiest thread {} of one core: not one thread's limit",
                    pct(t)
                )
            },
        );
    }
    if let Some(w) = host.iowait.mean() {
        let held = w >= c.iowait_pct;
        sign(
            Cause::IoBound,
            held,
            if held {
                format!("iowait {}", pct(w))
            } else {
                format!("iowait {}: not waiting on disk", pct(w))
            },
        );
    }
    if let Some(d) = js.dstate.mean() {
        let held = d >= c.dstate_share;
        sign(
            Cause::IoBound,
            held,
            if held {
                format!("a job process in D state {} of the window", pct(d * 100.0))
            } else {
                format!(
                    "D state {} of the window: not blocked on I/O",
                    pct(d * 100.0)
                )
            },
        );
    }
    if let Some(p) = host.io_pressure.mean() {
        let held = p >= IO_PRESSURE_PCT;
        sign(
            Cause::IoBound,
            held,
            if held {
                format!("I/O pressure {}", pct(p))
            } else {
                format!("I/O pressure {}: no task waits on I/O", pct(p))
            },
        );
    }
    let link_full = js
        .pcie_rx_link
        .mean()
        .filter(|&l| l >= PCIE_LINK_SATURATED_PCT);
    if let (Some(rx), Some(l)) = (js.pcie_rx.mean(), link_full) {
        sign(
            Cause::HostToDevice,
            true,
            format!(
                "PCIe RX {}/GPU fills {} of the link at its current generation and width: \
                 the link is the limit",
                units::rate(rx),
                pct(l)
            ),
        );
    } else if let Some(rx) = js.pcie_rx.mean() {
        let fast = rx >= c.h2d_rx_bytes_per_s;
        let held = fast && activity.pct < c.h2d_util_below_pct;
        let text = if held {
            format!(
                "PCIe RX {}/GPU while {} < {:.0} %",
                units::rate(rx),
                activity.short(),
                c.h2d_util_below_pct
            )
        } else if fast {
            format!(
                "PCIe RX {}/GPU, but {}: the GPU computes between copies",
                units::rate(rx),
                activity.short()
            )
        } else {
            format!(
                "PCIe RX {}/GPU: below {}",
                units::rate(rx),
                units::rate(c.h2d_rx_bytes_per_s)
            )
        };
        sign(Cause::HostToDevice, held, text);
    }
    if let Some(d) = host.disk_read.mean() {
        let (held, text) = disk_sign(c, host, d);
        sign(Cause::DiskThroughput, held, text);
    }

    let held = |k: Cause| signs.iter().any(|s| s.cause == k && s.held);
    let mut cause = Cause::ALL
        .into_iter()
        .find(|&k| held(k))
        .unwrap_or(Cause::Unclassified);
    // A thread at a full core while PCIe carries ≥ 1 GB/s per GPU is the copy itself (however
    // much the GPU computes between copies: it is starved already): from
    // pageable memory the driver stages every batch through a bounce buffer on the calling
    // thread. No Python loader turns out a GB/s per core; pinned memory is the fix.
    let pcie_fast = js
        .pcie_rx
        .mean()
        .is_some_and(|rx| rx >= c.h2d_rx_bytes_per_s);
    if cause == Cause::SingleThread && pcie_fast {
        cause = Cause::HostToDevice;
        signs.push(Sign {
            cause: Cause::HostToDevice,
            held: true,
            text: "the thread at a full core is staging the copies (pageable memory: \
                   cudaMemcpy copies through a bounce buffer on the calling thread)"
                .into(),
        });
    }
    let pick = |f: &dyn Fn(&Sign) -> bool| -> Vec<String> {
        signs
            .iter()
            .filter(|s| f(s))
            .map(|s| s.text.clone())
            .collect()
    };
    Classified {
        cause,
        decided: pick(&|s| s.held && s.cause == cause),
        also: pick(&|s| s.held && s.cause != cause),
        rejected: pick(&|s| !s.held),
    }
}

/// The host's memory signs: pressure stalls (PSI), pages swapped back in, and pages read from
/// disk again (major faults) while memory is full.
fn memory_signs(host: &Host, sign: &mut impl FnMut(Cause, bool, String)) {
    if let Some(p) = host.mem_pressure.mean() {
        let held = p >= MEM_PRESSURE_PCT;
        sign(
            Cause::MemoryPressure,
            held,
            if held {
                format!(
                    "memory pressure {}: tasks wait for memory to be reclaimed",
                    pct(p)
                )
            } else {
                format!("memory pressure {}: memory to spare", pct(p))
            },
        );
    }
    if let Some(s) = host.swap_in.mean() {
        let held = s >= SWAP_IN_BYTES_PER_S;
        sign(
            Cause::MemoryPressure,
            held,
            if held {
                format!(
                    "{} swapped in: the job's pages come back from disk",
                    units::rate(s)
                )
            } else {
                format!("{} swapped in: not swapping", units::rate(s))
            },
        );
    }
    if let Some(f) = host.major_faults.mean() {
        let used = host.mem_used.mean();
        let faulting = f >= MAJOR_FAULTS_PER_S;
        let full = used.is_some_and(|u| u >= MEM_FULL_PCT);
        let used_text = used.map_or_else(
            || "memory use unknown".into(),
            |u| format!("memory {} used", pct(u)),
        );
        let text = match (faulting, full) {
            (true, true) => format!(
                "{f:.0} major page faults/s with {used_text}: the data no longer fits in memory, \
                 pages are read from disk again"
            ),
            (true, false) => format!(
                "{f:.0} major page faults/s with {used_text}: files read for the first time, not \
                 memory pressure"
            ),
            (false, _) => format!("{f:.0} major page faults/s: pages stay in memory"),
        };
        sign(Cause::MemoryPressure, faulting && full, text);
    }
}

/// The busiest NIC's signs. Full both ways is a collective between nodes (a ring all-reduce
/// sends as much as it receives); full one way, receiving, is the data coming in.
fn nic_signs(host: &Host, rx: f64, sign: &mut impl FnMut(Cause, bool, String)) {
    let link = host
        .nic_speed
        .mean()
        .map_or_else(String::new, |s| format!(" of its {} link", link_text(s)));
    let tx = host.nic_tx.mean();
    let both = tx.is_some_and(|t| t >= NIC_BOTH_WAYS_PCT) && rx >= NIC_BOTH_WAYS_PCT;
    let peak = rx.max(tx.unwrap_or(0.0));
    if let Some(t) = tx.filter(|_| both) {
        let held = peak >= NIC_SATURATED_PCT;
        let verdict = if held {
            "at its limit both ways: a collective between nodes (all-reduce), not input"
        } else {
            "both ways, not at its limit"
        };
        sign(
            Cause::Communication,
            held,
            format!(
                "the busiest NIC receives {} and sends {}{link}: {verdict}",
                pct(rx),
                pct(t)
            ),
        );
        return;
    }
    let held = rx >= NIC_SATURATED_PCT;
    let sent = tx.map_or_else(String::new, |t| format!(" (sends {})", pct(t)));
    let verdict = if held {
        "at its limit"
    } else {
        "not at its limit"
    };
    sign(
        Cause::NetworkBound,
        held,
        format!(
            "the busiest NIC receives {}{link}{sent}: {verdict}",
            pct(rx)
        ),
    );
}

/// A link speed as people name it: "25 Gbit/s", "400 Mbit/s".
fn link_text(bytes_per_s: f64) -> String {
    let bits = bytes_per_s * 8.0;
    if bits >= 1e9 {
        format!("{:.0} Gbit/s", bits / 1e9)
    } else {
        format!("{:.0} Mbit/s", bits / 1e6)
    }
}

/// Whether the disk reads are at a limit: enough of them, and the disk saturated — busy at
/// least `disk_busy_pct` of the time with at least `disk_queue_depth` requests in flight (where
/// the queue is known; NVMe serves many at once, so busy time alone proves little).
fn disk_sign(c: &StarvedConfig, host: &Host, reads: f64) -> (bool, String) {
    let rate = units::rate(reads);
    if reads < c.disk_min_bytes_per_s {
        return (false, format!("disk reads {rate}: too few to be a limit"));
    }
    let steady = if host.disk_peak > 0.0 && reads >= c.disk_peak_share * host.disk_peak {
        ", steady at their peak".to_string()
    } else {
        format!(" (peak {})", units::rate(host.disk_peak))
    };
    let busy = host.disk_busy.mean();
    let queue = host.disk_queue.mean();
    let busy_text = busy.map_or_else(
        || "disk busy time unknown".into(),
        |b| format!("disk {} busy", pct(b)),
    );
    let queue_text = queue.map_or_else(String::new, |q| format!(", {q:.1} requests in flight"));
    let saturated =
        busy.is_some_and(|b| b >= c.disk_busy_pct) && queue.is_none_or(|q| q >= c.disk_queue_depth);
    let verdict = if saturated {
        "at its limit"
    } else {
        "not at a limit"
    };
    (
        saturated,
        format!("disk reads {rate}{steady}, {busy_text}{queue_text}: {verdict}"),
    )
}

/// The cause, worded for the title and detail.
pub(super) fn cause_words(cause: Cause) -> &'static str {
    match cause {
        Cause::Offload => "an optimizer step offloaded to the CPU (host↔device traffic both ways)",
        Cause::Decoder => "the GPU's video decoders (NVDEC) at their limit",
        Cause::MemoryPressure => "host memory pressure (reclaim and swap under the data pipeline)",
        Cause::NetworkBound => "the network link bringing the data in at its limit",
        Cause::Communication => {
            "communication between nodes (the NIC full both ways: a collective, not input)"
        }
        Cause::CpuBound => "a CPU-bound input pipeline",
        Cause::SingleThread => "a single-threaded input pipeline",
        Cause::IoBound => "an I/O-bound input pipeline",
        Cause::HostToDevice => "host-to-device copies",
        Cause::DiskThroughput => "disk read throughput at its limit",
        Cause::Unclassified => {
            "work too small or too synchronised to fill the GPU (no input bottleneck in the host numbers)"
        }
    }
}

/// Short verdict label, also the `verdict` evidence value.
pub fn cause_label(cause: Cause) -> &'static str {
    match cause {
        Cause::Offload => "optimizer offload",
        Cause::Decoder => "decoder-bound input",
        Cause::MemoryPressure => "host memory pressure",
        Cause::NetworkBound => "network-bound input",
        Cause::Communication => "inter-node communication",
        Cause::CpuBound => "CPU-bound input",
        Cause::SingleThread => "single-threaded input",
        Cause::IoBound => "I/O-bound input",
        Cause::HostToDevice => "host-to-device copy bound",
        Cause::DiskThroughput => "disk-throughput bound",
        Cause::Unclassified => "unclassified",
    }
}
