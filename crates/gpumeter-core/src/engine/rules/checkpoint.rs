//! Checkpoint pauses: a healthy job whose GPUs stop for a short while at a steady interval
//! while the machine writes to disk — saving a checkpoint — gets a verdict of its own, with what
//! the pauses cost, instead of a starved alert ("GPUs 0–7 paused 40 s every 10 min while the job
//! wrote 1.8 GB/s: checkpoints cost 6.7 % of GPU time").
//!
//! A pause begins when the busy GPUs' mean util falls to ≤ 10 % after being ≥ 60 %, and ends
//! when it is back at ≥ 60 %. It is a checkpoint when it lasted 5 s – 10 min and disk writes
//! during it averaged ≥ 200 MB/s and ≥ 3× the writes while training. The verdict stands from the
//! second such pause at a steady interval (each gap within ±30 % of their mean: a periodic
//! pattern, named as periodic), and clears when none came for three intervals. Those figures
//! are the defaults of `[alerts.checkpoint]` ([`CheckpointConfig`]). Pure: one snapshot and
//! "now" per tick.

use std::collections::VecDeque;

use super::alert::{Alert, AlertKind, Severity};
use super::config::CheckpointConfig;
use super::job::{self, gpu_ranges};
use super::window::{DEFAULT_MAX_GAP_MS, MeanWindow};
use super::{Ctx, RuleOutput};
use crate::units;

/// Pauses remembered (the interval is their mean spacing).
const KEPT_PAUSES: usize = 6;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Pause {
    start_ms: i64,
    dur_ms: i64,
    write_bytes_per_s: f64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    /// No busy stretch seen yet (or the GPUs idled too long to be a checkpoint).
    Unknown,
    Busy,
    Paused {
        start_ms: i64,
        written: f64,
        ms: i64,
    },
}

/// The checkpoint rule's state across ticks: the busy/paused phase and the recent pauses (see the
/// module docs).
#[derive(Debug, Clone)]
pub struct CheckpointRule {
    cfg: CheckpointConfig,
    enabled: bool,
    phase: Phase,
    busy_writes: MeanWindow,
    pauses: VecDeque<Pause>,
    gpus: Vec<u32>,
    last_t: Option<i64>,
}

impl CheckpointRule {
    /// A rule with these settings; `enabled` follows `[alerts.starved] enabled` (checkpoints are
    /// what starved would misread). Off, it still tracks pauses but raises no alert.
    pub fn new(cfg: CheckpointConfig, enabled: bool) -> Self {
        Self {
            busy_writes: MeanWindow::new(cfg.max_pause_ms),
            cfg,
            enabled,
            phase: Phase::Unknown,
            pauses: VecDeque::new(),
            gpus: Vec::new(),
            last_t: None,
        }
    }

    /// The mean spacing of the remembered pauses, when they are periodic.
    fn interval_ms(&self) -> Option<i64> {
        let starts: Vec<i64> = self.pauses.iter().map(|p| p.start_ms).collect();
        let gaps: Vec<i64> = starts.windows(2).map(|w| w[1] - w[0]).collect();
        if gaps.is_empty() {
            return None;
        }
        let mean = gaps.iter().sum::<i64>() as f64 / gaps.len() as f64;
        let periodic = gaps
            .iter()
            .all(|&g| (g as f64 - mean).abs() <= self.cfg.periodic_tolerance * mean);
        (periodic && mean > 0.0).then_some(mean.round() as i64)
    }

    fn end_pause(&mut self, now: i64, start_ms: i64, written: f64, ms: i64) {
        let dur = now - start_ms;
        let write = if ms > 0 { written / ms as f64 } else { 0.0 };
        let busy = self.busy_writes.mean().unwrap_or(0.0);
        let c = &self.cfg;
        if (c.min_pause_ms..=c.max_pause_ms).contains(&dur)
            && write >= c.min_write_bytes_per_s
            && write >= c.write_ratio * busy
        {
            if self.pauses.len() == KEPT_PAUSES {
                self.pauses.pop_front();
            }
            self.pauses.push_back(Pause {
                start_ms,
                dur_ms: dur,
                write_bytes_per_s: write,
            });
        }
    }

    /// One tick: folds `ctx` in and returns the alerts that stand now (and any due a reminder).
    pub fn evaluate(&mut self, ctx: &Ctx<'_>) -> RuleOutput {
        let snap = ctx.snap;
        let now = ctx.now_ms;
        let dt = self
            .last_t
            .map_or(0, |l| (now - l).clamp(0, DEFAULT_MAX_GAP_MS));
        self.last_t = Some(now);
        let held: Vec<u32> = snap
            .gpus
            .iter()
            .filter(|g| job::held(snap, g.index))
            .map(|g| g.index)
            .collect();
        let utils: Vec<f64> = held
            .iter()
            .filter_map(|&i| snap.gpu(i).and_then(|g| g.util_gpu_pct).map(f64::from))
            .collect();
        let write = snap.host.disk_write_bytes_per_s;
        if utils.is_empty() {
            self.phase = Phase::Unknown;
        } else {
            let util = utils.iter().sum::<f64>() / utils.len() as f64;
            match self.phase {
                Phase::Unknown | Phase::Busy if util >= self.cfg.busy_util_pct => {
                    self.phase = Phase::Busy;
                    self.busy_writes.push(now, write);
                    self.gpus = held;
                }
                Phase::Busy if util <= self.cfg.pause_util_pct => {
                    self.phase = Phase::Paused {
                        start_ms: now - dt,
                        written: write.unwrap_or(0.0) * dt as f64,
                        ms: dt,
                    };
                }
                Phase::Paused {
                    start_ms,
                    written,
                    ms,
                } => {
                    if util >= self.cfg.busy_util_pct {
                        self.end_pause(now - dt, start_ms, written, ms);
                        self.phase = Phase::Busy;
                    } else if now - start_ms > self.cfg.max_pause_ms {
                        self.phase = Phase::Unknown;
                    } else {
                        self.phase = Phase::Paused {
                            start_ms,
                            written: written + write.unwrap_or(0.0) * dt as f64,
                            ms: ms + dt,
                        };
                    }
                }
                _ => {}
            }
        }
        let mut out = RuleOutput::default();
        let (Some(interval), Some(last)) = (self.interval_ms(), self.pauses.back().copied()) else {
            return out;
        };
        if now - (last.start_ms + last.dur_ms) > 3 * interval {
            self.pauses.clear();
            return out;
        }
        if self.enabled {
            out.alerts.push(self.alert(ctx, interval));
        }
        out
    }

    fn alert(&self, ctx: &Ctx<'_>, interval: i64) -> Alert {
        let n = self.pauses.len() as f64;
        let mean_pause = self.pauses.iter().map(|p| p.dur_ms).sum::<i64>() as f64 / n;
        let write = self.pauses.iter().map(|p| p.write_bytes_per_s).sum::<f64>() / n;
        let share = (mean_pause / interval as f64).clamp(0.0, 1.0);
        let gpus = gpu_ranges(&self.gpus);
        let word = if self.gpus.len() == 1 { "GPU" } else { "GPUs" };
        let total = ctx.snap.gpus.len().max(1) as f64;
        let held_share = self.gpus.len() as f64 / total;
        let per_hour = ctx
            .rate_micros_per_h()
            .map(|r| (r as f64 * held_share * share).round() as i64);
        let lost_ms: i64 = self.pauses.iter().map(|p| p.dur_ms).sum();
        let cost = ctx
            .rate_micros_per_h()
            .map(|r| (r as f64 * held_share * lost_ms as f64 / 3_600_000.0).round() as i64);
        let pause_text = crate::units::duration(
            mean_pause.round() as i64,
            crate::units::DurationStyle::Words,
        );
        let every = crate::units::duration(interval, crate::units::DurationStyle::Words);
        let cost_text = per_hour.map_or_else(String::new, |c| format!(" ({})", ctx.per_hour(c)));
        let first = self.pauses.front().map_or(ctx.now_ms, |p| p.start_ms);
        Alert {
            id: "checkpoint".into(),
            kind: AlertKind::Checkpoint,
            severity: if share >= 0.05 {
                Severity::Moderate
            } else {
                Severity::Info
            },
            gpu: (self.gpus.len() == 1).then(|| self.gpus[0]),
            title: format!(
                "{word} {gpus} paused {pause_text} every {every} while the job wrote {}: \
                 checkpoints cost {:.1} % of GPU time{cost_text}",
                units::rate(write),
                share * 100.0
            ),
            detail: format!(
                "A periodic pattern, not starvation: the {word} stop for about {pause_text} every \
                 {every} while disk writes jump to {} — the job saving checkpoints in the \
                 training loop.",
                units::rate(write)
            ),
            evidence: vec![
                ("verdict".into(), "checkpoint".into()),
                (
                    "pauses".into(),
                    format!(
                        "{} of about {pause_text}, every {every}: periodic",
                        self.pauses.len()
                    ),
                ),
                (
                    "disk writes".into(),
                    format!(
                        "{} during the pauses, {} while training",
                        units::rate(write),
                        units::rate(self.busy_writes.mean().unwrap_or(0.0))
                    ),
                ),
                ("GPU time lost".into(), format!("{:.1} %", share * 100.0)),
            ],
            cost_micros: cost,
            next_step: Some(
                "Save asynchronously (torch.distributed.checkpoint.async_save, or copy the state \
                 to CPU and write it from a background thread) or less often, shard the \
                 checkpoint across ranks instead of writing it from one, and write to local NVMe \
                 first, copying to network storage in the background."
                    .into(),
            ),
            since_unix_ms: first,
            currency: ctx.currency,
        }
    }
}
