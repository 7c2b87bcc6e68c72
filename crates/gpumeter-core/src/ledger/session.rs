//! Sessions: one continuous billing clock on one host and source with one set of prices. A
//! restart with the same clock start (within [`SessionKey::clock_start_slack_ms`]: the boot
//! time `/proc/stat` gives can move by a second) resumes the latest session there and seeds the
//! meter from its totals, observing nothing it already wrote; anything else starts a new session
//! whose clock begins where the host's last one ended, so no time is billed twice.

use rusqlite::{OptionalExtension, params};

use super::{Ledger, LedgerError};
use crate::billing::{BudgetEventKind, ClockStart, MeterSeed, Pricing};

/// What identifies a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionKey {
    /// The host name from the snapshot (`localhost` when it is unknown).
    pub host: String,
    /// The snapshot source label (`nvml`, `demo:idle`).
    pub source: String,
    /// The billing clock's start, ms since the epoch.
    pub clock_start_ms: i64,
    /// How far an earlier session's clock start may be from this one and still be this run
    /// (see [`CLOCK_START_SLACK_BOOT_MS`]); 0 for a start given exactly.
    pub clock_start_slack_ms: i64,
    /// The prices, as text (see [`pricing_text`]).
    pub pricing: String,
    /// ISO code of the pricing currency (`USD`).
    pub currency: String,
}

/// The slack for a clock started at boot: `/proc/stat`'s `btime` is the wall clock minus the
/// uptime, so it moves when the wall clock is stepped (a second or so under NTP). Two boots of
/// one host are further apart than this by far: the earlier session ran between them.
pub const CLOCK_START_SLACK_BOOT_MS: i64 = 60_000;

/// [`SessionKey::clock_start_slack_ms`] for `p`'s clock start.
pub fn clock_start_slack(p: &Pricing) -> i64 {
    match p.clock_start {
        ClockStart::Boot => CLOCK_START_SLACK_BOOT_MS,
        ClockStart::At(_) | ClockStart::Container | ClockStart::FirstSample => 0,
    }
}

/// What a session resumes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionStart {
    /// The session's row id in the ledger.
    pub id: i64,
    /// Whether an earlier run's session was resumed (`false`: a new session was started).
    pub resumed: bool,
    /// Totals to seed the meter with (for a new session: only where its clock may start).
    pub seed: MeterSeed,
    /// Sums already in the ledger for this session (the recorder's starting point).
    pub recorded: super::recorder::Recorded,
}

/// The prices as one line of text: equal text, equal prices. A list price says so (its own
/// session: a guessed price is never summed with the user's), a user's rate is written as it
/// always was (a ledger kept before the list prices resumes its sessions).
pub fn pricing_text(p: &Pricing) -> String {
    let listed = match &p.source {
        crate::billing::RateSource::ListPrice(l) => {
            format!(" source=list-price({}, catalog {})", l.what, l.catalog)
        }
        crate::billing::RateSource::Yours(_) => String::new(),
    };
    format!(
        "rate={} granularity={} extras/h={} egress/GB={} kWh={} budget={}{listed}",
        p.rate,
        p.granularity.name(),
        p.extras_per_hour,
        p.egress_per_gb,
        p.electricity_per_kwh
            .map_or("-".to_string(), |m| m.to_string()),
        p.budget.map_or("-".to_string(), |b| format!(
            "{}/{}",
            b.amount,
            b.period.name()
        )),
    )
}

impl Ledger {
    /// Finds or creates the session for `key`. Read-only ledgers only find (a missing session
    /// there starts from nothing and is never written).
    pub fn begin_session(
        &mut self,
        key: &SessionKey,
        now_unix_ms: i64,
    ) -> Result<SessionStart, LedgerError> {
        // The host's latest session (on this source); resumed only when it is this run.
        let latest = self
            .conn()
            .query_row(
                "SELECT id, clock_start_ms, pricing, effective_start_ms, last_ms, max_gpus
                 FROM sessions WHERE host = ?1 AND source = ?2
                 ORDER BY last_ms DESC, id DESC LIMIT 1",
                params![key.host, key.source],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, i64>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, i64>(3)?,
                        r.get::<_, i64>(4)?,
                        r.get::<_, i64>(5)?,
                    ))
                },
            )
            .optional()
            .map_err(|e| self.sql_error(e))?;
        if let Some((id, clock_start, pricing, effective_start, last_ms, max_gpus)) = &latest {
            let same_clock =
                (clock_start - key.clock_start_ms).abs() <= key.clock_start_slack_ms.max(0);
            if same_clock && *pricing == key.pricing {
                let recorded = self.recorded(*id)?;
                let mut seed = self.seed_from(*id, &recorded)?;
                seed.max_gpus = u32::try_from(*max_gpus).unwrap_or(0);
                seed.start_floor_ms = Some(*effective_start);
                seed.observed_until_ms = Some(*last_ms);
                return Ok(SessionStart {
                    id: *id,
                    resumed: true,
                    seed,
                    recorded,
                });
            }
        }
        // Another run, or other prices: start where the host's last session ended, but not
        // after now (a session whose end lies ahead runs beside this one on a simulated clock,
        // or the wall clock was stepped back: this run counts from now).
        let floor = latest
            .as_ref()
            .map(|l| l.4.min(now_unix_ms))
            .filter(|&last| last > key.clock_start_ms);
        let effective = floor.unwrap_or(key.clock_start_ms);
        let seed = MeterSeed {
            start_floor_ms: floor,
            observed_until_ms: floor,
            ..MeterSeed::default()
        };
        let id = match self.conn_mut() {
            Ok(conn) => {
                conn.execute(
                    "INSERT INTO sessions (host, source, clock_start_ms, effective_start_ms,
                         pricing, currency, first_seen_ms, last_ms)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)",
                    params![
                        key.host,
                        key.source,
                        key.clock_start_ms,
                        effective,
                        key.pricing,
                        key.currency,
                        now_unix_ms
                    ],
                )
                .map_err(|e| self.sql_error(e))?;
                self.conn().last_insert_rowid()
            }
            Err(_) => -1,
        };
        Ok(SessionStart {
            id,
            resumed: false,
            seed,
            recorded: super::recorder::Recorded::default(),
        })
    }

    fn recorded(&self, id: i64) -> Result<super::recorder::Recorded, LedgerError> {
        self.conn()
            .query_row(
                "SELECT coalesce(sum(paid_ms),0), coalesce(sum(observed_ms),0),
                        coalesce(sum(gpu_ms),0), coalesce(sum(busy_gpu_ms),0),
                        coalesce(sum(idle_ms),0), coalesce(sum(spend_micros),0),
                        coalesce(sum(idle_cost_micros),0), coalesce(sum(energy_mj),0),
                        coalesce(sum(egress_bytes),0)
                 FROM minutes WHERE session_id = ?1",
                [id],
                |r| {
                    Ok(super::recorder::Recorded {
                        paid_ms: r.get(0)?,
                        observed_ms: r.get(1)?,
                        gpu_ms: r.get(2)?,
                        busy_gpu_ms: r.get(3)?,
                        idle_ms: r.get(4)?,
                        spend_micros: r.get(5)?,
                        idle_cost_micros: r.get(6)?,
                        energy_mj: r.get(7)?,
                        egress_bytes: r.get(8)?,
                    })
                },
            )
            .map_err(|e| self.sql_error(e))
    }

    fn seed_from(&self, id: i64, r: &super::recorder::Recorded) -> Result<MeterSeed, LedgerError> {
        let mut stmt = self
            .conn()
            .prepare(
                "SELECT period_key, threshold_pct, kind FROM alerts
                 WHERE session_id = ?1 AND kind IN ('budget_actual', 'budget_forecast')",
            )
            .map_err(|e| self.sql_error(e))?;
        let fired = stmt
            .query_map([id], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, i64>(1)?,
                    row.get::<_, String>(2)?,
                ))
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| self.sql_error(e))?
            .into_iter()
            .filter_map(|(key, pct, kind)| {
                let kind = BudgetEventKind::parse(kind.strip_prefix("budget_")?)?;
                Some((key, u8::try_from(pct).ok()?, kind))
            })
            .collect();
        let non_neg = |v: i64| u64::try_from(v).unwrap_or(0);
        Ok(MeterSeed {
            observed_ms: r.observed_ms,
            gpu_ms: r.gpu_ms,
            busy_gpu_ms: r.busy_gpu_ms,
            idle_ms: r.idle_ms,
            non_idle_spend: crate::money::Money::from_micros(
                r.spend_micros.saturating_sub(r.idle_cost_micros),
            ),
            energy_mj: non_neg(r.energy_mj),
            egress_bytes: non_neg(r.egress_bytes),
            max_gpus: 0,
            start_floor_ms: None,
            observed_until_ms: None,
            fired,
        })
    }
}
