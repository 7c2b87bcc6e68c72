//! The real `gpumeter fleet` screen in tmux over real `serve --demo` instances, a host that
//! accepts and never answers, and a dead port: the rows appear, the dead and the stalled
//! hosts are marked, keys keep working while a request hangs, Enter opens a host's dashboard,
//! Esc comes back, and `q` gives the terminal back.

use std::net::TcpListener;
use std::time::Duration;

use crate::support::serve::Served;
use crate::support::tmux::{self, Tmux};

const BIN: &str = env!("CARGO_BIN_EXE_gpumeter");
const WAIT: Duration = Duration::from_secs(20);
const ISOLATED: &[(&str, &str)] = &[
    ("XDG_CONFIG_HOME", "/nonexistent/gpumeter-test-config"),
    ("XDG_STATE_HOME", "/nonexistent/gpumeter-test-state"),
];

#[test]
fn the_fleet_screen_marks_dead_and_stalled_hosts_and_drills_in_without_freezing() {
    if !tmux::available() {
        return;
    }
    let idle = Served::start(
        &["--demo", "idle", "--no-ledger", "--interval", "200ms"],
        &[],
    );
    idle.wait_ready();
    let training = Served::start(
        &["--demo", "training", "--no-ledger", "--interval", "200ms"],
        &[],
    );
    training.wait_ready();
    // Accepts connections (the kernel's backlog) and never answers.
    let stalled = TcpListener::bind("127.0.0.1:0").unwrap();
    let stalled_addr = stalled.local_addr().unwrap();
    let dead = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let hosts = dir.path().join("hosts.txt");
    std::fs::write(
        &hosts,
        format!(
            "http://{} name=box-idle\nhttp://{} name=box-train\nhttp://{stalled_addr} name=box-stuck\nhttp://{dead} name=box-dead\n",
            idle.addr, training.addr
        ),
    )
    .unwrap();
    let t = Tmux::start(
        &format!(
            "exec {BIN} fleet --hosts {} --interval 500ms --timeout 1s",
            hosts.display()
        ),
        140,
        20,
        ISOLATED,
    );
    let screen = t.wait_for("every host's state", WAIT, |s| {
        s.contains("box-idle")
            && s.contains("timeout")
            && s.contains("down")
            && s.contains("box-train")
    });
    assert!(screen.contains("gpumeter fleet · 4 hosts"), "{screen}");
    assert!(screen.contains("IDLE/H▼"), "{screen}");
    let idle_line = screen.lines().find(|l| l.contains("box-idle")).unwrap();
    assert!(
        idle_line.contains(" up ") && idle_line.contains("$31.00/h"),
        "{idle_line}"
    );
    let stuck = screen.lines().find(|l| l.contains("box-stuck")).unwrap();
    assert!(stuck.contains("no answer within the timeout"), "{stuck}");
    let dead_line = screen.lines().find(|l| l.contains("box-dead")).unwrap();
    assert!(dead_line.contains("refused"), "{dead_line}");
    // The idle box is on top: its idle burn is the largest.
    let first_row = screen.lines().nth(3).unwrap();
    assert!(first_row.contains("box-idle"), "{screen}");

    // Keys answer while the stalled host keeps a request hanging.
    t.keys(&["s"]);
    t.wait_for("the sort to change", WAIT, |s| s.contains("BURN/H▼"));
    t.keys(&["S"]);
    t.wait_for("the order to reverse", WAIT, |s| s.contains("BURN/H▲"));
    // Back to idle/h, top row, and into that host's dashboard.
    for _ in 0..6 {
        t.keys(&["s"]);
    }
    t.wait_for("idle/h again", WAIT, |s| s.contains("IDLE/H▼"));
    t.keys(&["g", "Enter"]);
    let dash = t.wait_for("the host's dashboard", WAIT, |s| {
        s.contains("demo:idle") && s.contains("PID")
    });
    assert!(dash.contains("GPU"), "{dash}");
    t.keys(&["Escape"]);
    t.wait_for("the fleet again", WAIT, |s| s.contains("gpumeter fleet"));
    t.keys(&["q"]);
    t.wait_dead(WAIT);
    assert_eq!(t.exit_status(), Some(0), "{}", t.screen());
    assert!(!t.alternate_on(), "the terminal was not restored");
    drop(stalled);
}
