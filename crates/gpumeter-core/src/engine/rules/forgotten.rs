//! Forgotten allocation: a process holds at least 1 GiB of VRAM on a GPU and runs no kernels
//! there (~0 % SM) for 15 minutes since the last kernel it ran — typically a notebook kernel
//! left open, or the ranks of a run that hung on exit. A process that came back to work after a
//! quiet stretch has a rhythm (a notebook used every 20 minutes): it is forgotten only once
//! quiet for twice the longest stretch it came back from. One alert per job (a launcher's ranks
//! together, [`super::job`]; else per process), naming it (pids, user, container, command), the
//! VRAM held and the GPU-hours it has blocked since it went quiet, with their cost at the
//! per-GPU share of the rate.
//!
//! A process working on the CPU (at least half a core) is in use, not forgotten; a hung job's
//! ranks belong to the hung alert; an inference server is deployed, and its idle GPUs are the
//! idle rule's.
//!
//! The SM reading is the process's own (NVML per-process utilization); when the driver does not
//! give one, the GPU's util stands in (a GPU at 0 % runs nobody's kernels). Graphics-only
//! processes (display servers) are left alone. State is kept per (pid, start time, GPU) and
//! dropped when the process goes, which clears its alert.

use std::collections::BTreeMap;

use foldhash::{HashMap, HashMapExt};

use gpumeter_model::{GpuProcessKind, GpuUse, ProcessReading, Snapshot};

use super::alert::{Alert, AlertKind, Severity};
use super::config::ForgottenConfig;
use super::job::JobKey;
use super::window::Window;
use super::{Ctx, RuleOutput};
use crate::units;

/// What one job has held quietly: since when, by which processes, on which GPUs.
struct Held<'a> {
    since: i64,
    procs: Vec<&'a ProcessReading>,
    gpus: Vec<u32>,
}

/// Up to four pids, then a count of the rest: `3100, 3105, 3110, 3115 and 4 more`.
fn list_short(pids: &[String]) -> String {
    match pids.len() {
        0..=4 => pids.join(", "),
        n => format!("{} and {} more", pids[..4].join(", "), n - 4),
    }
}

/// (pid, start time, GPU index): a reused pid is another process.
type Key = (u32, Option<i64>, u32);

/// One process's use of one GPU, followed over time.
#[derive(Debug, Clone)]
struct Track {
    window: Window,
    /// When the process last ran kernels on the GPU: "no kernels for 15 minutes" counts from
    /// there, so a server's rare burst (that the window's hysteresis rides over) restarts it.
    last_busy: Option<i64>,
    /// The longest quiet stretch it came back from to run kernels again: its rhythm (a
    /// notebook used every 20 minutes). It is forgotten only once quiet for twice that.
    longest_return_ms: i64,
    /// When it was first seen (a quiet stretch from there that ends in work counts too).
    first_seen: i64,
    /// The tick that last saw this use (tracks not seen this tick are dropped).
    seen: u64,
}

/// The forgotten-allocation rule's state across ticks: a track per process and GPU it uses (see the
/// module docs).
#[derive(Debug, Clone)]
pub struct ForgottenRule {
    cfg: ForgottenConfig,
    fire_share: f64,
    clear_share: f64,
    /// Looked up once per GPU use a tick: a hash map; the few that fire are sorted by key.
    tracks: HashMap<Key, Track>,
    /// Ticks evaluated (stamps `Track::seen`).
    tick: u64,
}

impl ForgottenRule {
    /// A rule with these settings; it fires when its condition held for `fire_share` of its window
    /// and clears at or below `clear_share` (0–1, `RulesConfig`).
    pub fn new(cfg: ForgottenConfig, fire_share: f64, clear_share: f64) -> Self {
        Self {
            cfg,
            fire_share,
            clear_share,
            tracks: HashMap::new(),
            tick: 0,
        }
    }

    /// Whether this use of a GPU looks forgotten right now (`None`: cannot say). A process at
    /// work on the CPU (an evaluation between training phases, a notebook cell in pandas) is
    /// in use, whatever its GPU does.
    fn quiet(&self, snap: &Snapshot, p: &ProcessReading, u: &GpuUse) -> Option<bool> {
        let vram = u.memory_bytes?;
        if vram < self.cfg.min_vram_bytes
            || p.cpu_pct
                .is_some_and(|c| c >= super::job_done::HOST_BUSY_PCT)
        {
            return Some(false);
        }
        let sm = match u.sm_util_pct {
            Some(sm) => f64::from(sm),
            None => f64::from(snap.gpu(u.gpu_index)?.util_gpu_pct?),
        };
        Some(sm <= self.cfg.max_sm_pct)
    }

    /// One tick: folds `ctx` in and returns the alerts that stand now (and any due a reminder).
    pub fn evaluate(&mut self, ctx: &Ctx<'_>) -> RuleOutput {
        let snap = ctx.snap;
        let now = ctx.now_ms;
        self.tick += 1;
        let tick = self.tick;
        // Distinct tracks seen this tick: when that is all of them, none went.
        let mut seen = 0usize;
        for p in &snap.processes {
            for u in p.gpu.iter().filter(|u| u.kind != GpuProcessKind::Graphics) {
                let key = (p.pid, p.start_time_unix_s, u.gpu_index);
                let value = self.quiet(snap, p, u);
                let busy = value == Some(false) && u.memory_bytes >= Some(self.cfg.min_vram_bytes);
                // A process that ran kernels for even 1 % of the window is in use (an inference
                // server between bursts), not forgotten.
                let (span, fire, clear) = (
                    self.cfg.window_ms,
                    self.fire_share.max(0.99),
                    self.clear_share,
                );
                let track = self.tracks.entry(key).or_insert_with(|| Track {
                    window: Window::new(span, fire, clear),
                    last_busy: None,
                    longest_return_ms: 0,
                    first_seen: now,
                    seen: 0,
                });
                if track.seen != tick {
                    track.seen = tick;
                    seen += 1;
                }
                if busy {
                    let before = track.last_busy.unwrap_or(track.first_seen);
                    track.longest_return_ms = track.longest_return_ms.max(now - before);
                    track.last_busy = Some(now);
                }
                track.window.push(now, value);
            }
        }
        if seen != self.tracks.len() {
            self.tracks.retain(|_, t| t.seen == tick);
        }

        let mut out = RuleOutput::default();
        if !self.cfg.enabled {
            return out;
        }
        // The GPUs each process has held quietly for long enough, with the earliest start.
        let mut by_pid: BTreeMap<u32, (i64, Vec<u32>)> = BTreeMap::new();
        let mut quiet: Vec<(Key, i64, i64)> = self
            .tracks
            .iter()
            .filter_map(|(&key, t)| {
                let w = &t.window;
                let since = w.active_since().filter(|_| w.is_active())?;
                let after = self.cfg.after_ms.max(t.longest_return_ms.saturating_mul(2));
                Some((key, t.last_busy.map_or(since, |b| since.max(b)), after))
            })
            .collect();
        quiet.sort_unstable_by_key(|&(key, _, _)| key);
        for ((pid, _, gpu), since, after) in quiet {
            if now - since >= after {
                let entry = by_pid.entry(pid).or_insert((since, Vec::new()));
                entry.0 = entry.0.min(since);
                entry.1.push(gpu);
            }
        }
        if by_pid.is_empty() {
            return out;
        }
        // One alert per job: the ranks of a hung run are one thing left behind, not eight.
        let job_of: BTreeMap<u32, JobKey> = ctx
            .jobs()
            .iter()
            .flat_map(|j| j.roots.iter().map(move |&pid| (pid, j.key)))
            .collect();
        let mut by_job: BTreeMap<JobKey, Held<'_>> = BTreeMap::new();
        for (pid, (since, gpus)) in by_pid {
            let Some(p) = snap.processes.iter().find(|p| p.pid == pid) else {
                continue;
            };
            let key = job_of.get(&pid).copied().unwrap_or(JobKey::Process(pid));
            let held = by_job.entry(key).or_insert_with(|| Held {
                since,
                procs: Vec::new(),
                gpus: Vec::new(),
            });
            held.since = held.since.min(since);
            held.procs.push(p);
            held.gpus.extend(gpus);
        }
        // A hung job's rank left quiet (the one the others wait on) is the hung alert's.
        let hung_job = |key: &JobKey| {
            ctx.jobs()
                .iter()
                .find(|j| j.key == *key)
                .is_some_and(|j| j.gpus.iter().any(|g| ctx.hung_gpus.contains(g)))
        };
        // An inference server is deployed, not forgotten: while it waits for requests its
        // idle GPUs are the idle alert's (or the cards-left-idle one's), with the money.
        let serving = |key: &JobKey, held: &Held<'_>| {
            let main = ctx.jobs().iter().find(|j| j.key == *key).map(|j| j.main);
            held.procs.iter().any(|p| {
                super::workload::is_server(p)
                    || main.is_some_and(|m| super::workload::inference_server(snap, m).is_some())
            })
        };
        by_job.retain(|key, held| !hung_job(key) && !serving(key, held));
        for (key, mut held) in by_job {
            held.gpus.sort_unstable();
            held.gpus.dedup();
            out.alerts.extend(self.alert(ctx, key, &held));
        }
        out
    }

    fn alert(&self, ctx: &Ctx<'_>, key: JobKey, held: &Held<'_>) -> Option<Alert> {
        let snap = ctx.snap;
        let (since, gpus) = (held.since, held.gpus.as_slice());
        // The process holding the most names the job (a rank of several).
        let vram_of = |p: &ProcessReading| -> u64 {
            p.gpu
                .iter()
                .filter(|u| gpus.contains(&u.gpu_index))
                .filter_map(|u| u.memory_bytes)
                .sum()
        };
        let p = held
            .procs
            .iter()
            .copied()
            .max_by_key(|p| (vram_of(p), std::cmp::Reverse(p.pid)))?;
        let pids: Vec<String> = held.procs.iter().map(|p| p.pid.to_string()).collect();
        // "pid 812" for one; "8 processes (pids 3100, 3105, …)" for a job's ranks.
        let whose = match pids.len() {
            1 => format!("pid {}", p.pid),
            n => format!("{n} processes, pids {}", list_short(&pids)),
        };
        let quiet_ms = ctx.now_ms - since;
        let vram: u64 = held.procs.iter().map(|p| vram_of(p)).sum();
        let gpu_list = super::job::gpu_ranges(gpus);
        let gpu_word = if gpus.len() == 1 { "GPU" } else { "GPUs" };
        let name = p.name.as_deref().unwrap_or("(not visible)");
        let who = match (&p.user, &p.container) {
            (Some(u), Some(c)) => format!("{u}, container {c}"),
            (Some(u), None) => u.to_string(),
            (None, Some(c)) => format!("container {c}"),
            (None, None) => "user unknown".into(),
        };
        let holds_run = if held.procs.len() == 1 { "has" } else { "have" };
        let gpu_hours = quiet_ms as f64 * gpus.len() as f64 / 3_600_000.0;
        let per_gpu_rate = ctx
            .rate_per_hour
            .map(|r| r.mul_div(1, i128::try_from(snap.gpus.len().max(1)).unwrap_or(1)));
        let cost = per_gpu_rate.map(|r| {
            r.cost_for_ms(quiet_ms)
                .micros()
                .saturating_mul(gpus.len() as i64)
        });

        let mut evidence = vec![
            ("process".to_string(), format!("{name} ({whose})")),
            (
                "user".to_string(),
                p.user.as_deref().unwrap_or(units::NA).to_string(),
            ),
            (
                "container".to_string(),
                p.container.as_deref().unwrap_or("none (host)").to_string(),
            ),
            (
                "VRAM held".to_string(),
                format!("{} on {gpu_word} {gpu_list}", units::bytes(vram)),
            ),
            (
                "SM use".to_string(),
                format!(
                    "≤ {:.0} % for {}",
                    self.cfg.max_sm_pct,
                    crate::units::duration(quiet_ms, crate::units::DurationStyle::Words)
                ),
            ),
            ("GPU-hours blocked".to_string(), format!("{gpu_hours:.2}")),
        ];
        if let Some(cmd) = &p.command {
            let short: String = cmd.chars().take(120).collect();
            evidence.push(("command".into(), short));
        }
        if let Some(start) = p.start_time_unix_s {
            let age_ms = ctx.now_ms - start.saturating_mul(1000);
            evidence.push((
                "process age".into(),
                crate::units::duration(age_ms, crate::units::DurationStyle::Words),
            ));
        }
        if let (Some(c), Some(r)) = (cost, per_gpu_rate.map(|r| r.micros())) {
            evidence.push((
                "cost while blocked".into(),
                format!("{} at {}/GPU-h", ctx.money(c), ctx.money(r)),
            ));
        }
        let (holds, detail_who) = if held.procs.len() == 1 {
            ("holds", "It holds")
        } else {
            ("hold", "They hold")
        };
        Some(Alert {
            id: match key {
                JobKey::Process(pid) => format!("forgotten:{pid}"),
                other => format!("forgotten:{}", other.id()),
            },
            kind: AlertKind::Forgotten,
            severity: Severity::Moderate,
            gpu: (gpus.len() == 1).then(|| gpus[0]),
            title: format!(
                "Forgotten allocation: {name} ({whose}, {who}) {holds} {} on {gpu_word} {gpu_list} with no kernels for {}",
                units::bytes(vram),
                crate::units::duration(quiet_ms, crate::units::DurationStyle::Words)
            ),
            detail: format!(
                "{detail_who} memory but {holds_run} run nothing for {} — {gpu_hours:.2} GPU-hours \
                 blocked. Typically a notebook kernel or an interactive session left open, or \
                 the ranks of a run that hung on its way out.",
                crate::units::duration(quiet_ms, crate::units::DurationStyle::Words)
            ),
            evidence,
            cost_micros: cost,
            next_step: Some(format!(
                "If it is done, shut the kernel down (Jupyter: Kernel → Shut Down) or `kill {}`; \
                 to keep it, free the memory (del tensors; torch.cuda.empty_cache()).",
                pids.join(" ")
            )),
            since_unix_ms: since,
            currency: ctx.currency,
        })
    }
}
