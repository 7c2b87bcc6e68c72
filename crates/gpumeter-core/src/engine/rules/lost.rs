//! Lost GPUs: a card that answers `GPU_IS_LOST` (fell off the bus, XID 79) does no work but
//! still bills. High at the first reading that sees it lost, with what it costs: the GPU's share
//! of the rate (the billing view's per-GPU rate, else the rate over the GPUs). GPUs lost
//! together are one alert naming them all; when every GPU is lost (a spot reclaim, a host
//! fault) it says the box bills for nothing — autostop counts that as idle.
//!
//! Only `GPU_IS_LOST` counts: a GPU whose calls fail otherwise (a transient NVML error, state
//! `Error`) is unreadable, not lost. Hysteresis: no window to fire (a lost card does not come
//! back by itself); to clear, a GPU must answer again for `clear_after` (default 5 min) without
//! being lost in between, so a card that drops out and back in stays one alert. A GPU missing
//! from the readings has not come back.
//!
//! Lost is the cause, so the other rules defer: a lost GPU is never idle to the idle rule and
//! a job whose GPUs were lost did not "finish" (job done), while billing counts the card's
//! share as idle spend.

use std::collections::BTreeMap;

use gpumeter_model::GpuState;

use super::alert::{Alert, AlertKind, Severity};
use super::config::LostConfig;
use super::job::gpu_ranges;
use super::label::process_label;
use super::{Ctx, RuleOutput};
use crate::money::Money;

/// The XID the driver raises when a GPU falls off the bus.
const XID_FELL_OFF_BUS: u64 = 79;

/// One GPU seen lost.
#[derive(Debug, Clone, Copy)]
struct Lost {
    since_ms: i64,
    /// Since when it answers again (None: still lost, or missing).
    back_since_ms: Option<i64>,
}

/// The lost-GPU rule's state across ticks: the lost GPUs and the job last seen on each (see the
/// module docs).
#[derive(Debug, Clone)]
pub struct LostRule {
    cfg: LostConfig,
    gpus: BTreeMap<u32, Lost>,
    /// The job last seen on each GPU (its main pid and label, remade only when the pid
    /// changes): a lost card takes its processes along, and the alert still names them.
    last_job: BTreeMap<u32, (u32, String)>,
}

impl LostRule {
    /// A rule with these settings.
    pub fn new(cfg: LostConfig) -> Self {
        Self {
            cfg,
            gpus: BTreeMap::new(),
            last_job: BTreeMap::new(),
        }
    }

    /// One tick: folds `ctx` in and returns the alerts that stand now (and any due a reminder).
    pub fn evaluate(&mut self, ctx: &Ctx<'_>) -> RuleOutput {
        let now = ctx.now_ms;
        for j in ctx.jobs() {
            for &g in &j.gpus {
                if self.last_job.get(&g).is_none_or(|(pid, _)| *pid != j.main)
                    && let Some(p) = ctx.snap.processes.iter().find(|p| p.pid == j.main)
                {
                    self.last_job.insert(g, (j.main, process_label(p)));
                }
            }
        }
        for g in &ctx.snap.gpus {
            let lost = g.state == GpuState::Lost;
            match (self.gpus.get_mut(&g.index), lost) {
                (None, true) => {
                    self.gpus.insert(
                        g.index,
                        Lost {
                            since_ms: now,
                            back_since_ms: None,
                        },
                    );
                }
                (Some(l), true) => l.back_since_ms = None,
                (Some(l), false) if g.state == GpuState::Ok => {
                    l.back_since_ms.get_or_insert(now);
                }
                // Unreadable (Error, ResetRequired) is not back.
                (Some(l), false) => l.back_since_ms = None,
                (None, false) => {}
            }
        }
        let hold = self.cfg.clear_after_ms;
        self.gpus
            .retain(|_, l| l.back_since_ms.is_none_or(|b| now - b < hold));

        let mut out = RuleOutput::default();
        if !self.cfg.enabled || self.gpus.is_empty() {
            return out;
        }
        out.alerts.push(self.alert(ctx));
        out
    }

    fn alert(&self, ctx: &Ctx<'_>) -> Alert {
        let snap = ctx.snap;
        let now = ctx.now_ms;
        let lost: Vec<u32> = self.gpus.keys().copied().collect();
        let since = self.gpus.values().map(|l| l.since_ms).min().unwrap_or(now);
        let list = gpu_ranges(&lost);
        let one = lost.len() == 1;
        let gpu_word = if one { "GPU" } else { "GPUs" };
        let xid79 = lost.iter().any(|&i| {
            snap.gpu(i)
                .and_then(|g| g.xid_errors.as_ref())
                .is_some_and(|xs| xs.iter().any(|x| x.xid == XID_FELL_OFF_BUS && x.count > 0))
        });
        let cause = if xid79 {
            "XID 79 / GPU_IS_LOST"
        } else {
            "GPU_IS_LOST"
        };
        // Every GPU the box has is lost: nothing runs, but the whole rate bills on.
        let all = !snap.gpus.is_empty()
            && snap.gpus.iter().all(|g| {
                self.gpus
                    .get(&g.index)
                    .is_some_and(|l| l.back_since_ms.is_none())
            });
        let per_gpu = ctx.gpu_rate_per_hour(snap.gpus.len());
        let n = i128::try_from(lost.len()).unwrap_or(0);
        let lost_rate = per_gpu.map(|r| r.mul_div(n, 1));
        let box_rate = if all {
            ctx.rate_per_hour.or(lost_rate)
        } else {
            lost_rate
        };
        let cost = per_gpu.map(|r| {
            self.gpus
                .values()
                .map(|l| r.cost_for_ms(now - l.since_ms).micros())
                .sum::<i64>()
        });
        let money = |m: Money| ctx.currency.format(m);
        let hourly = |m: Money| ctx.currency.per_hour(m);
        let title = match (all, box_rate) {
            (true, Some(r)) => format!(
                "{gpu_word} {list} lost ({cause}): all of them — the box bills for nothing at \
                 {}; stop it, then a reboot or a new instance",
                hourly(r)
            ),
            (true, None) => format!(
                "{gpu_word} {list} lost ({cause}): all of them — the box bills for nothing (no \
                 price set); stop it, then a reboot or a new instance"
            ),
            (false, Some(r)) => format!(
                "{gpu_word} {list} lost ({cause}) — the box still bills {} for {}; a reboot or \
                 a new instance",
                hourly(r),
                if one { "it" } else { "them" }
            ),
            (false, None) => format!(
                "{gpu_word} {list} lost ({cause}) — the box still bills for {} (no price set); a \
                 reboot or a new instance",
                if one { "it" } else { "them" }
            ),
        };
        let ranks_gone = if all {
            " Every GPU is gone (a spot reclaim or a host fault): the processes on them cannot \
             run, and autostop counts the box as idle."
        } else {
            " Processes on it cannot run; a multi-GPU job usually hangs or dies with it."
        };
        let mut evidence = vec![
            ("GPUs".to_string(), list.clone()),
            ("state".to_string(), format!("lost ({cause})")),
            (
                "lost for".to_string(),
                crate::units::duration(now - since, crate::units::DurationStyle::Words),
            ),
        ];
        let mut jobs: Vec<&str> = lost
            .iter()
            .filter_map(|g| self.last_job.get(g).map(|(_, l)| l.as_str()))
            .collect();
        jobs.dedup();
        if !jobs.is_empty() {
            evidence.push(("was running".to_string(), jobs.join(", ")));
        }
        if let Some(r) = per_gpu {
            evidence.push(("rate per GPU".to_string(), hourly(r)));
        }
        if let Some(c) = cost {
            evidence.push((
                "paid for lost GPUs since".to_string(),
                money(Money::from_micros(c)),
            ));
        }
        Alert {
            id: "lost".to_string(),
            kind: AlertKind::Lost,
            severity: Severity::High,
            gpu: one.then(|| lost[0]),
            title,
            detail: format!(
                "NVML answers GPU_IS_LOST for {gpu_word} {list}: the card fell off the bus and \
                 will not come back without a reset.{ranks_gone} Its time counts as idle spend."
            ),
            evidence,
            cost_micros: cost,
            next_step: Some(if all {
                "Stop the instance (nothing on it can run) and start a new one; on a spot \
                 instance, resume from the last checkpoint."
                    .to_string()
            } else {
                "Checkpoint what still runs, then reboot (or nvidia-smi -r the GPU); if it falls \
                 off again, report its bus id to the provider and move to a new instance."
                    .to_string()
            }),
            since_unix_ms: since,
            currency: ctx.currency,
        }
    }
}
