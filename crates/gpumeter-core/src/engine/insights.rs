//! The engine's side of the insights: the alert rules and autostop fed by every
//! [`Engine::ingest`], their transitions and events queued (bounded) for the notification
//! channels, and the user's actions on them (acknowledge, snooze, cancel). Kept out of
//! `engine/mod.rs` so the engine core stays small; `Engine` holds one [`Insights`].

use gpumeter_model::Snapshot;

use super::Engine;
use super::autostop::{Autostop, AutostopConfig, AutostopEvent, AutostopStatus};
use super::rules::{Alert, Rules, RulesConfig, Transition};
use crate::money::{Currency, Money};

/// Undrained transitions or events kept at most (oldest dropped): nobody may be listening.
const MAX_PENDING: usize = 256;

/// Rules, autostop and what they said since the last drain.
#[derive(Debug, Clone)]
pub(crate) struct Insights {
    rules: Rules,
    autostop: Autostop,
    rate_per_hour: Option<Money>,
    transitions: Vec<Transition>,
    autostop_events: Vec<AutostopEvent>,
}

impl Default for Insights {
    fn default() -> Self {
        Self {
            rules: Rules::default(),
            autostop: Autostop::new(AutostopConfig::default()),
            rate_per_hour: None,
            transitions: Vec::new(),
            autostop_events: Vec::new(),
        }
    }
}

fn bounded<T>(v: &mut Vec<T>) {
    let excess = v.len().saturating_sub(MAX_PENDING);
    v.drain(..excess);
}

impl Insights {
    /// The meter's current burn per hour prices idle and wasted time, its per-GPU list rate a
    /// lost GPU, its spend so far the spot notice, and what bills while stopped the advice to
    /// stop the box (called by `ingest`).
    pub(super) fn billing_rate(
        &mut self,
        per_hour: Money,
        per_gpu_hour: Option<Money>,
        spent: Money,
        currency: Currency,
        kept_when_stopped: Money,
        stopped_storage: Option<crate::billing::StoppedStorage>,
    ) {
        self.rate_per_hour = Some(per_hour);
        self.rules.set_kept_when_stopped(Some(kept_when_stopped));
        self.rules.set_stopped_storage(stopped_storage);
        self.rules.set_run_spent(Some(spent));
        self.rules.set_gpu_rate(per_gpu_hour);
        self.rules.set_currency(currency);
    }

    /// Billing's budget crossings join the alert path (called by `ingest`).
    pub(super) fn budget_alerts(
        &mut self,
        events: &[crate::billing::BudgetEvent],
        currency: Currency,
    ) {
        for e in events {
            let alert = Alert::from_budget(
                e.threshold,
                e.kind == crate::billing::BudgetEventKind::Forecast,
                e.spent.micros(),
                e.budget.micros(),
                currency,
                e.period,
                &e.period_key,
                e.at_unix_ms,
            );
            let mut alert = alert;
            // What the GPUs did at the last reading decides whether autostop is the advice.
            alert.next_step = Some(super::rules::budget_next_step(
                self.rules.work().no_work(false),
            ));
            let t = self.rules.push_external(alert, e.at_unix_ms);
            self.transitions.extend(t);
        }
        bounded(&mut self.transitions);
    }

    /// One tick (called by [`Engine::ingest`]).
    pub(super) fn observe(&mut self, snap: &Snapshot) {
        let now = snap.taken_at_unix_ms;
        let t = self.rules.evaluate(snap, now, self.rate_per_hour);
        self.transitions.extend(t);
        bounded(&mut self.transitions);
        let e = self.autostop.observe(snap, now, self.rules.work());
        self.autostop_events.extend(e);
        bounded(&mut self.autostop_events);
    }
}

impl Engine {
    /// The same engine with these rule settings (fresh rule state).
    pub fn with_rules(mut self, config: RulesConfig) -> Self {
        let currency = self.insights.rules.currency();
        self.insights.rules = Rules::new(config);
        self.insights.rules.set_currency(currency);
        self
    }

    /// The same engine with autostop configured (off unless `config.enabled`).
    pub fn with_autostop(mut self, config: AutostopConfig) -> Self {
        self.insights.autostop = Autostop::new(config);
        self
    }

    /// The machine's price per hour, for idle and waste costs (`None`: unknown), and the
    /// currency the messages use.
    pub fn set_rate(&mut self, per_hour: Option<Money>, currency: Currency) {
        self.insights.rate_per_hour = per_hour;
        self.insights.rules.set_currency(currency);
    }

    /// The alert rules and their state (for their settings and the standing alerts' detail).
    pub fn rules(&self) -> &Rules {
        &self.insights.rules
    }

    /// Every standing alert, most severe first.
    pub fn alerts(&self) -> &[Alert] {
        self.insights.rules.alerts()
    }

    /// Dismisses an alert (see [`Rules::acknowledge`]).
    pub fn acknowledge(&mut self, id: &str, now_unix_ms: i64) -> bool {
        self.insights.rules.acknowledge(id, now_unix_ms)
    }

    /// Hides an alert until `until_unix_ms` (see [`Rules::snooze`]).
    pub fn snooze(&mut self, id: &str, until_unix_ms: i64, now_unix_ms: i64) -> bool {
        self.insights.rules.snooze(id, until_unix_ms, now_unix_ms)
    }

    /// Alert transitions since the last call, oldest first (for the notification channels).
    pub fn drain_alert_transitions(&mut self) -> Vec<Transition> {
        std::mem::take(&mut self.insights.transitions)
    }

    /// Where the autostop countdown stands after the latest tick.
    pub fn autostop(&self) -> AutostopStatus {
        self.insights.autostop.status()
    }

    /// The autostop settings the engine runs with.
    pub fn autostop_config(&self) -> &AutostopConfig {
        self.insights.autostop.config()
    }

    /// Someone is at the keyboard: the autostop countdown starts over.
    pub fn cancel_autostop(&mut self, now_unix_ms: i64) {
        if let Some(e) = self.insights.autostop.cancel(now_unix_ms) {
            self.insights.autostop_events.push(e);
        }
    }

    /// Autostop events since the last call, oldest first (warnings to announce, the stop to run).
    pub fn drain_autostop_events(&mut self) -> Vec<AutostopEvent> {
        std::mem::take(&mut self.insights.autostop_events)
    }
}
