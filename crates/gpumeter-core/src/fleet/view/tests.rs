use super::*;
use crate::fleet::poll::Failure;
use gpumeter_model::{AlertSummary, BillingSummary, BudgetSummary, Document, GpuReading, Snapshot};

const NOW: i64 = 1_800_000_000_000;

fn gpu(index: u32, util: u32) -> GpuReading {
    GpuReading {
        index,
        util_gpu_pct: Some(util),
        util_memory_pct: Some(util),
        memory_used_bytes: Some(10 << 30),
        memory_total_bytes: Some(80 << 30),
        ..GpuReading::default()
    }
}

fn billing(burn: i64, gpus: u32, busy: u32) -> BillingSummary {
    BillingSummary {
        currency: "USD".into(),
        rate: "31/h".into(),
        rate_source: "yours".into(),
        rate_note: String::new(),
        granularity: "per-second".into(),
        clock_start_unix_ms: None,
        paid_ms: 0,
        spent_micros: 0,
        spent_today_micros: burn * 2,
        burn_per_hour_micros: burn,
        idle_spend_micros: 0,
        idle_share: None,
        cost_per_busy_gpu_hour_micros: None,
        projected_end_of_day_micros: None,
        projected_end_of_month_micros: None,
        budget: None,
        gpus,
        busy_gpus: busy,
        stopped_storage: None,
    }
}

/// A host answering with `utils` GPUs at `burn` micro-units an hour (`None`: unpriced).
fn doc(utils: &[u32], burn: Option<i64>) -> Box<Document> {
    let mut snap = Snapshot::empty("demo:x", NOW - 1_000);
    snap.gpus = utils
        .iter()
        .enumerate()
        .map(|(i, u)| gpu(i as u32, *u))
        .collect();
    let busy = utils.iter().filter(|u| **u > 5).count() as u32;
    Box::new(Document {
        snapshot: snap,
        billing: burn.map(|b| billing(b, utils.len() as u32, busy)),
        alerts: Vec::new(),
    })
}

fn fleet(names: &[&str]) -> Fleet {
    let hosts: Vec<Host> = names
        .iter()
        .map(|n| Host {
            name: (*n).into(),
            base: format!("http://{n}:9958"),
            token: None,
        })
        .collect();
    Fleet::new(&hosts)
}

fn ok(host: usize, d: Box<Document>) -> PollEvent {
    PollEvent {
        host,
        at_unix_ms: NOW - 500,
        result: Ok(d),
    }
}

fn fail(host: usize, at: i64, f: Failure) -> PollEvent {
    PollEvent {
        host,
        at_unix_ms: at,
        result: Err(f),
    }
}

#[test]
fn a_row_has_busy_gpus_util_vram_and_the_idle_share_of_the_burn() {
    let mut f = fleet(&["a"]);
    f.apply(ok(0, doc(&[90, 70, 0, 0], Some(40_000_000))));
    let r = row(0, &f.hosts[0], NOW);
    assert_eq!(r.state, RowState::Up);
    assert_eq!((r.busy_gpus, r.gpus), (Some(2), Some(4)));
    assert_eq!(r.mean_util_pct, Some(40.0));
    assert_eq!(r.vram_used_bytes, Some(40 << 30));
    assert_eq!(r.vram_total_bytes, Some(320 << 30));
    assert_eq!(r.burn_per_hour, Some(Money::from_micros(40_000_000)));
    // 2 of 4 GPUs idle: half the burn pays for nothing.
    assert_eq!(r.idle_burn_per_hour, Some(Money::from_micros(20_000_000)));
    assert_eq!(r.spent_today, Some(Money::from_micros(80_000_000)));
    assert_eq!(r.sample_age_ms, Some(1_000));
    assert!(!r.is_idle());
}

#[test]
fn without_billing_the_busy_count_comes_from_the_idle_rule_and_money_is_unknown() {
    let mut f = fleet(&["a"]);
    f.apply(ok(0, doc(&[0, 50], None)));
    let r = row(0, &f.hosts[0], NOW);
    assert_eq!(r.busy_gpus, Some(1));
    assert_eq!(
        (r.burn_per_hour, r.idle_burn_per_hour, r.currency),
        (None, None, None)
    );
}

#[test]
fn a_down_host_keeps_its_last_seen_time_first_failure_and_last_burn_for_a_while() {
    let mut f = fleet(&["a"]);
    f.apply(ok(0, doc(&[0], Some(1_000_000))));
    f.apply(fail(0, NOW - 200, Failure::Timeout));
    f.apply(fail(
        0,
        NOW - 100,
        Failure::Unreachable("connection refused".into()),
    ));
    assert_eq!(f.hosts[0].failure.as_ref().unwrap().1, NOW - 200);
    let r = row(0, &f.hosts[0], NOW);
    assert_eq!(r.state.label(), "down");
    assert_eq!(r.error.as_deref(), Some("connection refused"));
    assert_eq!(r.last_seen_unix_ms, Some(NOW - 500));
    // Silent, it bills on: its last burn stands, with how long it has been silent…
    assert_eq!(r.burn_per_hour, Some(Money::from_micros(1_000_000)));
    assert_eq!(r.silent_ms, Some(500));
    let text = crate::fleet::cells::down_text(&r);
    assert!(
        text.contains("ago") && text.contains("last burn $1.00/h kept"),
        "{text}"
    );
    // …until it has been gone longer than KEEP_SILENT_MS.
    let later = row(0, &f.hosts[0], NOW + KEEP_SILENT_MS);
    assert_eq!(later.burn_per_hour, None);
    assert_eq!(totals(&[later]).silent_kept, 0);
    // Back again.
    f.apply(ok(0, doc(&[0], Some(1_000_000))));
    assert_eq!(row(0, &f.hosts[0], NOW).state, RowState::Up);
}

#[test]
fn an_old_reading_is_stale_and_an_unanswered_host_is_waiting() {
    let mut f = fleet(&["a", "b"]);
    let mut d = doc(&[0], None);
    d.snapshot.taken_at_unix_ms = NOW - STALE_MS - 1;
    f.apply(ok(0, d));
    assert_eq!(row(0, &f.hosts[0], NOW).state, RowState::Stale);
    assert_eq!(row(1, &f.hosts[1], NOW).state, RowState::Waiting);
}

#[test]
fn the_worst_alert_is_the_first_and_its_title_is_sanitized() {
    let mut f = fleet(&["a"]);
    let mut d = doc(&[0], None);
    d.alerts.push(AlertSummary {
        id: "idle".into(),
        kind: "idle".into(),
        severity: "moderate".into(),
        gpu: None,
        title: "idle \u{1b}[31mred".into(),
        detail: String::new(),
        evidence: Vec::new(),
        cost_micros: None,
        currency: "USD".into(),
        next_step: None,
        since_unix_ms: 0,
    });
    f.apply(ok(0, d));
    let a = row(0, &f.hosts[0], NOW).alert.unwrap();
    assert_eq!(a.severity, "moderate");
    assert!(!a.title.contains('\u{1b}'), "{:?}", a.title);
}

#[test]
fn budgets_show_the_period_and_the_forecast() {
    let mut f = fleet(&["a"]);
    let mut d = doc(&[0], Some(1_000_000));
    d.billing.as_mut().unwrap().budget = Some(BudgetSummary {
        amount_micros: 100,
        period: "day".into(),
        spent_micros: 62,
        used_ratio: 0.62,
        forecast_micros: Some(130),
        forecast_ratio: Some(1.3),
        ceiling_at_unix_ms: None,
    });
    f.apply(ok(0, d));
    let b = row(0, &f.hosts[0], NOW).budget.unwrap();
    assert_eq!(crate::fleet::cells::budget(&b), "62%/day →130%");
}

fn names(rows: &[HostRow]) -> Vec<&str> {
    rows.iter().map(|r| r.name.as_str()).collect()
}

#[test]
fn rows_sort_by_idle_burn_first_with_unknowns_last_either_way() {
    let mut f = fleet(&["busy", "idle", "half", "down", "free"]);
    f.apply(ok(0, doc(&[90, 90], Some(10_000_000))));
    f.apply(ok(1, doc(&[0, 0], Some(10_000_000))));
    f.apply(ok(2, doc(&[90, 0], Some(10_000_000))));
    f.apply(fail(3, NOW, Failure::Timeout));
    f.apply(ok(4, doc(&[0], None)));
    let r = rows(&f, NOW, SortKey::IdleBurn, true);
    assert_eq!(names(&r), ["idle", "half", "busy", "down", "free"]);
    let r = rows(&f, NOW, SortKey::IdleBurn, false);
    assert_eq!(names(&r), ["busy", "half", "idle", "down", "free"]);
    let r = rows(&f, NOW, SortKey::Name, false);
    assert_eq!(names(&r), ["busy", "down", "free", "half", "idle"]);
    let r = rows(&f, NOW, SortKey::Util, true);
    assert_eq!(names(&r)[0], "busy");
    // Every key is reachable and the cycle comes back.
    let mut k = SortKey::IdleBurn;
    for _ in 0..SortKey::ALL.len() {
        k = k.next();
    }
    assert_eq!(k, SortKey::IdleBurn);
}

#[test]
fn totals_sum_answering_hosts_per_currency_and_count_idle_and_down() {
    let mut f = fleet(&["busy", "idle", "down", "eur"]);
    f.apply(ok(0, doc(&[90, 90], Some(10_000_000))));
    f.apply(ok(1, doc(&[0, 0], Some(31_000_000))));
    f.apply(ok(2, doc(&[0], Some(99_000_000))));
    f.apply(fail(2, NOW, Failure::Http(401)));
    let mut eur = doc(&[0], Some(2_000_000));
    eur.billing.as_mut().unwrap().currency = "EUR".into();
    f.apply(ok(3, eur));
    let t = totals(&rows(&f, NOW, SortKey::IdleBurn, true));
    assert_eq!((t.hosts, t.up, t.down, t.idle_hosts), (4, 3, 1, 2));
    assert_eq!((t.gpus, t.busy_gpus), (5, 2));
    assert_eq!(t.money.len(), 2);
    let usd = t.money.iter().find(|m| m.currency.code() == "USD").unwrap();
    // The down host ($99/h, idle when last seen) bills on: its last burn is kept.
    assert_eq!(t.silent_kept, 1);
    assert_eq!(usd.burn_per_hour, Money::from_micros(140_000_000));
    assert_eq!(usd.idle_burn_per_hour, Money::from_micros(130_000_000));
    assert_eq!(usd.spent_today, Money::from_micros(280_000_000));
    let line = crate::fleet::cells::totals_line(&t);
    assert!(line.contains("burn $140.00/h · idle $130.00/h"), "{line}");
    assert!(line.contains("1 silent: last burn kept"), "{line}");
    assert!(
        line.contains("2 of 4 hosts idle") && line.contains("1 down"),
        "{line}"
    );
}
