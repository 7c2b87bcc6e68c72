//! Per-minute rollups: the recorder sums each tick into the open UTC minute and, when a tick
//! lands in a later minute, writes the finished minute in one transaction (minute row, per-GPU
//! rows, budget events, session end). Money per minute is the difference of the meter's exact
//! running totals, so the minutes add up to the meter's total to the micro-unit.
//!
//! Without a writable ledger the recorder still rolls minutes (the headless mode prints them)
//! but writes nothing.

use std::collections::BTreeMap;

use rusqlite::params;

use super::session::SessionStart;
use super::{Ledger, LedgerError, LedgerMode};
use crate::billing::{BudgetEvent, Meter, MeterTotals};

/// Ledger sums, cumulative over a session (all `i64` as SQLite stores them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Recorded {
    pub paid_ms: i64,
    pub observed_ms: i64,
    pub gpu_ms: i64,
    pub busy_gpu_ms: i64,
    pub idle_ms: i64,
    pub spend_micros: i64,
    pub idle_cost_micros: i64,
    pub energy_mj: i64,
    pub egress_bytes: i64,
}

impl Recorded {
    fn from_totals(t: &MeterTotals) -> Recorded {
        let i = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        Recorded {
            paid_ms: t.paid_ms,
            observed_ms: t.observed_ms,
            gpu_ms: t.gpu_ms,
            busy_gpu_ms: t.busy_gpu_ms,
            idle_ms: t.idle_ms,
            spend_micros: t.spent.micros(),
            idle_cost_micros: t.idle_cost.micros(),
            energy_mj: i(t.energy_mj),
            egress_bytes: i(t.egress_bytes),
        }
    }

    /// Field by field: `(self − base).max(0)`, and the new base `max(self, base)`. A total that
    /// went down (clock trouble) writes nothing rather than a negative minute.
    fn delta_over(&self, base: &Recorded) -> (Recorded, Recorded) {
        let mut d = Recorded::default();
        let mut b = *base;
        let pairs = [
            (&mut d.paid_ms, &mut b.paid_ms, self.paid_ms),
            (&mut d.observed_ms, &mut b.observed_ms, self.observed_ms),
            (&mut d.gpu_ms, &mut b.gpu_ms, self.gpu_ms),
            (&mut d.busy_gpu_ms, &mut b.busy_gpu_ms, self.busy_gpu_ms),
            (&mut d.idle_ms, &mut b.idle_ms, self.idle_ms),
            (&mut d.spend_micros, &mut b.spend_micros, self.spend_micros),
            (
                &mut d.idle_cost_micros,
                &mut b.idle_cost_micros,
                self.idle_cost_micros,
            ),
            (&mut d.energy_mj, &mut b.energy_mj, self.energy_mj),
            (&mut d.egress_bytes, &mut b.egress_bytes, self.egress_bytes),
        ];
        for (delta, base, now) in pairs {
            *delta = now.saturating_sub(*base).max(0);
            *base = (*base).max(now);
        }
        (d, b)
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct GpuAcc {
    busy_ms: i64,
    idle_ms: i64,
    util_pct_ms: i64,
    util_known_ms: i64,
    energy_mj: Option<i64>,
}

/// A minute that was closed (and written, when the ledger is writable).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlushedMinute {
    /// Minutes since the epoch (UTC).
    pub minute: i64,
    /// This minute's own sums.
    pub delta: Recorded,
    /// The session's sums in the ledger after it.
    pub total: Recorded,
    /// Whether it went to disk.
    pub written: bool,
}

/// Rolls ticks into minutes and writes them. See the module docs.
#[derive(Debug)]
pub struct Recorder {
    ledger: Option<Ledger>,
    session_id: i64,
    flushed: Recorded,
    pending: Recorded,
    pending_at_ms: i64,
    minute: Option<i64>,
    gpus: BTreeMap<u32, GpuAcc>,
    events: Vec<BudgetEvent>,
    max_gpus: u32,
}

impl Recorder {
    /// A recorder for a session (`start` from [`Ledger::begin_session`]); `ledger` None or
    /// read-only records nothing.
    pub fn new(ledger: Option<Ledger>, start: Option<&SessionStart>) -> Recorder {
        let flushed = start.map(|s| s.recorded).unwrap_or_default();
        Recorder {
            ledger,
            session_id: start.map_or(-1, |s| s.id),
            flushed,
            pending: flushed,
            pending_at_ms: 0,
            minute: None,
            gpus: BTreeMap::new(),
            events: Vec::new(),
            max_gpus: 0,
        }
    }

    /// Whether minutes reach the disk.
    pub fn writes(&self) -> bool {
        self.session_id >= 0
            && self
                .ledger
                .as_ref()
                .is_some_and(|l| l.mode() == LedgerMode::ReadWrite)
    }

    pub fn ledger(&self) -> Option<&Ledger> {
        self.ledger.as_ref()
    }

    /// After the engine ingested a tick: sums it (and its budget events) into its minute,
    /// closing the previous minute first when this tick lies in a later one.
    pub fn record(
        &mut self,
        meter: &Meter,
        events: &[BudgetEvent],
    ) -> Result<Option<FlushedMinute>, LedgerError> {
        let tick = meter.last_tick();
        let minute = tick.at_unix_ms.div_euclid(60_000);
        let closed = match self.minute {
            Some(open) if open != minute => self.flush()?,
            _ => None,
        };
        self.minute = Some(minute);
        for g in &tick.gpus {
            let acc = self.gpus.entry(g.index).or_default();
            let ms = tick.credited_ms;
            if g.busy {
                acc.busy_ms += ms;
            } else {
                acc.idle_ms += ms;
            }
            if let Some(u) = g.util_pct {
                acc.util_pct_ms += i64::from(u) * ms;
                acc.util_known_ms += ms;
            }
            if let Some(e) = g.energy_mj {
                let e = i64::try_from(e).unwrap_or(i64::MAX);
                acc.energy_mj = Some(acc.energy_mj.unwrap_or(0).saturating_add(e));
            }
        }
        self.max_gpus = self
            .max_gpus
            .max(u32::try_from(tick.gpus.len()).unwrap_or(0));
        self.events.extend_from_slice(events);
        self.pending = Recorded::from_totals(&meter.totals());
        self.pending_at_ms = tick.at_unix_ms;
        Ok(closed)
    }

    /// Closes the open minute now (also at exit). `None` when nothing is open.
    pub fn flush(&mut self) -> Result<Option<FlushedMinute>, LedgerError> {
        let Some(minute) = self.minute else {
            return Ok(None);
        };
        let (delta, total) = self.pending.delta_over(&self.flushed);
        let written = self.writes();
        if written {
            self.write(minute, &delta)?;
        }
        self.flushed = total;
        self.minute = None;
        self.gpus.clear();
        self.events.clear();
        Ok(Some(FlushedMinute {
            minute,
            delta,
            total,
            written,
        }))
    }

    fn write(&mut self, minute: i64, d: &Recorded) -> Result<(), LedgerError> {
        let Some(ledger) = self.ledger.as_mut() else {
            return Ok(());
        };
        let (session, at, gpus, events) = (
            self.session_id,
            self.pending_at_ms,
            &self.gpus,
            &self.events,
        );
        let energy = gpus
            .values()
            .filter_map(|g| g.energy_mj)
            .reduce(i64::saturating_add);
        let max_gpus = self.max_gpus;
        let result = (|| -> rusqlite::Result<()> {
            let conn = ledger
                .conn_mut()
                .map_err(|_| rusqlite::Error::InvalidQuery)?;
            let tx = conn.transaction()?;
            tx.execute(
                "INSERT INTO minutes (session_id, minute, paid_ms, observed_ms, gpu_ms,
                     busy_gpu_ms, idle_ms, spend_micros, idle_cost_micros, energy_mj, egress_bytes)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
                 ON CONFLICT (session_id, minute) DO UPDATE SET
                     paid_ms = paid_ms + excluded.paid_ms,
                     observed_ms = observed_ms + excluded.observed_ms,
                     gpu_ms = gpu_ms + excluded.gpu_ms,
                     busy_gpu_ms = busy_gpu_ms + excluded.busy_gpu_ms,
                     idle_ms = idle_ms + excluded.idle_ms,
                     spend_micros = spend_micros + excluded.spend_micros,
                     idle_cost_micros = idle_cost_micros + excluded.idle_cost_micros,
                     energy_mj = CASE WHEN excluded.energy_mj IS NULL THEN energy_mj
                                 ELSE coalesce(energy_mj, 0) + excluded.energy_mj END,
                     egress_bytes = egress_bytes + excluded.egress_bytes",
                params![
                    session,
                    minute,
                    d.paid_ms,
                    d.observed_ms,
                    d.gpu_ms,
                    d.busy_gpu_ms,
                    d.idle_ms,
                    d.spend_micros,
                    d.idle_cost_micros,
                    energy,
                    d.egress_bytes
                ],
            )?;
            for (gpu, g) in gpus {
                tx.execute(
                    "INSERT INTO gpu_minutes (session_id, minute, gpu, busy_ms, idle_ms,
                         util_pct_ms, util_known_ms, energy_mj)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                     ON CONFLICT (session_id, minute, gpu) DO UPDATE SET
                         busy_ms = busy_ms + excluded.busy_ms,
                         idle_ms = idle_ms + excluded.idle_ms,
                         util_pct_ms = util_pct_ms + excluded.util_pct_ms,
                         util_known_ms = util_known_ms + excluded.util_known_ms,
                         energy_mj = CASE WHEN excluded.energy_mj IS NULL THEN energy_mj
                                     ELSE coalesce(energy_mj, 0) + excluded.energy_mj END",
                    params![
                        session,
                        minute,
                        gpu,
                        g.busy_ms,
                        g.idle_ms,
                        g.util_pct_ms,
                        g.util_known_ms,
                        g.energy_mj
                    ],
                )?;
            }
            for e in events {
                tx.execute(
                    "INSERT INTO alerts (session_id, at_ms, kind, threshold_pct, period_key,
                         spent_micros, budget_micros, message)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                    params![
                        session,
                        e.at_unix_ms,
                        format!("budget_{}", e.kind.name()),
                        e.threshold,
                        e.period_key,
                        e.spent.micros(),
                        e.budget.micros(),
                        format!(
                            "{} {}% of the {} budget",
                            e.kind.name(),
                            e.threshold,
                            e.period
                        )
                    ],
                )?;
            }
            tx.execute(
                "UPDATE sessions SET last_ms = max(last_ms, ?2), max_gpus = max(max_gpus, ?3)
                 WHERE id = ?1",
                params![session, at, max_gpus],
            )?;
            tx.commit()
        })();
        result.map_err(|e| ledger.sql_error(e))
    }
}
