//! Starved GPU: a job holds the GPU, but over the window (default 60 s) the GPU's activity stays
//! low — SM activity (GPM) below 50 % on cards that report it, else NVML util below 60 % — and
//! above the idle level (a GPU doing nothing is idle or forgotten, not starved). The verdict
//! needs that for most of a window to start, and the opposite to end.
//!
//! The job's host numbers, averaged over the same window, then say what the GPU is waiting on
//! (after optimizer offload, checked first):
//! - decoder-bound: the starved GPUs' video decoders (NVDEC) ≥ 90 % busy;
//! - host memory pressure: memory PSI ≥ 20 %, ≥ 20 MB/s swapped in, or ≥ 1 000 major faults/s
//!   with memory ≥ 90 % used (before I/O: swapping is
//!   what blocks the workers on the disk);
//! - inter-node communication: the busiest NIC at ≥ 85 % of its link one way and ≥ 50 % both
//!   ways (a multi-node job's all-reduce sends what it receives; input is one way);
//! - network-bound: the busiest NIC receives ≥ 85 % of its link speed;
//! - CPU-bound input: the job's tree uses ≥ 85 % of the cores it may use (affinity sets,
//!   cgroup quota and cpuset), or the cgroup was throttled in ≥ 25 % of its CFS periods, or
//!   most of the tree is runnable while CPU pressure (PSI) is ≥ 20 % (a CPU shared with a
//!   noisy neighbour gives the job less than its cores); where
//!   no thread was sampled, also a main process at ≥ 95 % of one core;
//! - a single-threaded pipeline: the busiest thread of the GPU processes at ≥ 95 % of one core
//!   (num_workers = 0, a GIL-bound loader) while the job is not CPU-bound as a whole;
//! - I/O-bound input: iowait ≥ 15 %, a process of the tree in D state most of the window, or
//!   I/O pressure (PSI) ≥ 20 % of the time;
//! - host-to-device copies: PCIe RX ≥ 80 % of the link's current capacity (generation × width:
//!   a ×4 riser), or ≥ 1 GB/s while SM activity (or util) < 30 %, or a pegged thread while PCIe
//!   RX ≥ 1 GB/s (pageable copies staged on the calling thread);
//! - else disk-throughput bound when reads are high *and* the disk shows saturation (busy ≥ 90 %
//!   of the time with ≥ 2 requests in flight, `/proc/diskstats`); a steady read rate alone is
//!   no limit; else unclassified.
//!
//! Rooms: `state` (what is kept per GPU, per job and for the host between readings),
//! `cause` (weighs those signs into one cause and words the ones that decided it and the
//! ones weighed and rejected), `text` (the alert's words, evidence and next step), `cgroup`
//! (the container's CPU budget and cgroup evidence). Every threshold is an `[alerts.starved]`
//! key ([`StarvedConfig`]).
//!
//! Hysteresis and holds (tuned on the labelled corpus, `docs/accuracy.md`):
//! - each sample's condition is the GPU's util over a short span (a quarter of the window, at
//!   most 10 s: enough to smooth a sawtooth of a few seconds), and the verdict needs that for
//!   80 % of the window: a pause shorter than that (a checkpoint, a burst of requests and the
//!   quiet after it) never fires, and a pause at the idle level is no starvation at all;
//! - a loop in bursts (activity rose from the idle level twice or more in the window) is judged
//!   between its bursts on the window's mean: its waits are starvation, not idle;
//! - warm-up: nothing fires for a job in its first 5 minutes (`warmup`, by its GPU processes'
//!   start time; what its GPUs did then is no evidence later) nor before its GPUs were active for
//!   three windows in all — loading, compiling and autotuning come first, blips of GPU work with
//!   idle gaps — unless its loop is seen running (three rises in a window, or a window of
//!   unbroken activity): that ends the warm-up for good. While a TorchInductor compile worker
//!   of the job's tree is busy (`compile_worker` in its command, ≥ 10 % of a core) the job is
//!   compiling: autotuning's benchmark bursts are no loop. The first verdict waits for a whole
//!   window of evidence;
//! - a standing alert ends only when its window clears: the holds below keep a verdict from
//!   starting, never end one (no fire/clear on a brief busy stretch);
//! - a lighter phase: an unclassified verdict is held back when the job's input work (its CPU
//!   and the disk reads) fell with the util, to ≤ 60 % of what it was while the GPUs were busy —
//!   an evaluation pass, not a GPU waiting for input.
//!
//! One alert per job (torchrun ranks share one), worded "consistent with", with the evidence
//! numbers, a severity from the starved share of the job's last hour (≥ 5 % moderate, ≥ 20 %
//! high), the cost of the GPU time spent waiting, and a next step for that cause.

mod cause;
mod cgroup;
mod observe;
mod state;
mod text;

use std::collections::BTreeMap;

use gpumeter_model::Snapshot;

use super::alert::{Alert, Severity};
use super::config::StarvedConfig;
use super::job::{Job, JobKey, JobSample};
use super::window::{DEFAULT_MAX_GAP_MS, MeanWindow};
use super::{Ctx, RuleOutput};
use cause::Activity;
use state::{GpuState, Host, JobState, Verdict};

pub use cause::{Cause, cause_label};

/// Longest span of the per-sample util (see the module doc).
const MAX_SMOOTH_MS: i64 = 10_000;
/// Warm-up ends after one window of unbroken GPU activity, or this many windows of it in all.
const WARMUP_WINDOWS: i64 = 3;
/// A loop runs when the activity rose from the idle level this many times within one window
/// (a sawtooth, bursts of compute between waits): compile blips and loading rise less often.
const LOOP_RISES: usize = 3;

/// The starved-GPU rule's state across ticks: per GPU and per job windows, the host's numbers and
/// the time starved by cause (see the module docs).
#[derive(Debug, Clone)]
pub struct StarvedRule {
    cfg: StarvedConfig,
    idle_util_pct: f64,
    fire_share: f64,
    clear_share: f64,
    gpus: BTreeMap<u32, GpuState>,
    jobs: BTreeMap<JobKey, JobState>,
    host: Host,
    last_t: Option<i64>,
    /// GPUs of jobs in their first `warmup` at the last tick: their samples are no evidence.
    young: Vec<u32>,
    /// Time each GPU has stood starved, by cause, since start (ms; the exporter's counter).
    totals: BTreeMap<(u32, Cause), i64>,
}

impl StarvedRule {
    /// `idle_util_pct`: at or below this mean util a GPU is idle, not starved.
    pub fn new(cfg: StarvedConfig, idle_util_pct: f64, fire_share: f64, clear_share: f64) -> Self {
        let span = cfg.window_ms;
        Self {
            host: Host {
                iowait: MeanWindow::new(span),
                disk_read: MeanWindow::new(span),
                disk_peak: 0.0,
                throttled: MeanWindow::new(span),
                cgroup_used: MeanWindow::new(span),
                io_pressure: MeanWindow::new(span),
                cpu_pressure: MeanWindow::new(span),
                disk_busy: MeanWindow::new(span),
                disk_queue: MeanWindow::new(span),
                mem_pressure: MeanWindow::new(span),
                swap_in: MeanWindow::new(span),
                major_faults: MeanWindow::new(span),
                mem_used: MeanWindow::new(span),
                nic_util: MeanWindow::new(span),
                nic_tx: MeanWindow::new(span),
                nic_speed: MeanWindow::new(span),
                oom: std::collections::VecDeque::new(),
            },
            cfg,
            idle_util_pct,
            fire_share,
            clear_share,
            gpus: BTreeMap::new(),
            jobs: BTreeMap::new(),
            last_t: None,
            young: Vec::new(),
            totals: BTreeMap::new(),
        }
    }

    /// Starved time per (GPU, cause) since start, in ms: each tick a verdict stands adds the
    /// tick's length to every GPU it names.
    pub fn totals(&self) -> &BTreeMap<(u32, Cause), i64> {
        &self.totals
    }

    /// One reading: the host's window means, each GPU's activity and verdict, then each job's
    /// judgement (one alert per starved job).
    pub fn evaluate(&mut self, ctx: &Ctx<'_>) -> RuleOutput {
        let now = ctx.now_ms;
        let dt = self
            .last_t
            .map_or(0, |l| (now - l).clamp(0, DEFAULT_MAX_GAP_MS));
        self.last_t = Some(now);
        self.observe_host(ctx.snap, now);
        let jobs = ctx.jobs();
        // Each job's numbers this tick, once: its judgement and its GPUs' loops use them.
        let cache = ctx.job_cache();
        let samples: Vec<JobSample> = (0..jobs.len())
            .map(|i| cache.sample(ctx.snap, i).unwrap_or_default())
            .collect();
        let cores: BTreeMap<u32, f64> = jobs
            .iter()
            .zip(&samples)
            .filter_map(|(j, s)| Some((j, s.cores_used?)))
            .flat_map(|(j, c)| j.gpus.iter().map(move |&g| (g, c)))
            .collect();
        self.observe_gpus(ctx, &cores);

        let rate_per_gpu = ctx
            .rate_micros_per_h()
            .map(|r| r / i64::try_from(ctx.snap.gpus.len().max(1)).unwrap_or(1));
        let mut out = RuleOutput::default();
        self.young.clear();
        for (i, j) in jobs.iter().enumerate() {
            if let Some(alert) = self.judge_job(ctx, i, j, samples[i], dt, rate_per_gpu)
                && self.cfg.enabled
            {
                out.alerts.push(alert);
            }
        }
        let live: Vec<JobKey> = jobs.iter().map(|j| j.key).collect();
        self.jobs.retain(|k, _| live.contains(k));
        out
    }

    /// The `i`th job of the reading: its evidence into its windows, its warm-up, and when its
    /// GPUs stand starved past it, the alert (with the cause, severity and waste so far).
    fn judge_job(
        &mut self,
        ctx: &Ctx<'_>,
        i: usize,
        j: &Job,
        sample: JobSample,
        dt: i64,
        rate_per_gpu: Option<i64>,
    ) -> Option<Alert> {
        let (snap, now) = (ctx.snap, ctx.now_ms);
        let span = self.cfg.window_ms;
        let cache = ctx.job_cache();
        // What the GPUs wait on is what the job does while they wait: a tick on which they
        // compute (a loop's burst, its input already fetched) adds no evidence, only time.
        let waiting = self.waiting_now(&j.gpus);
        let evidence = if waiting {
            sample
        } else {
            JobSample::default()
        };
        let js = self
            .jobs
            .entry(j.key)
            .or_insert_with(|| JobState::new(span));
        js.push(now, &evidence);
        let recent: Vec<f64> = j
            .gpus
            .iter()
            .filter_map(|g| self.gpus.get(g).and_then(|s| s.recent_mean))
            .collect();
        let job_util =
            (!recent.is_empty()).then(|| recent.iter().sum::<f64>() / recent.len() as f64);
        // The busy level: the GPUs' own thresholds (GPM or util), averaged.
        let belows: Vec<f64> = j
            .gpus
            .iter()
            .filter_map(|g| self.gpus.get(g).map(|s| s.below))
            .collect();
        let busy_level = if belows.is_empty() {
            self.cfg.util_below_pct
        } else {
            belows.iter().sum::<f64>() / belows.len() as f64
        };
        if job_util.is_some_and(|u| u > self.idle_util_pct) {
            js.active_ms += dt;
            js.active_run_ms += dt;
        } else {
            js.active_run_ms = 0;
        }
        if job_util.is_some_and(|u| u >= busy_level) {
            js.busy_cores.push(now, sample.cores_used);
            js.busy_reads.push(now, snap.host.disk_read_bytes_per_s);
        } else {
            // Keep the baseline's clock moving without adding to it.
            js.busy_cores.push(now, None);
            js.busy_reads.push(now, None);
        }
        let starved: Vec<u32> = j
            .gpus
            .iter()
            .copied()
            .filter(|g| self.gpus.get(g).is_some_and(|s| s.verdict.is_active()))
            .collect();
        // The oldest GPU process's age, where /proc gives start times.
        let age_ms = cache
            .roots_started(snap, i)
            .map(|s| now - s.saturating_mul(1000));
        // The loop runs once its GPUs burst again and again, or stay active a whole window:
        // no warm-up hold after that, however young the job (a job starved from its first
        // step is named within a window or two of the loop starting).
        let rising = j.gpus.iter().any(|g| {
            self.gpus
                .get(g)
                .is_some_and(|s| s.rises_since(now - span) >= LOOP_RISES)
        });
        // Autotuning benchmarks come in bursts that look like a loop; while the job's compile
        // workers are busy it is compiling, however its GPUs blink.
        let young_age = age_ms.is_some_and(|a| (0..self.cfg.warmup_ms).contains(&a));
        // Compiling in-process may outlast the warm-up (max-autotune): twice it at most.
        let compile_age = age_ms.is_some_and(|a| (0..2 * self.cfg.warmup_ms).contains(&a));
        let compiling = compiling(snap, j)
            || (compile_age
                && first_steps_unfed(snap, j, sample.thread_pct, self.cfg.main_core_pct));
        js.loop_seen |= !compiling && (rising || js.active_run_ms >= span);
        let young = !js.loop_seen && young_age;
        // What its GPUs did while it warmed up or compiled is no evidence later.
        if young || compiling {
            self.young.extend(&j.gpus);
        }
        let first_seen = *js.first_seen_ms.get_or_insert(now);
        let warming_up = compiling
            || (!js.loop_seen && (young || js.active_ms < WARMUP_WINDOWS * span))
            || now - first_seen < span;
        if starved.is_empty() || warming_up {
            js.since = None;
            js.waste_acc = 0;
            js.shown = false;
            return None;
        }
        let mean_of = |f: &dyn Fn(&GpuState) -> Option<f64>| {
            let v: Vec<f64> = starved
                .iter()
                .filter_map(|g| self.gpus.get(g).and_then(f))
                .collect();
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
        };
        let util_mean = mean_of(&|s| s.activity.mean()).unwrap_or(0.0);
        let nvml_util = mean_of(&|s| s.util.mean());
        let activity = Activity {
            pct: util_mean,
            gpm: starved
                .iter()
                .all(|g| self.gpus.get(g).is_some_and(|s| s.gpm)),
        };
        let waiting = (1.0 - util_mean / 100.0).clamp(0.0, 1.0);
        let since = starved
            .iter()
            .filter_map(|g| self.gpus.get(g).and_then(|s| s.verdict.active_since()))
            .min()
            .unwrap_or(now);
        let step = match js.since {
            // Backfill from when the starving began, then one tick at a time.
            None => now - since,
            Some(_) => dt,
        };
        js.since = Some(js.since.unwrap_or(since));
        if let Some(r) = rate_per_gpu {
            let ms = (step as f64 * waiting * starved.len() as f64).round() as i64;
            js.waste_acc += i128::from(ms) * i128::from(r);
        }
        let share = starved
            .iter()
            .filter_map(|g| self.gpus.get(g).and_then(|s| s.history.observed_share()))
            .fold(0.0, f64::max);
        let severity = if share >= self.cfg.high_share {
            Severity::High
        } else if share >= self.cfg.moderate_share {
            Severity::Moderate
        } else {
            Severity::Info
        };
        let js = &self.jobs[&j.key];
        let online = snap.host.cpu_count.map(f64::from);
        let decoder = mean_of(&|s| s.decoder.mean());
        let classified = cause::classify(&self.cfg, &self.host, js, activity, decoder, online);
        let cause = classified.cause;
        // A lighter phase, or one already over (the GPUs are busy again while the
        // window catches up): nothing to say.
        let busy_again = job_util.is_some_and(|u| u >= busy_level);
        // A loop in bursts is no lighter phase: its input work peaks with each burst.
        let bursting = j.gpus.iter().any(|g| {
            self.gpus
                .get(g)
                .is_some_and(|s| s.rises_since(now - span) >= LOOP_RISES - 1)
        });
        let dropped =
            !bursting && js.phase_dropped(self.host.disk_read.mean(), self.cfg.phase_drop_share);
        if cause == Cause::Unclassified && !js.shown && (busy_again || dropped) {
            return None;
        }
        // A server whose host shows no bottleneck waits for its clients: that is its load,
        // not a starved pipeline (a server held up by its own CPU work is still named).
        if cause == Cause::Unclassified
            && crate::engine::rules::workload::inference_server(snap, j.main).is_some()
        {
            return None;
        }
        // Nor is a notebook's: between cells its GPU waits for the person at the keyboard.
        if cause == Cause::Unclassified
            && crate::engine::rules::workload::notebook(snap, j.main).is_some()
        {
            return None;
        }
        for g in &starved {
            *self.totals.entry((*g, cause)).or_insert(0) += dt;
        }
        let js = &self.jobs[&j.key];
        let verdict = Verdict {
            job: j,
            starved: &starved,
            util_mean,
            activity,
            nvml_util,
            waiting,
            share,
            cause,
            classified,
            wasting_per_hour: rate_per_gpu
                .map(|r| (r as f64 * waiting * starved.len() as f64).round() as i64),
        };
        let mut alert = text::alert(ctx, &self.cfg, &self.host, js, &verdict);
        alert.severity = severity;
        alert.since_unix_ms = js.since.unwrap_or(since);
        alert.cost_micros = ctx.rate_per_hour.map(|_| js.waste_micros());
        if let Some(js) = self.jobs.get_mut(&j.key) {
            js.shown = true;
        }
        Some(alert)
    }
}

/// A data worker at or below this share of one core is idle (waiting to be asked for batches).
const WORKER_IDLE_PCT: f64 = 10.0;

/// Whether a young job's loop has not started feeding on its data: its main thread is pegged
/// (compiling in-process — torch.compile without a worker pool, CUDA graph capture) while
/// every data worker it has sits idle. Held within twice `warmup` of its start only: later the
/// same picture is a loop held up by its main thread (the workers' queues full).
fn first_steps_unfed(snap: &Snapshot, job: &Job, thread_pct: Option<f64>, pegged: f64) -> bool {
    if thread_pct.is_none_or(|t| t < pegged) {
        return false;
    }
    let workers: Vec<f64> = snap
        .processes
        .iter()
        .filter(|p| p.gpu.is_empty() && job.tree.contains(&p.pid))
        .filter_map(|p| p.cpu_pct)
        .collect();
    !workers.is_empty() && workers.iter().all(|&c| c <= WORKER_IDLE_PCT)
}

/// A compile worker at this share of one core or more is working (idle ones sleep at ~0 %).
const COMPILE_WORKER_BUSY_PCT: f64 = 10.0;

/// Whether the job is compiling: a TorchInductor compile worker (`torch/_inductor/
/// compile_worker`, the subprocess pool of torch ≥ 2.4) in its tree is busy.
fn compiling(snap: &Snapshot, job: &Job) -> bool {
    snap.processes.iter().any(|p| {
        p.cpu_pct.is_some_and(|c| c >= COMPILE_WORKER_BUSY_PCT)
            && p.command
                .as_deref()
                .is_some_and(|c| c.contains("compile_worker"))
            && job.tree.contains(&p.pid)
    })
}
