//! The real dashboard in a real terminal (tmux): it draws, answers keys, and always gives the
//! terminal back — on `q`, SIGTERM, SIGHUP and SIGINT.

use std::time::Duration;

use crate::support::tmux::{self, Tmux};

const BIN: &str = env!("CARGO_BIN_EXE_gpumeter");
const WAIT: Duration = Duration::from_secs(15);

fn demo(scenario: &str, w: u16, h: u16) -> Tmux {
    let t = Tmux::start(&format!("exec {BIN} --demo {scenario}"), w, h, &[]);
    t.wait_for("the dashboard", WAIT, |s| {
        s.contains("GPU") && s.contains("PID")
    });
    t
}

#[test]
fn q_quits_and_restores_the_terminal() {
    if !tmux::available() {
        return;
    }
    let t = demo("training", 120, 40);
    assert!(
        t.alternate_on(),
        "the dashboard should use the alternate screen"
    );
    t.keys(&["q"]);
    t.wait_dead(WAIT);
    assert_eq!(t.exit_status(), Some(0));
    assert!(!t.alternate_on(), "alternate screen left on after q");
}

#[test]
fn help_overlay_opens_and_closes() {
    if !tmux::available() {
        return;
    }
    let t = demo("training", 120, 40);
    t.keys(&["?"]);
    t.wait_for("the help overlay", WAIT, |s| {
        s.to_lowercase().contains("help") && s.contains("sort")
    });
    t.keys(&["Escape"]);
    t.wait_for("the help overlay to close", WAIT, |s| {
        !s.contains("toggle tree")
    });
    t.keys(&["q"]);
    t.wait_dead(WAIT);
}

#[test]
fn filter_narrows_the_process_table() {
    if !tmux::available() {
        return;
    }
    let t = demo("mixed", 160, 50);
    t.keys(&["/"]);
    t.literal("jupyter");
    t.keys(&["Enter"]);
    let s = t.wait_for("the filter to apply", WAIT, |s| s.contains("jupyter"));
    assert!(
        !s.contains("torchrun"),
        "filtered-out process still shown:\n{s}"
    );
    t.keys(&["q"]);
    t.wait_dead(WAIT);
}

fn signal_restores(sig: &str) {
    if !tmux::available() {
        return;
    }
    let t = demo("training", 100, 30);
    let pid = t.pid();
    let status = std::process::Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    t.wait_dead(WAIT);
    assert!(!t.alternate_on(), "alternate screen left on after SIG{sig}");
}

#[test]
fn sigterm_restores_the_terminal() {
    signal_restores("TERM");
}

#[test]
fn sighup_restores_the_terminal() {
    signal_restores("HUP");
}

#[test]
fn sigint_restores_the_terminal() {
    signal_restores("INT");
}

#[test]
fn tiny_terminal_does_not_crash() {
    if !tmux::available() {
        return;
    }
    let t = Tmux::start(&format!("exec {BIN} --demo training"), 20, 5, &[]);
    std::thread::sleep(Duration::from_millis(1500));
    assert!(!t.dead(), "crashed at 20x5:\n{}", t.screen());
    t.keys(&["q"]);
    t.wait_dead(WAIT);
    assert_eq!(t.exit_status(), Some(0));
}
