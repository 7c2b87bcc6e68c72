//! Hung GPU: NVML's util says a kernel is resident nearly all the time (≥ 90 %) while GPM's SM
//! activity says almost no warp runs (≤ 5 %) and the board draws little more than idle power,
//! for most of the window (default 2 min). That is a job stuck in a collective (one rank died,
//! the others wait in NCCL) or a deadlock: the bill runs, no work gets done. One alert for all
//! such GPUs, with the means over the window, the job holding them and what the stuck time has
//! cost; the idle tallies and billing count the same samples as idle paid time. On a GPU
//! without GPM (before Hopper) util alone cannot tell busy from stuck: there the memory
//! controller at ~0 % and the power near idle together stand in for SM activity (a kernel
//! spinning on a flag touches no memory), and without both readings it is no evidence.
//!
//! When the stuck ranks' job has a rank that is alive and not stuck (its GPU quiet: rank 0
//! saving a checkpoint while the others wait in the barrier, or a rank blocked on a dead
//! NFS server), the wait must last [`ALIVE_RANK_WAIT_MS`] before it is called hung, and the
//! evidence names that rank.

use std::collections::BTreeMap;

use super::alert::{Alert, AlertKind, Severity};
use super::config::HungConfig;
use super::job::gpu_ranges;
use super::label::process_label;
use super::window::{MeanWindow, Window};
use super::{Ctx, RuleOutput};

/// One GPU's windows.
#[derive(Debug, Clone)]
struct Track {
    stuck: Window,
    /// Whether the last sample looked stuck.
    now_stuck: bool,
    util: MeanWindow,
    sm: MeanWindow,
    mem: MeanWindow,
    power: MeanWindow,
}

/// The hung-GPU rule's state across ticks: a track per GPU (see the module
/// docs).
#[derive(Debug, Clone)]
pub struct HungRule {
    cfg: HungConfig,
    fire_share: f64,
    clear_share: f64,
    tracks: BTreeMap<u32, Track>,
    /// The alert stood last tick: the hold below no longer applies (a flicker of one sample
    /// does not clear and fire it again).
    shown: bool,
}

/// The evidence's means cover the last quarter of the window: the stuck stretch itself, not
/// the work before it.
fn evidence_span(window_ms: i64) -> i64 {
    (window_ms / 4).max(1_000)
}

/// A stuck wait on a rank that is alive elsewhere (see `waited_on`) is hung only after this
/// long: a checkpoint save by one rank holds the others in the barrier for minutes.
pub const ALIVE_RANK_WAIT_MS: i64 = 5 * 60_000;

/// The GPU of the stuck job's rank that is alive but not in the collective — neither stuck
/// nor lost — and its pid: the rank the others wait on (saving a checkpoint, or blocked).
fn waited_on(ctx: &Ctx<'_>, hung: &[(u32, i64)]) -> Option<(u32, u32)> {
    let snap = ctx.snap;
    let stuck = |g: u32| hung.iter().any(|&(h, _)| h == g);
    let job = ctx
        .jobs()
        .iter()
        .find(|j| j.gpus.iter().any(|&g| stuck(g)))?;
    let gpu = job.gpus.iter().copied().find(|&g| {
        !stuck(g)
            && snap
                .gpu(g)
                .is_some_and(|r| r.state != gpumeter_model::GpuState::Lost)
    })?;
    let pid = snap
        .processes
        .iter()
        .filter(|p| job.roots.contains(&p.pid))
        .find(|p| p.gpu.iter().any(|u| u.gpu_index == gpu))?
        .pid;
    Some((gpu, pid))
}

/// The hung alert's id (one for the machine: a hung collective stops every rank at once).
pub const HUNG_ID: &str = "hung";

impl HungRule {
    /// A rule with these settings; it fires when its condition held for `fire_share` of its window
    /// and clears at or below `clear_share` (0–1, `RulesConfig`).
    pub fn new(cfg: HungConfig, fire_share: f64, clear_share: f64) -> Self {
        Self {
            cfg,
            fire_share,
            clear_share,
            tracks: BTreeMap::new(),
            shown: false,
        }
    }

    /// One tick: folds `ctx` in and returns the alerts that stand now (and any due a reminder).
    pub fn evaluate(&mut self, ctx: &Ctx<'_>) -> RuleOutput {
        let snap = ctx.snap;
        let now = ctx.now_ms;
        let (span, fire, clear) = (self.cfg.window_ms, self.fire_share, self.clear_share);
        let recent = evidence_span(span);
        for g in &snap.gpus {
            let t = self.tracks.entry(g.index).or_insert_with(|| Track {
                stuck: Window::new(span, fire, clear),
                now_stuck: false,
                util: MeanWindow::new(recent),
                sm: MeanWindow::new(recent),
                mem: MeanWindow::new(recent),
                power: MeanWindow::new(recent),
            });
            let stuck = g.looks_stuck(&self.cfg.thresholds);
            t.now_stuck = stuck == Some(true);
            t.stuck.push(now, stuck);
            t.util.push(now, g.util_gpu_pct.map(f64::from));
            t.sm.push(now, g.sm_active_pct);
            t.mem.push(now, g.util_memory_pct.map(f64::from));
            t.power.push(now, g.power_watts);
        }
        self.tracks.retain(|gpu, _| snap.gpu(*gpu).is_some());

        let mut out = RuleOutput::default();
        if !self.cfg.enabled {
            return out;
        }
        let hung: Vec<(u32, i64)> = self.stuck().collect();
        if hung.is_empty() {
            self.shown = false;
            return out;
        }
        // The ranks wait on one that is alive and elsewhere (its GPU neither stuck nor lost):
        // rank 0 saving a checkpoint while the others sit in the barrier looks the same for a
        // few minutes, so such a wait must last ALIVE_RANK_WAIT_MS. A rank that exited never
        // comes back: no such hold.
        // The wait is judged on its stuck stretch, which must still go on (the window's
        // hysteresis holds the verdict a while after the barrier released).
        let since = hung.iter().map(|&(_, s)| s).min().unwrap_or(now);
        let still = hung
            .iter()
            .all(|(g, _)| self.tracks.get(g).is_some_and(|t| t.now_stuck));
        let waited = waited_on(ctx, &hung);
        if !self.shown && waited.is_some() && (now - since < ALIVE_RANK_WAIT_MS.max(span) || !still)
        {
            return out;
        }
        self.shown = true;
        out.alerts.push(self.alert(ctx, &hung, waited));
        out
    }

    /// The GPUs the alert names, when it stands.
    pub fn shown_gpus(&self) -> Vec<u32> {
        if self.shown {
            self.stuck().map(|(g, _)| g).collect()
        } else {
            Vec::new()
        }
    }

    /// The GPUs whose stuck verdict stands, with since when.
    pub fn stuck(&self) -> impl Iterator<Item = (u32, i64)> + '_ {
        self.tracks
            .iter()
            .filter(|(_, t)| t.stuck.is_active())
            .filter_map(|(&gpu, t)| Some((gpu, t.stuck.active_since()?)))
    }

    /// `waited`: the GPU and pid of the live rank the others wait on ([`waited_on`]).
    fn alert(&self, ctx: &Ctx<'_>, hung: &[(u32, i64)], waited: Option<(u32, u32)>) -> Alert {
        let snap = ctx.snap;
        let now = ctx.now_ms;
        let gpus: Vec<u32> = hung.iter().map(|(g, _)| *g).collect();
        let since = hung.iter().map(|(_, s)| *s).min().unwrap_or(now);
        let list = gpu_ranges(&gpus);
        let lasted = crate::units::duration(now - since, crate::units::DurationStyle::Words);
        let (subject, verb) = if gpus.len() == 1 {
            (format!("GPU {list}"), "reports busy but does")
        } else {
            (format!("GPUs {list}"), "report busy but do")
        };
        let per_gpu_rate = ctx
            .rate_per_hour
            .map(|r| r.mul_div(1, i128::try_from(snap.gpus.len().max(1)).unwrap_or(1)));
        let cost = per_gpu_rate.map(|r| {
            hung.iter()
                .map(|(_, s)| r.cost_for_ms(now - s).micros())
                .sum::<i64>()
        });
        let per_gpu = |f: &dyn Fn(&Track) -> Option<String>| {
            gpus.iter()
                .filter_map(|g| Some((g, self.tracks.get(g)?)))
                .map(|(g, t)| format!("{g}: {}", f(t).unwrap_or_else(|| "N/A".into())))
                .collect::<Vec<_>>()
                .join(", ")
        };
        // Without GPM (before Hopper) the memory controller and the power say it instead.
        let gpm = gpus
            .iter()
            .all(|g| self.tracks.get(g).is_some_and(|t| t.sm.mean().is_some()));
        let why = if gpm {
            format!(
                "GPM's SM activity is ≤ {:.0} % and the power draw near idle",
                self.cfg.thresholds.sm_active_max_pct
            )
        } else {
            format!(
                "the memory controller is idle (≤ {:.0} %) and the power draw near idle (this \
                 board has no GPM to count active SMs)",
                self.cfg.thresholds.mem_util_max_pct
            )
        };
        let window = crate::units::duration(self.cfg.window_ms, crate::units::DurationStyle::Words);
        let recent = format!("{} s", evidence_span(self.cfg.window_ms) / 1000);
        let th = &self.cfg.thresholds;
        let mut evidence = vec![
            ("GPUs".to_string(), list.clone()),
            ("for".to_string(), lasted.clone()),
            (
                format!("util, mean over the last {recent} (NVML)"),
                per_gpu(&|t| t.util.mean().map(|v| format!("{v:.0} %"))),
            ),
            (
                format!("SM activity, mean over the last {recent} (GPM)"),
                per_gpu(&|t| t.sm.mean().map(|v| format!("{v:.1} %"))),
            ),
            (
                format!("memory-controller util, mean over the last {recent} (NVML)"),
                per_gpu(&|t| t.mem.mean().map(|v| format!("{v:.0} %"))),
            ),
            (
                "power".to_string(),
                gpus.iter()
                    .filter_map(|&g| {
                        let w = self.tracks.get(&g)?.power.mean()?;
                        let limit = snap.gpu(g)?.power_limit_watts?;
                        Some(format!("{g}: {w:.0}/{limit:.0} W"))
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            (
                "thresholds".to_string(),
                format!(
                    "util ≥ {:.0} %, SM activity ≤ {:.0} % (without GPM: memory-controller util \
                     ≤ {:.0} %), power ≤ {:.0} % of the limit",
                    th.util_min_pct,
                    th.sm_active_max_pct,
                    th.mem_util_max_pct,
                    th.power_max_share * 100.0
                ),
            ),
        ];
        evidence.retain(|(_, v)| !v.is_empty());
        let job = ctx
            .jobs()
            .iter()
            .find(|j| j.gpus.iter().any(|g| gpus.contains(g)));
        let main = job
            .as_ref()
            .and_then(|j| snap.processes.iter().find(|p| p.pid == j.main));
        if let Some(p) = main {
            evidence.push(("job".into(), process_label(p)));
        }
        if let Some((g, pid)) = waited {
            let state = snap
                .processes
                .iter()
                .find(|p| p.pid == pid)
                .and_then(|p| p.state)
                .map_or_else(String::new, |c| match c {
                    'D' => ", in D state (blocked on I/O)".into(),
                    c => format!(", state {c}"),
                });
            evidence.push((
                "waiting on".into(),
                format!("GPU {g}'s rank (pid {pid}{state}), alive but not in the collective"),
            ));
        }
        if let (Some(c), Some(r)) = (cost, per_gpu_rate) {
            evidence.push((
                "idle paid time, stuck".into(),
                format!("{} at {}/GPU-h", ctx.money(c), ctx.money(r.micros())),
            ));
        }
        let next = match main {
            Some(p) => format!(
                "Look where it waits: `py-spy dump --pid {}` (every rank), or rerun with \
                 NCCL_DEBUG=INFO; check whether one rank died or ran out of memory. If it is stuck, \
                 kill it and resume from the last checkpoint — the meter runs meanwhile.",
                p.pid
            ),
            None => "Look where the job waits (`py-spy dump --pid PID`, NCCL_DEBUG=INFO); if it \
                     is stuck, kill it and resume from the last checkpoint."
                .to_string(),
        };
        Alert {
            id: HUNG_ID.to_string(),
            kind: AlertKind::Hung,
            severity: Severity::High,
            gpu: (gpus.len() == 1).then(|| gpus[0]),
            title: format!("{subject} {verb} no work (hung collective? deadlock?) for {lasted}"),
            detail: format!(
                "NVML's util reads ≥ {:.0} % (a kernel is resident) but {why} for most of the \
                 last {window}: the kernels wait instead of computing. This time counts as idle \
                 paid time.",
                th.util_min_pct
            ),
            evidence,
            cost_micros: cost,
            next_step: Some(next),
            since_unix_ms: since,
            currency: ctx.currency,
        }
    }
}

#[cfg(test)]
mod tests;
