//! The billing meter: fed one snapshot per tick, it credits paid time and turns it into money.
//!
//! Exactness: the meter accumulates integers (credited ms, GPU-ms, bytes, millijoules) and
//! computes money from those totals with one rounding ([`Meter::spent`]); it never adds up
//! per-tick money, so nothing drifts over weeks.
//!
//! Clock jumps: a tick whose time goes backwards (an NTP step) credits nothing; a tick longer
//! than `tick_cap_ms` (a suspend, a stalled source) credits only the cap. Time before the first
//! reading, from the clock start (boot, a timestamp, container start), is credited once.
//! Pure: no I/O, no wall clock — time arrives as `now_unix_ms`.

use std::collections::BTreeMap;

use gpumeter_model::{GpuState, Snapshot};

use super::budget::{BudgetEvent, BudgetEventKind, BudgetTracker};
use super::calendar::{day_index, month_index, next_day_boundary};
use super::pricing::{ClockStart, Pricing};
use crate::money::Money;

/// A GPU counts as busy above this utilization (kernels or memory controller), in percent.
pub const BUSY_UTIL_PCT: u32 = 5;
/// Whether a GPU counts as busy for billing: working, with kernels or the memory controller
/// above [`BUSY_UTIL_PCT`], and not busy-but-stuck (util high while GPM says the SMs do no
/// work: a hung job is idle paid time, not useful GPU time).
pub fn gpu_busy(g: &gpumeter_model::GpuReading) -> bool {
    g.state == GpuState::Ok
        && (g.util_gpu_pct.is_some_and(|u| u > BUSY_UTIL_PCT)
            || g.util_memory_pct.is_some_and(|u| u > BUSY_UTIL_PCT))
        && g.looks_stuck(&gpumeter_model::StuckThresholds::default()) != Some(true)
}

/// Millijoules in one kWh.
pub const MJ_PER_KWH: i128 = 3_600_000_000;
pub(super) const BYTES_PER_GB: i128 = 1_000_000_000;

/// The meter's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MeterConfig {
    /// Rate, granularity, clock start and budget the meter bills with.
    pub pricing: Pricing,
    /// The most one tick may credit (e.g. 10 × the sample interval).
    pub tick_cap_ms: i64,
}

/// Totals carried over from the ledger when a session resumes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MeterSeed {
    /// Observed (credited) ms already in the ledger.
    pub observed_ms: i64,
    /// GPU-ms already in the ledger (GPU count × observed ms, summed per tick).
    pub gpu_ms: i64,
    /// Busy GPU-ms already in the ledger (see [`gpu_busy`]).
    pub busy_gpu_ms: i64,
    /// Idle ms already in the ledger (observed time with no GPU busy, plus lost GPUs' share).
    pub idle_ms: i64,
    /// GPU energy already in the ledger, millijoules.
    pub energy_mj: u64,
    /// Bytes sent out of the machine already in the ledger.
    pub egress_bytes: u64,
    /// The most GPUs the session has seen.
    pub max_gpus: u32,
    /// The clock does not start before this (the end of an earlier session with other prices).
    pub start_floor_ms: Option<i64>,
    /// Time up to here is in the ledger already (the session's last written tick): a clock
    /// that replays it (a simulated one started over) observes nothing before it.
    pub observed_until_ms: Option<i64>,
    /// Crossings already reported: (period key, threshold, kind).
    pub fired: Vec<(String, u8, BudgetEventKind)>,
    /// Spend minus idle cost already in the ledger: the resumed idle cost never eats into it.
    pub non_idle_spend: Money,
}

/// One GPU in the last tick.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuTick {
    /// NVML index of the GPU.
    pub index: u32,
    /// Whether it counted as busy this tick (see [`gpu_busy`]).
    pub busy: bool,
    /// Kernel utilization, percent 0–100; `None` when the reading is unsupported.
    pub util_pct: Option<u32>,
    /// Energy since the previous tick (None: unsupported, first reading, or a counter reset).
    pub energy_mj: Option<u64>,
}

/// What the last tick credited (the ledger sums these per minute).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TickRecord {
    /// Time of the tick, ms since the Unix epoch.
    pub at_unix_ms: i64,
    /// Observed time credited by this tick (after the jump guard).
    pub credited_ms: i64,
    /// Time before the first reading credited on this tick (only on the first tick).
    pub catch_up_ms: i64,
    /// No GPU was busy this tick (the whole tick counts as idle time).
    pub all_idle: bool,
    /// Each GPU in the snapshot, in snapshot order.
    pub gpus: Vec<GpuTick>,
}

/// Running totals, the integers everything else is computed from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MeterTotals {
    /// Paid ms: billing-clock time from the clock start, before the granularity rounds it.
    pub paid_ms: i64,
    /// Observed ms: time covered by readings (credited ticks, after the jump guard).
    pub observed_ms: i64,
    /// GPU-ms: GPU count × observed ms, summed per tick.
    pub gpu_ms: i64,
    /// Busy GPU-ms: busy GPU count × observed ms (see [`gpu_busy`]).
    pub busy_gpu_ms: i64,
    /// Idle ms: observed time with no GPU busy, plus lost GPUs' share of the machine's time.
    pub idle_ms: i64,
    /// GPU energy counted, millijoules (`0` when no GPU reports an energy counter).
    pub energy_mj: u64,
    /// Bytes sent out of the machine (non-loopback), integrated from the transmit rate.
    pub egress_bytes: u64,
    /// Money billed so far, from the paid time with one rounding.
    pub spent: Money,
    /// The list rate over the idle time; never more than `spent` and never grows faster than it.
    pub idle_cost: Money,
}

/// The billing meter. See the module docs.
#[derive(Debug, Clone)]
pub struct Meter {
    pub(super) cfg: MeterConfig,
    start_ms: Option<i64>,
    start_floor_ms: Option<i64>,
    /// See [`MeterSeed::observed_until_ms`].
    observed_until_ms: Option<i64>,
    pub(super) last_ms: Option<i64>,
    /// Whether a reading at or after the clock start was seen (later ones are not clipped to the
    /// start: after a step back, time before it is still paid time).
    started: bool,
    pub(super) totals: MeterTotals,
    /// Credited ms per UTC month, for monthly amortisation.
    pub(super) month_ms: BTreeMap<i64, i64>,
    pub(super) max_gpus: u32,
    pub(super) gpus_now: u32,
    pub(super) busy_now: u32,
    pub(super) energy_seen: bool,
    last_energy: BTreeMap<u32, u64>,
    /// (day index, spend when it began) and the same for the month.
    pub(super) day_base: Option<(i64, Money)>,
    pub(super) month_base: Option<(i64, Money)>,
    /// Smoothed egress bytes/s and GPU power (W), for the burn rate.
    pub(super) egress_bps: f64,
    pub(super) power_w: f64,
    budget: BudgetTracker,
    last_tick: TickRecord,
    /// Spend that is not idle cost (`spent − idle_cost`); never goes down. See `refresh_money`.
    non_idle: Money,
    /// Lost-GPU ms not yet whole machine ms (see `observe`): carried so the split never drifts.
    lost_rem: i64,
}

impl Meter {
    /// A meter that has seen nothing yet: the clock start is resolved at the first
    /// [`Meter::observe`].
    pub fn new(cfg: MeterConfig) -> Meter {
        Meter {
            cfg,
            start_ms: None,
            start_floor_ms: None,
            observed_until_ms: None,
            last_ms: None,
            started: false,
            totals: MeterTotals::default(),
            month_ms: BTreeMap::new(),
            max_gpus: 0,
            gpus_now: 0,
            busy_now: 0,
            energy_seen: false,
            last_energy: BTreeMap::new(),
            day_base: None,
            month_base: None,
            egress_bps: 0.0,
            power_w: 0.0,
            budget: BudgetTracker::default(),
            last_tick: TickRecord::default(),
            non_idle: Money::ZERO,
            lost_rem: 0,
        }
    }

    /// Resumes a session's observed totals (paid time is recomputed from the clock start).
    pub fn seed(&mut self, seed: &MeterSeed) {
        let t = &mut self.totals;
        t.observed_ms = seed.observed_ms;
        t.gpu_ms = seed.gpu_ms;
        t.busy_gpu_ms = seed.busy_gpu_ms;
        t.idle_ms = seed.idle_ms;
        t.energy_mj = seed.energy_mj;
        t.egress_bytes = seed.egress_bytes;
        self.energy_seen |= seed.energy_mj > 0;
        self.max_gpus = self.max_gpus.max(seed.max_gpus);
        self.start_floor_ms = seed.start_floor_ms;
        self.observed_until_ms = seed.observed_until_ms;
        for (key, threshold, kind) in &seed.fired {
            self.budget.mark_fired(key, *threshold, *kind);
        }
        self.non_idle = seed.non_idle_spend.max(Money::ZERO);
        self.refresh_money();
    }

    /// The pricing the meter bills with.
    pub fn pricing(&self) -> &Pricing {
        &self.cfg.pricing
    }

    /// When the billing clock started (known after the first reading).
    pub fn start_unix_ms(&self) -> Option<i64> {
        self.start_ms
    }

    /// The running totals (a copy).
    pub fn totals(&self) -> MeterTotals {
        self.totals
    }

    /// What the most recent tick credited (empty before the first tick).
    pub fn last_tick(&self) -> &TickRecord {
        &self.last_tick
    }

    /// The clock start this meter would use for `snap` (the ledger keys sessions by it).
    pub fn resolve_start(&self, snap: &Snapshot, now_unix_ms: i64) -> i64 {
        let start = match self.cfg.pricing.clock_start {
            ClockStart::At(t) => t,
            ClockStart::Boot => snap
                .system
                .boot_time_unix_s
                .map_or(now_unix_ms, |s| s.saturating_mul(1_000)),
            ClockStart::Container | ClockStart::FirstSample => now_unix_ms,
        };
        start.max(self.start_floor_ms.unwrap_or(i64::MIN))
    }

    /// One tick. Returns the budget crossings this tick caused (each reported once).
    pub fn observe(&mut self, snap: &Snapshot, now_unix_ms: i64) -> Vec<BudgetEvent> {
        let gpus = u32::try_from(snap.gpus.len()).unwrap_or(u32::MAX);
        self.max_gpus = self.max_gpus.max(gpus);
        let first = self.last_ms.is_none();
        let start = match self.start_ms {
            Some(s) => s,
            None => {
                let s = self.resolve_start(snap, now_unix_ms);
                self.start_ms = Some(s);
                s
            }
        };
        let (from, credited) = match self.last_ms {
            None => (start, 0),
            Some(last) => {
                let dt = (now_unix_ms - last).clamp(0, self.cfg.tick_cap_ms.max(0));
                let from = if self.started {
                    now_unix_ms - dt
                } else {
                    (now_unix_ms - dt).max(start)
                };
                // Paid time follows the clock; observed time already written is not
                // observed again.
                let observed_from = from.max(self.observed_until_ms.unwrap_or(i64::MIN));
                (from, (now_unix_ms - observed_from).max(0))
            }
        };
        self.last_ms = Some(now_unix_ms);
        self.started |= now_unix_ms >= start;
        if self.day_base.is_none() {
            let anchor = from.min(now_unix_ms);
            self.day_base = Some((day_index(anchor), self.totals.spent));
            self.month_base = Some((month_index(anchor), self.totals.spent));
        }
        let catch_up = if first {
            (now_unix_ms - from).max(0)
        } else {
            0
        };
        self.credit(from, now_unix_ms.max(from));

        let mut tick = TickRecord {
            at_unix_ms: now_unix_ms,
            credited_ms: credited,
            catch_up_ms: catch_up,
            ..TickRecord::default()
        };
        let mut power = 0.0;
        for g in &snap.gpus {
            let busy = gpu_busy(g);
            power += g
                .power_watts
                .filter(|w| w.is_finite() && *w > 0.0)
                .unwrap_or(0.0);
            tick.gpus.push(GpuTick {
                index: g.index,
                busy,
                util_pct: g.util_gpu_pct,
                energy_mj: self.energy_delta(g.index, g.energy_millijoules),
            });
        }
        let busy = u32::try_from(tick.gpus.iter().filter(|g| g.busy).count()).unwrap_or(0);
        tick.all_idle = busy == 0;
        self.gpus_now = gpus;
        self.busy_now = busy;

        let t = &mut self.totals;
        t.observed_ms = t.observed_ms.saturating_add(credited);
        t.gpu_ms = t.gpu_ms.saturating_add(i64::from(gpus) * credited);
        t.busy_gpu_ms = t.busy_gpu_ms.saturating_add(i64::from(busy) * credited);
        let lost = snap
            .gpus
            .iter()
            .filter(|g| g.state == GpuState::Lost)
            .count();
        let lost = i64::try_from(lost).unwrap_or(0);
        if tick.all_idle {
            t.idle_ms = t.idle_ms.saturating_add(credited);
        } else if lost > 0 {
            // A lost card bills and does nothing: its share of the machine's time is idle time,
            // even while the other GPUs work.
            let n = i64::from(gpus).max(1);
            let share = lost.saturating_mul(credited).saturating_add(self.lost_rem);
            t.idle_ms = t.idle_ms.saturating_add(share / n);
            self.lost_rem = share % n;
        }
        let energy: u64 = tick.gpus.iter().filter_map(|g| g.energy_mj).sum();
        t.energy_mj = t.energy_mj.saturating_add(energy);
        let tx = snap
            .host
            .net_tx_bytes_per_s
            .filter(|r| r.is_finite() && *r >= 0.0);
        if let Some(rate) = tx {
            // Bytes are counted per tick; a byte of rounding per tick is far below a cent.
            let bytes = (rate * credited as f64 / 1_000.0).round() as u64;
            t.egress_bytes = t.egress_bytes.saturating_add(bytes);
        }
        if credited > 0 || first {
            // Smooth over about five minutes of ticks so the burn rate does not jitter.
            let w = if first {
                1.0
            } else {
                (credited as f64 / 300_000.0).min(1.0)
            };
            self.egress_bps += (tx.unwrap_or(0.0) - self.egress_bps) * w;
            self.power_w += (power - self.power_w) * w;
        }
        self.last_tick = tick;
        self.refresh_money();
        self.roll_periods(now_unix_ms);
        self.check_budget(now_unix_ms)
    }

    fn energy_delta(&mut self, gpu: u32, reading: Option<u64>) -> Option<u64> {
        let now = reading?;
        self.energy_seen = true;
        let prev = self.last_energy.insert(gpu, now)?;
        // A counter that went backwards was reset (driver reload): count nothing this tick.
        now.checked_sub(prev)
    }

    /// Credits `[from, to)`, noting the spend at each UTC day and month boundary on the way.
    fn credit(&mut self, mut from: i64, to: i64) {
        while from < to {
            let boundary = next_day_boundary(from);
            let seg_end = to.min(boundary);
            let seg = seg_end - from;
            self.totals.paid_ms = self.totals.paid_ms.saturating_add(seg);
            if self.cfg.pricing.rate.unit.monthly() {
                *self.month_ms.entry(month_index(from)).or_insert(0) += seg;
            }
            from = seg_end;
            if seg_end == boundary {
                // Only the spend: this tick's idle time is not counted yet, and idle cost must
                // not be settled against spend it has no share of.
                self.totals.spent = self.spent_now();
                self.roll_periods(boundary);
            }
        }
    }

    /// Starts a new day / month base when `at` lies in a later (or, after a jump back, another) one.
    fn roll_periods(&mut self, at: i64) {
        let spent = self.totals.spent;
        if self.day_base.is_some_and(|(d, _)| d != day_index(at)) {
            self.day_base = Some((day_index(at), spent));
        }
        if self.month_base.is_some_and(|(m, _)| m != month_index(at)) {
            self.month_base = Some((month_index(at), spent));
        }
    }

    /// Spend from the direct formula; idle cost from the same rounded spend. Idle cost follows
    /// the list rate over the idle time, but only out of what the bill has grown by: it never
    /// rises faster than the spend, so `spent − idle_cost` never falls. The ledger's minutes,
    /// days and sessions are differences and sums of these totals, so idle cost ≤ spend holds
    /// in each of them by construction (two separately rounded products could differ by a
    /// micro-unit; under coarse billing, idle cost waits for the bill's next step).
    fn refresh_money(&mut self) {
        let spent = self.spent_now();
        self.totals.spent = spent;
        let honest = self.linear_cost(self.totals.idle_ms);
        let room = spent.saturating_sub(self.non_idle);
        let idle = honest.min(room).max(self.totals.idle_cost);
        // `idle` can only exceed `room` when the spend went down (a clock or price change).
        self.totals.idle_cost = idle.min(spent.max(Money::ZERO));
        self.non_idle = self
            .non_idle
            .max(spent.saturating_sub(self.totals.idle_cost));
    }

    fn check_budget(&mut self, now: i64) -> Vec<BudgetEvent> {
        let Some(budget) = self.cfg.pricing.budget else {
            return Vec::new();
        };
        let spent = self.spent_in_period(budget.period);
        let forecast = self.projected_end_of(budget.period);
        self.budget.check(&budget, now, spent, forecast)
    }
}
