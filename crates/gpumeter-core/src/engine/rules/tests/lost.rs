//! The lost-GPU rule through the whole rule set: the first lost reading fires, GPUs group,
//! the money agrees with billing, the hold before clearing, the unpriced words.

use gpumeter_model::{GpuState, Snapshot, XidCount};

use super::super::tests::{T0, drive, machine};
use super::super::{Alert, AlertKind, Rules, Severity, Transition};
use crate::clock::{Clock, FakeClock};

/// `n` busy GPUs at `t`, those in `lost` answering GPU_IS_LOST (identity kept, readings gone).
fn gpus(t: i64, n: u32, lost: &[u32]) -> Snapshot {
    let mut s = machine(t, [95, 95]);
    let proto = s.gpus[0].clone();
    s.gpus = (0..n)
        .map(|i| {
            let mut g = proto.clone();
            g.index = i;
            if lost.contains(&i) {
                g = gpumeter_model::GpuReading {
                    index: i,
                    state: GpuState::Lost,
                    ..Default::default()
                };
            }
            g
        })
        .collect();
    s
}

fn lost_fired(ts: &[Transition]) -> Vec<&Alert> {
    ts.iter()
        .filter_map(|t| match t {
            Transition::Fired(a) if a.kind == AlertKind::Lost => Some(a),
            _ => None,
        })
        .collect()
}

#[test]
fn the_first_lost_reading_fires_high_naming_the_gpu_and_its_share_of_the_rate() {
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    // 4 GPUs at $12.40/h: GPU 2's share is $3.10/h.
    let ts = drive(&mut r, &clock, 10, Some(12_400_000), |_, t| gpus(t, 4, &[]));
    assert!(lost_fired(&ts).is_empty());
    let now = clock.now_unix_ms();
    let ts = r.evaluate(
        &gpus(now, 4, &[2]),
        now,
        Some(crate::money::Money::from_micros(12_400_000)),
    );
    let fired = lost_fired(&ts);
    assert_eq!(fired.len(), 1, "{ts:#?}");
    let a = fired[0];
    assert_eq!(a.severity, Severity::High);
    assert_eq!(a.gpu, Some(2));
    assert_eq!(
        a.title,
        "GPU 2 lost (GPU_IS_LOST) — the box still bills $3.10/h for it; a reboot or a new instance"
    );
    assert_eq!(a.cost_micros, Some(0));
    // A minute on: the lost card's share over that minute, and XID 79 named once seen.
    let ts = drive(&mut r, &clock, 61, Some(12_400_000), |_, t| {
        let mut s = gpus(t, 4, &[2]);
        s.gpus[2].xid_errors = Some(vec![XidCount { xid: 79, count: 1 }]);
        s
    });
    assert!(lost_fired(&ts).is_empty(), "one alert: {ts:#?}");
    // The XID is the same event: no XID alert beside the lost one.
    assert!(
        ts.iter().all(|t| t.alert().kind != AlertKind::Xid),
        "{ts:#?}"
    );
    assert!(r.alerts().iter().all(|a| a.kind != AlertKind::Xid));
    let a = r
        .alerts()
        .iter()
        .find(|a| a.kind == AlertKind::Lost)
        .unwrap();
    assert!(
        a.title.starts_with("GPU 2 lost (XID 79 / GPU_IS_LOST) —"),
        "{}",
        a.title
    );
    let minute = crate::money::Money::from_micros(3_100_000).cost_for_ms(60_000);
    assert_eq!(a.cost_micros, Some(minute.micros()));
}

#[test]
fn gpus_lost_together_are_one_alert_and_all_lost_bills_for_nothing() {
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 3, Some(4_000_000), |_, t| {
        gpus(t, 4, &[1, 2])
    });
    let fired = lost_fired(&ts);
    assert_eq!(fired.len(), 1, "{ts:#?}");
    assert_eq!(fired[0].gpu, None);
    assert!(
        fired[0]
            .title
            .starts_with("GPUs 1, 2 lost (GPU_IS_LOST) — the box still bills $2.00/h for them"),
        "{}",
        fired[0].title
    );

    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let all: Vec<u32> = (0..8).collect();
    let ts = drive(&mut r, &clock, 3, Some(24_000_000), |_, t| gpus(t, 8, &all));
    let fired = lost_fired(&ts);
    assert_eq!(fired.len(), 1, "{ts:#?}");
    assert_eq!(
        fired[0].title,
        "GPUs 0–7 lost (GPU_IS_LOST): all of them — the box bills for nothing at $24.00/h; stop \
         it, then a reboot or a new instance"
    );
    // Lost is the cause: the idle rule does not report the dead box as well.
    let ts = drive(&mut r, &clock, 20 * 60, Some(24_000_000), |_, t| {
        gpus(t, 8, &all)
    });
    assert!(
        ts.iter().all(|t| t.alert().kind == AlertKind::Lost),
        "{ts:#?}"
    );
}

#[test]
fn it_clears_only_after_the_gpu_answered_again_for_the_hold() {
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let hold_s = r.config().lost.clear_after_ms / 1000;
    drive(&mut r, &clock, 10, None, |_, t| gpus(t, 2, &[1]));
    // Back, but dropping out once more on the way: one alert, and the hold starts over.
    let ts = drive(&mut r, &clock, hold_s + 30, None, |s, t| {
        if s == 30 {
            gpus(t, 2, &[1])
        } else {
            gpus(t, 2, &[])
        }
    });
    assert!(
        ts.iter().all(|t| t.alert().kind != AlertKind::Lost),
        "{ts:#?}"
    );
    // Unreadable is not back either.
    let ts = drive(&mut r, &clock, hold_s, None, |_, t| {
        let mut s = gpus(t, 2, &[]);
        s.gpus[1].state = GpuState::Error;
        s
    });
    assert!(ts.is_empty(), "{ts:#?}");
    let ts = drive(&mut r, &clock, hold_s - 1, None, |_, t| gpus(t, 2, &[]));
    assert!(ts.is_empty(), "{ts:#?}");
    let ts = drive(&mut r, &clock, 2, None, |_, t| gpus(t, 2, &[]));
    assert!(
        matches!(ts.as_slice(), [Transition::Cleared(a)] if a.kind == AlertKind::Lost),
        "{ts:#?}"
    );
}

#[test]
fn unpriced_it_says_so_without_money_and_a_transient_error_is_not_lost() {
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 2, None, |_, t| gpus(t, 2, &[0]));
    let a = lost_fired(&ts)[0];
    assert_eq!(
        a.title,
        "GPU 0 lost (GPU_IS_LOST) — the box still bills for it (no price set); a reboot or a new \
         instance"
    );
    assert_eq!(a.cost_micros, None);
    let ts = drive(&mut r, &clock, 2, None, |_, t| gpus(t, 2, &[0, 1]));
    assert!(
        r.alerts().iter().any(|a| a.kind == AlertKind::Lost
            && a.title
                .contains("all of them — the box bills for nothing (no price set)")),
        "{ts:#?}"
    );

    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 120, Some(4_000_000), |s, t| {
        let mut snap = gpus(t, 2, &[]);
        if (30..50).contains(&s) {
            snap.gpus[1] = gpumeter_model::GpuReading {
                index: 1,
                state: GpuState::Error,
                ..Default::default()
            };
        }
        snap
    });
    assert!(lost_fired(&ts).is_empty(), "{ts:#?}");
}

/// Through the engine with a meter: the rate per GPU the alert names is the billing view's
/// (the instance rate without the extras, split over the GPUs), not the burn over the GPUs.
#[test]
fn the_money_is_the_billing_views_rate_per_gpu() {
    use crate::billing::{ClockStart, Meter, MeterConfig, Pricing, Rate};
    use crate::engine::Engine;
    let mut pricing = Pricing::simple(Rate::parse("13.40/h").unwrap());
    pricing.clock_start = ClockStart::FirstSample;
    pricing.extras_per_hour = crate::money::Money::from_micros(1_000_000);
    let meter = Meter::new(MeterConfig {
        pricing,
        tick_cap_ms: 10_000,
    });
    let mut e = Engine::new().with_meter(meter);
    for s in 0..5 {
        let t = T0 + s * 1000;
        e.ingest(gpus(t, 4, if s < 3 { &[] } else { &[2] }));
    }
    let view = e.billing().unwrap();
    let per_gpu = view.currency.format(view.list_per_gpu_hour.unwrap());
    assert_eq!(per_gpu, "$3.35");
    assert_eq!(view.burn_per_hour.micros(), 14_400_000);
    let a = e
        .alerts()
        .iter()
        .find(|a| a.kind == AlertKind::Lost)
        .unwrap();
    assert!(
        a.title.contains(&format!("bills {per_gpu}/h for it")),
        "{}",
        a.title
    );
}
