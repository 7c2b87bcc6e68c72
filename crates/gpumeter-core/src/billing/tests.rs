//! Meter behaviour: exact spend, rounding, clock jumps, idle share, energy, budgets.

use gpumeter_model::testing::SnapshotBuilder;
use gpumeter_model::{GpuReading, GpuState, Snapshot};
use proptest::prelude::*;

use super::*;
use crate::money::{Currency, Money};

const H: i64 = 3_600_000;
const T0: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

fn snap(at: i64, utils: &[u32]) -> Snapshot {
    SnapshotBuilder::new("test", at).gpus(utils).build()
}

fn meter(rate: &str, granularity: Granularity) -> Meter {
    let mut pricing = Pricing::simple(Rate::parse(rate).unwrap());
    pricing.granularity = granularity;
    pricing.clock_start = ClockStart::FirstSample;
    Meter::new(MeterConfig {
        pricing,
        tick_cap_ms: 10_000,
    })
}

fn units(text: &str) -> Money {
    Money::parse(text).unwrap()
}

/// Ticks every `step` ms from `from` for `count` ticks; returns the last time.
fn run(m: &mut Meter, from: i64, step: i64, count: i64, utils: &[u32]) -> i64 {
    let mut t = from;
    for _ in 0..count {
        t += step;
        m.observe(&snap(t, utils), t);
    }
    t
}

#[test]
fn granularity_applies_to_the_metered_time() {
    // $36/h = $0.01 per second.
    let cases = [
        (Granularity::PerSecondMin60, 59, "0.60"),
        (Granularity::PerSecondMin60, 61, "0.61"),
        (Granularity::PerSecond, 59, "0.59"),
        (Granularity::PerMinute, 61, "1.20"),
        (Granularity::PerHour, 3_601, "72"),
    ];
    for (g, seconds, want) in cases {
        let mut m = meter("36/h", g);
        m.observe(&snap(T0, &[0]), T0);
        run(&mut m, T0, 1_000, seconds, &[0]);
        assert_eq!(m.spent(), units(want), "{g:?} {seconds}s");
    }
}

#[test]
fn clock_jumps_neither_create_nor_destroy_money() {
    let mut m = meter("36/h", Granularity::PerSecond);
    m.observe(&snap(T0, &[50]), T0);
    let t = run(&mut m, T0, 1_000, 10, &[50]);
    assert_eq!(m.totals().paid_ms, 10_000);
    // NTP steps back an hour: nothing credited, and the next ticks count normally.
    let back = t - H;
    m.observe(&snap(back, &[50]), back);
    assert_eq!(m.totals().paid_ms, 10_000);
    let t = run(&mut m, back, 1_000, 5, &[50]);
    assert_eq!(m.totals().paid_ms, 15_000);
    // A suspend of 8 hours credits only the cap (10 s).
    m.observe(&snap(t + 8 * H, &[50]), t + 8 * H);
    assert_eq!(m.totals().paid_ms, 25_000);
    assert_eq!(m.spent(), units("0.25"));
}

#[test]
fn boot_clock_start_credits_the_time_before_the_first_reading() {
    let mut pricing = Pricing::simple(Rate::parse("2/gpu-h").unwrap());
    pricing.clock_start = ClockStart::Boot;
    let mut m = Meter::new(MeterConfig {
        pricing,
        tick_cap_ms: 10_000,
    });
    let mut s = snap(T0 + 2 * H, &[0, 0, 0, 0]);
    s.system.boot_time_unix_s = Some(T0 / 1_000);
    m.observe(&s, T0 + 2 * H);
    assert_eq!(m.start_unix_ms(), Some(T0));
    assert_eq!(m.last_tick().catch_up_ms, 2 * H);
    assert_eq!(m.last_tick().credited_ms, 0);
    assert_eq!(m.spent(), units("16")); // 4 GPUs × $2 × 2 h
    assert_eq!(m.totals().observed_ms, 0);
}

#[test]
fn monthly_price_is_spread_over_each_calendar_month() {
    let feb = 1_769_904_000_000; // 2026-02-01T00:00:00Z (28 days)
    let mut pricing = Pricing::simple(Rate::parse("2800/month").unwrap());
    pricing.clock_start = ClockStart::At(feb - 24 * H); // Jan 31
    let mut m = Meter::new(MeterConfig {
        pricing,
        tick_cap_ms: 10_000,
    });
    m.observe(&snap(feb + 28 * 24 * H, &[0]), feb + 28 * 24 * H);
    // One day of January (2800/31) plus all of February (2800).
    let jan_day = Money::from_units(2800).unwrap().mul_div(1, 31);
    assert_eq!(m.spent(), units("2800").saturating_add(jan_day));
    // The month base was taken at 1 March: nothing spent in March yet.
    assert_eq!(m.spent_in_period(BudgetPeriod::Month), Money::ZERO);
}

#[test]
fn idle_share_busy_hours_and_cost_per_busy_gpu_hour() {
    let mut m = meter("10/h", Granularity::PerSecond);
    m.observe(&snap(T0, &[90, 0]), T0);
    let t = run(&mut m, T0, 10_000, 360, &[90, 0]); // 1 h, one of two GPUs busy
    run(&mut m, t, 10_000, 360, &[3, 1]); // 1 h, both idle
    assert_eq!(m.spent(), units("20"));
    assert_eq!(m.busy_gpu_hours(), 1.0);
    assert_eq!(m.totals().idle_ms, H);
    assert_eq!(m.idle_share(), Some(0.5));
    assert_eq!(m.cost_per_busy_gpu_hour(), Some(units("20")));
    let v = m.view();
    assert_eq!(v.list_per_gpu_hour, Some(units("5")));
    assert_eq!((v.gpus, v.busy_gpus), (2, 0));
}

#[test]
fn memory_controller_activity_counts_as_busy_and_lost_gpus_do_not() {
    let mut m = meter("1/gpu-h", Granularity::PerSecond);
    let mut s = snap(T0, &[0, 0, 80]);
    s.gpus[1].util_memory_pct = Some(40);
    s.gpus[2].state = GpuState::Lost;
    m.observe(&s, T0);
    let mut s2 = s.clone();
    s2.taken_at_unix_ms = T0 + 1_000;
    m.observe(&s2, T0 + 1_000);
    let busy: Vec<bool> = m.last_tick().gpus.iter().map(|g| g.busy).collect();
    assert_eq!(busy, vec![false, true, false]);
    // The lost GPU is still rented: 3 GPU-seconds at $1/GPU-h.
    assert_eq!(m.spent(), Money::from_micros(833));
}

/// A lost card is idle paid time even while the others work: one of three lost for 3 h (a
/// split that does not divide evenly per tick) is exactly 1 h of idle, a third of the spend.
#[test]
fn a_lost_gpu_is_idle_spend_while_the_others_work() {
    let mut m = meter("3/h", Granularity::PerSecond);
    let lost = |at: i64| {
        let mut s = snap(at, &[90, 90, 0]);
        s.gpus[2] = GpuReading {
            index: 2,
            state: GpuState::Lost,
            ..GpuReading::default()
        };
        s
    };
    m.observe(&lost(T0), T0);
    for i in 1..=3 * 3600 {
        let at = T0 + i * 1_000;
        m.observe(&lost(at), at);
    }
    assert_eq!(m.totals().idle_ms, H);
    assert_eq!(m.spent(), units("9"));
    assert_eq!(m.totals().idle_cost, units("3"));
    let share = m.idle_share().unwrap();
    assert!((share - 1.0 / 3.0).abs() < 1e-9, "{share}");
    assert_eq!(m.view().idle_cost, units("3"));
}

#[test]
fn energy_comes_from_counter_deltas_and_survives_resets() {
    let mut pricing = Pricing::simple(Rate::parse("0/h").unwrap());
    pricing.electricity_per_kwh = Some(units("0.30"));
    pricing.clock_start = ClockStart::FirstSample;
    let mut m = Meter::new(MeterConfig {
        pricing,
        tick_cap_ms: 10_000,
    });
    let at = |t: i64, mj: u64| {
        let mut s = snap(t, &[50]);
        s.gpus[0].energy_millijoules = Some(mj);
        s
    };
    m.observe(&at(T0, 5_000_000_000), T0);
    assert_eq!(m.view().energy_kwh, Some(0.0));
    m.observe(&at(T0 + 1_000, 5_000_000_000 + 1_800_000_000), T0 + 1_000); // 0.5 kWh
    m.observe(&at(T0 + 2_000, 1_000), T0 + 2_000); // driver reload: counter reset
    m.observe(&at(T0 + 3_000, 1_800_001_000), T0 + 3_000); // 0.5 kWh more
    assert_eq!(m.totals().energy_mj, 3_600_000_000);
    assert_eq!(m.view().energy_kwh, Some(1.0));
    assert_eq!(m.energy_cost(), Some(units("0.30")));
    assert_eq!(m.spent(), units("0.30"));
    let none = meter("1/h", Granularity::PerSecond);
    assert_eq!(none.view().energy_kwh, None);
}

#[test]
fn egress_and_extras_are_billed() {
    let mut pricing = Pricing::simple(Rate::parse("1/h").unwrap());
    pricing.extras_per_hour = units("0.5");
    pricing.egress_per_gb = units("0.09");
    pricing.clock_start = ClockStart::FirstSample;
    let mut m = Meter::new(MeterConfig {
        pricing,
        tick_cap_ms: 10_000,
    });
    let mut t = T0;
    m.observe(&snap(t, &[0]), t);
    for _ in 0..360 {
        t += 10_000;
        let mut s = snap(t, &[0]);
        s.host.net_tx_bytes_per_s = Some(277_777.78); // ≈ 1 GB per hour
        m.observe(&s, t);
    }
    assert_eq!(m.totals().egress_bytes / 1_000_000, 1_000);
    assert_eq!(Currency::USD.format(m.spent()), "$1.59");
    // The egress share of that, and its rate now: the figures the spend panel's line shows.
    let v = m.view();
    assert_eq!(Currency::USD.format(v.egress_cost), "$0.09");
    assert_eq!(Currency::USD.format(v.egress_per_hour), "$0.09");
}

#[test]
fn budget_crossings_come_out_of_observe_once_each() {
    let mut pricing = Pricing::simple(Rate::parse("36/h").unwrap());
    pricing.clock_start = ClockStart::FirstSample;
    pricing.budget = Some(Budget::parse("10/run").unwrap());
    let mut m = Meter::new(MeterConfig {
        pricing,
        tick_cap_ms: 10_000,
    });
    let mut seen = Vec::new();
    let mut t = T0;
    for _ in 0..=1_200 {
        for e in m.observe(&snap(t, &[99]), t) {
            seen.push((e.threshold, e.kind, (e.at_unix_ms - T0) / 1_000));
        }
        t += 1_000;
    }
    assert_eq!(
        seen,
        vec![
            (50, BudgetEventKind::Actual, 500),
            (80, BudgetEventKind::Actual, 800),
            (100, BudgetEventKind::Actual, 1_000),
        ]
    );
    assert_eq!(m.time_to_budget(), Some((0, t - 1_000)));
}

#[test]
fn day_budget_forecast_projection_and_countdown() {
    let mut pricing = Pricing::simple(Rate::parse("10/h").unwrap());
    pricing.clock_start = ClockStart::FirstSample;
    pricing.budget = Some(Budget::parse("200/day").unwrap());
    let mut m = Meter::new(MeterConfig {
        pricing,
        tick_cap_ms: 120_000,
    });
    let start = T0 + 23 * H; // 23:00 UTC
    let mut events = Vec::new();
    let mut t = start;
    for i in 0..=180 {
        t = start + i * 60_000;
        events.extend(m.observe(&snap(t, &[50]), t));
        if i == 60 {
            // Midnight: the day's spend starts again from zero.
            assert_eq!(m.spent_in_period(BudgetPeriod::Day), Money::ZERO);
            assert_eq!(m.spent(), units("10"));
        }
    }
    // 02:00. At midnight the forecast (0 + 24 h × $10) crossed 200, reported once.
    assert_eq!(events.len(), 1);
    assert_eq!(
        (events[0].kind, events[0].at_unix_ms),
        (BudgetEventKind::Forecast, T0 + 24 * H)
    );
    let v = m.view();
    assert_eq!(v.spent_today, units("20"));
    assert_eq!(v.projected_end_of_day, Some(units("240")));
    let b = v.budget.unwrap();
    assert_eq!(b.ceiling_in_ms, Some(18 * H));
    assert_eq!(b.ceiling_at_unix_ms, Some(t + 18 * H));
    assert_eq!(b.forecast, Some(units("240")));
    assert_eq!(b.share, 0.1);
}

proptest! {
    /// Spend is monotonic and always equals the direct formula over the credited time.
    #[test]
    fn spend_matches_the_direct_formula(
        deltas in prop::collection::vec(-200_000_i64..400_000, 1..200),
        g in 0_usize..4,
        gpus in 1_usize..9,
        rate_cents in 0_i64..100_000,
    ) {
        let granularity = Granularity::ALL[g];
        let rate = Money::from_micros(rate_cents * 10_000);
        let mut m = meter(&format!("{rate}/gpu-h"), granularity);
        let utils = vec![50; gpus];
        let mut t = T0;
        let mut paid = 0_i64;
        let mut last = Money::ZERO;
        m.observe(&snap(t, &utils), t);
        for d in deltas {
            t += d;
            m.observe(&snap(t, &utils), t);
            paid += d.clamp(0, 10_000);
            let want = rate.mul_div(
                i128::try_from(gpus).unwrap() * i128::from(granularity.bill_ms(paid)),
                i128::from(H),
            );
            prop_assert_eq!(m.totals().paid_ms, paid);
            prop_assert_eq!(m.spent(), want);
            prop_assert!(m.spent() >= last);
            last = m.spent();
        }
    }

    /// Days partition the spend: the bases taken at each midnight add up to the total.
    /// Idle cost never grows faster than the spend, whatever the rate, the granularity and where
    /// busy and idle stretches split: every tick (and so every minute, day and session the
    /// ledger sums from the ticks) has idle cost ≤ spend.
    #[test]
    fn idle_cost_never_outgrows_the_spend(
        rate_micros in 1_i64..50_000_000_000,
        g in 0_usize..5,
        gpus in 1_usize..5,
        stretches in prop::collection::vec((any::<bool>(), 1_i64..400, 1_i64..20_000), 1..12),
    ) {
        let granularity = Granularity::ALL[g];
        let rate = Money::from_micros(rate_micros);
        let n = i64::try_from(stretches.len()).unwrap();
        let mut m = meter(&format!("{rate}/gpu-h"), granularity);
        let mut t = T0 + 23 * H + 30 * 60_000; // across a midnight
        m.observe(&snap(t, &vec![50; gpus]), t);
        let (mut spent, mut idle) = (m.totals().spent, m.totals().idle_cost);
        for (busy, ticks, step) in stretches {
            let utils = vec![if busy { 90 } else { 0 }; gpus];
            for _ in 0..ticks {
                t += step;
                m.observe(&snap(t, &utils), t);
                let now = m.totals();
                prop_assert!(now.idle_cost <= now.spent, "{:?}", now);
                prop_assert!(now.idle_cost >= idle, "idle cost went down: {:?}", now);
                prop_assert!(
                    now.idle_cost.saturating_sub(idle) <= now.spent.saturating_sub(spent),
                    "idle grew faster than spend: {:?} after ({:?}, {:?})", now, spent, idle
                );
                (spent, idle) = (now.spent, now.idle_cost);
            }
        }
        // Per-second billing bills whole seconds: idle cost is the list rate's, behind it by at
        // most about the second the bill has not reached yet, plus rounding: bounded, not growing.
        if granularity == Granularity::PerSecond {
            let per_hour = rate.mul_div(i128::try_from(gpus).unwrap(), 1);
            let honest = per_hour.cost_for_ms(m.totals().idle_ms);
            let behind = honest.saturating_sub(m.totals().idle_cost).micros();
            let slack = 2 * per_hour.cost_for_ms(1_000).micros() + n + 2;
            prop_assert!((0..=slack).contains(&behind), "{behind} behind the list rate");
        }
    }

    #[test]
    fn spend_today_never_exceeds_total(steps in prop::collection::vec(1_i64..10_000, 1..300)) {
        let mut m = meter("7.77/h", Granularity::PerSecond);
        let mut t = T0 + 23 * H + 59 * 60_000;
        m.observe(&snap(t, &[1]), t);
        for s in steps {
            t += s;
            m.observe(&snap(t, &[1]), t);
            prop_assert!(m.spent_in_period(BudgetPeriod::Day) <= m.spent());
            prop_assert!(!m.spent_in_period(BudgetPeriod::Day).is_negative());
        }
    }
}

#[test]
fn time_before_the_first_reading_is_paid_but_not_counted_as_busy_or_idle() {
    // The clock started at boot, 10 h before gpumeter first looked; then 1 h watched with
    // one of two GPUs busy.
    let mut pricing = Pricing::simple(Rate::parse("10/h").unwrap());
    pricing.clock_start = ClockStart::At(T0 - 10 * H);
    let mut m = Meter::new(MeterConfig {
        pricing,
        tick_cap_ms: 20_000,
    });
    m.observe(&snap(T0, &[90, 0]), T0);
    let t = run(&mut m, T0, 10_000, 360, &[90, 0]);
    run(&mut m, t, 10_000, 360, &[3, 1]); // 1 h more, both idle
    assert_eq!(m.spent(), units("120"));
    // Of the 2 h watched, 1 h idle; $20 of watched spend over 1 busy GPU-hour.
    assert_eq!(m.idle_share(), Some(0.5));
    assert_eq!(m.cost_per_busy_gpu_hour(), Some(units("20")));
}
