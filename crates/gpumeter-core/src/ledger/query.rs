//! Reading the ledger back for `gpumeter report`: sums per UTC day and per session.

use rusqlite::params;

use super::{Ledger, LedgerError};

/// Sums over some minutes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Billing-clock ms (see [`MeterTotals::paid_ms`](crate::billing::MeterTotals::paid_ms)).
    pub paid_ms: i64,
    /// The part of the paid time gpumeter watched (readings came in).
    pub observed_ms: i64,
    /// GPU-ms: GPU count × observed ms.
    pub gpu_ms: i64,
    /// Busy GPU-ms (see [`gpu_busy`](crate::billing::meter::gpu_busy)).
    pub busy_gpu_ms: i64,
    /// Observed ms with no GPU busy, plus lost GPUs' share.
    pub idle_ms: i64,
    /// Money billed, micro-units of the row's currency.
    pub spend_micros: i64,
    /// The list rate over the idle time, micro-units of the row's currency; never above the spend.
    pub idle_cost_micros: i64,
    /// None when no GPU reported an energy counter.
    pub energy_mj: Option<i64>,
    /// Bytes sent out of the machine (non-loopback).
    pub egress_bytes: i64,
}

/// One UTC day in one currency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DayRow {
    /// Days since the epoch.
    pub day: i64,
    /// ISO code of the currency the amounts are in (`USD`).
    pub currency: String,
    /// Sums over the day's minutes.
    pub usage: Usage,
}

/// One session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRow {
    /// The session's row id in the ledger.
    pub id: i64,
    /// Host name the session ran on (`localhost` when unknown).
    pub host: String,
    /// The snapshot source label (`nvml`, `demo:idle`).
    pub source: String,
    /// ISO code of the currency the amounts are in (`USD`).
    pub currency: String,
    /// The prices, as text (see [`pricing_text`](super::session::pricing_text)).
    pub pricing: String,
    /// When the session's billing starts (its clock start, or where the host's previous session
    /// ended if later), ms since the Unix epoch.
    pub start_ms: i64,
    /// The session's last recorded tick, ms since the Unix epoch.
    pub last_ms: i64,
    /// Sums over the session's minutes.
    pub usage: Usage,
}

const SUMS: &str = "coalesce(sum(m.paid_ms),0), coalesce(sum(m.gpu_ms),0),
    coalesce(sum(m.busy_gpu_ms),0), coalesce(sum(m.idle_ms),0), coalesce(sum(m.spend_micros),0),
    coalesce(sum(m.idle_cost_micros),0), sum(m.energy_mj), coalesce(sum(m.egress_bytes),0),
    coalesce(sum(m.observed_ms),0)";

fn usage(row: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<Usage> {
    Ok(Usage {
        paid_ms: row.get(first)?,
        gpu_ms: row.get(first + 1)?,
        busy_gpu_ms: row.get(first + 2)?,
        idle_ms: row.get(first + 3)?,
        spend_micros: row.get(first + 4)?,
        idle_cost_micros: row.get(first + 5)?,
        energy_mj: row.get(first + 6)?,
        egress_bytes: row.get(first + 7)?,
        observed_ms: row.get(first + 8)?,
    })
}

impl Ledger {
    /// Per UTC day and currency, for minutes at or after `since_unix_ms`, oldest first.
    pub fn days_since(&self, since_unix_ms: i64) -> Result<Vec<DayRow>, LedgerError> {
        let sql = format!(
            "SELECT m.minute / 1440 AS day, s.currency, {SUMS}
             FROM minutes m JOIN sessions s ON s.id = m.session_id
             WHERE m.minute >= ?1
             GROUP BY day, s.currency ORDER BY day, s.currency"
        );
        let mut stmt = self.conn().prepare(&sql).map_err(|e| self.sql_error(e))?;
        stmt.query_map(params![since_unix_ms.div_euclid(60_000)], |r| {
            Ok(DayRow {
                day: r.get(0)?,
                currency: r.get(1)?,
                usage: usage(r, 2)?,
            })
        })
        .and_then(|rows| rows.collect())
        .map_err(|e| self.sql_error(e))
    }

    /// Sessions with minutes at or after `since_unix_ms` (their sums over those minutes).
    pub fn sessions_since(&self, since_unix_ms: i64) -> Result<Vec<SessionRow>, LedgerError> {
        let sql = format!(
            "SELECT s.id, s.host, s.source, s.currency, s.pricing, s.effective_start_ms,
                    s.last_ms, {SUMS}
             FROM minutes m JOIN sessions s ON s.id = m.session_id
             WHERE m.minute >= ?1
             GROUP BY s.id ORDER BY s.effective_start_ms, s.id"
        );
        let mut stmt = self.conn().prepare(&sql).map_err(|e| self.sql_error(e))?;
        stmt.query_map(params![since_unix_ms.div_euclid(60_000)], |r| {
            Ok(SessionRow {
                id: r.get(0)?,
                host: r.get(1)?,
                source: r.get(2)?,
                currency: r.get(3)?,
                pricing: r.get(4)?,
                start_ms: r.get(5)?,
                last_ms: r.get(6)?,
                usage: usage(r, 7)?,
            })
        })
        .and_then(|rows| rows.collect())
        .map_err(|e| self.sql_error(e))
    }

    /// The alert log since `since_unix_ms`, oldest first: (time, kind, message). Budget
    /// crossings read `budget_actual` / `budget_forecast`; rule alerts their kind (`xid` …).
    pub fn alert_log_since(
        &self,
        since_unix_ms: i64,
    ) -> Result<Vec<(i64, String, String)>, LedgerError> {
        let mut stmt = self
            .conn()
            .prepare("SELECT at_ms, kind, message FROM alerts WHERE at_ms >= ?1 ORDER BY at_ms, id")
            .map_err(|e| self.sql_error(e))?;
        stmt.query_map([since_unix_ms], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.sql_error(e))
    }

    /// All minutes of all sessions summed (tests and diagnostics).
    pub fn total_usage(&self) -> Result<Usage, LedgerError> {
        let sql = format!("SELECT {SUMS} FROM minutes m");
        self.conn()
            .query_row(&sql, [], |r| usage(r, 0))
            .map_err(|e| self.sql_error(e))
    }
}
