//! The exposition of the demo scenarios, read back line by line.

use gpumeter_model::{GpuReading, Snapshot};

use super::*;

/// A built-in scenario after `seconds` of one-second readings through a session at its own
/// price (no ledger, no user config), on a fake clock.
fn played_for(name: &str, seconds: i64) -> Engine {
    use gpumeter_core::source::Source;
    let scenario = gpumeter_sim::Scenario::builtin(name).unwrap();
    let settings = gpumeter_core::config::load(&gpumeter_core::config::LoadOptions {
        env: gpumeter_core::config::Env::default(),
        demo: crate::launch::demo_pricing(&scenario),
        ..Default::default()
    })
    .unwrap();
    let clock = gpumeter_core::clock::FakeClock::new(1_767_603_600_000);
    let mut source =
        gpumeter_core::source::sim::SimSource::new(scenario, std::sync::Arc::new(clock.clone()));
    let mut session = gpumeter_core::session::Session::new(gpumeter_core::session::SessionConfig {
        pricing: settings.pricing,
        interval_ms: 1_000,
        alerts: settings.alerts,
        ..Default::default()
    })
    .unwrap();
    for _ in 0..=seconds {
        session.ingest(source.sample().unwrap());
        clock.advance_ms(1_000);
    }
    session.into_engine()
}

fn names() -> Vec<&'static str> {
    gpumeter_sim::builtin_scenarios()
        .iter()
        .map(|(n, _)| *n)
        .collect()
}

/// The value of every sample of `name`, with its label text (`{gpu="0",…}` or ``).
fn samples(text: &str, name: &str) -> Vec<(String, f64)> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (series, value) = l.rsplit_once(' ')?;
            let labels = series.strip_prefix(name)?;
            (labels.is_empty() || labels.starts_with('{'))
                .then(|| (labels.to_string(), value.parse().unwrap()))
        })
        .collect()
}

fn value(text: &str, name: &str, labels_contain: &str) -> Option<f64> {
    samples(text, name)
        .into_iter()
        .find(|(l, _)| l.contains(labels_contain))
        .map(|(_, v)| v)
}

fn scrape_of(engine: &Engine, opts: MetricsOptions) -> Scrape {
    let mut roster = Roster::default();
    if let Some(s) = engine.latest() {
        roster.observe(s);
    }
    render(engine, &roster, &health(engine, 0), &opts)
}

#[test]
fn every_scenario_has_every_gpu_in_every_core_family_and_no_instance_or_job_label() {
    for name in names() {
        let engine = played_for(name, 30);
        let snap = engine.latest().unwrap();
        let text = scrape_of(&engine, MetricsOptions::default()).classic;
        assert!(
            !text.contains("# EOF") && !text.contains("# UNIT"),
            "{name}"
        );
        assert!(
            !text.contains("instance=") && !text.contains("job="),
            "{name}"
        );
        let lost = samples(&text, "gpumeter_gpu_lost");
        assert_eq!(lost.len(), snap.gpus.len(), "{name}");
        for g in &snap.gpus {
            let gpu = format!("gpu=\"{}\"", g.index);
            assert!(
                value(&text, "gpumeter_gpu_info", &gpu).is_some(),
                "{name} {gpu}"
            );
            assert!(value(&text, "gpumeter_gpu_idle_seconds_total", &gpu).is_some());
            if let Some(u) = g.util_gpu_pct {
                let got = value(&text, "gpumeter_gpu_utilization_ratio", &gpu).unwrap();
                assert!((got - f64::from(u) / 100.0).abs() < 1e-9, "{name} {gpu}");
            }
        }
        assert_eq!(value(&text, "gpumeter_up", ""), Some(1.0));
        assert_eq!(value(&text, "gpumeter_billing_active", ""), Some(1.0));
        assert!(
            text.contains("# TYPE gpumeter_spend_total counter"),
            "{name}"
        );
    }
}

#[test]
fn idle_gpus_report_zero_and_the_idle_spend_grows() {
    let engine = played_for("idle", 120);
    let text = scrape_of(&engine, MetricsOptions::default()).classic;
    let utils = samples(&text, "gpumeter_gpu_utilization_ratio");
    assert_eq!(utils.len(), engine.latest().unwrap().gpus.len());
    assert!(utils.iter().all(|(_, v)| *v <= 0.05), "{utils:?}");
    let idle_spend = value(&text, "gpumeter_idle_spend_total", "currency=").unwrap();
    let spend = value(&text, "gpumeter_spend_total", "currency=").unwrap();
    assert!(
        idle_spend > 0.0 && idle_spend <= spend,
        "{idle_spend} of {spend}"
    );
    let idle_s = value(&text, "gpumeter_gpu_idle_seconds_total", "gpu=\"0\"").unwrap();
    assert!(idle_s >= 100.0, "{idle_s}");
    assert_eq!(
        value(&text, "gpumeter_gpus_idle", ""),
        value(&text, "gpumeter_gpus", "")
    );
}

#[test]
fn a_lost_gpu_keeps_its_series_with_lost_one_and_no_invented_readings() {
    let engine = played_for("gpu-lost", 120);
    let snap = engine.latest().unwrap();
    let gone: Vec<u32> = snap
        .gpus
        .iter()
        .filter(|g| g.state != gpumeter_model::GpuState::Ok)
        .map(|g| g.index)
        .collect();
    assert!(!gone.is_empty(), "the scenario loses a GPU by 120 s");
    let text = scrape_of(&engine, MetricsOptions::default()).classic;
    for i in gone {
        let gpu = format!("gpu=\"{i}\"");
        assert_eq!(value(&text, "gpumeter_gpu_lost", &gpu), Some(1.0));
        assert!(value(&text, "gpumeter_gpu_info", &gpu).is_some());
        assert!(value(&text, "gpumeter_gpu_utilization_ratio", &gpu).is_none());
    }
    assert!(
        samples(&text, "gpumeter_gpu_lost")
            .iter()
            .any(|(_, v)| *v == 0.0)
    );
}

#[test]
fn a_gpu_missing_from_the_reading_is_reported_lost() {
    let mut roster = Roster::default();
    let mut first = Snapshot::empty("t", 1_000);
    for i in 0..2 {
        first.gpus.push(GpuReading {
            index: i,
            uuid: Some(format!("GPU-{i}").into()),
            util_gpu_pct: Some(50),
            ..GpuReading::default()
        });
    }
    roster.observe(&first);
    let mut engine = Engine::new();
    engine.ingest(first.clone());
    let mut second = first;
    second.taken_at_unix_ms = 2_000;
    second.gpus.truncate(1);
    roster.observe(&second);
    engine.ingest(second);
    let text = render(
        &engine,
        &roster,
        &health(&engine, 0),
        &MetricsOptions::default(),
    )
    .classic;
    assert_eq!(
        value(&text, "gpumeter_gpu_lost", "gpu=\"1\",uuid=\"GPU-1\""),
        Some(1.0)
    );
    assert_eq!(value(&text, "gpumeter_gpu_lost", "gpu=\"0\""), Some(0.0));
}

#[test]
fn unsupported_readings_are_absent_not_zero() {
    let mut snap = Snapshot::empty("t", 1_000);
    snap.gpus.push(GpuReading {
        index: 0,
        util_gpu_pct: Some(0),
        power_watts: None,
        ..GpuReading::default()
    });
    let mut engine = Engine::new();
    engine.ingest(snap);
    let text = scrape_of(&engine, MetricsOptions::default()).classic;
    assert_eq!(
        value(&text, "gpumeter_gpu_utilization_ratio", ""),
        Some(0.0)
    );
    assert!(!text.contains("gpumeter_gpu_power_watts"));
    assert!(!text.contains("gpumeter_gpu_throttle_reason"));
    // Without pricing: billing says so and no money series appear.
    assert_eq!(value(&text, "gpumeter_billing_active", ""), Some(0.0));
    assert!(!text.contains("gpumeter_spend_total"));
}

#[test]
fn process_series_are_capped_by_vram_escaped_and_count_the_rest() {
    let engine = played_for("mixed", 20);
    let snap = engine.latest().unwrap();
    let gpu_procs = snap.processes.iter().filter(|p| p.is_gpu_process()).count();
    assert!(gpu_procs > 2);
    let all = scrape_of(
        &engine,
        MetricsOptions {
            process_limit: Some(1000),
            dcgm: false,
            pods: false,
        },
    )
    .classic;
    assert_eq!(
        value(&all, "gpumeter_process_series_dropped", ""),
        Some(0.0)
    );
    // Every label value is a closed quoted string: no raw quote, backslash or newline leaks.
    for line in all.lines().filter(|l| l.starts_with("gpumeter_process_")) {
        assert!(line.ends_with(|c: char| c.is_ascii_digit()), "{line}");
    }
    let two = scrape_of(
        &engine,
        MetricsOptions {
            process_limit: Some(2),
            dcgm: false,
            pods: false,
        },
    )
    .classic;
    let dropped = value(&two, "gpumeter_process_series_dropped", "").unwrap();
    assert_eq!(dropped, (gpu_procs - 2) as f64);
    let pids: std::collections::BTreeSet<String> =
        samples(&two, "gpumeter_process_gpu_memory_used_bytes")
            .into_iter()
            .map(|(l, _)| l.split(',').next().unwrap().to_string())
            .collect();
    assert!(pids.len() <= 2, "{pids:?}");
    let off = scrape_of(&engine, MetricsOptions::default()).classic;
    assert!(!off.contains("gpumeter_process_"));
}

#[test]
fn label_values_escape_quotes_backslashes_and_newlines_and_are_capped() {
    assert_eq!(out::label_value("a\"b\\c\nd", 100), "a\\\"b\\\\c\\nd");
    assert_eq!(out::label_value("abcdef", 3), "abc");
    assert_eq!(out::label_value("x\u{1b}[31my", 100), "x[31my");
}

#[test]
fn dcgm_names_come_only_when_asked_in_dcgm_units() {
    let engine = played_for("training", 10);
    let snap = engine.latest().unwrap();
    let plain = scrape_of(&engine, MetricsOptions::default()).classic;
    assert!(!plain.contains("DCGM_"));
    let dcgm = scrape_of(
        &engine,
        MetricsOptions {
            process_limit: None,
            dcgm: true,
            pods: false,
        },
    )
    .classic;
    let g = &snap.gpus[0];
    let util = value(&dcgm, "DCGM_FI_DEV_GPU_UTIL", "gpu=\"0\"").unwrap();
    assert_eq!(util, f64::from(g.util_gpu_pct.unwrap()));
    let fb = value(&dcgm, "DCGM_FI_DEV_FB_USED", "gpu=\"0\"").unwrap();
    assert!((fb - g.memory_used_bytes.unwrap() as f64 / 1_048_576.0).abs() < 1e-6);
    let line = dcgm
        .lines()
        .find(|l| l.starts_with("DCGM_FI_DEV_GPU_TEMP{"))
        .unwrap();
    for label in ["gpu=", "UUID=", "modelName=", "Hostname="] {
        assert!(line.contains(label), "{line}");
    }
}

#[test]
fn starved_time_is_counted_by_cause_and_alerts_by_kind() {
    let engine = played_for("cpu-starved", 240);
    let text = scrape_of(&engine, MetricsOptions::default()).classic;
    let cpu: f64 = samples(&text, "gpumeter_gpu_starved_seconds_total")
        .iter()
        .filter(|(l, _)| l.contains("cause=\"cpu_bound\""))
        .map(|(_, v)| v)
        .sum();
    assert!(cpu > 0.0, "{text}");
    let io: f64 = samples(&text, "gpumeter_gpu_starved_seconds_total")
        .iter()
        .filter(|(l, _)| l.contains("cause=\"io_bound\""))
        .map(|(_, v)| v)
        .sum();
    assert_eq!(io, 0.0);
    let starved: f64 = samples(&text, "gpumeter_alert_active")
        .iter()
        .filter(|(l, _)| l.contains("alert=\"starved\""))
        .map(|(_, v)| v)
        .sum();
    assert!(starved >= 1.0);
    // Every kind × severity (3) is present, 0 when nothing stands.
    assert_eq!(
        samples(&text, "gpumeter_alert_active").len(),
        gpumeter_core::engine::rules::AlertKind::ALL.len() * 3
    );
}

#[test]
fn before_the_first_reading_only_health_and_the_zeroed_verdicts_are_exported() {
    let engine = Engine::new();
    let text = scrape_of(&engine, MetricsOptions::default()).classic;
    assert_eq!(value(&text, "gpumeter_up", ""), Some(0.0));
    assert!(!text.contains("gpumeter_last_sample_timestamp_seconds"));
    assert!(!text.contains("gpumeter_gpu_"));
}

#[test]
fn the_state_published_before_the_first_reading_is_a_valid_scrape_and_not_ready() {
    let p = crate::serve::published::Published::starting(&MetricsOptions::default());
    let text = std::str::from_utf8(&p.classic).unwrap();
    assert_eq!(value(text, "gpumeter_up", ""), Some(0.0));
    assert!(text.contains("gpumeter_build_info"));
    assert!(p.openmetrics.ends_with(b"# EOF\n"));
    assert!(p.snapshot.is_none());
    assert_eq!(p.ready, Err("no reading yet".to_string()));
}

#[test]
fn gpm_ratios_and_xid_counters_where_supported_absent_elsewhere() {
    // xid: H100s with GPM; GPU 3 raises XID 79 at 90 s and is lost, its counter stays.
    let engine = played_for("xid", 120);
    let text = scrape_of(&engine, MetricsOptions::default()).classic;
    for family in [
        "gpumeter_gpu_sm_active_ratio",
        "gpumeter_gpu_sm_occupancy_ratio",
        "gpumeter_gpu_tensor_active_ratio",
        "gpumeter_gpu_dram_active_ratio",
    ] {
        let s = samples(&text, family);
        assert_eq!(s.len(), 3, "{family}: the three live GPUs: {s:?}");
        assert!(s.iter().all(|(_, v)| (0.0..=1.0).contains(v)), "{s:?}");
    }
    let sm = value(&text, "gpumeter_gpu_sm_active_ratio", "gpu=\"0\"").unwrap();
    assert!((0.7..0.9).contains(&sm), "{sm}");
    assert_eq!(
        value(&text, "gpumeter_gpu_xid_errors_total", "gpu=\"3\""),
        Some(1.0)
    );
    let xid = samples(&text, "gpumeter_gpu_xid_errors_total");
    assert_eq!(xid.len(), 1, "{xid:?}");
    assert!(xid[0].0.contains("xid=\"79\""), "{xid:?}");
    assert!(text.contains("# TYPE gpumeter_gpu_xid_errors_total counter"));

    // container: A100s (no GPM): the ratio families are absent, not 0.
    let engine = played_for("container", 30);
    let text = scrape_of(&engine, MetricsOptions::default()).classic;
    assert!(!text.contains("gpumeter_gpu_sm_active_ratio"), "{text}");
    assert!(
        !text.contains("gpumeter_gpu_xid_errors_total{"),
        "no XIDs, no series"
    );
}

/// deploy/README.md's series count per 8-GPU node on Kubernetes stays the scrape's: the
/// `training` demo's eight GPUs with the pod labels on, then with `--compat dcgm`.
#[test]
fn the_documented_series_count_per_8_gpu_node_is_what_a_scrape_has() {
    let engine = played_for("training", 30);
    let snap = engine.latest().unwrap();
    assert_eq!(snap.gpus.len(), 8);
    let scrape = |dcgm| {
        let mut roster = Roster::with_pods();
        roster.observe(snap);
        let opts = MetricsOptions {
            dcgm,
            pods: true,
            ..MetricsOptions::default()
        };
        render(&engine, &roster, &health(&engine, 0), &opts).classic
    };
    let series = |text: &str| {
        text.lines()
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .count()
    };
    let plain = scrape(false);
    let total = series(&plain);
    let families = plain.lines().filter(|l| l.starts_with("# TYPE ")).count();
    let per_gpu = plain
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains("gpu=\"0\""))
        .count();
    let dcgm = series(&scrape(true));
    let added = dcgm - total;
    let readme = include_str!("../../../deploy/README.md")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let said = format!(
        "exports **{total} series** in {families} families, {} of them per GPU ({per_gpu} per GPU); \
         `--compat dcgm` adds {added} ({} per GPU): {dcgm} ",
        per_gpu * 8,
        added / 8
    );
    assert!(
        readme.contains(&said),
        "deploy/README.md should say: {said}"
    );
}

#[test]
fn a_list_price_is_said_to_be_one_in_the_rate_info_series() {
    use gpumeter_core::billing::{ListPrice, Meter, MeterConfig, Pricing, Rate, RateSource};
    use gpumeter_core::source::Source;
    let scrape = |source: RateSource| {
        let mut pricing = Pricing::simple(Rate::parse("98.32/h").unwrap());
        pricing.source = source;
        let meter = Meter::new(MeterConfig {
            pricing,
            tick_cap_ms: 10_000,
        });
        let mut engine = Engine::new().with_meter(meter);
        let clock = gpumeter_core::clock::FakeClock::new(1_767_603_600_000);
        let mut source = gpumeter_core::source::sim::SimSource::new(
            gpumeter_sim::Scenario::builtin("training").unwrap(),
            std::sync::Arc::new(clock.clone()),
        );
        for _ in 0..3 {
            engine.ingest(source.sample().unwrap());
            clock.advance_ms(1_000);
        }
        scrape_of(&engine, MetricsOptions::default()).classic
    };
    let listed = scrape(RateSource::ListPrice(ListPrice {
        what: "AWS p5.48xlarge on-demand us-east-1".into(),
        catalog: "2025-05".into(),
        url: "https://aws.amazon.com/ec2/pricing/on-demand/".into(),
    }));
    let info = samples(&listed, "gpumeter_rate_info");
    assert_eq!(info.len(), 1, "{info:?}");
    assert!(
        info[0].0.contains("source=\"list-price\"")
            && info[0].0.contains(
                "detail=\"list price, AWS p5.48xlarge on-demand us-east-1, catalog 2025-05\""
            ),
        "{info:?}"
    );
    let yours = scrape(RateSource::Yours("config.toml".into()));
    let info = samples(&yours, "gpumeter_rate_info");
    assert!(
        info[0].0.contains("source=\"yours\"")
            && info[0].0.contains("detail=\"your rate (config.toml)\""),
        "{info:?}"
    );
}
