//! What the fleet knows and shows, pure: [`Fleet`] holds each host's last answer and failure
//! (folded in from [`PollEvent`]s by its one owner), [`rows`] turns it into one [`HostRow`] per
//! host at a given time, sorted, and [`totals`] sums the rows per currency. Both the screen and
//! `fleet --once` print these rows; nothing here does I/O or reads a clock.
//!
//! A host's *idle burn* is the share of its current burn that pays for GPUs doing nothing now:
//! burn/h × idle GPUs ÷ GPUs (the busy count is the server's own, from its billing block, else
//! the idle rule's thresholds on the reading). Down hosts count in no money total: their last
//! numbers may be long gone; they are counted as down.

use gpumeter_model::{Document, GpuState};

use super::hosts::Host;
use super::poll::{Failure, PollEvent};
use crate::engine::rules::RulesConfig;
use crate::engine::rules::idle::gpu_idle;
use crate::money::{Currency, Money};
use crate::sanitize::sanitize;

/// A host whose newest reading is older than this is shown as stale (its server's sampler is
/// stuck, or the clocks disagree).
pub const STALE_MS: i64 = 30_000;
/// A host that stopped answering still bills: its last burn stays in the totals (marked, with
/// its age) for this long after its last good answer, then it counts as gone.
pub const KEEP_SILENT_MS: i64 = 15 * 60_000;
/// Longest alert title kept.
const MAX_TITLE_CHARS: usize = 120;

/// One host as the fleet knows it.
#[derive(Debug, Clone)]
pub struct HostState {
    /// What the screen calls the host (from the host list: `name=`, else `host:port`).
    pub name: String,
    /// The host's `scheme://host:port`.
    pub base: String,
    /// The newest good answer.
    pub latest: Option<Box<Document>>,
    /// When it came (the fleet's clock).
    pub last_ok_unix_ms: Option<i64>,
    /// The newest failure, while the host keeps failing, and since when.
    pub failure: Option<(Failure, i64)>,
}

/// Every host, in the order given.
#[derive(Debug, Clone)]
pub struct Fleet {
    /// Each host's state, in the order of the host list (a [`PollEvent`]'s `host` indexes it).
    pub hosts: Vec<HostState>,
}

impl Fleet {
    /// Every host waiting for its first answer.
    pub fn new(hosts: &[Host]) -> Fleet {
        Fleet {
            hosts: hosts
                .iter()
                .map(|h| HostState {
                    name: h.name.clone(),
                    base: h.base.clone(),
                    latest: None,
                    last_ok_unix_ms: None,
                    failure: None,
                })
                .collect(),
        }
    }

    /// Folds one answer in.
    pub fn apply(&mut self, ev: PollEvent) {
        let Some(h) = self.hosts.get_mut(ev.host) else {
            return;
        };
        match ev.result {
            Ok(doc) => {
                h.latest = Some(doc);
                h.last_ok_unix_ms = Some(ev.at_unix_ms);
                h.failure = None;
            }
            Err(f) => {
                let since = h.failure.as_ref().map_or(ev.at_unix_ms, |(_, s)| *s);
                h.failure = Some((f, since));
            }
        }
    }
}

/// Where a host stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowState {
    /// Not answered yet.
    Waiting,
    /// Answering with a recent reading.
    Up,
    /// Answering, but its newest reading is older than [`STALE_MS`].
    Stale,
    /// Failing now.
    Down(Failure),
}

impl RowState {
    /// The state column's word: `waiting`, `up`, `stale`, or the failure's (`down`, `timeout`, …).
    pub fn label(&self) -> &'static str {
        match self {
            RowState::Waiting => "waiting",
            RowState::Up => "up",
            RowState::Stale => "stale",
            RowState::Down(f) => f.state(),
        }
    }

    /// Whether the row's numbers are current enough to count.
    pub fn counts(&self) -> bool {
        matches!(self, RowState::Up | RowState::Stale)
    }
}

/// The budget as a row shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct BudgetState {
    /// `day`, `month`, `run`.
    pub period: String,
    /// Spent in the period over the budget (1.0 = the ceiling), as the server reports it.
    pub used_ratio: f64,
    /// Projected spend at the period's end over the budget (`None`: no forecast, e.g. a run
    /// budget).
    pub forecast_ratio: Option<f64>,
}

/// The worst standing alert.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlertBrief {
    /// The rule it comes from (`idle`, `starved`, …), as the server names it.
    pub kind: String,
    /// `info`, `moderate`, `high`.
    pub severity: String,
    /// The alert's one-line title, cleaned of control characters and cut to 120 characters.
    pub title: String,
}

/// One host's line.
#[derive(Debug, Clone, PartialEq)]
pub struct HostRow {
    /// Index into the host list.
    pub index: usize,
    /// What the screen calls the host.
    pub name: String,
    /// The host's `scheme://host:port`.
    pub base: String,
    /// Where the host stands (waiting, up, stale, down).
    pub state: RowState,
    /// The error's text while down.
    pub error: Option<String>,
    /// The last good answer (the fleet's clock), while down.
    pub last_seen_unix_ms: Option<i64>,
    /// GPUs in the newest reading (`None`: no reading yet).
    pub gpus: Option<u32>,
    /// GPUs doing work: the server's billing count, else those above the idle rule's default
    /// thresholds.
    pub busy_gpus: Option<u32>,
    /// Mean GPU utilization over the GPUs that report it, percent 0–100 (`None`: none does).
    pub mean_util_pct: Option<f64>,
    /// VRAM used, summed over the GPUs that report it, bytes.
    pub vram_used_bytes: Option<u64>,
    /// VRAM total, summed over the GPUs that report it, bytes.
    pub vram_total_bytes: Option<u64>,
    /// The currency of the host's billing (`None`: unpriced, an unknown code, or silent too long).
    pub currency: Option<Currency>,
    /// What the host burns per hour now, as its billing says.
    pub burn_per_hour: Option<Money>,
    /// The part of the burn paying for idle GPUs: burn × idle GPUs ÷ GPUs.
    pub idle_burn_per_hour: Option<Money>,
    /// Spent in the current billing day, as the host's billing says.
    pub spent_today: Option<Money>,
    /// The host's budget, when one is set.
    pub budget: Option<BudgetState>,
    /// The most severe standing alert on the host (`None`: none, or no session there).
    pub alert: Option<AlertBrief>,
    /// Age of the reading (the server's time against the fleet's).
    pub sample_age_ms: Option<i64>,
    /// For a down host: how long since its last good answer.
    pub silent_ms: Option<i64>,
}

impl HostRow {
    /// Up with GPUs, none of them busy.
    pub fn is_idle(&self) -> bool {
        self.state.counts() && self.gpus.is_some_and(|g| g > 0) && self.busy_gpus == Some(0)
    }
}

/// The row of one host at `now_unix_ms`.
pub fn row(index: usize, h: &HostState, now_unix_ms: i64) -> HostRow {
    let mut r = HostRow {
        index,
        name: h.name.clone(),
        base: h.base.clone(),
        state: RowState::Waiting,
        error: None,
        last_seen_unix_ms: h.last_ok_unix_ms,
        gpus: None,
        busy_gpus: None,
        mean_util_pct: None,
        vram_used_bytes: None,
        vram_total_bytes: None,
        currency: None,
        burn_per_hour: None,
        idle_burn_per_hour: None,
        spent_today: None,
        budget: None,
        alert: None,
        sample_age_ms: None,
        silent_ms: None,
    };
    let Some(doc) = h.latest.as_deref() else {
        if let Some((f, _)) = &h.failure {
            r.error = Some(f.message());
            r.state = RowState::Down(f.clone());
            r.silent_ms = h.last_ok_unix_ms.map(|t| (now_unix_ms - t).max(0));
        }
        return r;
    };
    let snap = &doc.snapshot;
    let age = (now_unix_ms - snap.taken_at_unix_ms).max(0);
    r.sample_age_ms = Some(age);
    r.state = if age > STALE_MS {
        RowState::Stale
    } else {
        RowState::Up
    };
    let gpus = u32::try_from(snap.gpus.len()).unwrap_or(u32::MAX);
    r.gpus = Some(gpus);
    let idle_cfg = RulesConfig::default().idle;
    let busy = match &doc.billing {
        Some(b) => b.busy_gpus.min(gpus),
        None => {
            let n = snap
                .gpus
                .iter()
                .filter(|g| g.state == GpuState::Ok && gpu_idle(g, &idle_cfg) == Some(false))
                .count();
            u32::try_from(n).unwrap_or(u32::MAX)
        }
    };
    r.busy_gpus = Some(busy);
    let utils: Vec<f64> = snap
        .gpus
        .iter()
        .filter_map(|g| g.util_gpu_pct.map(f64::from))
        .collect();
    r.mean_util_pct = (!utils.is_empty()).then(|| utils.iter().sum::<f64>() / utils.len() as f64);
    r.vram_used_bytes = sum(snap.gpus.iter().map(|g| g.memory_used_bytes));
    r.vram_total_bytes = sum(snap.gpus.iter().map(|g| g.memory_total_bytes));
    if let Some(b) = &doc.billing {
        r.currency = Currency::from_code(&b.currency).ok();
        if r.currency.is_some() {
            let burn = Money::from_micros(b.burn_per_hour_micros);
            r.burn_per_hour = Some(burn);
            r.idle_burn_per_hour =
                (gpus > 0).then(|| burn.mul_div(i128::from(gpus - busy), i128::from(gpus)));
            r.spent_today = Some(Money::from_micros(b.spent_today_micros));
        }
        r.budget = b.budget.as_ref().map(|bu| BudgetState {
            period: sanitize(&bu.period, 8),
            used_ratio: bu.used_ratio,
            forecast_ratio: bu.forecast_ratio,
        });
    }
    r.alert = doc.alerts.first().map(|a| AlertBrief {
        kind: sanitize(&a.kind, 16),
        severity: sanitize(&a.severity, 16),
        title: sanitize(&a.title, MAX_TITLE_CHARS),
    });
    if let Some((f, _)) = &h.failure {
        r.error = Some(f.message());
        r.state = RowState::Down(f.clone());
        // The last numbers stand for a silent host a while (it bills on), then go.
        let recent = h
            .last_ok_unix_ms
            .is_some_and(|t| now_unix_ms - t <= KEEP_SILENT_MS);
        if !recent {
            r.burn_per_hour = None;
            r.idle_burn_per_hour = None;
            r.spent_today = None;
            r.currency = None;
        }
        r.sample_age_ms = None;
        r.silent_ms = h.last_ok_unix_ms.map(|t| (now_unix_ms - t).max(0));
    }
    r
}

fn sum(values: impl Iterator<Item = Option<u64>>) -> Option<u64> {
    values.flatten().reduce(u64::saturating_add)
}

/// What the rows can be sorted by (`s` cycles, `S` reverses, as in the process table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortKey {
    /// By idle burn per hour.
    IdleBurn,
    /// By burn per hour.
    Burn,
    /// By money spent today.
    SpentToday,
    /// By mean GPU utilization.
    Util,
    /// By the severity of the worst alert.
    Alert,
    /// By the age of the newest reading.
    Age,
    /// By host name (A to Z by default).
    Name,
}

impl SortKey {
    /// Every key, in the order `s` cycles through them.
    pub const ALL: [SortKey; 7] = [
        SortKey::IdleBurn,
        SortKey::Burn,
        SortKey::SpentToday,
        SortKey::Util,
        SortKey::Alert,
        SortKey::Age,
        SortKey::Name,
    ];

    /// The key after this one in [`SortKey::ALL`] (the last wraps to the first).
    pub fn next(self) -> SortKey {
        let i = Self::ALL.iter().position(|k| *k == self).unwrap_or(0);
        Self::ALL[(i + 1) % Self::ALL.len()]
    }

    /// The column header the key sorts (`idle/h`, `burn/h`, `today`, …).
    pub fn label(self) -> &'static str {
        match self {
            SortKey::IdleBurn => "idle/h",
            SortKey::Burn => "burn/h",
            SortKey::SpentToday => "today",
            SortKey::Util => "util",
            SortKey::Alert => "alert",
            SortKey::Age => "age",
            SortKey::Name => "name",
        }
    }

    /// Biggest first, except names (A to Z).
    pub fn descending_by_default(self) -> bool {
        self != SortKey::Name
    }
}

fn severity_rank(s: &str) -> u8 {
    match s {
        "high" => 3,
        "moderate" => 2,
        "info" => 1,
        _ => 0,
    }
}

fn key_value(r: &HostRow, key: SortKey) -> Option<f64> {
    let money = |m: Option<Money>| m.map(|m| m.micros() as f64);
    match key {
        SortKey::IdleBurn => money(r.idle_burn_per_hour),
        SortKey::Burn => money(r.burn_per_hour),
        SortKey::SpentToday => money(r.spent_today),
        SortKey::Util => r.mean_util_pct,
        SortKey::Alert => r
            .alert
            .as_ref()
            .map(|a| f64::from(severity_rank(&a.severity))),
        SortKey::Age => r.sample_age_ms.map(|a| a as f64),
        SortKey::Name => None,
    }
}

/// Sorts rows by `key`; rows without the value (down, unpriced) go last either way, then
/// by name, so the order is stable.
pub fn sort_rows(rows: &mut [HostRow], key: SortKey, descending: bool) {
    rows.sort_by(|a, b| {
        let by_name = a.name.cmp(&b.name).then(a.index.cmp(&b.index));
        if key == SortKey::Name {
            return if descending {
                by_name.reverse()
            } else {
                by_name
            };
        }
        match (key_value(a, key), key_value(b, key)) {
            (Some(x), Some(y)) => {
                let o = x.total_cmp(&y);
                let o = if descending { o.reverse() } else { o };
                o.then(by_name)
            }
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => by_name,
        }
    });
}

/// Every host's row at `now_unix_ms`, sorted.
pub fn rows(fleet: &Fleet, now_unix_ms: i64, key: SortKey, descending: bool) -> Vec<HostRow> {
    let mut out: Vec<HostRow> = fleet
        .hosts
        .iter()
        .enumerate()
        .map(|(i, h)| row(i, h, now_unix_ms))
        .collect();
    sort_rows(&mut out, key, descending);
    out
}

/// The money of the hosts billed in one currency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CurrencyTotals {
    /// The currency these sums are in.
    pub currency: Currency,
    /// Burn per hour summed.
    pub burn_per_hour: Money,
    /// Idle burn per hour summed.
    pub idle_burn_per_hour: Money,
    /// Spent today summed.
    pub spent_today: Money,
}

/// The fleet at a glance.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Totals {
    /// Hosts in the list.
    pub hosts: usize,
    /// Hosts answering (up or stale).
    pub up: usize,
    /// Hosts failing now.
    pub down: usize,
    /// Answering hosts with every GPU idle.
    pub idle_hosts: usize,
    /// GPUs on the answering hosts.
    pub gpus: u32,
    /// Busy GPUs on the answering hosts.
    pub busy_gpus: u32,
    /// Down hosts whose last burn is in the money totals ([`KEEP_SILENT_MS`]).
    pub silent_kept: usize,
    /// One entry per currency, in the order first seen.
    pub money: Vec<CurrencyTotals>,
}

/// Sums `rows`: answering hosts, and the last money of hosts silent for less than
/// [`KEEP_SILENT_MS`].
pub fn totals(rows: &[HostRow]) -> Totals {
    let mut t = Totals {
        hosts: rows.len(),
        ..Totals::default()
    };
    for r in rows {
        match &r.state {
            RowState::Down(_) => t.down += 1,
            RowState::Waiting => {}
            RowState::Up | RowState::Stale => t.up += 1,
        }
        if r.state.counts() {
            if r.is_idle() {
                t.idle_hosts += 1;
            }
            t.gpus = t.gpus.saturating_add(r.gpus.unwrap_or(0));
            t.busy_gpus = t.busy_gpus.saturating_add(r.busy_gpus.unwrap_or(0));
        } else if matches!(r.state, RowState::Down(_)) && r.burn_per_hour.is_some() {
            // Silent, not gone: its meter runs on at the last burn it reported.
            t.silent_kept += 1;
        } else {
            continue;
        }
        let Some(c) = r.currency else { continue };
        let i = match t.money.iter().position(|m| m.currency == c) {
            Some(i) => i,
            None => {
                t.money.push(CurrencyTotals {
                    currency: c,
                    burn_per_hour: Money::ZERO,
                    idle_burn_per_hour: Money::ZERO,
                    spent_today: Money::ZERO,
                });
                t.money.len() - 1
            }
        };
        let m = &mut t.money[i];
        let add = |a: Money, b: Option<Money>| a.saturating_add(b.unwrap_or(Money::ZERO));
        m.burn_per_hour = add(m.burn_per_hour, r.burn_per_hour);
        m.idle_burn_per_hour = add(m.idle_burn_per_hour, r.idle_burn_per_hour);
        m.spent_today = add(m.spent_today, r.spent_today);
    }
    t
}

#[cfg(test)]
mod tests;
