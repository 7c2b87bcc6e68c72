//! Kubernetes pods on the dashboard: the process table's POD column (the pod's name, else its
//! UID cut short) only while some process or GPU of the reading has a pod, dropped first at
//! 80×24; each GPU's pods on its panel or line; pod, namespace and container in the process
//! detail; and names from a stand-in kubelet arriving sanitized and kept inside their cell.

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use gpumeter_kube::stand_in::{Kubelet, StandIn, devices, pod};
use gpumeter_kube::{KubeOptions, PodAttribution};
use gpumeter_model::{PodRef, Snapshot};

use crate::ui::tests::fixtures::{self, buffer_to_string, render};
use crate::ui::*;

const TRAINER_UID: &str = "0d9a1c2e-5b7f-4c11-9e2a-6f0b3c8d1a22";
const SERVER_UID: &str = "7b3e91f0-2c4d-4e6f-8a1b-3c5d7e9f0a12";

fn app() -> App {
    App::new(&fixtures::options())
}

fn key(app: &mut App, code: KeyCode) {
    app.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
}

fn named(ns: &str, name: &str, container: &str) -> PodRef {
    PodRef {
        namespace: Some(ns.into()),
        pod: Some(name.into()),
        container: Some(container.into()),
        pod_uid: None,
    }
}

/// Two GPUs on a node: GPU 0 whole to ml/trainer-7f9c, whose trainer and workers the kubelet
/// named; GPU 1's MIG slices to two serving pods, its processes known by their cgroup's pod
/// UID only; bob's notebook in no pod.
fn on_kubernetes() -> Snapshot {
    let mut s = fixtures::snapshot(2);
    s.gpus[0].pods = vec![named("ml", "trainer-7f9c", "trainer")];
    s.gpus[1].pods = vec![
        named("serve", "infer-a", "server"),
        named("serve", "infer-b", "server"),
    ];
    for p in &mut s.processes {
        p.pod = match p.pid {
            1000 | 2000 | 2001 => Some(PodRef {
                pod_uid: Some(TRAINER_UID.into()),
                ..named("ml", "trainer-7f9c", "trainer")
            }),
            1001 | 2010 | 2011 => Some(PodRef {
                pod_uid: Some(SERVER_UID.into()),
                container: Some("3f2a9c1b7d4e".into()),
                ..PodRef::default()
            }),
            _ => None,
        };
    }
    s
}

/// The text of `pid`'s row under the header named `column` (up to the next header), trimmed.
fn cell(screen: &str, pid: u32, column: &str) -> Option<String> {
    let header = screen
        .lines()
        .find(|l| l.contains("PID") && l.contains("VRAM"))?;
    let start = header.find(&format!(" {column} ")).map(|i| i + 1)?;
    let end = header[start + column.len()..]
        .find(|c: char| c != ' ')
        .map_or(header.len(), |i| i + start + column.len());
    let row = screen
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{pid} ")))?;
    let chars: Vec<char> = row.chars().collect();
    Some(
        chars
            .get(start..end)?
            .iter()
            .collect::<String>()
            .trim()
            .to_string(),
    )
}

/// The words inside the overlay whose title holds `title`, its lines joined by spaces (wrapped
/// text reads as one).
fn overlay_words(screen: &str, title: &str) -> String {
    let lines: Vec<Vec<char>> = screen.lines().map(|l| l.chars().collect()).collect();
    let Some(top) = lines
        .iter()
        .position(|l| l.iter().collect::<String>().contains(title))
    else {
        return String::new();
    };
    let left = lines[top].iter().position(|c| *c == '┌').unwrap_or(0);
    let right = lines[top].iter().rposition(|c| *c == '┐').unwrap_or(0);
    let mut words = Vec::new();
    for l in &lines[top + 1..] {
        if l.get(left) != Some(&'│') {
            break;
        }
        let inside: String = l.get(left + 1..right).unwrap_or_default().iter().collect();
        words.extend(inside.split_whitespace().map(str::to_string));
    }
    words.join(" ")
}

#[test]
fn no_pod_is_known_no_pod_column() {
    for (w, h) in [(80, 24), (120, 40), (200, 60)] {
        let s = buffer_to_string(&render(&mut app(), &fixtures::engine(2), w, h));
        assert!(
            s.contains("PID") && s.contains("CONTAINER") == (w >= 120),
            "{s}"
        );
        assert!(!s.contains("POD") && !s.contains("pod "), "{w}x{h}:\n{s}");
    }
}

#[test]
fn at_120x40_the_pod_column_names_each_process_pod() {
    let engine = fixtures::engine_with(on_kubernetes());
    let s = buffer_to_string(&render(&mut app(), &engine, 120, 40));
    // Every column fits at 120: the pod beside the container.
    assert!(s.contains(" POD ") && s.contains(" CONTAINER "), "{s}");
    // The kubelet's name; else the cgroup's UID, cut short; a process in no pod: `-`.
    assert_eq!(
        cell(&s, 1000, "POD").as_deref(),
        Some("trainer-7f9c"),
        "{s}"
    );
    assert_eq!(
        cell(&s, 2000, "POD").as_deref(),
        Some("trainer-7f9c"),
        "{s}"
    );
    assert_eq!(cell(&s, 1001, "POD").as_deref(), Some("7b3e91f0"), "{s}");
    assert_eq!(cell(&s, 3100, "POD").as_deref(), Some("-"), "{s}");
    // The driver's PID /proc cannot see: not known, not "none".
    assert_eq!(cell(&s, 4242, "POD").as_deref(), Some("N/A"), "{s}");
    // The columns either side keep their own text.
    assert_eq!(cell(&s, 1001, "USER").as_deref(), Some("alice"), "{s}");
    assert_eq!(
        cell(&s, 1001, "CONTAINER").as_deref(),
        Some("3f2a9c1b7d4e"),
        "{s}"
    );
    // The GPU panels name their pods (GPU 1's MIG slices: both).
    let gpu0 = s.lines().find(|l| l.contains("GPU0 H100")).unwrap_or("");
    assert!(gpu0.contains("pod trainer-7f9c"), "{s}");
    let gpu1 = s.lines().find(|l| l.contains("GPU1 H100")).unwrap_or("");
    assert!(gpu1.contains("infer-a, infer-b"), "{s}");
}

/// The process rows in screen order: each PID and the text of its POD cell (char positions,
/// so a sort arrow in the header does not shift them).
fn pod_cells(screen: &str) -> Vec<(u32, String)> {
    let lines: Vec<Vec<char>> = screen.lines().map(|l| l.chars().collect()).collect();
    let Some(top) = lines.iter().position(|l| {
        let l: String = l.iter().collect();
        l.contains("PID") && l.contains("VRAM")
    }) else {
        return Vec::new();
    };
    let header: String = lines[top].iter().collect();
    let Some(byte) = header.find(" POD") else {
        return Vec::new();
    };
    let start = header[..byte].chars().count() + 1;
    lines[top + 1..]
        .iter()
        .map_while(|l| {
            let row: String = l.iter().collect();
            let pid = row.split_whitespace().next()?.parse().ok()?;
            let cell: String = l.get(start..start + 13)?.iter().collect();
            Some((pid, cell.trim().to_string()))
        })
        .collect()
}

#[test]
fn o_sorts_the_table_by_pod_both_ways_with_no_pod_last() {
    let engine = fixtures::engine_with(on_kubernetes());
    let mut a = app();
    render(&mut a, &engine, 120, 40);
    // Flat, so every row takes part in the one order.
    key(&mut a, KeyCode::Char('t'));
    key(&mut a, KeyCode::Char('O'));
    let s = buffer_to_string(&render(&mut a, &engine, 120, 40));
    assert!(s.contains(" POD▲ ") && s.contains("sort pod ▲"), "{s}");
    let rows = pod_cells(&s);
    let pods = |rows: &[(u32, String)]| {
        rows.iter()
            .map(|(pid, pod)| (*pid, pod.clone()))
            .take(6)
            .collect::<Vec<_>>()
    };
    let by_uid = |pid| (pid, "7b3e91f0".to_string());
    let trainer = |pid| (pid, "trainer-7f9c".to_string());
    // A–Z by what the cell shows (the UID's start sorts before the name), ties by PID.
    assert_eq!(
        pods(&rows),
        [
            by_uid(1001),
            by_uid(2010),
            by_uid(2011),
            trainer(1000),
            trainer(2000),
            trainer(2001)
        ],
        "{s}"
    );
    // The processes in no pod (`-`) and the one /proc cannot see (`N/A`) come after.
    assert!(rows.len() > 6, "{s}");
    assert!(rows[6..].iter().all(|(_, p)| p == "-" || p == "N/A"), "{s}");
    // Again: Z–A, the processes in no pod still last.
    key(&mut a, KeyCode::Char('O'));
    let s = buffer_to_string(&render(&mut a, &engine, 120, 40));
    assert!(s.contains(" POD▼ "), "{s}");
    let rows = pod_cells(&s);
    assert_eq!(
        pods(&rows),
        [
            trainer(1000),
            trainer(2000),
            trainer(2001),
            by_uid(1001),
            by_uid(2010),
            by_uid(2011)
        ],
        "{s}"
    );
    assert!(rows[6..].iter().all(|(_, p)| p == "-" || p == "N/A"), "{s}");
}

#[test]
fn s_visits_the_pod_only_while_its_column_is_shown() {
    use crate::ui::sort::SortColumn;
    for (engine, pods) in [
        (fixtures::engine_with(on_kubernetes()), true),
        (fixtures::engine(2), false),
    ] {
        let mut a = app();
        render(&mut a, &engine, 120, 40);
        key(&mut a, KeyCode::Char('N'));
        key(&mut a, KeyCode::Char('s'));
        assert_eq!(a.sort, SortColumn::User);
        key(&mut a, KeyCode::Char('s'));
        let next = if pods {
            SortColumn::Pod
        } else {
            SortColumn::Gpu
        };
        assert_eq!(a.sort, next, "pods shown: {pods}");
    }
}

#[test]
fn at_80x24_the_pod_column_goes_first_and_the_panels_still_name_the_pods() {
    let engine = fixtures::engine_with(on_kubernetes());
    let s = buffer_to_string(&render(&mut app(), &engine, 80, 24));
    assert!(!s.contains(" POD "), "{s}");
    // The table is as readable as without pods: the same columns, the command its room.
    let plain = buffer_to_string(&render(&mut app(), &fixtures::engine(2), 80, 24));
    let header = |t: &str| {
        t.lines()
            .find(|l| l.contains("PID") && l.contains("VRAM"))
            .map(str::to_string)
    };
    assert_eq!(header(&s), header(&plain), "{s}");
    assert_eq!(cell(&s, 1000, "COMMAND"), cell(&plain, 1000, "COMMAND"));
    // Each GPU's pods are on its panel's title, the card's model giving way to them where
    // both do not fit.
    let gpu0 = s.lines().find(|l| l.contains("┌ GPU0 ")).unwrap_or("");
    assert!(gpu0.contains("GPU0 H100 80GB HBM3 · trainer-7f9c"), "{s}");
    assert!(s.contains("┌ GPU1 · pods infer-a, infer-b ─"), "{s}");
}

#[test]
fn gpu_lines_name_their_pods_where_there_is_room() {
    // Eight GPUs at 80×24 are drawn one line each.
    let mut snap = fixtures::snapshot(8);
    snap.gpus[3].pods = vec![named("ml", "trainer-7f9c", "trainer")];
    let engine = fixtures::engine_with(snap);
    let s = buffer_to_string(&render(&mut app(), &engine, 120, 24));
    let line = s.lines().find(|l| l.contains("GPU3 ")).unwrap_or("");
    assert!(line.contains("pod trainer-7f9c"), "{s}");
    let other = s.lines().find(|l| l.contains("GPU2 ")).unwrap_or("");
    assert!(!other.contains("pod"), "{s}");
}

#[test]
fn the_process_detail_names_pod_namespace_and_container() {
    let engine = fixtures::engine_with(on_kubernetes());
    for (w, h) in [(120, 40), (80, 24)] {
        let mut a = app();
        render(&mut a, &engine, w, h);
        // The first row: GPU 1's trainer (the most VRAM), known by its pod's UID.
        key(&mut a, KeyCode::Down);
        key(&mut a, KeyCode::Up);
        key(&mut a, KeyCode::Enter);
        let s = buffer_to_string(&render(&mut a, &engine, w, h));
        assert!(s.contains(" Process 1001 "), "{s}");
        let words = overlay_words(&s, " Process 1001 ");
        assert!(
            words.contains(&format!(
                "Pod: uid {SERVER_UID} · namespace N/A · container 3f2a9c1b7d4e"
            )),
            "{w}x{h}:\n{s}"
        );
        if w == 120 {
            // Its GPU's line says whose the card is.
            assert!(
                s.contains("GPU1 VRAM 39.0GiB · SM 71% · pods infer-a, infer-b, namespace serve"),
                "{s}"
            );
        }
        key(&mut a, KeyCode::Esc);
        // GPU 0's trainer, three rows down (after GPU 1's two workers).
        for _ in 0..3 {
            key(&mut a, KeyCode::Down);
        }
        key(&mut a, KeyCode::Enter);
        let s = buffer_to_string(&render(&mut a, &engine, w, h));
        assert!(s.contains(" Process 1000 "), "{s}");
        let words = overlay_words(&s, " Process 1000 ");
        assert!(
            words.contains(&format!(
                "Pod: trainer-7f9c (uid {TRAINER_UID}) · namespace ml · container trainer"
            )),
            "{w}x{h}:\n{s}"
        );
    }
}

#[test]
fn off_kubernetes_the_detail_has_no_pod_line() {
    let engine = fixtures::engine(2);
    let mut a = app();
    render(&mut a, &engine, 120, 40);
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::Up);
    key(&mut a, KeyCode::Enter);
    let s = buffer_to_string(&render(&mut a, &engine, 120, 40));
    assert!(s.contains(" Process 1001 ") && !s.contains("Pod:"), "{s}");
}

#[test]
fn a_long_pod_name_is_cut_inside_its_cell() {
    let mut snap = on_kubernetes();
    let long = "a-very-long-deployment-name-5d8f7c9b4-xk2lp";
    snap.processes[0].pod = Some(named("ml", long, "trainer"));
    let pid = snap.processes[0].pid;
    let engine = fixtures::engine_with(snap);
    let s = buffer_to_string(&render(&mut app(), &engine, 120, 40));
    let got = cell(&s, pid, "POD").unwrap_or_default();
    assert!(got.starts_with("a-very-long") && got.ends_with('…'), "{s}");
    assert_eq!(
        cell(&s, pid, "CONTAINER").as_deref(),
        Some("3f2a9c1b7d4e"),
        "{s}"
    );
}

#[test]
fn hostile_names_from_the_kubelet_arrive_sanitized_and_stay_in_their_cell() {
    // GPU 0 (by index) to a pod whose names carry escape sequences and a bidi override.
    let kubelet = StandIn::serve(Kubelet {
        pods: vec![pod(
            "ml\u{202e}x",
            "evil\u{1b}[2J\u{1b}]0;pwned\u{7}-pod",
            "main\u{1b}[31m",
            vec![devices("nvidia.com/gpu", &["0"])],
        )],
        ..Kubelet::default()
    });
    let asking = PodAttribution::start(KubeOptions {
        socket: kubelet.socket(),
        ..KubeOptions::default()
    });
    asking.wait_first(Duration::from_secs(10));
    // GPU 0's trainer is in a pod by its cgroup: the kubelet's answer names it.
    let mut snap = fixtures::snapshot(2);
    for p in &mut snap.processes {
        if p.pid == 1000 {
            p.pod = Some(PodRef {
                pod_uid: Some(TRAINER_UID.into()),
                ..PodRef::default()
            });
        }
    }
    asking.apply(&mut snap);
    assert_eq!(
        snap.gpus[0].pods.first().and_then(|p| p.pod.as_deref()),
        Some("evil-pod")
    );
    let engine = fixtures::engine_with(snap);
    for (w, h) in [(120, 40), (80, 24)] {
        let mut a = app();
        let buf = render(&mut a, &engine, w, h);
        let s = buffer_to_string(&buf);
        assert!(
            buf.content()
                .iter()
                .all(|c| !c.symbol().chars().any(char::is_control)),
            "{s}"
        );
        assert!(!s.contains('\u{202e}') && !s.contains("pwned"), "{s}");
        assert!(s.contains("pod evil-pod"), "{w}x{h}:\n{s}");
        if w == 120 {
            assert_eq!(cell(&s, 1000, "POD").as_deref(), Some("evil-pod"), "{s}");
            assert_eq!(
                cell(&s, 1000, "CONTAINER").as_deref(),
                Some("3f2a9c1b7d4e"),
                "{s}"
            );
        }
    }
}

#[test]
fn snapshots_on_kubernetes() {
    let engine = fixtures::engine_with(on_kubernetes());
    for (name, w, h) in [("80x24_pods", 80, 24), ("120x40_pods", 120, 40)] {
        let buf = render(&mut app(), &engine, w, h);
        insta::assert_snapshot!(name, buffer_to_string(&buf));
    }
}
