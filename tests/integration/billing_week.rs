//! A week of simulated minutes (idle nights, busy days) through the headless meter into a
//! ledger, then `report` per day as JSON, CSV and text.

use gpumeter::report::{ReportFormat, ReportOptions, render::CSV_HEADER, run_report};
use gpumeter::watch::{WatchClock, WatchOptions, run_watch};
use gpumeter_core::billing::{Budget, ClockStart, Pricing, Rate};
use gpumeter_core::clock::{Clock, FakeClock};
use gpumeter_core::source::{Source, SourceError};
use gpumeter_model::{GpuReading, Snapshot};

const MONDAY: i64 = 1_767_571_200_000; // 2026-01-05T00:00:00Z
const MIN: i64 = 60_000;
const DAY: i64 = 86_400_000;

/// 8 GPUs, busy from 08:00 to 20:00 UTC, idle at night; energy counters at 300 W busy, 60 W idle.
struct Week {
    clock: FakeClock,
    last_ms: Option<i64>,
    energy_mj: u64,
}

impl Source for Week {
    fn sample(&mut self) -> Result<Snapshot, SourceError> {
        let now = self.clock.now_unix_ms();
        let hour = now.rem_euclid(DAY) / 3_600_000;
        let busy = (8..20).contains(&hour);
        let watts = if busy { 300 } else { 60 };
        if let Some(last) = self.last_ms {
            self.energy_mj += u64::try_from((now - last) * watts).unwrap();
        }
        self.last_ms = Some(now);
        let mut s = Snapshot::empty("week", now);
        s.system.hostname = Some("h100-box".into());
        for index in 0..8 {
            s.gpus.push(GpuReading {
                index,
                util_gpu_pct: Some(if busy { 93 } else { 0 }),
                util_memory_pct: Some(if busy { 40 } else { 0 }),
                energy_millijoules: Some(self.energy_mj),
                power_watts: Some(watts as f64),
                ..GpuReading::default()
            });
        }
        Ok(s)
    }

    fn label(&self) -> String {
        "week".into()
    }
}

#[test]
fn a_week_of_minutes_reports_per_day() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.sqlite");
    let clock = FakeClock::new(MONDAY);
    let mut source = Week {
        clock: clock.clone(),
        last_ms: None,
        energy_mj: 0,
    };
    let mut pricing = Pricing::simple(Rate::parse("31/h").unwrap());
    pricing.clock_start = ClockStart::FirstSample;
    pricing.budget = Some(Budget::parse("600/day").unwrap());
    let mut out = Vec::new();
    let mut err = Vec::new();
    let summary = run_watch(
        &mut source,
        &WatchClock::Fast(clock.clone()),
        Some(&pricing),
        Some(&ledger),
        WatchOptions {
            for_ms: Some(7 * DAY),
            interval_ms: MIN,
        },
        &mut out,
        &mut err,
    )
    .unwrap();
    let out = String::from_utf8(out).unwrap();
    assert_eq!(summary.ticks, 7 * 1_440 + 1);
    assert_eq!(summary.spent.unwrap().micros(), 7 * 744_000_000);
    // One line per minute, then the total.
    assert!(out.lines().filter(|l| l.contains("spent $")).count() >= 7 * 1_440);
    // A day costs $744: the 600/day budget's 100 % is crossed once each day.
    assert_eq!(
        summary
            .events
            .iter()
            .filter(|e| e.threshold == 100 && e.kind.name() == "actual")
            .count(),
        7
    );

    let args = |format| ReportOptions {
        since: std::time::Duration::from_secs(10 * 86_400),
        format,
    };
    let now = MONDAY + 7 * DAY + MIN;
    let mut json = Vec::new();
    run_report(&args(ReportFormat::Json), &ledger, now, &mut json).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let days = v["days"].as_array().unwrap();
    // Each tick bills the minute before it, in that minute: day 1 has all its 1440 minutes;
    // the 8th day holds only the energy its first reading measured.
    assert_eq!(days.len(), 8);
    assert_eq!(days[0]["key"], "2026-01-05");
    assert_eq!(days[0]["paid_hours"].as_f64().unwrap() * 60.0, 1_440.0);
    assert_eq!(days[7]["paid_hours"], 0.0);
    assert_eq!(days[7]["spend_micros"], 0);
    for d in &days[1..7] {
        assert_eq!(d["paid_hours"], 24.0, "{d}");
        assert_eq!(d["busy_gpu_hours"], 96.0, "{d}");
        assert_eq!(d["idle_gpu_hours"], 96.0, "{d}");
        assert_eq!(d["spend_micros"], 744_000_000, "{d}");
        assert_eq!(d["spend"], 744.0, "{d}");
        assert_eq!(d["idle_cost_micros"], 372_000_000, "{d}");
        assert_eq!(d["cost_per_busy_gpu_hour"], 7.75, "{d}");
        assert!(
            (d["energy_kwh"].as_f64().unwrap() - 34.56).abs() < 1e-9,
            "{d}"
        );
        assert!(d["starved_hours"].is_null());
        assert_eq!(d["currency"], "USD");
    }
    let total: i64 = days
        .iter()
        .map(|d| d["spend_micros"].as_i64().unwrap())
        .sum();
    assert_eq!(total, 7 * 744_000_000);
    let sessions = v["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0]["host"], "h100-box");
    assert_eq!(sessions[0]["spend_micros"], 7 * 744_000_000_i64);
    assert_eq!(sessions[0]["busy_gpu_hours"], 7.0 * 96.0);

    let mut csv = Vec::new();
    run_report(&args(ReportFormat::Csv), &ledger, now, &mut csv).unwrap();
    let csv = String::from_utf8(csv).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "scope,key,currency,paid_hours,busy_gpu_hours,idle_gpu_hours,idle_cost,starved_hours,spend,cost_per_busy_gpu_hour,energy_kwh"
    );
    assert_eq!(CSV_HEADER, csv.lines().next().unwrap());
    assert_eq!(
        lines.nth(1).unwrap(),
        "day,2026-01-06,USD,24.0000,96.0000,96.0000,372,,744,7.750000,34.5600"
    );
    assert_eq!(csv.lines().filter(|l| l.starts_with("session,")).count(), 1);

    let mut text = Vec::new();
    run_report(&args(ReportFormat::Table), &ledger, now, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    let bar_line = text
        .lines()
        .find(|l| l.starts_with("2026-01-06") && l.contains('█'))
        .unwrap();
    assert!(bar_line.contains("$744.00"), "{bar_line}");
    assert_eq!(bar_line.chars().filter(|&c| c == '█').count(), 40, "{text}");

    // A shorter window leaves the older days out.
    let mut json = Vec::new();
    let two_days = ReportOptions {
        since: std::time::Duration::from_secs(2 * 86_400),
        format: ReportFormat::Json,
    };
    run_report(&two_days, &ledger, now, &mut json).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(v["days"].as_array().unwrap().len(), 3);
}
