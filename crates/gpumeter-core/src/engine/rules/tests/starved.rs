//! The starved rule on small machines: warm-up, each cause with its deciding figure and the
//! signs weighed and rejected, and the quiet cases.

use super::*;

#[test]
fn a_young_job_warms_up_until_its_loop_runs_and_its_blips_are_no_evidence() {
    // Started at T0: compile blips (30 % for 20 s, idle for 30 s) for 5 minutes, then 95 %:
    // nothing fires. The same job an hour old is judged on the blips' window as any other.
    let blips = |age_s: i64| {
        let clock = FakeClock::new(T0);
        let mut r = Rules::default();
        drive(&mut r, &clock, 420, None, move |s, t| {
            let u = if s >= 300 {
                95
            } else if s % 50 < 20 {
                30
            } else {
                0
            };
            let mut m = with_job(machine(t, [u, 0]), 5.0, 2);
            for p in &mut m.processes {
                p.start_time_unix_s = Some(T0 / 1000 - age_s);
            }
            m
        })
    };
    assert!(blips(0).is_empty(), "{:?}", names(&blips(0)));
    // A young job whose loop runs at a flat 30 % from its first second: no warm-up excuse
    // once a window of unbroken activity is in, then named on the next window's evidence
    // (~110 s; a loop in bursts is seen sooner, by its rises: `cpu-bound-from-start`).
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 120, None, |_, t| {
        let mut m = with_job(machine(t, [30, 0]), 5.0, 2);
        for p in &mut m.processes {
            p.start_time_unix_s = Some(T0 / 1000);
        }
        m
    });
    assert!(
        names(&ts)
            .iter()
            .any(|(e, id)| *e == "fired" && id.starts_with("starved")),
        "{:?}",
        names(&ts)
    );
}

#[test]
fn starved_cpu_bound_respects_affinity_and_clears_when_util_recovers() {
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    // 4 workers at full speed, pinned to 4 of the 8 cores: the job saturates what it may use.
    let pinned = |t: i64, util: u32| {
        let mut m = with_job(machine(t, [util, 0]), 99.0, 4);
        for p in &mut m.processes {
            p.cpus_allowed = Some(4);
        }
        m
    };
    let ts = drive(&mut r, &clock, 3 * 60, Some(10_000_000), |s, t| {
        pinned(t, if s % 7 < 3 { 70 } else { 15 })
    });
    assert_eq!(names(&ts), vec![("fired", "starved:pid-100".into())]);
    let a = ts[0].alert();
    assert!(a.title.starts_with("GPU 0 starved"), "{}", a.title);
    let job_cpu = &a.evidence.iter().find(|(k, _)| k == "job CPU").unwrap().1;
    assert!(job_cpu.contains("of 4.0 cores"), "{job_cpu}");
    assert!(
        a.next_step
            .as_deref()
            .unwrap()
            .contains("only 4.0 of 8 cores"),
        "{:?}",
        a.next_step
    );
    let ts = drive(&mut r, &clock, 3 * 60, Some(10_000_000), |_, t| {
        pinned(t, 97)
    });
    assert_eq!(names(&ts), vec![("cleared", "starved:pid-100".into())]);
}

#[test]
fn an_io_bound_job_beside_a_network_file_system_is_told_where_its_reads_may_wait() {
    let clock = FakeClock::new(T0);
    let run = |mounts: &[&str]| {
        let mut r = Rules::default();
        let mounts: Vec<gpumeter_model::SharedStr> = mounts.iter().map(|m| (*m).into()).collect();
        let ts = drive(&mut r, &clock, 3 * 60, None, |_, t| {
            let mut m = with_job(machine(t, [30, 0]), 5.0, 2);
            m.processes[1].state = Some('D');
            m.host.network_mounts = mounts.clone();
            m
        });
        ts[0].alert().clone()
    };
    let a = run(&["nfs4 /data", "fuse.gcsfuse /gcs"]);
    assert!(
        a.evidence.contains(&(
            "network file systems".into(),
            "nfs4 /data, fuse.gcsfuse /gcs".into()
        )),
        "{:#?}",
        a.evidence
    );
    let step = a.next_step.unwrap_or_default();
    assert!(
        step.starts_with("If the data is on a network file system (nfs4 /data), copy it"),
        "{step}"
    );
    // None mounted: neither line.
    let a = run(&[]);
    assert!(!a.evidence.iter().any(|(k, _)| k == "network file systems"));
    assert!(
        !a.next_step
            .unwrap_or_default()
            .contains("network file system")
    );
}

#[test]
fn starved_without_cpu_pressure_is_io_or_copy_bound_by_the_evidence() {
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 3 * 60, None, |_, t| {
        let mut m = with_job(machine(t, [30, 0]), 5.0, 2);
        m.processes[1].state = Some('D');
        m
    });
    let verdict = |a: &Alert| {
        a.evidence
            .iter()
            .find(|(k, _)| k == "verdict")
            .unwrap()
            .1
            .clone()
    };
    assert_eq!(verdict(ts[0].alert()), "I/O-bound input");

    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 3 * 60, None, |_, t| {
        let mut m = with_job(machine(t, [20, 0]), 5.0, 2);
        m.gpus[0].pcie_rx_bytes_per_s = Some(3_000_000_000);
        m
    });
    assert_eq!(verdict(ts[0].alert()), "host-to-device copy bound");
    assert!(
        ts[0]
            .alert()
            .next_step
            .as_deref()
            .unwrap()
            .contains("pin_memory=True")
    );
}

#[test]
fn a_saturated_decoder_nic_or_memory_is_named_with_its_figure_and_idle_ones_are_rejected() {
    let clock = FakeClock::new(T0);
    let verdict_of = |f: &dyn Fn(&mut Snapshot)| {
        let mut r = Rules::default();
        let ts = drive(&mut r, &clock, 3 * 60, None, |_, t| {
            let mut m = with_job(machine(t, [35, 0]), 5.0, 2);
            m.host.nic_speed_bytes_per_s = Some(25e9 / 8.0);
            m.host.nic_rx_util_pct = Some(10.0);
            m.host.mem_pressure_pct = Some(0.0);
            m.host.swap_in_bytes_per_s = Some(0.0);
            m.gpus[0].decoder_util_pct = Some(5);
            f(&mut m);
            m
        });
        let a = ts[0].alert().clone();
        let get = |k: &str| {
            a.evidence
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        (
            get("verdict"),
            format!("{} {:?}", a.detail, a.evidence),
            a.next_step.unwrap_or_default(),
        )
    };
    let (v, words, _) = verdict_of(&|_| {});
    assert_eq!(v, "unclassified");
    for rejected in [
        "the busiest NIC receives 10 % of its 25 Gbit/s link: not at its limit",
        "memory pressure 0 %: memory to spare",
        "video decoders (NVDEC) 5 % busy: not at a limit",
    ] {
        assert!(words.contains(rejected), "{rejected} in {words}");
    }

    let (v, words, next) = verdict_of(&|m| m.host.nic_rx_util_pct = Some(97.0));
    assert_eq!(v, "network-bound input");
    assert!(
        words.contains("receives 97 % of its 25 Gbit/s link: at its limit"),
        "{words}"
    );
    assert!(next.contains("local NVMe"), "{next}");

    let (v, words, next) = verdict_of(&|m| {
        m.host.swap_in_bytes_per_s = Some(150e6);
        m.processes[1].state = Some('D');
    });
    assert_eq!(
        v, "host memory pressure",
        "swapping comes before the D state it causes"
    );
    assert!(
        words.contains("150.0MB/s swapped in: the job's pages come back from disk"),
        "{words}"
    );
    assert!(next.contains("fewer DataLoader workers"), "{next}");

    // Pages read from disk again while memory is full: the data no longer fits.
    let faulting = |used_gib: u64| {
        move |m: &mut Snapshot| {
            m.host.major_faults_per_s = Some(4000.0);
            m.host.mem_total_bytes = Some(100 * GIB);
            m.host.mem_used_bytes = Some(used_gib * GIB);
        }
    };
    let (v, words, _) = verdict_of(&faulting(96));
    assert_eq!(v, "host memory pressure");
    assert!(
        words.contains("4000 major page faults/s with memory 96 % used: the data no longer fits"),
        "{words}"
    );
    // The same faults with memory to spare are files read for the first time.
    let (v, words, _) = verdict_of(&faulting(40));
    assert_ne!(v, "host memory pressure");
    assert!(
        words.contains("memory 40 % used: files read for the first time"),
        "{words}"
    );

    let (v, _, next) = verdict_of(&|m| m.gpus[0].decoder_util_pct = Some(99));
    assert_eq!(v, "decoder-bound input");
    assert!(next.contains("NVDEC"), "{next}");

    // Full both ways is a multi-node all-reduce, not input: the advice is NCCL's, not a cache.
    let (v, words, next) = verdict_of(&|m| {
        m.host.nic_rx_util_pct = Some(95.0);
        m.host.nic_tx_util_pct = Some(94.0);
    });
    assert_eq!(v, "inter-node communication");
    assert!(
        words
            .contains("receives 95 % and sends 94 % of its 25 Gbit/s link: at its limit both ways"),
        "{words}"
    );
    assert!(
        next.contains("NCCL") && !next.contains("local NVMe"),
        "{next}"
    );
    // One way, the data coming in, says what it sends beside.
    let (v, words, _) = verdict_of(&|m| {
        m.host.nic_rx_util_pct = Some(95.0);
        m.host.nic_tx_util_pct = Some(3.0);
    });
    assert_eq!(v, "network-bound input");
    assert!(
        words.contains("receives 95 % of its 25 Gbit/s link (sends 3 %)"),
        "{words}"
    );
}

#[test]
fn pcie_rx_filling_a_narrow_link_is_copy_bound_however_busy_the_gpu() {
    let clock = FakeClock::new(T0);
    let verdict_at = |width: u32| {
        let mut r = Rules::default();
        let ts = drive(&mut r, &clock, 3 * 60, None, |_, t| {
            // util 55 %: above the 30 % the plain copy test asks for.
            let mut m = with_job(machine(t, [55, 0]), 5.0, 2);
            m.gpus[0].pcie_link_gen = Some(3);
            m.gpus[0].pcie_link_width = Some(width);
            m.gpus[0].pcie_rx_bytes_per_s = Some(3_400_000_000);
            m
        });
        ts.first()
            .and_then(|t| crate::engine::rules::verdict(t.alert()).map(str::to_string))
    };
    // Gen 3 ×4 carries ~3.9 GB/s: 3.4 GB/s fills 86 % of it.
    assert_eq!(verdict_at(4).as_deref(), Some("host-to-device copy bound"));
    // The same copies on a ×16 link leave it three quarters free: not the limit.
    assert_ne!(verdict_at(16).as_deref(), Some("host-to-device copy bound"));
}

#[test]
fn starved_keeps_quiet_on_a_busy_job_an_idle_gpu_and_a_gpu_nobody_holds() {
    let clock = FakeClock::new(T0);
    let mut r = Rules::default();
    let ts = drive(&mut r, &clock, 5 * 60, None, |s, t| {
        // GPU 0: a busy job with a dip now and then; GPU 1: 30 % but no process holds it.
        with_job(machine(t, [if s % 30 == 0 { 40 } else { 96 }, 30]), 99.0, 4)
    });
    assert!(
        ts.iter().all(|t| t.alert().kind != AlertKind::Starved),
        "{:?}",
        names(&ts)
    );
}
