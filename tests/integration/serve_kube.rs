//! `serve` beside a stand-in kubelet (its pod-resources socket, gRPC v1): every per-GPU series
//! names the pod, namespace and container given the GPU, the DCGM families too under
//! `--compat dcgm`; beside no socket the labels are there and empty, and serve still serves.

use gpumeter_kube::stand_in::{Kubelet, StandIn, devices, pod};

use crate::support::serve::Served;

/// GPU 0 and GPU 5 of the demo, by index (the device plugin's `deviceIDStrategy=index`).
fn kubelet() -> StandIn {
    StandIn::serve(Kubelet {
        pods: vec![
            pod(
                "ml",
                "trainer-7f9c",
                "trainer",
                vec![devices("nvidia.com/gpu", &["0"])],
            ),
            pod(
                "serve",
                "infer-b",
                "server",
                vec![devices("nvidia.com/gpu", &["5"])],
            ),
        ],
        ..Kubelet::default()
    })
}

fn series<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    text.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")))
        .collect()
}

/// The scrape once the first ask is answered (the stand-in answers at once; readings then
/// carry the pods).
fn scrape_with_pods(s: &Served, wanted: &str) -> String {
    for _ in 0..100 {
        let body = s.get("/metrics").body;
        if body.contains(wanted) {
            return body;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("no series with {wanted}:\n{}", s.get("/metrics").body);
}

#[test]
fn serve_beside_the_kubelet_labels_each_gpu_with_its_pod() {
    let kubelet = kubelet();
    let socket = kubelet.socket();
    let s = Served::start(
        &[
            "--demo",
            "training",
            "--no-ledger",
            "--kubernetes",
            "on",
            "--pod-resources",
            socket.to_str().unwrap(),
            "--compat",
            "dcgm",
        ],
        &[],
    );
    s.wait_ready();
    let text = scrape_with_pods(&s, r#"pod="trainer-7f9c""#);
    let util = series(&text, "gpumeter_gpu_utilization_ratio");
    assert_eq!(util.len(), 8, "{util:?}");
    let on = |gpu: &str, labels: &str| util.iter().any(|l| l.contains(gpu) && l.contains(labels));
    assert!(
        on(
            r#"gpu="0""#,
            r#"pod="trainer-7f9c",namespace="ml",container="trainer""#
        ),
        "{util:?}"
    );
    assert!(
        on(
            r#"gpu="5""#,
            r#"pod="infer-b",namespace="serve",container="server""#
        ),
        "{util:?}"
    );
    assert!(
        on(r#"gpu="3""#, r#"pod="",namespace="",container="""#),
        "{util:?}"
    );
    let alerts = series(&text, "gpumeter_gpu_alert_active");
    assert!(
        alerts.iter().any(|l| l.contains(r#"pod="trainer-7f9c""#)),
        "{alerts:?}"
    );
    let dcgm = series(&text, "DCGM_FI_DEV_GPU_UTIL");
    assert!(
        dcgm.iter().any(|l| l.contains(r#"gpu="0""#)
            && l.contains(r#"pod="trainer-7f9c""#)
            && l.contains(r#"namespace="ml""#)
            && l.contains(r#"container="trainer""#)),
        "{dcgm:?}"
    );
    let snapshot = s.get("/api/v1/snapshot").body;
    assert!(snapshot.contains(r#""pod":"trainer-7f9c""#), "{snapshot}");
    s.stop();
}

#[test]
fn serve_beside_no_socket_serves_with_empty_pod_labels() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("kubelet.sock");
    let s = Served::start(
        &[
            "--demo",
            "training",
            "--no-ledger",
            "--kubernetes",
            "on",
            "--pod-resources",
            socket.to_str().unwrap(),
        ],
        &[],
    );
    s.wait_ready();
    let text = s.get("/metrics").body;
    let util = series(&text, "gpumeter_gpu_utilization_ratio");
    assert_eq!(util.len(), 8, "{util:?}");
    assert!(
        util.iter()
            .all(|l| l.contains(r#"pod="",namespace="",container="""#)),
        "{util:?}"
    );
    s.stop();
}

/// `snapshot` beside the kubelet waits for its first answer: the one reading names the pods,
/// in the table and in the JSON; given before the subcommand, the options count too.
#[test]
fn snapshot_beside_the_kubelet_names_the_pods_of_its_one_reading() {
    let kubelet = kubelet();
    let socket = kubelet.socket();
    let socket = socket.to_str().unwrap();
    let home = tempfile::tempdir().unwrap();
    let run =
        |args: &[&str]| crate::support::stdout_ok(crate::support::gpumeter(home.path()).args(args));
    let table = run(&[
        "snapshot",
        "--demo",
        "training",
        "--at",
        "5s",
        "--kubernetes",
        "on",
        "--pod-resources",
        socket,
    ]);
    assert!(
        table.contains("pods: GPU 0 pod trainer-7f9c, namespace ml (container trainer)"),
        "{table}"
    );
    assert!(
        table.contains("pods: GPU 5 pod infer-b, namespace serve (container server)"),
        "{table}"
    );
    let json = run(&[
        "--kubernetes",
        "on",
        "--pod-resources",
        socket,
        "snapshot",
        "--json",
        "--demo",
        "training",
        "--at",
        "5s",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["gpus"][0]["pods"][0]["pod"], "trainer-7f9c");
    assert_eq!(doc["gpus"][5]["pods"][0]["namespace"], "serve");
    assert!(doc["gpus"][1].get("pods").is_none(), "{json}");
    // Off: no pods, whatever the socket.
    let off = run(&[
        "snapshot",
        "--demo",
        "training",
        "--at",
        "5s",
        "--kubernetes",
        "off",
        "--pod-resources",
        socket,
    ]);
    assert!(!off.contains("pods:"), "{off}");
}
