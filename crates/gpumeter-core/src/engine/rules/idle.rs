//! Idle paid time: every GPU idle while the meter runs (cards left idle beside busy ones are
//! [`super::left_idle`]'s, fed from here). Tallies idle time and idle cost per GPU
//! and for the machine on every tick, and raises one alert once the machine has been idle for
//! `remind_after` (default 10 min), reminding every `remind_every` (default 30 min) after that.
//!
//! A GPU sample is idle when util ≤ 5 %, memory-controller util ≤ 5 % and PCIe RX+TX < 100 MB/s
//! (an idle card holding a context reads back tens of MB/s of housekeeping traffic);
//! an unsupported memory-util or PCIe reading is no evidence against idle, an unsupported util
//! is no evidence at all. A GPU that is lost or failing is not idle (something is wrong, and
//! the machine is not safely idle). Probes (short bursts on a GPU holding only a context) are
//! no work, and the waits of a loop that runs in bursts are not idle ([`super::work`]); 15 s of
//! unbroken work ends a stretch at once ([`SUSTAINED_WORK_MS`]), a shorter burst does not. Idle
//! time and cost count probes and lost cards as unproductive. Arming: no alert before the first real GPU activity seen or
//! until the host has been up `arm_after_boot` (default 15 min): a fresh box is being set up.

use std::collections::BTreeMap;

use gpumeter_model::{GpuReading, GpuState, Snapshot, StuckThresholds};

use super::alert::{Alert, AlertKind, Severity};
use super::config::IdleConfig;
use super::left_idle::LeftIdle;
use super::window::{DEFAULT_MAX_GAP_MS, Edge, Window};
use super::work::GpuWork;
use super::{Ctx, RuleOutput};
use crate::money::Money;

/// Work that lasts this long without a break ends an idle stretch at once (a single request
/// of a few seconds does not: the window's hysteresis rides over it).
pub const SUSTAINED_WORK_MS: i64 = 15_000;

/// Whether one GPU's sample is idle; `None` when it cannot say (util unsupported).
pub fn gpu_idle(g: &GpuReading, cfg: &IdleConfig) -> Option<bool> {
    if g.state != GpuState::Ok {
        return Some(false);
    }
    let util = f64::from(g.util_gpu_pct?);
    let mem_ok = g
        .util_memory_pct
        .is_none_or(|m| f64::from(m) <= cfg.mem_util_pct);
    let pcie = match (g.pcie_rx_bytes_per_s, g.pcie_tx_bytes_per_s) {
        (None, None) => None,
        (rx, tx) => Some(rx.unwrap_or(0).saturating_add(tx.unwrap_or(0)) as f64),
    };
    let pcie_ok = pcie.is_none_or(|p| p < cfg.pcie_bytes_per_s);
    Some(util <= cfg.gpu_util_pct && mem_ok && pcie_ok)
}

/// Whether every GPU is idle; `None` without GPUs or when a GPU cannot say.
pub fn machine_idle(snap: &Snapshot, cfg: &IdleConfig) -> Option<bool> {
    if snap.gpus.is_empty() {
        return None;
    }
    let mut all = Some(true);
    for g in &snap.gpus {
        match gpu_idle(g, cfg) {
            Some(false) => return Some(false),
            None => all = None,
            Some(true) => {}
        }
    }
    all
}

/// Idle time and what it cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IdleTally {
    /// Idle time counted so far, ms.
    pub idle_ms: i64,
    /// Sum of rate × ms (micro-units·ms per hour), divided only when read: no rounding drift.
    cost_acc: i128,
}

impl IdleTally {
    fn add(&mut self, dt_ms: i64, micros_per_hour: Option<i64>) {
        self.idle_ms += dt_ms;
        if let Some(rate) = micros_per_hour {
            self.cost_acc += i128::from(dt_ms) * i128::from(rate);
        }
    }

    /// The exact running sum (rate × ms), for a stretch's cost as the tally's growth.
    pub(super) fn acc(&self) -> i128 {
        self.cost_acc
    }

    /// Idle cost so far in micro-units.
    pub fn cost_micros(&self) -> i64 {
        i64::try_from(self.cost_acc / 3_600_000).unwrap_or(i64::MAX)
    }
}

/// Idle totals since gpumeter started: the machine (all GPUs idle) and each GPU.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IdleTotals {
    /// While every GPU was idle (the idle paid time of the whole machine).
    pub machine: IdleTally,
    /// Each GPU's own idle time, keyed by GPU index (idle beside busy cards too).
    pub gpus: BTreeMap<u32, IdleTally>,
}

/// The idle stretch being reported.
#[derive(Debug, Clone)]
struct Episode {
    since_ms: i64,
    /// The machine tally's `cost_acc` when the stretch began: its cost is the tally's growth
    /// since, so "this stretch" is the same sum as "since start", never more.
    base_acc: i128,
    next_notice_ms: i64,
    fired: bool,
}

/// The rule's state.
#[derive(Debug, Clone)]
pub struct IdleRule {
    cfg: IdleConfig,
    window: Window,
    armed: bool,
    last_t: Option<i64>,
    totals: IdleTotals,
    episode: Option<Episode>,
    /// (tick time, machine `cost_acc` before that tick's add) over the last window: where a
    /// stretch that the window dates back began in the tally.
    acc_history: std::collections::VecDeque<(i64, i128)>,
    /// GPUs left idle while others work ([`super::left_idle`]).
    left: LeftIdle,
}

impl IdleRule {
    /// A rule with these settings; it fires when the machine was idle for `fire_share` of its
    /// window and clears at or below `clear_share` (0–1, `RulesConfig`).
    pub fn new(cfg: IdleConfig, fire_share: f64, clear_share: f64) -> Self {
        Self {
            window: Window::new(cfg.window_ms, fire_share, clear_share),
            left: LeftIdle::new(cfg.window_ms, fire_share, clear_share),
            cfg,
            armed: false,
            last_t: None,
            totals: IdleTotals::default(),
            episode: None,
            acc_history: std::collections::VecDeque::new(),
        }
    }

    /// Idle time and cost since gpumeter started, for the machine and each GPU.
    pub fn totals(&self) -> &IdleTotals {
        &self.totals
    }

    /// One tick: adds the tick to the idle tallies and returns the idle alert while it stands (with
    /// a reminder when one is due).
    pub fn evaluate(&mut self, ctx: &Ctx<'_>) -> RuleOutput {
        let snap = ctx.snap;
        let now = ctx.now_ms;
        let dt = self
            .last_t
            .map_or(0, |last| (now - last).clamp(0, DEFAULT_MAX_GAP_MS));
        self.last_t = Some(now);
        let rate = ctx.rate_per_hour;

        let work = ctx.work();
        // Real work (not a probe, not a lost card) arms the rule.
        if work.gpus().iter().any(|(_, w)| *w == GpuWork::Work) {
            self.armed = true;
        }
        let uptime_ms = snap
            .system
            .uptime_s
            .map(|s| i64::try_from(s).unwrap_or(i64::MAX).saturating_mul(1000));
        self.armed |= uptime_ms.is_none_or(|u| u >= self.cfg.arm_after_boot_ms);

        let gpus = i128::try_from(snap.gpus.len().max(1)).unwrap_or(1);
        let gpu_rate = rate.map(|r| r.mul_div(1, gpus).micros());
        // Idle paid time counts probes, lost cards and busy-but-stuck GPUs too (the lost and
        // hung rules name them): the bill runs for no work either way. The alert below stays
        // about GPUs doing nothing.
        let stuck = StuckThresholds::default();
        let mut all_unproductive = !snap.gpus.is_empty();
        for (g, (index, w)) in snap.gpus.iter().zip(work.gpus()) {
            let tally = self.totals.gpus.entry(*index).or_default();
            let unproductive = matches!(w, GpuWork::Idle | GpuWork::Probe | GpuWork::Lost)
                || g.looks_stuck(&stuck) == Some(true);
            if unproductive {
                tally.add(dt, gpu_rate);
            } else {
                all_unproductive = false;
            }
        }
        // The tally up to the start of this tick's interval, for a stretch dated back to it.
        self.acc_history
            .push_back((now - dt, self.totals.machine.cost_acc));
        while self
            .acc_history
            .front()
            .is_some_and(|&(t, _)| t < now - self.cfg.window_ms - DEFAULT_MAX_GAP_MS)
        {
            self.acc_history.pop_front();
        }
        if all_unproductive {
            self.totals.machine.add(dt, rate.map(Money::micros));
        }
        // Idle: no work on any GPU (probes seen through), and no loop between its bursts.
        let all_idle = work
            .no_work(false)
            .map(|none| none && !work.loop_running(self.cfg.window_ms));

        // Sustained work (a batch served for half a minute, not one request) ends a stretch not
        // yet announced, however little of the window it filled: "idle 10 min" must be true
        // when it is said. An announced one ends by the window as before (a notebook cell of a
        // minute does not announce the next gap anew: one notice, then the reminders).
        if work.working_for_ms() >= SUSTAINED_WORK_MS
            && self.episode.as_ref().is_none_or(|e| !e.fired)
        {
            self.window.reset();
            self.episode = None;
        }
        match self.window.push(now, all_idle) {
            Edge::Rose => {
                let since = self.window.active_since().unwrap_or(now);
                let base_acc = self
                    .acc_history
                    .iter()
                    .rev()
                    .find(|&&(t, _)| t <= since)
                    .or(self.acc_history.front())
                    .map_or(self.totals.machine.cost_acc, |&(_, acc)| acc);
                self.episode = Some(Episode {
                    since_ms: since,
                    base_acc,
                    next_notice_ms: since + self.cfg.remind_after_ms,
                    fired: false,
                });
            }
            Edge::Fell => self.episode = None,
            Edge::Steady => {}
        }

        let mut out = self.machine_alert(ctx);
        let machine_alerted = self.episode.as_ref().is_some_and(|e| e.fired);
        let part = self.left.evaluate(
            ctx,
            &self.cfg,
            &self.totals.gpus,
            self.armed,
            machine_alerted,
        );
        out.alerts.extend(part.alerts);
        out.remind.extend(part.remind);
        out
    }

    /// The machine's idle alert (every GPU idle), with its reminders.
    fn machine_alert(&mut self, ctx: &Ctx<'_>) -> RuleOutput {
        let now = ctx.now_ms;
        let mut out = RuleOutput::default();
        if !self.cfg.enabled || !self.armed {
            return out;
        }
        let Some(episode) = &mut self.episode else {
            return out;
        };
        if now < episode.since_ms + self.cfg.remind_after_ms {
            return out;
        }
        if now >= episode.next_notice_ms {
            if episode.fired {
                out.remind.push(IDLE_ID.to_string());
            }
            episode.fired = true;
            // The next reminder: the first remind_every boundary after now.
            while episode.next_notice_ms <= now {
                episode.next_notice_ms += self.cfg.remind_every_ms.max(1);
            }
        }
        let episode = episode.clone();
        out.alerts.push(self.alert(ctx, &episode));
        out
    }

    fn alert(&self, ctx: &Ctx<'_>, e: &Episode) -> Alert {
        let snap = ctx.snap;
        let stretch_micros =
            i64::try_from((self.totals.machine.cost_acc - e.base_acc).max(0) / 3_600_000)
                .unwrap_or(i64::MAX);
        let idle_ms = ctx.now_ms - e.since_ms;
        let minutes = crate::units::duration(idle_ms, crate::units::DurationStyle::Words);
        let n = snap.gpus.len();
        let money = |m: i64| ctx.money(m);
        let title = match ctx.rate_micros_per_h() {
            Some(rate) => format!(
                "GPUs idle {minutes} — {} so far, {}",
                money(stretch_micros),
                ctx.per_hour(rate)
            ),
            None => format!("GPUs idle {minutes} — no price set, cost unknown"),
        };
        let max_of = |f: fn(&GpuReading) -> Option<u32>| {
            snap.gpus
                .iter()
                .filter_map(f)
                .max()
                .map_or_else(|| "N/A".into(), |v| format!("{v} %"))
        };
        let pcie: u64 = snap
            .gpus
            .iter()
            .map(|g| {
                g.pcie_rx_bytes_per_s
                    .unwrap_or(0)
                    .saturating_add(g.pcie_tx_bytes_per_s.unwrap_or(0))
            })
            .sum();
        let mut evidence = vec![
            ("idle for".to_string(), minutes.clone()),
            ("GPUs idle".to_string(), format!("{n}/{n}")),
            ("highest util".to_string(), max_of(|g| g.util_gpu_pct)),
            (
                "highest memory util".to_string(),
                max_of(|g| g.util_memory_pct),
            ),
            (
                "PCIe RX+TX (all GPUs)".to_string(),
                crate::units::rate(pcie as f64),
            ),
        ];
        if let Some(probes) = ctx.work().probes_text(e.since_ms) {
            evidence.push(("seen through (no work)".into(), probes));
        }
        if let Some(rate) = ctx.rate_micros_per_h() {
            evidence.push(("rate".into(), ctx.per_hour(rate)));
            evidence.push(("idle cost, this stretch".into(), money(stretch_micros)));
            evidence.push((
                "idle cost since start".into(),
                money(self.totals.machine.cost_micros()),
            ));
        }
        Alert {
            id: IDLE_ID.to_string(),
            kind: AlertKind::IdlePaid,
            severity: if idle_ms >= 60 * 60_000 {
                Severity::High
            } else {
                Severity::Moderate
            },
            gpu: None,
            title,
            detail: format!(
                "All {n} GPUs have been idle for {minutes} (util ≤ {:.0} %, memory util ≤ {:.0} %, \
                 PCIe < {}) while the meter runs.",
                self.cfg.gpu_util_pct,
                self.cfg.mem_util_pct,
                crate::units::rate(self.cfg.pcie_bytes_per_s),
            ),
            evidence,
            cost_micros: ctx.rate_per_hour.map(|_| stretch_micros),
            next_step: Some(format!(
                "If the work is done, {}. gpumeter can do it for you: [autostop] in the config, \
                 or `gpumeter watch --autostop 30m --stop-cmd '…'`. Otherwise start the next \
                 job.",
                stop_advice(ctx)
            )),
            since_unix_ms: e.since_ms,
            currency: ctx.currency,
        }
    }
}

/// "stop the machine: that saves $30.60/h, while its $0.40/h of storage …": what stopping the
/// box saves, and what keeps billing while it is stopped (the priced disks and addresses, or
/// else the catalogued price of the attached volumes, with where that figure came from), so
/// the advice does not promise a saving the bill will not show.
pub(super) fn stop_advice(ctx: &Ctx<'_>) -> String {
    let (Some(burn), Some(kept)) = (ctx.rate_per_hour, ctx.kept_when_stopped) else {
        return "stop or release the machine".into();
    };
    if let Some(s) = ctx.stopped_storage.filter(|_| kept.micros() == 0) {
        // Not in the burn: stopping saves all of it, and the volumes bill on beside.
        return format!(
            "stop the machine: that saves {}, while its {} of storage ({}) bills until you \
             delete the volumes ([pricing] extras_per_hour sets your own figure)",
            ctx.per_hour(burn.micros()),
            ctx.per_hour(s.per_hour.micros()),
            s.what
        );
    }
    if kept.micros() > 0 {
        format!(
            "stop the machine: that saves {}, while its {} of storage and addresses \
             ([pricing] extras_per_hour) bills until you release it",
            ctx.per_hour(burn.saturating_sub(kept).micros()),
            ctx.per_hour(kept.micros())
        )
    } else {
        format!(
            "stop or release the machine: that saves {}; a stopped box's volumes may still \
             bill ([pricing] extras_per_hour prices them)",
            ctx.per_hour(burn.micros())
        )
    }
}

/// The idle alert's id (there is one machine).
pub const IDLE_ID: &str = "idle";
