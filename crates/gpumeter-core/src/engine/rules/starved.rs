//! Starved GPU: a job holds the GPU, but over the window (default 60 s) the GPU's activity stays
//! low — SM activity (GPM) below 50 % on cards that report it, else NVML util below 60 % — and
//! above the idle level (a GPU doing nothing is idle or forgotten, not starved). The verdict
//! needs that for most of a window to start, and the opposite to end.
//!
//! The job's host numbers, averaged over the same window, then say what the GPU is waiting on:
//! - CPU-bound input: the job's tree uses ≥ 85 % of the cores it may use (affinity sets,
//!   cgroup quota and cpuset), or the cgroup was throttled in ≥ 25 % of its CFS periods, or
//!   most of the tree is runnable while CPU pressure (PSI) is ≥ 20 % (a CPU shared with a
//!   noisy neighbour gives the job less than its cores); where
//!   no thread was sampled, also a main process at ≥ 95 % of one core;
//! - a single-threaded pipeline: the busiest thread of the GPU processes at ≥ 95 % of one core
//!   (num_workers = 0, a GIL-bound loader) while the job is not CPU-bound as a whole;
//! - I/O-bound input: iowait ≥ 15 %, a process of the tree in D state most of the window, or
//!   I/O pressure (PSI) ≥ 20 % of the time;
//! - host-to-device copies: PCIe RX ≥ 1 GB/s while SM activity (or util) < 30 %;
//! - else disk-throughput bound when reads are high *and* the disk shows saturation (busy ≥ 90 %
//!   of the time with ≥ 2 requests in flight, `/proc/diskstats`); a steady read rate alone is
//!   no limit; else unclassified.
//!
//! `starved_cause.rs` weighs those signs and words the ones that decided the verdict and the
//! ones weighed and rejected; every threshold is a `[alerts.starved]` key ([`StarvedConfig`]).
//!
//! Hysteresis and holds (tuned on the labelled corpus, `docs/accuracy.md`):
//! - each sample's condition is the GPU's util over a short span (a quarter of the window, at
//!   most 10 s: enough to smooth a sawtooth of a few seconds), and the verdict needs that for
//!   80 % of the window: a pause shorter than that (a checkpoint, a burst of requests and the
//!   quiet after it) never fires, and a pause at the idle level is no starvation at all;
//! - warm-up: nothing fires for a job in its first 5 minutes (`warmup`, by its GPU processes'
//!   start time; what its GPUs did then is no evidence later) nor before its loop has run: its
//!   GPUs active (above the idle level) for one window without a break, or for three windows in
//!   all — loading, compiling and autotuning come first, blips of GPU work with idle gaps;
//! - a lighter phase: an unclassified verdict is held back when the job's input work (its CPU
//!   and the disk reads) fell with the util, to ≤ 60 % of what it was while the GPUs were busy —
//!   an evaluation pass, not a GPU waiting for input.
//!
//! One alert per job (torchrun ranks share one), worded "consistent with", with the evidence
//! numbers, a severity from the starved share of the job's last hour (≥ 5 % moderate, ≥ 20 %
//! high), the cost of the GPU time spent waiting, and a next step for that cause.

use std::collections::BTreeMap;

use super::alert::Severity;
use super::config::StarvedConfig;
use super::job::{Job, JobKey, JobSample};
use super::starved_cause::{self, Activity, Classified};
use super::starved_text;
use super::window::{DEFAULT_MAX_GAP_MS, MeanWindow, Window};
use super::{Ctx, RuleOutput};

pub use super::starved_cause::Cause;
/// How far back the busy-time level of a job's input work looks.
const BASELINE_SPAN_MS: i64 = 600_000;
/// Longest span of the per-sample util (see the module doc).
const MAX_SMOOTH_MS: i64 = 10_000;
/// Warm-up ends after one window of unbroken GPU activity, or this many windows of it in all.
const WARMUP_WINDOWS: i64 = 3;

/// CPU-bound when the cgroup was throttled in at least this share of its periods (percent).
pub(super) const THROTTLED_PCT: f64 = 25.0;
/// CPU-contended when most of the tree is runnable and some task waited for a CPU at least this
/// share of the time (PSI, percent).
pub(super) const CPU_PRESSURE_PCT: f64 = 20.0;
/// I/O-bound when some task waited on I/O at least this share of the time (PSI, percent).
pub(super) const IO_PRESSURE_PCT: f64 = 20.0;

/// One GPU's starvation state.
#[derive(Debug, Clone)]
struct GpuState {
    /// The activity the verdict rests on: GPM's SM activity where the card has it, else util.
    activity: MeanWindow,
    /// NVML's utilization, shown beside SM activity (a resident kernel reads 100 %).
    util: MeanWindow,
    /// Activity over the short span each sample's condition looks at…
    recent: MeanWindow,
    /// …and its mean after this tick's sample, worked out once for the GPU and its job.
    recent_mean: Option<f64>,
    /// Whether the last sample's activity came from GPM…
    gpm: bool,
    /// …and the starved threshold it was judged against (percent).
    below: f64,
    verdict: Window,
    /// The starved condition over the severity horizon, while held.
    history: Window,
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
    busy_cores: MeanWindow,
    busy_reads: MeanWindow,
    /// Time its GPUs have been active (above the idle level) since it appeared…
    active_ms: i64,
    /// …and without a break, up to now.
    active_run_ms: i64,
    pub(super) pcie_rx: MeanWindow,
    /// Waste since the alert began, rate × ms (micro-units·ms per hour).
    waste_acc: i128,
    since: Option<i64>,
}

impl JobState {
    fn new(span: i64) -> Self {
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
            waste_acc: 0,
            since: None,
        }
    }

    fn push(&mut self, t: i64, s: &JobSample) {
        self.cores_used.push(t, s.cores_used);
        self.cores_allowed.push(t, s.cores_allowed);
        self.main_core_pct.push(t, s.main_core_pct);
        self.thread_pct.push(t, s.thread_pct);
        self.dstate.push(t, s.dstate);
        self.runnable.push(t, s.runnable);
        self.pcie_rx.push(t, s.pcie_rx);
    }

    /// Whether the job's input work fell with the util (a lighter phase, see the module doc).
    fn phase_dropped(&self, reads_now: Option<f64>, drop_share: f64) -> bool {
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

    pub fn evaluate(&mut self, ctx: &Ctx<'_>) -> RuleOutput {
        let snap = ctx.snap;
        let now = ctx.now_ms;
        let dt = self
            .last_t
            .map_or(0, |l| (now - l).clamp(0, DEFAULT_MAX_GAP_MS));
        self.last_t = Some(now);

        self.host.iowait.push(now, snap.host.iowait_pct);
        self.host
            .disk_read
            .push(now, snap.host.disk_read_bytes_per_s);
        let cg = &snap.host.cgroup;
        self.host.throttled.push(now, cg.cpu_throttled_pct);
        self.host.cgroup_used.push(now, cg.cpu_used_cores);
        self.host.io_pressure.push(now, snap.host.io_pressure_pct);
        self.host.cpu_pressure.push(now, snap.host.cpu_pressure_pct);
        self.host.disk_busy.push(now, snap.host.disk_busy_pct);
        self.host.disk_queue.push(now, snap.host.disk_queue_depth);
        if let Some(n) = cg.oom_kills {
            self.host.oom.push_back((now, n));
        }
        while self
            .host
            .oom
            .front()
            .is_some_and(|&(t, _)| t < now - self.cfg.window_ms || t > now)
        {
            self.host.oom.pop_front();
        }
        if self.host.disk_read.covered_ms() * 2 >= self.cfg.window_ms {
            let m = self.host.disk_read.mean().unwrap_or(0.0);
            self.host.disk_peak = self.host.disk_peak.max(m);
        }

        let (span, horizon) = (self.cfg.window_ms, self.cfg.severity_horizon_ms);
        let smooth = (span / 4).clamp(500, MAX_SMOOTH_MS);
        let (fire, clear) = (self.fire_share, self.clear_share);
        let cache = ctx.job_cache();
        for g in &snap.gpus {
            let held = cache.held(g.index);
            let st = self.gpus.entry(g.index).or_insert_with(|| GpuState {
                activity: MeanWindow::new(span),
                util: MeanWindow::new(span),
                recent: MeanWindow::new(smooth),
                recent_mean: None,
                gpm: false,
                below: self.cfg.util_below_pct,
                verdict: Window::new(span, fire, clear),
                history: Window::new(horizon, 0.5, 0.1),
            });
            let util = g.util_gpu_pct.map(f64::from).filter(|_| held);
            let sm = g.sm_active_pct.filter(|v| v.is_finite() && held);
            // A card that reports GPM is judged on it: util reads 100 % while one kernel is
            // resident, however little of the GPU it uses.
            st.gpm = sm.is_some();
            st.below = if st.gpm {
                self.cfg.sm_active_below_pct
            } else {
                self.cfg.util_below_pct
            };
            let activity = sm.or(util);
            st.activity.push(now, activity);
            st.util.push(now, util);
            st.recent.push(now, activity);
            st.recent_mean = st.recent.mean();
            let starved = if self.young.contains(&g.index) {
                None
            } else if held {
                st.recent_mean
                    .map(|m| m > self.idle_util_pct && m < st.below)
            } else {
                Some(false)
            };
            st.verdict.push(now, starved);
            st.history.push(now, if held { starved } else { None });
        }
        self.gpus.retain(|i, _| snap.gpu(*i).is_some());

        let jobs = ctx.jobs();
        let rate_per_gpu = ctx
            .rate_micros_per_h()
            .map(|r| r / i64::try_from(snap.gpus.len().max(1)).unwrap_or(1));
        let mut out = RuleOutput::default();
        self.young.clear();
        for (i, j) in jobs.iter().enumerate() {
            let js = self
                .jobs
                .entry(j.key)
                .or_insert_with(|| JobState::new(span));
            let sample = cache.sample(snap, i).unwrap_or_default();
            js.push(now, &sample);
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
            let young = age_ms.is_some_and(|a| (0..self.cfg.warmup_ms).contains(&a));
            if young {
                self.young.extend(&j.gpus);
            }
            let warming_up =
                young || (js.active_run_ms < span && js.active_ms < WARMUP_WINDOWS * span);
            if starved.is_empty() || warming_up {
                js.since = None;
                js.waste_acc = 0;
                continue;
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
            let classified = starved_cause::classify(&self.cfg, &self.host, js, activity, online);
            let cause = classified.cause;
            // A lighter phase, or one already over (the GPUs are busy again while the
            // window catches up): nothing to say.
            let busy_again = job_util.is_some_and(|u| u >= busy_level);
            let dropped = js.phase_dropped(self.host.disk_read.mean(), self.cfg.phase_drop_share);
            if cause == Cause::Unclassified && (busy_again || dropped) {
                continue;
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
            let mut alert = starved_text::alert(ctx, &self.cfg, &self.host, js, &verdict);
            alert.severity = severity;
            alert.since_unix_ms = js.since.unwrap_or(since);
            alert.cost_micros = ctx.rate_per_hour.map(|_| js.waste_micros());
            if self.cfg.enabled {
                out.alerts.push(alert);
            }
        }
        let live: Vec<JobKey> = jobs.iter().map(|j| j.key).collect();
        self.jobs.retain(|k, _| live.contains(k));
        out
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
