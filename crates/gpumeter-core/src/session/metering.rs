//! One billing session beside a running [`Engine`]: the meter made from the [`Pricing`], the
//! ledger opened at the first reading (its time and clock start identify the session), the
//! meter seeded from what the ledger already holds, each tick rolled into its minute after the
//! engine ingested it (with the rule alerts that fired, for the ledger's alert log), and the
//! open minute written at the end. Part of the session core
//! ([`super::Session`] owns one); the demo test fixtures use it alone.
//!
//! Never fails: a ledger that cannot be opened or written becomes a note, and the meter runs on
//! without it. The ledger is opened once, at the first reading; after that, minutes go to the
//! ledger's writer thread and a tick never waits on the disk. Touches the engine (to attach
//! the meter) and the ledger; nothing else.

use std::path::PathBuf;

use gpumeter_model::Snapshot;

use crate::billing::{BudgetEvent, Meter, MeterConfig, Pricing};
use crate::engine::Engine;
use crate::engine::rules::{AlertKind, Transition};
use crate::ledger::session::{clock_start_slack, pricing_text};
use crate::ledger::writer::{AlertLog, FINISH_WAIT};
use crate::ledger::{FlushedMinute, Ledger, Recorder, SessionKey};

/// What one step of the session produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MeterStep {
    /// Lines worth telling the user (ledger notes, a resumed session, write failures), in order.
    pub notes: Vec<String>,
    /// Budget crossings of this tick, oldest first.
    pub events: Vec<BudgetEvent>,
    /// The minute this step closed, if any.
    pub flushed: Option<FlushedMinute>,
}

/// The billing session. See the module docs.
#[derive(Debug)]
pub struct Metering {
    pricing: Option<Pricing>,
    ledger_path: Option<PathBuf>,
    interval_ms: i64,
    recorder: Option<Recorder>,
    started: bool,
    /// Wait for each minute to reach the disk (a simulated clock: `watch --fast`).
    lockstep: bool,
}

impl Metering {
    /// A session for `pricing` (None: nothing is metered) writing `ledger_path` (None: no
    /// ledger). `interval_ms` is the sampling interval; a gap over ten of them is not billed
    /// as observed time.
    pub fn new(pricing: Option<Pricing>, ledger_path: Option<PathBuf>, interval_ms: i64) -> Self {
        Metering {
            pricing,
            ledger_path,
            interval_ms: interval_ms.max(1),
            recorder: None,
            started: false,
            lockstep: false,
        }
    }

    /// Each minute waits until it is on disk: for a simulated clock, which would otherwise
    /// close minutes faster than a disk takes them (see [`Recorder::lockstep`]).
    pub fn lockstep(mut self, on: bool) -> Self {
        self.lockstep = on;
        self
    }

    /// Whether pricing is configured (money will be shown).
    pub fn priced(&self) -> bool {
        self.pricing.is_some()
    }

    /// Whether minutes reach the disk.
    pub fn writes_ledger(&self) -> bool {
        self.recorder.as_ref().is_some_and(Recorder::writes)
    }

    /// Before the first reading is ingested: fixes the clock start, opens the ledger, begins
    /// (or resumes) the session and attaches the seeded meter to `engine`. Later calls do
    /// nothing. Returns the notes.
    pub fn start(&mut self, engine: &mut Engine, snap: &Snapshot) -> Vec<String> {
        if std::mem::replace(&mut self.started, true) {
            return Vec::new();
        }
        let Some(pricing) = &self.pricing else {
            return Vec::new();
        };
        let mut notes = Vec::new();
        let mut meter = Meter::new(MeterConfig {
            pricing: pricing.clone(),
            tick_cap_ms: self.interval_ms.saturating_mul(10),
        });
        let now = snap.taken_at_unix_ms;
        let mut ledger = None;
        if let Some(path) = &self.ledger_path {
            match Ledger::open(path, now) {
                Ok((l, opened)) => {
                    notes.extend(opened);
                    ledger = Some(l);
                }
                Err(e) => notes.push(format!("running without a ledger: {e}")),
            }
        }
        let key = SessionKey {
            host: snap
                .system
                .hostname
                .clone()
                .unwrap_or_else(|| "localhost".into()),
            source: snap.source.clone(),
            clock_start_ms: meter.resolve_start(snap, now),
            clock_start_slack_ms: clock_start_slack(pricing),
            pricing: pricing_text(pricing),
            currency: pricing.currency.code().to_string(),
        };
        let start = match ledger.as_mut().map(|l| l.begin_session(&key, now)) {
            Some(Ok(s)) => Some(s),
            Some(Err(e)) => {
                notes.push(format!("running without a ledger: {e}"));
                ledger = None;
                None
            }
            None => None,
        };
        if let Some(s) = &start {
            meter.seed(&s.seed);
            if s.resumed {
                notes.push(format!("resuming billing session {} from the ledger", s.id));
            }
        }
        self.recorder = Some(Recorder::new(ledger, start.as_ref()).lockstep(self.lockstep));
        *engine = std::mem::take(engine).with_meter(meter);
        notes
    }

    /// After `engine` ingested a reading: takes its budget events and rolls the tick into its
    /// minute (writing the previous minute when this one is later).
    pub fn after_ingest(&mut self, engine: &mut Engine) -> MeterStep {
        let events = engine.drain_budget_events();
        let mut step = MeterStep::default();
        if let (Some(rec), Some(meter)) = (&mut self.recorder, engine.meter()) {
            step.flushed = rec.record(meter, &events);
            step.notes = rec.drain_notes();
        }
        step.events = events;
        step
    }

    /// Rule alerts that fired (or reminded: an XID seen again) go to the ledger's alert log
    /// with the open minute; budget crossings are logged already, with their figures.
    pub fn log_alerts(&mut self, transitions: &[Transition], now_unix_ms: i64) {
        let Some(rec) = &mut self.recorder else {
            return;
        };
        rec.log_alerts(
            transitions
                .iter()
                .filter(|t| matches!(t, Transition::Fired(_) | Transition::Reminded(_)))
                .map(Transition::alert)
                .filter(|a| a.kind != AlertKind::Budget)
                .map(|a| AlertLog {
                    at_unix_ms: now_unix_ms,
                    kind: a.kind.name().to_string(),
                    message: a.title.clone(),
                }),
        );
    }

    /// One reading through the session and the engine: [`Metering::start`] on the first,
    /// then `engine.ingest`, then [`Metering::after_ingest`].
    pub fn ingest(&mut self, engine: &mut Engine, snap: Snapshot) -> MeterStep {
        let notes = self.start(engine, &snap);
        engine.ingest(snap);
        let mut step = self.after_ingest(engine);
        step.notes.splice(0..0, notes);
        step
    }

    /// Writes the open minute and waits, [`FINISH_WAIT`] at most, for the writer thread to
    /// put everything on disk (at exit; harmless to call twice).
    pub fn finish(&mut self) -> MeterStep {
        let mut step = MeterStep::default();
        if let Some(rec) = self.recorder.as_mut() {
            (step.flushed, step.notes) = rec.finish(FINISH_WAIT);
        }
        step
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::billing::{Budget, ClockStart, Rate};
    use crate::money::Money;
    use gpumeter_model::testing::SnapshotBuilder;

    /// A minute boundary (2027-01-15T08:00:00Z).
    const T0: i64 = 1_800_000_000_000;

    fn pricing() -> Pricing {
        let mut p = Pricing::simple(Rate::parse("36/h").unwrap());
        p.clock_start = ClockStart::At(T0);
        p.budget = Some(Budget::parse("1/run").unwrap());
        p
    }

    fn snap(t: i64) -> Snapshot {
        SnapshotBuilder::new("demo:test", t).hostname("box").build()
    }

    /// Ticks one second apart from `t0` for `secs` seconds.
    fn run(m: &mut Metering, e: &mut Engine, t0: i64, secs: i64) -> Vec<MeterStep> {
        (0..=secs)
            .map(|k| m.ingest(e, snap(t0 + k * 1_000)))
            .collect()
    }

    #[test]
    fn without_pricing_nothing_is_metered() {
        let mut m = Metering::new(None, None, 1_000);
        let mut e = Engine::new();
        let steps = run(&mut m, &mut e, 60_000_000, 5);
        assert!(e.billing().is_none() && !m.priced());
        assert!(steps.iter().all(|s| *s == MeterStep::default()));
        assert_eq!(m.finish(), MeterStep::default());
    }

    #[test]
    fn minutes_are_written_and_a_restart_resumes_the_session() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.sqlite");
        let t0 = T0;
        let mut m = Metering::new(Some(pricing()), Some(path.clone()), 1_000);
        let mut e = Engine::new();
        let steps = run(&mut m, &mut e, t0, 90);
        assert!(m.writes_ledger());
        assert!(steps[0].notes.is_empty(), "{:?}", steps[0].notes);
        let closed: Vec<_> = steps.iter().filter_map(|s| s.flushed.clone()).collect();
        assert_eq!(closed.len(), 1);
        assert!(closed[0].written);
        // $36/h for 90 s = $0.90; 50 % and 80 % of the $1 run budget crossed on the way.
        let thresholds: Vec<u8> = steps
            .iter()
            .flat_map(|s| &s.events)
            .map(|e| e.threshold)
            .collect();
        assert_eq!(thresholds, vec![50, 80]);
        let last = m.finish().flushed.unwrap();
        assert_eq!(last.total.spend_micros, 900_000);
        drop(m);

        // Same host, source, clock start and prices: the session resumes from 90 s.
        let mut m = Metering::new(Some(pricing()), Some(path), 1_000);
        let mut e = Engine::new();
        let mut first = snap(t0);
        first.taken_at_unix_ms = t0 + 91_000;
        let step = m.ingest(&mut e, first);
        assert!(
            step.notes
                .iter()
                .any(|n| n.contains("resuming billing session")),
            "{:?}",
            step.notes
        );
        assert!(e.billing().unwrap().spent >= Money::parse("0.90").unwrap());
    }

    #[test]
    fn a_second_instance_reads_only_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.sqlite");
        let mut writer = Metering::new(Some(pricing()), Some(path.clone()), 1_000);
        let mut e1 = Engine::new();
        writer.ingest(&mut e1, snap(T0));
        let mut reader = Metering::new(Some(pricing()), Some(path), 1_000);
        let mut e2 = Engine::new();
        let step = reader.ingest(&mut e2, snap(T0));
        assert!(
            step.notes.iter().any(|n| n.contains("reads it only")),
            "{:?}",
            step.notes
        );
        assert!(!reader.writes_ledger());
        // The meter still runs: the screen shows money.
        assert!(e2.billing().is_some());
    }

    #[test]
    fn an_unusable_ledger_path_is_a_note_and_the_meter_runs_on() {
        let dir = tempfile::tempdir().unwrap();
        // A directory where the file should be: it cannot be opened as a ledger.
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, b"x").unwrap();
        let path = blocker.join("ledger.sqlite");
        let mut m = Metering::new(Some(pricing()), Some(path), 1_000);
        let mut e = Engine::new();
        let steps = run(&mut m, &mut e, T0, 3);
        assert!(
            steps[0]
                .notes
                .iter()
                .any(|n| n.starts_with("running without a ledger")),
            "{:?}",
            steps[0].notes
        );
        assert!(!m.writes_ledger());
        assert_eq!(e.billing().unwrap().spent, Money::parse("0.03").unwrap());
    }
}
