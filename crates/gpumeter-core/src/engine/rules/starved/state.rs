//! What the starved rule keeps between readings: each GPU's windows and verdict, each job's
//! evidence averaged over the window (and its busy-time baseline), the host's window means, and
//! the [`Verdict`] the alert's words are made from. Plain data and small pure helpers.

use super::cause::{Activity, Cause, Classified};
use crate::engine::rules::job::{Job, JobSample};
use crate::engine::rules::window::{MeanWindow, Window};

/// How far back the busy-time level of a job's input work looks.
pub(super) const BASELINE_SPAN_MS: i64 = 600_000;
/// CPU-bound when the cgroup was throttled in at least this share of its periods (percent).
pub(super) const THROTTLED_PCT: f64 = 25.0;
/// CPU-contended when most of the tree is runnable and some task waited for a CPU at least this
/// share of the time (PSI, percent).
pub(super) const CPU_PRESSURE_PCT: f64 = 20.0;
/// I/O-bound when some task waited on I/O at least this share of the time (PSI, percent).
pub(super) const IO_PRESSURE_PCT: f64 = 20.0;
/// CPU-bound when at least this share of the job's workers is pegged at a full core (each is
/// one thread: it cannot go faster; more of them can).
pub(super) const WORKERS_PEGGED_SHARE: f64 = 0.75;
/// Memory-bound when some task waited for memory at least this share of the time (PSI, percent)…
pub(super) const MEM_PRESSURE_PCT: f64 = 20.0;
/// …or pages come back from swap at this rate or more (bytes/s): each batch waits on the disk.
pub(super) const SWAP_IN_BYTES_PER_S: f64 = 20e6;
/// Memory-bound also when pages are read back from disk at this rate or more (major faults a
/// second) while memory is [`MEM_FULL_PCT`] used: the data no longer fits the page cache.
pub(super) const MAJOR_FAULTS_PER_S: f64 = 1_000.0;
/// Memory in use at this share or more is full (percent).
pub(super) const MEM_FULL_PCT: f64 = 90.0;
/// Network-bound when the busiest NIC receives at least this share of its link speed (percent).
pub(super) const NIC_SATURATED_PCT: f64 = 85.0;
/// A NIC at its limit that also carries at least this share of its link the other way is a
/// collective between nodes (a ring all-reduce sends what it receives), not an input stream,
/// which is nearly all one way (percent).
pub(super) const NIC_BOTH_WAYS_PCT: f64 = 50.0;
/// Copy-bound when PCIe RX fills at least this share of the link's current capacity (its
/// generation × width: a ×4 riser or a slot trained down), whatever the GPU does between
/// copies (percent).
pub(super) const PCIE_LINK_SATURATED_PCT: f64 = 80.0;
/// Decoder-bound when the GPU's video decoders (NVDEC) are busy at least this share (percent).
pub(super) const DECODER_SATURATED_PCT: f64 = 90.0;
/// A GPU whose encoders (NVENC) are this busy works at their limit: not starved (percent).
pub(super) const ENCODER_BUSY_PCT: f64 = 90.0;
/// A long-period loop's host side works between its bursts when its job uses at least this
/// many cores there.
pub(super) const GAP_WORK_CORES: f64 = 1.0;
/// Optimizer offload: the GPU processes themselves compute on the CPU (≥ this share of one
/// core, so several threads: a CPU optimizer step, not a loader) …
pub(super) const OFFLOAD_RANK_PCT: f64 = 300.0;
/// … while parameters and gradients cross PCIe both ways at ≥ this per GPU (bytes/s).
pub(super) const OFFLOAD_PCIE_BYTES_PER_S: f64 = 1e9;

/// One GPU's starvation state.
#[derive(Debug, Clone)]
pub(super) struct GpuState {
    /// The activity the verdict rests on: GPM's SM activity where the card has it, else util.
    pub(super) activity: MeanWindow,
    /// NVML's utilization, shown beside SM activity (a resident kernel reads 100 %).
    pub(super) util: MeanWindow,
    /// Activity over the short span each sample's condition looks at…
    pub(super) recent: MeanWindow,
    /// …and its mean after this tick's sample, worked out once for the GPU and its job.
    pub(super) recent_mean: Option<f64>,
    /// NVDEC's utilization (a video loader decodes on the GPU).
    pub(super) decoder: MeanWindow,
    /// Whether the last sample's activity came from GPM…
    pub(super) gpm: bool,
    /// …and the starved threshold it was judged against (percent).
    pub(super) below: f64,
    pub(super) verdict: Window,
    /// The starved condition over the severity horizon, while held.
    pub(super) history: Window,
    /// When its activity last rose from the idle level (bursts of a loop), within the window.
    pub(super) rises: std::collections::VecDeque<i64>,
    /// This tick's activity (SM activity or util, as `gpm` says), while a job holds it.
    pub(super) now_activity: Option<f64>,
    /// Whether the last sample was above the idle level…
    pub(super) was_active: bool,
    /// …since when, and the bursts that ended within two windows: (rise, fall).
    pub(super) active_since: Option<i64>,
    pub(super) bursts: std::collections::VecDeque<(i64, i64)>,
    /// Cores its job used while the GPU sat at the idle level, over two windows: a loop whose
    /// host side works between its bursts (an RL rollout on CPU) waits on that work.
    pub(super) gap_cores: MeanWindow,
}

impl GpuState {
    /// A loop with a period near the window or longer (an RL rollout of 40 s on the CPU, then
    /// a 20 s update), judged on its duty cycle: two bursts or more ended within two windows,
    /// the one under way (if any) no longer than half again the longest of them (a loop that
    /// now runs unbroken is no longer that loop), and the job's host side at work between
    /// them ([`GAP_WORK_CORES`]; a server idle between requests is no starved loop).
    pub(super) fn periodic(&self, now: i64) -> bool {
        let longest = self.bursts.iter().map(|&(r, f)| f - r).max().unwrap_or(0);
        let running = self.active_since.map_or(0, |s| now - s);
        self.bursts.len() >= 2
            && running * 2 <= longest * 3
            && self.gap_cores.mean().is_some_and(|c| c >= GAP_WORK_CORES)
    }

    /// Activity rises from the idle level within the window ending at `now`.
    pub(super) fn rises_since(&self, from: i64) -> usize {
        self.rises.iter().filter(|&&t| t >= from).count()
    }
}

/// A job's evidence, averaged over the window.
#[derive(Debug, Clone)]
pub(super) struct JobState {
    pub(super) cores_used: MeanWindow,
    pub(super) cores_allowed: MeanWindow,
    pub(super) main_core_pct: MeanWindow,
    pub(super) thread_pct: MeanWindow,
    pub(super) dstate: MeanWindow,
    pub(super) runnable: MeanWindow,
    /// Cores used and disk reads while the job's GPUs were busy (its normal input work).
    pub(super) busy_cores: MeanWindow,
    pub(super) busy_reads: MeanWindow,
    /// Time its GPUs have been active (above the idle level) since it appeared…
    pub(super) active_ms: i64,
    /// …and without a break, up to now.
    pub(super) active_run_ms: i64,
    pub(super) pcie_rx: MeanWindow,
    pub(super) pcie_tx: MeanWindow,
    /// PCIe RX as a share of the link's current capacity (percent).
    pub(super) pcie_rx_link: MeanWindow,
    /// Share (0–1) of its workers pegged at a full core, and how many workers it has.
    pub(super) workers_pegged: MeanWindow,
    pub(super) workers: MeanWindow,
    /// Waste since the alert began, rate × ms (micro-units·ms per hour).
    pub(super) waste_acc: i128,
    pub(super) since: Option<i64>,
    /// Its loop has been seen running (bursts again and again, or a window of unbroken
    /// activity): the warm-up is over for good.
    pub(super) loop_seen: bool,
    /// When it was first seen: its first verdict waits for one whole window of evidence.
    pub(super) first_seen_ms: Option<i64>,
    /// The alert stands (it then ends only when the verdict window clears: no flapping on a
    /// brief busy stretch).
    pub(super) shown: bool,
}

impl JobState {
    pub(super) fn new(span: i64) -> Self {
        Self {
            cores_used: MeanWindow::new(span),
            cores_allowed: MeanWindow::new(span),
            main_core_pct: MeanWindow::new(span),
            thread_pct: MeanWindow::new(span),
            dstate: MeanWindow::new(span),
            runnable: MeanWindow::new(span),
            busy_cores: MeanWindow::new(BASELINE_SPAN_MS),
            busy_reads: MeanWindow::new(BASELINE_SPAN_MS),
            active_ms: 0,
            active_run_ms: 0,
            pcie_rx: MeanWindow::new(span),
            pcie_tx: MeanWindow::new(span),
            pcie_rx_link: MeanWindow::new(span),
            workers_pegged: MeanWindow::new(span),
            workers: MeanWindow::new(span),
            waste_acc: 0,
            since: None,
            loop_seen: false,
            first_seen_ms: None,
            shown: false,
        }
    }

    pub(super) fn push(&mut self, t: i64, s: &JobSample) {
        self.cores_used.push(t, s.cores_used);
        self.cores_allowed.push(t, s.cores_allowed);
        self.main_core_pct.push(t, s.main_core_pct);
        self.thread_pct.push(t, s.thread_pct);
        self.dstate.push(t, s.dstate);
        self.runnable.push(t, s.runnable);
        self.pcie_rx.push(t, s.pcie_rx);
        self.pcie_tx.push(t, s.pcie_tx);
        self.pcie_rx_link.push(t, s.pcie_rx_link_pct);
        self.workers_pegged
            .push(t, s.workers.map(|(n, p)| f64::from(p) / f64::from(n)));
        self.workers.push(t, s.workers.map(|(n, _)| f64::from(n)));
    }

    /// Whether the job's input work fell with the util (a lighter phase, see the module doc).
    pub(super) fn phase_dropped(&self, reads_now: Option<f64>, drop_share: f64) -> bool {
        let (Some(now), Some(base)) = (self.cores_used.mean(), self.busy_cores.mean()) else {
            return false;
        };
        let cpu_fell = base > 0.0 && now <= drop_share * base;
        let reads_fell = match (reads_now, self.busy_reads.mean()) {
            (Some(r), Some(b)) if b > 1e6 => r <= drop_share * b,
            _ => true,
        };
        cpu_fell && reads_fell
    }

    pub(super) fn waste_micros(&self) -> i64 {
        i64::try_from(self.waste_acc / 3_600_000).unwrap_or(i64::MAX)
    }
}

/// Machine-wide numbers the verdicts share.
#[derive(Debug, Clone)]
pub(super) struct Host {
    pub(super) iowait: MeanWindow,
    pub(super) disk_read: MeanWindow,
    /// Highest window mean of disk reads seen since start.
    pub(super) disk_peak: f64,
    /// The cgroup: throttled share of periods, cores used, I/O pressure.
    pub(super) throttled: MeanWindow,
    pub(super) cgroup_used: MeanWindow,
    pub(super) io_pressure: MeanWindow,
    pub(super) cpu_pressure: MeanWindow,
    pub(super) disk_busy: MeanWindow,
    pub(super) disk_queue: MeanWindow,
    /// Memory pressure (PSI) and the swap-in rate.
    pub(super) mem_pressure: MeanWindow,
    pub(super) swap_in: MeanWindow,
    /// Major page faults a second, and the share of memory in use (percent: the host's, or
    /// the cgroup's against its limit where that is fuller).
    pub(super) major_faults: MeanWindow,
    pub(super) mem_used: MeanWindow,
    /// The busiest NIC: received share of its link, sent share, and that link's speed.
    pub(super) nic_util: MeanWindow,
    pub(super) nic_tx: MeanWindow,
    pub(super) nic_speed: MeanWindow,
    /// OOM-kill counter readings within the window: (time, count).
    pub(super) oom: std::collections::VecDeque<(i64, u64)>,
}

impl Host {
    /// OOM kills within the window.
    pub(super) fn oom_kills(&self) -> Option<u64> {
        let (first, last) = (self.oom.front()?, self.oom.back()?);
        Some(last.1.saturating_sub(first.1))
    }
}

/// What the text of a starved alert is made from.
pub(super) struct Verdict<'a> {
    pub(super) job: &'a Job,
    pub(super) starved: &'a [u32],
    /// The window mean of the activity judged (SM activity or util).
    pub(super) util_mean: f64,
    pub(super) activity: Activity,
    /// NVML's utilization over the window (beside SM activity).
    pub(super) nvml_util: Option<f64>,
    /// Share of GPU time spent waiting (1 − activity).
    pub(super) waiting: f64,
    /// Starved share of the job's recent time.
    pub(super) share: f64,
    pub(super) cause: Cause,
    /// The signs that decided the cause and those weighed and rejected.
    pub(super) classified: Classified,
    pub(super) wasting_per_hour: Option<i64>,
}
