//! The alert rules: idle paid time, forgotten allocations, starved GPUs, throttling,
//! checkpoints, hung GPUs, XID errors, lost GPUs, VRAM headroom, shared cards, finished
//! jobs and spot interruption notices, each a
//! pure state machine fed one [`Snapshot`] and "now" per tick (no I/O, no wall clock), plus the
//! budget alerts billing hands in. [`Rules`] runs them, keeps the active alerts (with
//! acknowledge and snooze) and a bounded history, and returns what changed as [`Transition`]s
//! for the notification channels.
//!
//! Each rule reports the alerts that stand this tick; this module turns that into transitions:
//! a new id fired, a missing id cleared, a worse severity or another verdict updated, a rule's
//! reminder (idle paid time) reminded. Acknowledged alerts leave the panel and stay quiet until
//! they clear (or get worse); snoozed ones come back, with a reminder, when the snooze ends.
//! On Kubernetes each alert names its GPUs' pods (`pods`).

mod active;
pub mod alert;
pub mod checkpoint;
pub mod config;
pub mod forgotten;
pub mod hung;
pub mod idle;
pub mod job;
mod job_cache;
pub mod job_done;
pub mod judging;
pub mod label;
pub mod left_idle;
mod line_fit;
pub mod lost;
mod pods;
pub mod shared;
pub mod spot;
pub mod starved;
pub mod throttle;
pub mod vram;
pub mod window;
pub mod work;
mod workload;
pub mod xid;
pub mod xid_catalog;

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use gpumeter_model::Snapshot;

use crate::money::{Currency, Money};

pub use active::{ActiveAlert, HistoryEntry, HistoryEvent};
pub use alert::{Alert, AlertKind, Severity, Transition, budget_next_step};
pub use config::RulesConfig;
pub use idle::{IdleTally, IdleTotals};
pub use starved::cause_label;

/// What every rule sees on a tick.
#[derive(Debug, Clone)]
pub struct Ctx<'a> {
    /// The reading of this tick.
    pub snap: &'a Snapshot,
    /// This tick's time, ms since the Unix epoch (the snapshot's, or the caller's clock).
    pub now_ms: i64,
    /// The machine's current price per hour (from billing); `None`: no pricing.
    pub rate_per_hour: Option<Money>,
    /// The currency the messages write money in.
    pub currency: Currency,
    /// One GPU's share of the rate per hour, as the billing view lists it; `None`: not known
    /// (then [`Ctx::gpu_rate_per_hour`] splits `rate_per_hour`).
    pub gpu_rate: Option<Money>,
    /// What this run has cost so far (the billing view's spend); `None`: no meter.
    pub run_spent: Option<Money>,
    /// What keeps billing per hour while the machine is stopped (the priced disks, addresses
    /// and snapshots: `[pricing] extras_per_hour`); `None`: no meter.
    pub kept_when_stopped: Option<Money>,
    /// The catalogued storage of the attached volumes, when the user priced none: it bills
    /// while stopped and is not in `rate_per_hour`.
    pub stopped_storage: Option<&'a crate::billing::StoppedStorage>,
    /// The GPUs the hung alert named last tick: what stands on them is that alert's (a hung
    /// job's straggler rank is no forgotten allocation).
    pub hung_gpus: Vec<u32>,
    /// This tick's jobs, kept across ticks for the rules that ask (starved, job done, hung).
    jobs: &'a job_cache::JobCache,
    /// What the GPUs did this tick: idle, a probe, work ([`work`]).
    work: &'a work::WorkTracker,
}

impl<'a> Ctx<'a> {
    /// The context of one tick; `jobs` is up to date with `snap`.
    fn new(
        snap: &'a Snapshot,
        now_ms: i64,
        rate_per_hour: Option<Money>,
        currency: Currency,
        gpu_rate: Option<Money>,
        jobs: &'a job_cache::JobCache,
        work: &'a work::WorkTracker,
    ) -> Self {
        Self {
            snap,
            now_ms,
            rate_per_hour,
            currency,
            gpu_rate,
            run_spent: None,
            kept_when_stopped: None,
            stopped_storage: None,
            hung_gpus: Vec::new(),
            jobs,
            work,
        }
    }

    /// What the GPUs did this tick ([`work::WorkTracker`]).
    pub fn work(&self) -> &work::WorkTracker {
        self.work
    }

    /// One GPU's share of the rate per hour: the billing view's, else the rate over `gpus`.
    pub fn gpu_rate_per_hour(&self, gpus: usize) -> Option<Money> {
        self.gpu_rate.or_else(|| {
            let n = i128::try_from(gpus).ok().filter(|&n| n > 0)?;
            Some(self.rate_per_hour?.mul_div(1, n))
        })
    }

    /// The jobs holding GPUs this tick ([`job::jobs`]).
    pub fn jobs(&self) -> &[job::Job] {
        self.jobs.jobs()
    }

    /// This tick's jobs with their per-tick shortcuts (samples, start times, held GPUs).
    pub(super) fn job_cache(&self) -> &job_cache::JobCache {
        self.jobs
    }

    /// Micro-units as text in the session's currency ([`Currency::format`], the one formatter).
    pub fn money(&self, micros: i64) -> String {
        self.currency.format(Money::from_micros(micros))
    }

    /// Micro-units an hour as text: `$31.00/h` ([`Currency::per_hour`]).
    pub fn per_hour(&self, micros: i64) -> String {
        self.currency.per_hour(Money::from_micros(micros))
    }

    /// The rate in micro-units per hour, for the rules' exact integer tallies.
    pub fn rate_micros_per_h(&self) -> Option<i64> {
        self.rate_per_hour.map(Money::micros)
    }
}

/// What one rule says on a tick: the alerts that stand, and which are due a reminder.
#[derive(Debug, Clone, Default)]
pub struct RuleOutput {
    /// The alerts that stand this tick (an id missing next tick clears).
    pub alerts: Vec<Alert>,
    /// Ids of standing alerts due a reminder this tick.
    pub remind: Vec<String>,
}

/// Budget alerts kept at most (oldest dropped).
const MAX_EXTERNAL: usize = 16;

/// The rule set and the alerts it keeps.
#[derive(Debug, Clone)]
pub struct Rules {
    config: RulesConfig,
    currency: Currency,
    /// One GPU's share of the rate, from the billing view (see [`Ctx::gpu_rate`]).
    gpu_rate: Option<Money>,
    /// What the run has cost so far, from billing (see [`Ctx::run_spent`]).
    run_spent: Option<Money>,
    /// What bills while stopped, from billing (see [`Ctx::kept_when_stopped`]).
    kept_when_stopped: Option<Money>,
    /// See [`Ctx::stopped_storage`].
    stopped_storage: Option<crate::billing::StoppedStorage>,
    idle: idle::IdleRule,
    forgotten: forgotten::ForgottenRule,
    starved: starved::StarvedRule,
    throttle: throttle::ThrottleRule,
    checkpoint: checkpoint::CheckpointRule,
    hung: hung::HungRule,
    xid: xid::XidRule,
    lost: lost::LostRule,
    vram: vram::VramRule,
    job_done: job_done::JobDoneRule,
    shared: shared::SharedRule,
    spot: spot::SpotRule,
    /// The jobs, rebuilt only when the processes' shape changes ([`job_cache`]).
    jobs: job_cache::JobCache,
    work: work::WorkTracker,
    active: BTreeMap<String, ActiveAlert>,
    /// Alerts handed in from outside (budget), standing until acknowledged.
    external: BTreeMap<String, Alert>,
    /// Active alerts, most severe first, then oldest first.
    sorted: Vec<Alert>,
    history: VecDeque<HistoryEntry>,
}

impl Default for Rules {
    fn default() -> Self {
        Self::new(RulesConfig::default())
    }
}

/// The verdict of an alert (starved: its cause), when it has one.
fn verdict(a: &Alert) -> Option<&str> {
    a.evidence
        .iter()
        .find(|(k, _)| k == "verdict")
        .map(|(_, v)| v.as_str())
}

impl Rules {
    /// A rule set with these settings, no alert yet, money in USD until [`Rules::set_currency`].
    pub fn new(config: RulesConfig) -> Self {
        let (fire, clear) = (config.fire_share, config.clear_share);
        Self {
            idle: idle::IdleRule::new(config.idle.clone(), fire, clear),
            forgotten: forgotten::ForgottenRule::new(config.forgotten.clone(), fire, clear),
            starved: starved::StarvedRule::new(
                config.starved.clone(),
                config.idle.gpu_util_pct,
                fire,
                clear,
            ),
            throttle: throttle::ThrottleRule::new(config.throttle.clone(), fire, clear),
            // Checkpoints follow the starved switch: they are what starved would misread.
            checkpoint: checkpoint::CheckpointRule::new(
                config.checkpoint.clone(),
                config.starved.enabled,
            ),
            hung: hung::HungRule::new(config.hung.clone(), fire, clear),
            xid: xid::XidRule::new(config.xid.clone()),
            lost: lost::LostRule::new(config.lost.clone()),
            vram: vram::VramRule::new(config.vram.clone(), fire, clear),
            job_done: job_done::JobDoneRule::new(config.job_done.clone(), config.idle.clone()),
            shared: shared::SharedRule::new(config.shared.clone(), fire, clear),
            spot: spot::SpotRule::new(config.spot.clone()),
            jobs: job_cache::JobCache::default(),
            work: work::WorkTracker::default(),
            config,
            currency: Currency::USD,
            gpu_rate: None,
            run_spent: None,
            kept_when_stopped: None,
            stopped_storage: None,
            active: BTreeMap::new(),
            external: BTreeMap::new(),
            sorted: Vec::new(),
            history: VecDeque::new(),
        }
    }

    /// The settings the rules run with.
    pub fn config(&self) -> &RulesConfig {
        &self.config
    }

    /// What the GPUs did on the last tick (autostop reads it after the rules).
    pub fn work(&self) -> &work::WorkTracker {
        &self.work
    }

    /// The currency the messages use (default USD).
    pub fn set_currency(&mut self, currency: Currency) {
        self.currency = currency;
    }

    /// The currency the messages write money in.
    pub fn currency(&self) -> Currency {
        self.currency
    }

    /// One GPU's share of the rate per hour, as billing lists it (`None`: split the rate).
    pub fn set_gpu_rate(&mut self, per_gpu_hour: Option<Money>) {
        self.gpu_rate = per_gpu_hour;
    }

    /// What keeps billing per hour while the machine is stopped, as the pricing says.
    pub fn set_kept_when_stopped(&mut self, per_hour: Option<Money>) {
        self.kept_when_stopped = per_hour;
    }

    /// The catalogued storage that bills while stopped (`None`: the user priced it, or none).
    pub fn set_stopped_storage(&mut self, storage: Option<crate::billing::StoppedStorage>) {
        self.stopped_storage = storage;
    }

    /// What the run has cost so far, as billing says (`None`: no meter).
    pub fn set_run_spent(&mut self, spent: Option<Money>) {
        self.run_spent = spent;
    }

    /// One tick: every rule sees the snapshot; returns what changed.
    pub fn evaluate(
        &mut self,
        snap: &Snapshot,
        now_ms: i64,
        rate_per_hour: Option<Money>,
    ) -> Vec<Transition> {
        self.jobs.update(snap);
        self.work.update(snap, now_ms, &self.config.idle);
        let mut ctx = Ctx::new(
            snap,
            now_ms,
            rate_per_hour,
            self.currency,
            self.gpu_rate,
            &self.jobs,
            &self.work,
        );
        ctx.run_spent = self.run_spent;
        ctx.kept_when_stopped = self.kept_when_stopped;
        ctx.stopped_storage = self.stopped_storage.as_ref();
        ctx.hung_gpus = self.hung.shown_gpus();
        let outputs = [
            self.idle.evaluate(&ctx),
            self.forgotten.evaluate(&ctx),
            self.starved.evaluate(&ctx),
            self.throttle.evaluate(&ctx),
            self.checkpoint.evaluate(&ctx),
            self.hung.evaluate(&ctx),
            self.xid.evaluate(&ctx),
            self.lost.evaluate(&ctx),
            self.vram.evaluate(&ctx),
            self.job_done.evaluate(&ctx),
            self.shared.evaluate(&ctx),
            self.spot.evaluate(&ctx),
        ];
        let mut standing: BTreeMap<String, Alert> = self.external.clone();
        let mut remind: BTreeSet<String> = BTreeSet::new();
        for out in outputs {
            remind.extend(out.remind);
            for mut a in out.alerts {
                pods::name_pods(&mut a, snap);
                standing.insert(a.id.clone(), a);
            }
        }
        self.apply(standing, &remind, now_ms)
    }

    /// A budget alert (see [`Alert::from_budget`]): fires now (again if its id already stands)
    /// and stands until acknowledged.
    pub fn push_external(&mut self, alert: Alert, now_ms: i64) -> Vec<Transition> {
        let mut out = Vec::new();
        if let Some(old) = self.active.remove(&alert.id) {
            self.record(now_ms, HistoryEvent::Cleared, &old.alert);
        }
        self.external.insert(alert.id.clone(), alert.clone());
        while self.external.len() > MAX_EXTERNAL {
            let oldest = self
                .external
                .values()
                .min_by_key(|a| a.since_unix_ms)
                .map(|a| a.id.clone());
            if let Some(id) = oldest {
                self.external.remove(&id);
                if let Some(gone) = self.active.remove(&id) {
                    self.record(now_ms, HistoryEvent::Cleared, &gone.alert);
                    out.push(Transition::Cleared(gone.alert));
                }
            }
        }
        self.record(now_ms, HistoryEvent::Fired, &alert);
        self.active.insert(
            alert.id.clone(),
            ActiveAlert {
                alert: alert.clone(),
                fired_at_unix_ms: now_ms,
                acknowledged: false,
                snoozed_until_unix_ms: None,
            },
        );
        out.push(Transition::Fired(alert));
        self.resort();
        out
    }

    fn apply(
        &mut self,
        standing: BTreeMap<String, Alert>,
        remind: &BTreeSet<String>,
        now: i64,
    ) -> Vec<Transition> {
        let mut out = Vec::new();
        let gone: Vec<String> = self
            .active
            .keys()
            .filter(|id| !standing.contains_key(*id))
            .cloned()
            .collect();
        for id in gone {
            if let Some(a) = self.active.remove(&id) {
                self.record(now, HistoryEvent::Cleared, &a.alert);
                out.push(Transition::Cleared(a.alert));
            }
        }
        for (id, alert) in standing {
            let Some(entry) = self.active.get_mut(&id) else {
                self.history_push(now, HistoryEvent::Fired, &alert);
                self.active.insert(
                    id,
                    ActiveAlert {
                        alert: alert.clone(),
                        fired_at_unix_ms: now,
                        acknowledged: false,
                        snoozed_until_unix_ms: None,
                    },
                );
                out.push(Transition::Fired(alert));
                continue;
            };
            let worse = alert.severity > entry.alert.severity;
            // Worth saying: it got worse, or its cause changed. Easing off updates quietly.
            let changed = worse || verdict(&alert) != verdict(&entry.alert);
            let snooze_over = entry.snoozed_until_unix_ms.is_some_and(|t| now >= t);
            if snooze_over {
                entry.snoozed_until_unix_ms = None;
            }
            if worse {
                // Getting worse brings an acknowledged alert back.
                entry.acknowledged = false;
            }
            let live = entry.is_live(now);
            entry.alert = alert.clone();
            let event = if changed && live {
                Some((HistoryEvent::Updated, Transition::Updated(alert)))
            } else if live && (remind.contains(&id) || snooze_over) {
                Some((HistoryEvent::Reminded, Transition::Reminded(alert)))
            } else {
                None
            };
            if let Some((h, t)) = event {
                self.history_push(now, h, t.alert());
                out.push(t);
            }
        }
        self.resort();
        out
    }

    fn resort(&mut self) {
        let mut v: Vec<Alert> = self.active.values().map(|a| a.alert.clone()).collect();
        v.sort_by(|a, b| {
            b.severity
                .cmp(&a.severity)
                .then(a.since_unix_ms.cmp(&b.since_unix_ms))
                .then(a.id.cmp(&b.id))
        });
        self.sorted = v;
    }

    fn record(&mut self, now: i64, event: HistoryEvent, alert: &Alert) {
        self.history_push(now, event, alert);
    }

    fn history_push(&mut self, now: i64, event: HistoryEvent, alert: &Alert) {
        if self.history.len() >= self.config.history_len {
            self.history.pop_front();
        }
        self.history.push_back(HistoryEntry {
            at_unix_ms: now,
            event,
            alert: alert.clone(),
        });
    }

    /// Dismisses an alert: it leaves the panel and stays quiet until it clears or gets worse.
    /// A budget alert is removed. Returns false for an unknown id.
    pub fn acknowledge(&mut self, id: &str, now_ms: i64) -> bool {
        let Some(entry) = self.active.get_mut(id) else {
            return false;
        };
        entry.acknowledged = true;
        let alert = entry.alert.clone();
        self.record(now_ms, HistoryEvent::Acknowledged, &alert);
        if self.external.remove(id).is_some() {
            self.active.remove(id);
            self.resort();
        }
        true
    }

    /// Hides an alert until `until_ms`; it comes back with a reminder if it still stands.
    pub fn snooze(&mut self, id: &str, until_ms: i64, now_ms: i64) -> bool {
        let Some(entry) = self.active.get_mut(id) else {
            return false;
        };
        entry.snoozed_until_unix_ms = Some(until_ms);
        let alert = entry.alert.clone();
        self.record(now_ms, HistoryEvent::Snoozed, &alert);
        true
    }

    /// Every standing alert, most severe first (acknowledged and snoozed ones included).
    pub fn alerts(&self) -> &[Alert] {
        &self.sorted
    }

    /// The alerts the panel shows at `now`: standing, not acknowledged, not snoozed.
    pub fn visible(&self, now_ms: i64) -> Vec<Alert> {
        self.sorted
            .iter()
            .filter(|a| self.active.get(&a.id).is_some_and(|s| s.is_live(now_ms)))
            .cloned()
            .collect()
    }

    /// The state of one standing alert.
    pub fn get(&self, id: &str) -> Option<&ActiveAlert> {
        self.active.get(id)
    }

    /// Past transitions, oldest first (bounded by `alerts.history`).
    pub fn history(&self) -> &VecDeque<HistoryEntry> {
        &self.history
    }

    /// Idle time and cost per GPU and for the machine since start.
    pub fn idle_totals(&self) -> &IdleTotals {
        self.idle.totals()
    }

    /// Starved time per (GPU, cause) since start, in ms (see [`starved::StarvedRule::totals`]).
    pub fn starved_totals(&self) -> &BTreeMap<(u32, starved::Cause), i64> {
        self.starved.totals()
    }
}
