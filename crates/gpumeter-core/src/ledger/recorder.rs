//! Per-minute rollups: the recorder sums each tick into the open UTC minute and, when a tick
//! lands in a later minute, hands the finished minute to the writer thread ([`super::writer`]),
//! which writes it in one transaction (minute row, per-GPU rows, budget events, session end).
//! The tick never waits on the disk: a full channel keeps minutes in a bounded backlog here, a
//! failing write is retried by the writer, and both come back as notes. Money per minute is
//! the difference of the meter's exact running totals, so the minutes add up to the meter's
//! total to the micro-unit.
//!
//! Without a writable ledger the recorder still rolls minutes (the headless mode prints them)
//! but writes nothing.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use super::apportion::{DAY_MS, MINUTE_MS, Share, earlier_days};
use super::session::SessionStart;
use super::writer::{Handed, MinuteWrite, Waited, Writer};
use super::{Ledger, LedgerMode};
use crate::billing::{BudgetEvent, Meter, MeterTotals};

/// Minutes kept here while the writer's channel is full (a week); older ones are dropped.
const MAX_BACKLOG: usize = 7 * 1_440;
/// Longest a lock-step recorder waits for one minute to reach the disk.
const LOCKSTEP_WAIT: Duration = Duration::from_secs(10);

/// Ledger sums, cumulative over a session (all `i64` as SQLite stores them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Recorded {
    /// Billing-clock ms.
    pub paid_ms: i64,
    /// Observed ms: time covered by readings.
    pub observed_ms: i64,
    /// GPU-ms: GPU count × observed ms.
    pub gpu_ms: i64,
    /// Busy GPU-ms (see [`gpu_busy`](crate::billing::meter::gpu_busy)).
    pub busy_gpu_ms: i64,
    /// Observed ms with no GPU busy, plus lost GPUs' share.
    pub idle_ms: i64,
    /// Money billed, micro-units of the session's currency.
    pub spend_micros: i64,
    /// The list rate over the idle time, micro-units of the session's currency.
    pub idle_cost_micros: i64,
    /// GPU energy, millijoules (`0` when no GPU reports an energy counter).
    pub energy_mj: i64,
    /// Bytes sent out of the machine (non-loopback).
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
    /// Whether it was handed to the writer (it reaches the disk unless a note says otherwise).
    pub written: bool,
}

/// Rolls ticks into minutes and writes them. See the module docs.
#[derive(Debug)]
pub struct Recorder {
    writer: Option<Writer>,
    backlog: VecDeque<MinuteWrite>,
    notes: Vec<String>,
    /// Wait for each minute to reach the disk (simulated clocks only; see [`Recorder::lockstep`]).
    lockstep: bool,
    session_id: i64,
    flushed: Recorded,
    pending: Recorded,
    pending_at_ms: i64,
    minute: Option<i64>,
    gpus: BTreeMap<u32, GpuAcc>,
    events: Vec<BudgetEvent>,
    alerts: Vec<super::writer::AlertLog>,
    max_gpus: u32,
}

impl Recorder {
    /// A recorder for a session (`start` from [`Ledger::begin_session`]); `ledger` None or
    /// read-only records nothing. A writable one moves to its writer thread.
    pub fn new(ledger: Option<Ledger>, start: Option<&SessionStart>) -> Recorder {
        let flushed = start.map(|s| s.recorded).unwrap_or_default();
        let session_id = start.map_or(-1, |s| s.id);
        let mut notes = Vec::new();
        let writer = ledger
            .filter(|l| session_id >= 0 && l.mode() == LedgerMode::ReadWrite)
            .and_then(|l| match Writer::spawn(l) {
                Ok(w) => Some(w),
                Err(e) => {
                    notes.push(format!("running without a ledger: no writer thread: {e}"));
                    None
                }
            });
        Recorder {
            writer,
            backlog: VecDeque::new(),
            notes,
            lockstep: false,
            session_id,
            flushed,
            pending: flushed,
            pending_at_ms: 0,
            minute: None,
            gpus: BTreeMap::new(),
            events: Vec::new(),
            alerts: Vec::new(),
            max_gpus: 0,
        }
    }

    /// Whether minutes reach the disk.
    pub fn writes(&self) -> bool {
        self.writer.is_some()
    }

    /// Each closed minute waits (bounded) until it is on disk. For runs on a simulated clock
    /// (`watch --fast`), which would otherwise close minutes faster than any disk takes them;
    /// there a printed minute is a written minute, as a kill -9 test needs.
    pub fn lockstep(mut self, on: bool) -> Recorder {
        self.lockstep = on;
        self
    }

    /// Notes since the last call: write failures and recoveries, a backlog that overflowed.
    pub fn drain_notes(&mut self) -> Vec<String> {
        let mut notes = std::mem::take(&mut self.notes);
        if let Some(w) = &self.writer {
            notes.extend(w.drain_notes());
        }
        notes
    }

    /// After the engine ingested a tick: sums it (and its budget events) into its minute,
    /// closing the previous minute first when this tick lies in a later one. A tick whose
    /// time began in earlier minutes gives each of them its share (see `apportion`),
    /// so no minute holds more than 60 s of observed time; its energy and bytes stay with the
    /// minute it lands in. Returns the minute that was open.
    pub fn record(&mut self, meter: &Meter, events: &[BudgetEvent]) -> Option<FlushedMinute> {
        let tick = meter.last_tick();
        let totals = Recorded::from_totals(&meter.totals());
        let minute = tick.at_unix_ms.div_euclid(MINUTE_MS);
        let credited = tick.credited_ms.max(0);
        let from = tick.at_unix_ms - credited;
        let landing_start = minute * MINUTE_MS;
        let mut given = 0;
        let closed = match self.minute {
            Some(open) if open < minute && from < landing_start => {
                let mut delta = totals.shared_over(&self.pending);
                if delta.paid_ms != credited {
                    // Paid time that is not this tick's observed span (the clock start, a
                    // replayed clock) is not shared by it: the days get it below.
                    delta.paid_ms = 0;
                    delta.spend_micros = 0;
                    delta.idle_cost_micros = 0;
                }
                let share = Share {
                    base: self.pending,
                    delta,
                    credited,
                };
                // The open minute, then the minutes between (there only when the tick is
                // longer than a minute), each with its overlap of [from, landing_start).
                let mut closed = None;
                let first = from.div_euclid(MINUTE_MS).max(open);
                for m in std::iter::once(open).chain((first.max(open + 1))..minute) {
                    let (start, end) = (m * MINUTE_MS, (m + 1) * MINUTE_MS);
                    let piece = (end.min(landing_start) - from.max(start)).clamp(0, credited);
                    if m != open && piece == 0 {
                        continue;
                    }
                    self.minute = Some(m);
                    if piece > 0 {
                        given += piece;
                        self.pending = share.after(given);
                        self.pending_at_ms = end.min(landing_start);
                        self.add_gpu_time(&tick.gpus, piece);
                    }
                    let flushed = self.flush();
                    closed = closed.or(flushed);
                }
                closed
            }
            Some(open) if open != minute => self.flush(),
            _ => None,
        };
        if self.minute.is_none() {
            self.paid_in_earlier_days(&totals, tick.at_unix_ms);
        }
        self.minute = Some(minute);
        self.add_gpu_time(&tick.gpus, credited - given);
        for g in &tick.gpus {
            if let Some(e) = g.energy_mj {
                let e = i64::try_from(e).unwrap_or(i64::MAX);
                let acc = self.gpus.entry(g.index).or_default();
                acc.energy_mj = Some(acc.energy_mj.unwrap_or(0).saturating_add(e));
            }
        }
        self.max_gpus = self
            .max_gpus
            .max(u32::try_from(tick.gpus.len()).unwrap_or(0));
        self.events.extend_from_slice(events);
        self.pending = totals;
        self.pending_at_ms = tick.at_unix_ms;
        closed
    }

    /// The paid time a tick brought that lies in earlier UTC days (the time before the first
    /// reading since the clock start, a restart's gap, a tick across midnight), with its share
    /// of the spend and idle cost, goes to a row in each of those days, so a day never holds
    /// another day's time. Called with nothing of the tick's minute open: everything before
    /// the tick is flushed, so what the totals grew by since is this tick's.
    fn paid_in_earlier_days(&mut self, totals: &Recorded, at_ms: i64) {
        let base = self.flushed;
        let paid = totals.paid_ms.saturating_sub(base.paid_ms);
        let spend = totals.spend_micros.saturating_sub(base.spend_micros).max(0);
        let idle_cost = totals
            .idle_cost_micros
            .saturating_sub(base.idle_cost_micros)
            .max(0);
        let part = |v: i64, given: i64| {
            let x = i128::from(v) * i128::from(given) / i128::from(paid.max(1));
            i64::try_from(x).unwrap_or(v)
        };
        let mut given = 0;
        for (from, to) in earlier_days(at_ms - paid, at_ms.div_euclid(DAY_MS) * DAY_MS) {
            let before = given;
            given += to - from;
            let delta = Recorded {
                paid_ms: to - from,
                spend_micros: part(spend, given) - part(spend, before),
                idle_cost_micros: part(idle_cost, given) - part(idle_cost, before),
                ..Recorded::default()
            };
            if self.writes() {
                self.backlog.push_back(MinuteWrite {
                    session_id: self.session_id,
                    minute: from.div_euclid(MINUTE_MS),
                    delta,
                    at_ms: to,
                    gpus: Vec::new(),
                    events: Vec::new(),
                    alerts: Vec::new(),
                    max_gpus: self.max_gpus,
                });
                self.hand_over();
            }
            self.flushed.paid_ms += delta.paid_ms;
            self.flushed.spend_micros += delta.spend_micros;
            self.flushed.idle_cost_micros += delta.idle_cost_micros;
        }
    }

    /// `ms` of the tick's time for each GPU into the open minute.
    fn add_gpu_time(&mut self, gpus: &[crate::billing::GpuTick], ms: i64) {
        if ms <= 0 {
            return;
        }
        for g in gpus {
            let acc = self.gpus.entry(g.index).or_default();
            if g.busy {
                acc.busy_ms += ms;
            } else {
                acc.idle_ms += ms;
            }
            if let Some(u) = g.util_pct {
                acc.util_pct_ms += i64::from(u) * ms;
                acc.util_known_ms += ms;
            }
        }
    }

    /// Rule alerts to log with the open minute (the ledger's alert log).
    pub fn log_alerts(&mut self, alerts: impl IntoIterator<Item = super::writer::AlertLog>) {
        self.alerts.extend(alerts);
    }

    /// Closes the open minute now and hands it to the writer. `None` when nothing is open.
    pub fn flush(&mut self) -> Option<FlushedMinute> {
        let minute = self.minute?;
        let (delta, total) = self.pending.delta_over(&self.flushed);
        let written = self.writes();
        if written {
            let w = MinuteWrite {
                session_id: self.session_id,
                minute,
                delta,
                at_ms: self.pending_at_ms,
                gpus: self
                    .gpus
                    .iter()
                    .map(|(&i, g)| {
                        let e = g.energy_mj;
                        (i, g.busy_ms, g.idle_ms, g.util_pct_ms, g.util_known_ms, e)
                    })
                    .collect(),
                events: std::mem::take(&mut self.events),
                alerts: std::mem::take(&mut self.alerts),
                max_gpus: self.max_gpus,
            };
            self.backlog.push_back(w);
            self.hand_over();
        }
        self.flushed = total;
        self.minute = None;
        self.gpus.clear();
        self.events.clear();
        self.alerts.clear();
        Some(FlushedMinute {
            minute,
            delta,
            total,
            written,
        })
    }

    /// Moves the backlog into the writer's channel until it is full; never waits.
    fn hand_over(&mut self) {
        let Some(writer) = &mut self.writer else {
            return;
        };
        while let Some(w) = self.backlog.pop_front() {
            match writer.try_send(w) {
                Handed::Queued => {}
                Handed::Full(w) => {
                    self.backlog.push_front(w);
                    break;
                }
                Handed::Gone => {
                    self.notes.push(
                        "ledger: the writer thread stopped; minutes are no longer written".into(),
                    );
                    self.backlog.clear();
                    self.writer = None;
                    return;
                }
            }
        }
        if self.lockstep && writer.wait_written(LOCKSTEP_WAIT) == Waited::TimedOut {
            self.notes.push(format!(
                "ledger: a minute took over {} s to write",
                LOCKSTEP_WAIT.as_secs()
            ));
        }
        let excess = self.backlog.len().saturating_sub(MAX_BACKLOG);
        if excess > 0 {
            self.backlog.drain(..excess);
            self.notes.push(format!(
                "ledger: the disk is too slow; {excess} minute(s) dropped"
            ));
        }
    }

    /// As a `kill -9` leaves it: what was handed to the writer reaches the disk, the open
    /// minute is lost.
    #[cfg(test)]
    pub(crate) fn finish_without_open_minute(
        &mut self,
        wait: Duration,
    ) -> (Option<FlushedMinute>, Vec<String>) {
        self.minute = None;
        self.gpus.clear();
        self.finish(wait)
    }

    /// At exit: closes the open minute, then waits (`wait` at most) for the writer to put
    /// everything on disk. Returns the last minute and the notes.
    pub fn finish(&mut self, wait: Duration) -> (Option<FlushedMinute>, Vec<String>) {
        let last = self.flush();
        let mut notes = self.drain_notes();
        if let Some(mut w) = self.writer.take() {
            let rest: Vec<MinuteWrite> = self.backlog.drain(..).collect();
            notes.extend(w.finish(rest, wait));
        }
        (last, notes)
    }
}
