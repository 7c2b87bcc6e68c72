//! Derived state, one tick at a time: the latest snapshot, the metric history, the health of
//! the source, the billing meter (when priced) and the insights (alert rules and autostop, in
//! `insights.rs`), whose transitions and events wait in bounded queues for the session core
//! (`src/session/`) to fan out. No terminal code and no wall clock here: time is the
//! snapshot's, or "now" passed in from a [`crate::clock::Clock`]. Imports neither the CLI, the
//! config, the channels nor any front-end.

pub mod autostop;
pub mod history;
mod insights;
pub mod process_history;
pub mod rules;
pub mod series;

use gpumeter_model::Snapshot;

use crate::billing::{BillingView, BudgetEvent, Meter};

pub use history::{GpuHistory, History};
pub use process_history::{ProcessGpuHistory, ProcessKey};

/// How the source is doing, as the header shows it.
#[derive(Debug, Clone, PartialEq)]
pub enum SourceHealth {
    /// No reading yet.
    Starting,
    /// Readings arrive.
    Ok,
    /// The whole source failed; the collector retries after `retry_in_ms`.
    Failing {
        /// What failed, in words (the source's error).
        message: String,
        /// When the failure began, ms since the Unix epoch (the first failure of this run of
        /// failures).
        since_unix_ms: i64,
        /// Delay until the collector's next try, ms.
        retry_in_ms: u64,
    },
}

/// The one owner of derived state. The UI and exporters only borrow it.
#[derive(Debug, Clone)]
pub struct Engine {
    latest: Option<Snapshot>,
    history: History,
    health: SourceHealth,
    ticks: u64,
    insights: insights::Insights,
    /// The billing meter, when pricing is configured; fed by every `ingest`.
    meter: Option<Meter>,
    billing: Option<BillingView>,
    /// Budget crossings not yet taken by [`Engine::drain_budget_events`] (bounded).
    budget_events: Vec<BudgetEvent>,
    /// When the first reading was taken (the rules' windows count from it).
    first_reading_ms: Option<i64>,
}

/// Undrained budget events kept at most (oldest dropped): nobody may be listening.
const MAX_PENDING_BUDGET_EVENTS: usize = 64;

impl Default for Engine {
    fn default() -> Self {
        Self::new()
    }
}

impl Engine {
    /// An engine with no reading yet, no pricing and default rules (autostop off).
    pub fn new() -> Self {
        Self {
            latest: None,
            history: History::default(),
            health: SourceHealth::Starting,
            ticks: 0,
            insights: insights::Insights::default(),
            meter: None,
            billing: None,
            budget_events: Vec::new(),
            first_reading_ms: None,
        }
    }

    /// An engine that also runs the billing meter.
    pub fn with_meter(mut self, meter: Meter) -> Self {
        self.meter = Some(meter);
        self
    }

    /// One tick: a new snapshot in.
    pub fn ingest(&mut self, snap: Snapshot) {
        if let Some(meter) = &mut self.meter {
            let events = meter.observe(&snap, snap.taken_at_unix_ms);
            self.insights.budget_alerts(&events, meter.view().currency);
            self.budget_events.extend(events);
            let excess = self
                .budget_events
                .len()
                .saturating_sub(MAX_PENDING_BUDGET_EVENTS);
            self.budget_events.drain(..excess);
            self.billing = Some(meter.view());
        }
        self.first_reading_ms.get_or_insert(snap.taken_at_unix_ms);
        self.history.record(&snap);
        if let (Some(view), Some(meter)) = (&self.billing, &self.meter) {
            self.insights.billing_rate(
                view.burn_per_hour,
                view.list_per_gpu_hour,
                view.spent,
                view.currency,
                meter.pricing().extras_per_hour,
                meter.pricing().stopped_storage.clone(),
            );
        }
        self.insights.observe(&snap);
        self.latest = Some(snap);
        self.health = SourceHealth::Ok;
        self.ticks += 1;
    }

    /// The source failed as a whole; the last good snapshot stays on screen.
    pub fn source_failed(&mut self, message: String, now_unix_ms: i64, retry_in_ms: u64) {
        let since = match &self.health {
            SourceHealth::Failing { since_unix_ms, .. } => *since_unix_ms,
            _ => now_unix_ms,
        };
        self.health = SourceHealth::Failing {
            message,
            since_unix_ms: since,
            retry_in_ms,
        };
    }

    /// The last snapshot ingested (`None`: no reading yet); it stays after the source fails.
    pub fn latest(&self) -> Option<&Snapshot> {
        self.latest.as_ref()
    }

    /// The metric histories the charts draw.
    pub fn history(&self) -> &History {
        &self.history
    }

    /// How the source is doing (starting, ok, failing).
    pub fn health(&self) -> &SourceHealth {
        &self.health
    }

    /// The spend summary after the latest tick (None without pricing or before a reading).
    pub fn billing(&self) -> Option<&BillingView> {
        self.billing.as_ref()
    }

    /// The billing meter, when pricing is configured (`None`: unpriced).
    pub fn meter(&self) -> Option<&Meter> {
        self.meter.as_ref()
    }

    /// Budget crossings since the last call, oldest first.
    pub fn drain_budget_events(&mut self) -> Vec<BudgetEvent> {
        std::mem::take(&mut self.budget_events)
    }

    /// Snapshots ingested so far.
    pub fn ticks(&self) -> u64 {
        self.ticks
    }

    /// The rules still filling their windows, on the readings' clock (so a replay counts its
    /// own time); `None` before the first reading and once all can judge.
    pub fn judging(&self) -> Option<rules::judging::Judging> {
        let first = self.first_reading_ms?;
        let now = self.latest.as_ref()?.taken_at_unix_ms;
        rules::judging::judging(self.rules().config(), (now - first).max(0))
    }

    /// Age of the latest snapshot at `now_unix_ms`.
    pub fn sample_age_ms(&self, now_unix_ms: i64) -> Option<i64> {
        self.latest
            .as_ref()
            .map(|s| (now_unix_ms - s.taken_at_unix_ms).max(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_keeps_last_snapshot_and_first_failure_time() {
        let mut e = Engine::new();
        e.ingest(Snapshot::empty("t", 1_000));
        e.source_failed("boom".into(), 2_000, 500);
        e.source_failed("boom again".into(), 3_000, 1_000);
        assert!(e.latest().is_some());
        assert_eq!(
            e.health(),
            &SourceHealth::Failing {
                message: "boom again".into(),
                since_unix_ms: 2_000,
                retry_in_ms: 1_000
            }
        );
        e.ingest(Snapshot::empty("t", 4_000));
        assert_eq!(e.health(), &SourceHealth::Ok);
        assert_eq!(e.sample_age_ms(4_500), Some(500));
        assert!(e.billing().is_none());
    }

    #[test]
    fn the_meter_runs_on_snapshot_time_and_its_events_drain_once() {
        use crate::billing::{Budget, ClockStart, MeterConfig, Pricing, Rate};
        let mut pricing = Pricing::simple(Rate::parse("36/h").unwrap());
        pricing.clock_start = ClockStart::FirstSample;
        pricing.budget = Some(Budget::parse("0.10/run").unwrap());
        let meter = Meter::new(MeterConfig {
            pricing,
            tick_cap_ms: 10_000,
        });
        let mut e = Engine::new().with_meter(meter);
        for t in 0..=10 {
            e.ingest(Snapshot::empty("t", 1_000_000 + t * 1_000));
        }
        let view = e.billing().unwrap();
        assert_eq!(view.spent.micros(), 100_000);
        assert_eq!(view.at_unix_ms, 1_010_000);
        let thresholds: Vec<u8> = e
            .drain_budget_events()
            .iter()
            .map(|b| b.threshold)
            .collect();
        assert_eq!(thresholds, vec![50, 80, 100]);
        assert!(e.drain_budget_events().is_empty());
    }

    #[test]
    fn the_priced_extras_reach_the_advice_to_stop_the_box() {
        use crate::billing::{ClockStart, MeterConfig, Pricing, Rate};
        use crate::money::Money;
        let mut pricing = Pricing::simple(Rate::parse("8/h").unwrap());
        pricing.clock_start = ClockStart::FirstSample;
        pricing.extras_per_hour = Money::from_micros(400_000);
        let meter = Meter::new(MeterConfig {
            pricing,
            tick_cap_ms: 10_000,
        });
        let mut e = Engine::new().with_meter(meter);
        // One idle GPU for 11 minutes on a box up for a day.
        for t in 0..=660 {
            let mut s = Snapshot::empty("t", 1_000_000 + t * 1_000);
            s.system.uptime_s = Some(86_400);
            s.gpus.push(gpumeter_model::GpuReading {
                util_gpu_pct: Some(0),
                ..Default::default()
            });
            e.ingest(s);
        }
        let idle = e
            .rules()
            .alerts()
            .iter()
            .find(|a| a.id == "idle")
            .cloned()
            .expect("idle fired");
        let step = idle.next_step.unwrap_or_default();
        // The burn is $8.40/h: the rate and the extras; stopping saves the $8.00.
        assert!(
            step.contains("that saves $8.00/h, while its $0.40/h of storage and addresses"),
            "{step}"
        );
    }

    #[test]
    fn a_budget_crossing_suggests_autostop_only_where_the_gpus_are_idle() {
        use crate::billing::{Budget, ClockStart, MeterConfig, Pricing, Rate};
        let step = |util: u32| {
            let mut pricing = Pricing::simple(Rate::parse("36/h").unwrap());
            pricing.clock_start = ClockStart::FirstSample;
            pricing.budget = Some(Budget::parse("0.10/run").unwrap());
            let meter = Meter::new(MeterConfig {
                pricing,
                tick_cap_ms: 10_000,
            });
            let mut e = Engine::new().with_meter(meter);
            for t in 0..=10 {
                let mut s = Snapshot::empty("t", 1_000_000 + t * 1_000);
                s.gpus.push(gpumeter_model::GpuReading {
                    util_gpu_pct: Some(util),
                    ..Default::default()
                });
                e.ingest(s);
            }
            e.rules()
                .alerts()
                .iter()
                .find(|a| a.kind == crate::engine::rules::AlertKind::Budget)
                .and_then(|a| a.next_step.clone())
                .expect("a budget alert")
        };
        assert!(
            step(0).starts_with("The GPUs are idle: stop the machine"),
            "{}",
            step(0)
        );
        let working = step(95);
        assert!(working.starts_with("The GPUs are working"), "{working}");
        assert!(!working.contains("autostop"), "{working}");
    }
}
