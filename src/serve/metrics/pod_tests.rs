//! On Kubernetes: the pod, namespace and container labels on the per-GPU, per-alert and DCGM
//! series, and none of them off it.

use gpumeter_model::PodRef;

use super::*;

fn pod(ns: &str, name: &str, container: &str) -> PodRef {
    PodRef {
        namespace: Some(ns.into()),
        pod: Some(name.into()),
        container: Some(container.into()),
        pod_uid: None,
    }
}

/// The idle demo for `seconds`, GPU 0 given to ml/trainer-7f9c and GPU 1 split between two
/// MIG pods, the rest free.
fn idle_with_pods(seconds: i64) -> Engine {
    use gpumeter_core::source::Source;
    let scenario = gpumeter_sim::Scenario::builtin("idle").unwrap();
    let clock = gpumeter_core::clock::FakeClock::new(1_767_603_600_000);
    let mut source =
        gpumeter_core::source::sim::SimSource::new(scenario, std::sync::Arc::new(clock.clone()));
    let mut session = gpumeter_core::session::Session::new(gpumeter_core::session::SessionConfig {
        interval_ms: 1_000,
        ..Default::default()
    })
    .unwrap();
    for _ in 0..=seconds {
        let mut snap = source.sample().unwrap();
        snap.gpus[0].pods = vec![pod("ml", "trainer-7f9c", "trainer")];
        snap.gpus[1].pods = vec![
            pod("serve", "infer-a", "server"),
            pod("serve", "infer-b", "server"),
        ];
        session.ingest(snap);
        clock.advance_ms(1_000);
    }
    session.into_engine()
}

fn scrape(engine: &Engine, opts: MetricsOptions) -> String {
    let mut roster = if opts.pods {
        Roster::with_pods()
    } else {
        Roster::default()
    };
    roster.observe(engine.latest().unwrap());
    render(engine, &roster, &health(engine, 0), &opts).classic
}

fn series<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    text.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")))
        .collect()
}

#[test]
fn gpu_and_alert_series_carry_the_pod_labels_on_kubernetes() {
    let engine = idle_with_pods(200);
    let opts = MetricsOptions {
        pods: true,
        dcgm: true,
        ..MetricsOptions::default()
    };
    let text = scrape(&engine, opts);
    let util = series(&text, "gpumeter_gpu_utilization_ratio");
    assert!(
        util.iter().any(|l| l.contains(r#"gpu="0""#)
            && l.contains(r#"pod="trainer-7f9c",namespace="ml",container="trainer""#)),
        "{util:?}"
    );
    assert!(
        util.iter().any(|l| l.contains(r#"gpu="1""#)
            && l.contains(r#"pod="infer-a,infer-b",namespace="serve",container="server""#)),
        "{util:?}"
    );
    // A free GPU: empty values, which Prometheus reads as no label.
    assert!(
        util.iter()
            .any(|l| l.contains(r#"gpu="2""#) && l.contains(r#"pod="",namespace="""#)),
        "{util:?}"
    );
    let alerts = series(&text, "gpumeter_gpu_alert_active");
    assert!(!alerts.is_empty());
    assert!(alerts.iter().all(|l| l.contains("pod=")), "{alerts:?}");
    let dcgm = series(&text, "DCGM_FI_DEV_GPU_UTIL");
    assert!(
        dcgm.iter().any(|l| l.contains(r#"pod="trainer-7f9c""#)
            && l.contains(r#"namespace="ml""#)
            && l.contains(r#"container="trainer""#)),
        "{dcgm:?}"
    );
}

#[test]
fn off_kubernetes_no_series_has_a_pod_label() {
    let engine = idle_with_pods(30);
    let text = scrape(
        &engine,
        MetricsOptions {
            dcgm: true,
            ..MetricsOptions::default()
        },
    );
    assert!(!text.contains("pod="), "{text}");
}

#[test]
fn the_idle_alert_lists_whose_gpus_sit_idle() {
    let engine = idle_with_pods(900);
    let idle = engine
        .alerts()
        .iter()
        .find(|a| a.kind == gpumeter_core::engine::rules::AlertKind::IdlePaid)
        .expect("the idle demo raises its alert");
    let pods = idle.evidence.iter().find(|(k, _)| k == "pods").unwrap();
    assert_eq!(
        pods.1,
        "GPU 0: pod trainer-7f9c, namespace ml; GPU 1: pods infer-a, infer-b, namespace serve"
    );
}
