//! The pod-resources client and the labelling against the stand-in kubelet (`stand_in`):
//! MIG and full-GPU allocations, a missing socket, a slow one, garbage.

use std::path::Path;
use std::time::Duration;

use super::stand_in::*;
use super::*;
use gpumeter_model::testing::SnapshotBuilder;
use gpumeter_model::{GpuReading, GpuUse, PodRef, ProcessReading, Snapshot};

fn named(ns: &str, pod: &str, container: &str) -> PodRef {
    PodRef {
        namespace: Some(ns.into()),
        pod: Some(pod.into()),
        container: Some(container.into()),
        pod_uid: None,
    }
}

fn three_gpus() -> Snapshot {
    let mut snap = SnapshotBuilder::new("test", 0).build();
    for (i, uuid) in [GPU0, GPU1, GPU2].iter().enumerate() {
        snap.gpus.push(GpuReading {
            index: i as u32,
            uuid: Some((*uuid).into()),
            ..GpuReading::default()
        });
    }
    snap.gpus[1].mig_enabled = Some(true);
    snap.gpus[1].mig_uuids = vec![MIG_A.into(), MIG_B.into()];
    snap
}

const QUICK: Duration = Duration::from_secs(5);

#[test]
fn whole_gpus_and_mig_slices_are_named_by_their_pods() {
    let kubelet = StandIn::serve(node());
    let table = ask_blocking(&kubelet.socket(), QUICK).unwrap();
    assert_eq!(table.given_count(), 3);
    let mut snap = three_gpus();
    attribute(Some(&table), &mut snap);
    assert_eq!(
        snap.gpus[0].pods,
        vec![named("ml", "trainer-7f9c", "trainer")]
    );
    assert_eq!(
        snap.gpus[1].pods,
        vec![
            named("serve", "infer-a", "server"),
            named("serve", "infer-b", "server")
        ]
    );
    // Allocatable and given to no one: free, whatever a process's cgroup says.
    assert!(snap.gpus[2].pods.is_empty());
}

#[test]
fn time_sliced_replicas_and_index_ids_are_matched() {
    let shared = Kubelet {
        pods: vec![
            pod(
                "a",
                "one",
                "c",
                vec![devices("nvidia.com/gpu", &[&format!("{GPU0}::0")])],
            ),
            pod(
                "b",
                "two",
                "c",
                vec![devices("nvidia.com/gpu", &[&format!("{GPU0}::1")])],
            ),
            pod("c", "three", "c", vec![devices("nvidia.com/gpu", &["2"])]),
        ],
        allocatable: vec![],
        delay: Duration::ZERO,
    };
    let kubelet = StandIn::serve(shared);
    let table = ask_blocking(&kubelet.socket(), QUICK).unwrap();
    let mut snap = three_gpus();
    attribute(Some(&table), &mut snap);
    assert_eq!(
        snap.gpus[0].pods,
        vec![named("a", "one", "c"), named("b", "two", "c")]
    );
    assert!(snap.gpus[1].pods.is_empty());
    assert_eq!(snap.gpus[2].pods, vec![named("c", "three", "c")]);
}

#[test]
fn names_from_the_kubelet_are_sanitized() {
    let hostile = Kubelet {
        pods: vec![pod(
            "ml\u{1b}[2J",
            "trainer\n7f9c",
            "",
            vec![devices("nvidia.com/gpu", &[GPU0])],
        )],
        allocatable: vec![],
        delay: Duration::ZERO,
    };
    let kubelet = StandIn::serve(hostile);
    let table = ask_blocking(&kubelet.socket(), QUICK).unwrap();
    let mut snap = three_gpus();
    attribute(Some(&table), &mut snap);
    let p = &snap.gpus[0].pods[0];
    assert_eq!(p.namespace.as_deref(), Some("ml"));
    assert_eq!(p.pod.as_deref(), Some("trainer 7f9c"));
    assert_eq!(p.container, None);
}

#[test]
fn a_missing_socket_is_said_plainly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubelet.sock");
    assert_eq!(ask_blocking(&path, QUICK), Err(AskError::Missing(path)));
}

#[test]
fn a_slow_kubelet_is_given_up_on_within_the_bound() {
    let kubelet = StandIn::serve(Kubelet {
        delay: Duration::from_secs(3600),
        ..node()
    });
    let bound = Duration::from_millis(200);
    assert_eq!(
        ask_blocking(&kubelet.socket(), bound),
        Err(AskError::Slow(bound))
    );
}

#[test]
fn an_answer_that_is_not_grpc_is_a_failure_not_a_table() {
    let kubelet = StandIn::garbage();
    let err = ask_blocking(&kubelet.socket(), QUICK).unwrap_err();
    assert!(matches!(err, AskError::Failed(_)), "{err:?}");
    assert!(!err.to_string().contains('\u{1b}'), "{err}");
}

#[test]
fn a_socket_that_is_not_one_is_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubelet.sock");
    std::fs::write(&path, b"plain file").unwrap();
    assert!(matches!(
        ask_blocking(&path, QUICK),
        Err(AskError::Failed(_))
    ));
}

fn on_gpu(pid: u32, gpu: u32, pod: Option<PodRef>) -> ProcessReading {
    ProcessReading {
        gpu: vec![GpuUse {
            gpu_index: gpu,
            kind: gpumeter_model::GpuProcessKind::Compute,
            memory_bytes: None,
            sm_util_pct: None,
            memory_util_pct: None,
        }],
        pod,
        ..ProcessReading::invisible(pid)
    }
}

fn by_uid(uid: &str, container: &str) -> PodRef {
    PodRef {
        pod_uid: Some(uid.into()),
        container: Some(container.into()),
        ..PodRef::default()
    }
}

#[test]
fn without_the_socket_the_processes_cgroups_name_the_pods() {
    let mut snap = three_gpus();
    snap.processes = vec![
        on_gpu(10, 0, Some(by_uid("uid-a", "3f4e5d6c7b8a"))),
        on_gpu(11, 0, Some(by_uid("uid-a", "3f4e5d6c7b8a"))),
        on_gpu(12, 1, None),
    ];
    attribute(None, &mut snap);
    assert_eq!(snap.gpus[0].pods, vec![by_uid("uid-a", "3f4e5d6c7b8a")]);
    assert!(snap.gpus[1].pods.is_empty());
}

#[test]
fn a_pod_process_takes_the_names_of_its_gpus_pod() {
    let kubelet = StandIn::serve(node());
    let table = ask_blocking(&kubelet.socket(), QUICK).unwrap();
    let mut snap = three_gpus();
    snap.processes = vec![
        on_gpu(10, 0, Some(by_uid("uid-a", "3f4e5d6c7b8a"))),
        // Two pods share GPU 1's slices: which one is this? Left with its UID.
        on_gpu(11, 1, Some(by_uid("uid-b", "0123456789ab"))),
        // Not in a pod (a host process): no pod.
        on_gpu(12, 0, None),
    ];
    attribute(Some(&table), &mut snap);
    let p = snap.processes[0].pod.as_ref().unwrap();
    assert_eq!(p.pod.as_deref(), Some("trainer-7f9c"));
    assert_eq!(p.namespace.as_deref(), Some("ml"));
    assert_eq!(p.container.as_deref(), Some("trainer"));
    assert_eq!(p.pod_uid.as_deref(), Some("uid-a"));
    assert_eq!(snap.processes[1].pod, Some(by_uid("uid-b", "0123456789ab")));
    assert_eq!(snap.processes[2].pod, None);
}

#[test]
fn a_worker_without_a_gpu_takes_its_pod_mates_names() {
    let kubelet = StandIn::serve(node());
    let table = ask_blocking(&kubelet.socket(), QUICK).unwrap();
    let mut snap = three_gpus();
    let mut worker = ProcessReading::invisible(20);
    worker.pod = Some(by_uid("uid-a", "3f4e5d6c7b8a"));
    let mut stranger = ProcessReading::invisible(21);
    stranger.pod = Some(by_uid("uid-z", "999999999999"));
    snap.processes = vec![
        worker,
        on_gpu(10, 0, Some(by_uid("uid-a", "3f4e5d6c7b8a"))),
        stranger,
    ];
    attribute(Some(&table), &mut snap);
    // The worker (before its trainer in the list) is in trainer-7f9c, as its trainer is; its
    // container is still the cgroup's: which of the pod's containers it is, nobody said.
    let w = snap.processes[0].pod.as_ref().unwrap();
    assert_eq!(w.pod.as_deref(), Some("trainer-7f9c"));
    assert_eq!(w.namespace.as_deref(), Some("ml"));
    assert_eq!(w.container.as_deref(), Some("3f4e5d6c7b8a"));
    assert_eq!(w.pod_uid.as_deref(), Some("uid-a"));
    // A pod no named process shares keeps its UID only.
    assert_eq!(snap.processes[2].pod, Some(by_uid("uid-z", "999999999999")));
    // Without the kubelet nothing is named, so nothing spreads.
    let mut plain = three_gpus();
    let mut w = ProcessReading::invisible(20);
    w.pod = Some(by_uid("uid-a", "3f4e5d6c7b8a"));
    plain.processes = vec![w, on_gpu(10, 0, Some(by_uid("uid-a", "3f4e5d6c7b8a")))];
    attribute(None, &mut plain);
    assert_eq!(
        plain.processes[0].pod,
        Some(by_uid("uid-a", "3f4e5d6c7b8a"))
    );
}

fn attribution(socket: &Path, timeout: Duration) -> PodAttribution {
    let pods = PodAttribution::start(KubeOptions {
        socket: socket.to_path_buf(),
        timeout,
        refresh: Duration::from_secs(3600),
    });
    pods.wait_first(Duration::from_secs(30));
    pods
}

#[test]
fn the_refresher_labels_readings_from_its_cache() {
    let kubelet = StandIn::serve(node());
    let pods = attribution(&kubelet.socket(), QUICK);
    let mut snap = three_gpus();
    pods.apply(&mut snap);
    assert_eq!(
        snap.gpus[0].pods,
        vec![named("ml", "trainer-7f9c", "trainer")]
    );
    assert!(snap.warnings.is_empty(), "{:?}", snap.warnings);
}

#[test]
fn unknown_pods_from_a_missing_slow_or_garbled_socket_never_fail_a_reading() {
    let dir = tempfile::tempdir().unwrap();
    let missing = attribution(&dir.path().join("kubelet.sock"), QUICK);
    let mut snap = three_gpus();
    missing.apply(&mut snap);
    assert!(snap.gpus.iter().all(|g| g.pods.is_empty()));
    // Most machines are no Kubernetes node: nothing to say.
    assert!(snap.warnings.is_empty(), "{:?}", snap.warnings);

    let slow = StandIn::serve(Kubelet {
        delay: Duration::from_secs(3600),
        ..node()
    });
    let garbled = StandIn::garbage();
    for (socket, timeout) in [
        (slow.socket(), Duration::from_millis(200)),
        (garbled.socket(), QUICK),
    ] {
        let pods = attribution(&socket, timeout);
        let mut snap = three_gpus();
        pods.apply(&mut snap);
        assert!(snap.gpus.iter().all(|g| g.pods.is_empty()));
        assert_eq!(snap.warnings.len(), 1, "{:?}", snap.warnings);
        assert!(
            snap.warnings[0].starts_with("pods unknown: "),
            "{}",
            snap.warnings[0]
        );
    }
}

#[test]
fn a_failed_ask_keeps_the_last_table_a_little_while() {
    let kubelet = StandIn::serve(node());
    let table = ask_blocking(&kubelet.socket(), QUICK).unwrap();
    let mut latest = Latest::default();
    latest.record(Ok(table));
    for _ in 1..KEPT_THROUGH_FAILURES {
        latest.record(Err(AskError::Slow(QUICK)));
        assert!(latest.table.is_some());
    }
    latest.record(Err(AskError::Slow(QUICK)));
    assert!(latest.table.is_none());
}
