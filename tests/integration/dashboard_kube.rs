//! The dashboard and `watch` beside a stand-in kubelet (its pod-resources socket, gRPC v1), as
//! `serve` is in serve_kube.rs: the dashboard's process table gets a POD column and each GPU
//! its pod; `watch`'s readings carry the pods (seen in the recording it makes); with
//! `--kubernetes off` no one is asked.

use std::time::Duration;

use gpumeter_kube::stand_in::{Kubelet, StandIn, devices, pod};

use crate::support::gpumeter;
use crate::support::tmux::{self, Tmux};

const BIN: &str = env!("CARGO_BIN_EXE_gpumeter");
const WAIT: Duration = Duration::from_secs(15);

/// GPU 0 of the demo, by index (the device plugin's `deviceIDStrategy=index`).
fn kubelet() -> StandIn {
    StandIn::serve(Kubelet {
        pods: vec![pod(
            "ml",
            "trainer-7f9c",
            "trainer",
            vec![devices("nvidia.com/gpu", &["0"])],
        )],
        ..Kubelet::default()
    })
}

#[test]
fn the_dashboard_beside_the_kubelet_names_the_pods() {
    if !tmux::available() {
        return;
    }
    let kubelet = kubelet();
    let dir = tempfile::tempdir().unwrap();
    let isolated = dir.path().to_str().unwrap();
    let t = Tmux::start(
        &format!(
            "exec {BIN} --demo training --no-ledger --kubernetes on --pod-resources {}",
            kubelet.socket().display()
        ),
        120,
        40,
        &[("XDG_CONFIG_HOME", isolated), ("XDG_STATE_HOME", isolated)],
    );
    let screen = t.wait_for("the POD column", WAIT, |s| {
        s.contains(" POD ") && s.contains("pod trainer-7f9c")
    });
    assert!(screen.contains("PID"), "{screen}");
    t.keys(&["q"]);
    t.wait_dead(WAIT);
}

/// `watch --record` beside `kubelet` with `--kubernetes WHEN`: the recording's text.
fn watched(kubelet: &StandIn, when: &str) -> String {
    let home = tempfile::tempdir().unwrap();
    let recording = home.path().join("watched.ndjson");
    let out = gpumeter(home.path())
        .args([
            "watch",
            "--demo",
            "training",
            "--no-ledger",
            "--interval",
            "200ms",
        ])
        .args(["--for", "3s", "--kubernetes", when, "--pod-resources"])
        .arg(kubelet.socket())
        .arg("--record")
        .arg(&recording)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    std::fs::read_to_string(&recording).unwrap()
}

#[test]
fn watch_beside_the_kubelet_records_readings_that_carry_the_pods() {
    let kubelet = kubelet();
    let on = watched(&kubelet, "on");
    // The first readings may come before the kubelet's first answer; the later ones carry it.
    assert!(
        on.lines()
            .any(|l| l.contains(r#""pods":[{"namespace":"ml","pod":"trainer-7f9c""#)),
        "{on}"
    );
    let off = watched(&kubelet, "off");
    assert!(off.lines().count() > 5, "{off}");
    assert!(!off.contains("trainer-7f9c"), "{off}");
}
