//! The rule changes the fourth blind round asked for (docs/accuracy.md, round 4), each pinned
//! on a small machine: a display card is in use, a deployed server is neither finished nor
//! forgotten, a power cap at the board's default is no throttling, a model loading is work and
//! no leak, ranks waiting on a live rank wait longer before they are hung, and a loop of a
//! long period is judged on its duty cycle when its host side works between bursts.

use super::*;
use gpumeter_model::ThrottleReason;

fn fired(ts: &[Transition], prefix: &str) -> usize {
    names(ts)
        .iter()
        .filter(|(what, id)| *what == "fired" && id.starts_with(prefix))
        .count()
}

#[test]
fn a_card_driving_a_desktop_is_never_left_idle() {
    let clock = FakeClock::new(T0);
    let run = |display: bool| {
        let mut r = Rules::default();
        drive(&mut r, &clock, 15 * 60, None, |_, t| {
            let mut m = machine(t, [3, 95]);
            m.processes
                .push(process(200, 1, 90.0, Some((1, 20 * GIB, 95))));
            if display {
                let mut x = process(300, 1, 2.0, Some((0, GIB / 2, 3)));
                x.name = Some("Xorg".into());
                x.gpu[0].kind = GpuProcessKind::Graphics;
                m.processes.push(x);
            }
            m
        })
    };
    assert_eq!(
        fired(&run(false), "idle:gpus"),
        1,
        "GPU 0 bare beside GPU 1"
    );
    assert_eq!(
        fired(&run(true), "idle:gpus"),
        0,
        "GPU 0 drives the desktop"
    );
}

#[test]
fn a_server_without_requests_is_idle_not_finished_nor_forgotten() {
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    // Requests for 10 min, then none for 40: the server lives on, holding its KV cache.
    let ts = drive(&mut r, &clock, 50 * 60, None, |s, t| {
        let busy = s < 600;
        let u = if busy { 70 } else { 0 };
        let mut m = machine(t, [u, u]);
        for (pid, g) in [(100, 0), (101, 1)] {
            let mut p = process(
                pid,
                50,
                if busy { 60.0 } else { 0.2 },
                Some((g, 70 * GIB, u)),
            );
            p.command = Some("python -m vllm.entrypoints.openai.api_server --tp 2".into());
            p.state = Some('S');
            p.start_time_unix_s = Some(T0 / 1000 - 86_400);
            m.processes.push(p);
        }
        m
    });
    assert_eq!(fired(&ts, "idle"), 1, "{:?}", names(&ts));
    assert_eq!(fired(&ts, "job_done"), 0, "{:?}", names(&ts));
    assert_eq!(fired(&ts, "forgotten"), 0, "{:?}", names(&ts));
}

#[test]
fn the_power_cap_counts_only_below_the_boards_default() {
    let clock = FakeClock::new(T0);
    let run_with = |limit: f64, default: Option<f64>| {
        let mut r = Rules::default();
        drive(&mut r, &clock, 3 * 60, None, |_, t| {
            let mut m = machine(t, [100, 100]);
            for g in &mut m.gpus {
                g.power_watts = Some(limit - 2.0);
                g.power_limit_watts = Some(limit);
                g.power_default_limit_watts = default;
                g.throttle_reasons = Some(vec![ThrottleReason::SwPowerCap]);
            }
            m
        })
    };
    let run = |limit: f64| run_with(limit, Some(700.0));
    assert_eq!(fired(&run(700.0), "throttle"), 0, "at its rated power");
    // A default unknown, or answered as 0 W, cannot clear the cap: it may have been lowered.
    assert_eq!(fired(&run_with(700.0, None), "throttle"), 1);
    assert_eq!(fired(&run_with(700.0, Some(0.0)), "throttle"), 1);
    let capped = run(300.0);
    assert_eq!(fired(&capped, "throttle"), 1, "lowered to 300 W");
    let a = capped
        .iter()
        .find(|t| t.alert().id.starts_with("throttle"))
        .map(|t| t.alert().clone())
        .unwrap();
    assert!(a.title.contains("lowered power cap"), "{}", a.title);
    assert!(
        a.evidence
            .iter()
            .any(|(k, v)| k == "power / limit" && v.contains("298/300 W (default 700 W)")),
        "{:?}",
        a.evidence
    );
}

#[test]
fn vram_filling_an_idle_gpu_is_a_model_loading_not_idle_nor_a_leak() {
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    // 12 min of weights arriving at 1.5 GiB/min on both shards, the SMs idle; then serving.
    let ts = drive(&mut r, &clock, 14 * 60, None, |s, t| {
        let loading = s < 720;
        let u = if loading { 1 } else { 60 };
        let mut m = machine(t, [u, u]);
        let used = GIB + (s.min(720) as u64) * GIB * 3 / 120;
        for g in 0..2 {
            m.gpus[g as usize].memory_used_bytes = Some(used);
            let mut p = process(100 + g, 50, 3.0, Some((g, used, u)));
            p.state = Some('D');
            m.processes.push(p);
        }
        m
    });
    assert_eq!(fired(&ts, "idle"), 0, "{:?}", names(&ts));
    assert_eq!(fired(&ts, "vram"), 0, "{:?}", names(&ts));
}

/// Two ranks of one launcher: rank 1 spins in the collective on GPU 1 from 60 s; rank 0 on
/// GPU 0 is alive and blocked (`exited`: it left at 60 s instead).
fn spin(s: i64, t: i64, exited: bool) -> Snapshot {
    let stuck = s >= 60;
    let mut m = machine(
        t,
        [if stuck { 0 } else { 95 }, if stuck { 100 } else { 95 }],
    );
    for g in &mut m.gpus {
        g.power_limit_watts = Some(400.0);
        g.power_watts = Some(if stuck { 80.0 } else { 350.0 });
    }
    m.gpus[1].util_memory_pct = Some(if stuck { 0 } else { 40 });
    if !(stuck && exited) {
        let mut r0 = process(
            100,
            50,
            if stuck { 0.0 } else { 90.0 },
            Some((0, 30 * GIB, 0)),
        );
        r0.state = Some(if stuck { 'D' } else { 'R' });
        m.processes.push(r0);
    }
    m.processes
        .push(process(101, 50, 99.0, Some((1, 30 * GIB, 0))));
    m
}

#[test]
fn ranks_waiting_on_a_live_rank_are_hung_after_five_minutes_on_a_dead_one_at_once() {
    // The first 4 min, then the next 4: stuck from 60 s, so 3 min stuck by the end of the first.
    let halves = |exited: bool| {
        let clock = FakeClock::new(T0);
        let mut r = Rules::default();
        let first = drive(&mut r, &clock, 4 * 60, None, |s, t| spin(s, t, exited));
        let second = drive(&mut r, &clock, 4 * 60, None, |s, t| {
            spin(s + 240, t, exited)
        });
        (first, second)
    };
    let (first, _) = halves(true);
    assert_eq!(fired(&first, "hung"), 1, "a rank gone: {:?}", names(&first));

    let (first, second) = halves(false);
    assert_eq!(
        fired(&first, "hung"),
        0,
        "3 min on a live rank: {:?}",
        names(&first)
    );
    let a = second
        .iter()
        .find(|t| t.name() == "fired" && t.alert().id == "hung")
        .map(|t| t.alert().clone())
        .unwrap_or_else(|| panic!("{:?}", names(&second)));
    assert!(
        a.evidence.iter().any(|(k, v)| k == "waiting on"
            && v.contains("GPU 0's rank (pid 100, in D state (blocked on I/O))")),
        "{:?}",
        a.evidence
    );
    // Dated from when it stuck: the reading at 60 s describes the second before it.
    assert_eq!((a.since_unix_ms - T0) / 1000, 59);
}

#[test]
fn a_long_period_loop_is_starved_when_its_host_side_works_between_bursts() {
    let clock = FakeClock::new(T0);
    // 40 s of rollouts at 3 % util, then a 20 s update at 95 %; 8 env workers pegged during
    // the rollouts (`gap_work`), or nothing on the host between bursts (a server's rhythm).
    let run = |gap_work: bool| {
        let mut r = Rules::default();
        drive(&mut r, &clock, 12 * 60, None, |s, t| {
            let update = s % 60 >= 40;
            let u = if update { 95 } else { 3 };
            let mut m = machine(t, [u, 0]);
            let mut main = process(100, 50, 30.0, Some((0, 20 * GIB, u)));
            main.start_time_unix_s = Some(T0 / 1000 - 3600);
            m.processes.push(main);
            for w in 0..8 {
                let busy = gap_work && !update;
                m.processes
                    .push(process(101 + w, 100, if busy { 99.0 } else { 1.0 }, None));
            }
            m
        })
    };
    let rl = run(true);
    let a = rl
        .iter()
        .find(|t| t.name() == "fired" && t.alert().id.starts_with("starved"))
        .map(|t| t.alert().clone())
        .unwrap_or_else(|| panic!("{:?}", names(&rl)));
    assert_eq!(crate::engine::rules::verdict(&a), Some("CPU-bound input"));
    assert_eq!(fired(&run(false), "starved"), 0);
}
