//! The real dashboard in a real terminal (tmux): it draws, answers keys, shows money moving,
//! and always gives the terminal back — on `q`, SIGTERM, SIGHUP and SIGINT.

use std::time::Duration;

use crate::support::tmux::{self, Tmux};

const BIN: &str = env!("CARGO_BIN_EXE_gpumeter");
const WAIT: Duration = Duration::from_secs(15);

/// No user config and no ledger: a test never reads or writes the user's files.
const ISOLATED: &[(&str, &str)] = &[
    ("XDG_CONFIG_HOME", "/nonexistent/gpumeter-test-config"),
    ("XDG_STATE_HOME", "/nonexistent/gpumeter-test-state"),
];

fn demo(scenario: &str, w: u16, h: u16) -> Tmux {
    demo_with(scenario, "", w, h)
}

/// [`demo`] with more arguments.
fn demo_with(scenario: &str, args: &str, w: u16, h: u16) -> Tmux {
    let t = Tmux::start(
        &format!("exec {BIN} --demo {scenario} --no-ledger {args}"),
        w,
        h,
        ISOLATED,
    );
    t.wait_for("the dashboard", WAIT, |s| {
        s.contains("GPU") && s.contains("PID")
    });
    t
}

/// The amount on the spend panel's `spent` line, in currency units.
fn spent(screen: &str) -> Option<f64> {
    let line = screen.lines().find(|l| l.contains("spent "))?;
    let after = line.split("spent ").nth(1)?.trim_start();
    let amount = after.split_whitespace().next()?;
    amount.trim_start_matches('$').replace(',', "").parse().ok()
}

#[test]
fn idle_demo_shows_money_growing() {
    if !tmux::available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.sqlite");
    let t = Tmux::start(
        &format!("exec {BIN} --demo idle --ledger {}", ledger.display()),
        120,
        40,
        ISOLATED,
    );
    let first = t.wait_for("the spend panel", WAIT, |s| spent(s).is_some());
    let before = spent(&first).unwrap();
    assert!(first.contains("$31.00/h"), "{first}");
    std::thread::sleep(Duration::from_secs(2));
    // $31/h is 1.7 cents in 2 s; allow the sampler a few more seconds to tick over a cent.
    let later = t.wait_for("the spend to grow", WAIT, |s| {
        spent(s).is_some_and(|now| now > before)
    });
    let after = spent(&later).unwrap();
    assert!(after - before < 1.0, "{before} → {after}");
    t.keys(&["q"]);
    // (The exit status after q is q_quits_and_restores_the_terminal's business.)
    t.wait_dead(WAIT);
    // The session went to the ledger, the minute open at `q` included.
    let (l, _) = gpumeter_core::ledger::Ledger::open(&ledger, 0).unwrap();
    let usage = l.total_usage().unwrap();
    assert!(usage.spend_micros >= (before * 1e6) as i64, "{usage:?}");
}

#[test]
fn a_resized_terminal_is_redrawn_at_its_new_size() {
    if !tmux::available() {
        return;
    }
    // The key line is the last row, and says as much as its width allows.
    let last_row = |s: &str, rows: usize| -> String {
        let lines: Vec<&str> = s.lines().collect();
        assert!(lines.len() >= rows, "{s}");
        lines[rows - 1].to_string()
    };
    // Three minutes in, every rule has its window: the line holds only key hints.
    let t = demo_with("training", "--start 3m", 120, 40);
    let wide = t.wait_for("the key line at row 40", WAIT, |s| {
        last_row(s, 40).starts_with("q quit") && last_row(s, 40).contains("Enter process details")
    });
    assert!(wide.lines().all(|l| l.chars().count() <= 120), "{wide}");
    t.resize(90, 28);
    let narrow = t.wait_for("the key line at row 28, cut to 90 columns", WAIT, |s| {
        s.lines().count() == 28
            && last_row(s, 28).starts_with("q quit")
            && !last_row(s, 28).contains("Enter process details")
    });
    assert!(narrow.lines().all(|l| l.chars().count() <= 90), "{narrow}");
    assert!(narrow.contains("GPU") && narrow.contains("PID"), "{narrow}");
    t.keys(&["q"]);
    t.wait_dead(WAIT);
}

#[test]
fn q_quits_and_restores_the_terminal() {
    if !tmux::available() {
        return;
    }
    let t = demo("training", 120, 40);
    // Just started: the key line says first that no rule has judged yet.
    let screen = t.wait_for("the judging line", WAIT, |s| {
        s.lines()
            .nth(39)
            .is_some_and(|l| l.starts_with("judging: "))
    });
    assert!(screen.contains("for starved"), "{screen}");
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
    // A line only the overlay shows. (This test once waited for text the overlay no longer
    // had, so `q` followed Escape at once and the app could read both as Alt-q.)
    const OVERLAY: &str = "workers under their trainer";
    t.keys(&["?"]);
    t.wait_for("the help overlay", WAIT, |s| s.contains(OVERLAY));
    t.keys(&["Escape"]);
    t.wait_for("the help overlay to close", WAIT, |s| !s.contains(OVERLAY));
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
    let t = Tmux::start(
        &format!("exec {BIN} --demo training --no-ledger"),
        20,
        5,
        ISOLATED,
    );
    std::thread::sleep(Duration::from_millis(1500));
    assert!(!t.dead(), "crashed at 20x5:\n{}", t.screen());
    t.keys(&["q"]);
    t.wait_dead(WAIT);
    assert_eq!(t.exit_status(), Some(0));
}

/// A `cpu-starved` run of `minutes`, recorded through the real binary (fast-forwarded).
fn recorded_cpu_starved(dir: &std::path::Path, minutes: u32) -> std::path::PathBuf {
    let path = dir.join("run.ndjson");
    let out = crate::support::gpumeter(dir)
        .args(["record"])
        .arg(&path)
        .args([
            "--demo",
            "cpu-starved",
            "--fast",
            "--for",
            &format!("{minutes}m"),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    path
}

#[test]
fn a_replay_plays_pauses_steps_and_seeks_in_the_dashboard() {
    if !tmux::available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = recorded_cpu_starved(dir.path(), 4);
    let t = Tmux::start(
        &format!("exec {BIN} --replay {} --no-ledger", path.display()),
        120,
        40,
        ISOLATED,
    );
    t.wait_for("the replay header", WAIT, |s| {
        s.contains("REPLAY") && s.contains(" 1×")
    });
    t.keys(&["Space"]);
    let paused = t.wait_for("the pause", WAIT, |s| s.contains("PAUSED"));
    let at = |s: &str| {
        s.lines()
            .find(|l| l.contains("REPLAY"))
            .and_then(|l| l.split(" +").nth(1))
            .and_then(|r| r.split_whitespace().next())
            .map(str::to_string)
    };
    let before = at(&paused).unwrap();
    t.keys(&["]"]);
    let sought = t.wait_for("a minute on", WAIT, |s| {
        at(s).is_some_and(|a| a.starts_with("1m"))
    });
    assert!(
        sought.contains("PAUSED"),
        "a seek keeps the pause:\n{sought}"
    );
    t.keys(&["."]);
    t.wait_for("one reading on", WAIT, |s| {
        at(s).is_some_and(|a| a != at(&sought).unwrap_or_default() && a.starts_with("1m"))
    });
    t.keys(&["["]);
    t.wait_for("back", WAIT, |s| {
        at(s).is_some_and(|a| !a.starts_with("1m"))
    });
    let _ = before;
    t.keys(&["q"]);
    t.wait_dead(WAIT);
    assert_eq!(t.exit_status(), Some(0));
}

/// The detail view's title range, `Alert details  A–B of N`, as (A, B, N).
fn detail_lines(screen: &str) -> Option<(usize, usize, usize)> {
    let after = screen.split("Alert details").nth(1)?;
    let mut words = after.split_whitespace();
    let (a, b) = words.next()?.split_once('–')?;
    (words.next()? == "of").then_some(())?;
    Some((
        a.parse().ok()?,
        b.parse().ok()?,
        words.next()?.parse().ok()?,
    ))
}

#[test]
fn at_80x24_an_alert_opens_in_a_detail_view_that_scrolls() {
    if !tmux::available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = recorded_cpu_starved(dir.path(), 5);
    // Four minutes in, the starved alert stands.
    let t = Tmux::start(
        &format!(
            "exec {BIN} --replay {} --start 4m --no-ledger",
            path.display()
        ),
        80,
        24,
        ISOLATED,
    );
    t.wait_for("the alert strip", WAIT, |s| {
        s.contains("starved") && s.contains("Enter")
    });
    t.keys(&["Space", "Enter"]);
    let detail = t.wait_for("the detail view", WAIT, |s| s.contains("Alert details"));
    assert!(detail.contains("What it has cost"), "{detail}");
    assert!(detail.contains("Next step"), "{detail}");
    let (first, _, total) = detail_lines(&detail).expect("a line range in the title");
    assert_eq!(first, 1, "{detail}");
    // Scrolled to its end it shows the last of the evidence. (The end is waited for by its
    // line range: the words on the first page may still be there, or already gone, when the
    // screen is first read after the key, depending on how soon the dashboard redraws.)
    t.keys(&["End"]);
    let end = t.wait_for("the end of the details", WAIT, |s| {
        detail_lines(s).is_some_and(|(a, b, n)| a > 1 && b == n && n == total)
    });
    assert!(end.contains("GPU time wasted"), "{end}");
    t.keys(&["Escape"]);
    t.wait_for("the view to close", WAIT, |s| !s.contains("Alert details"));
    t.keys(&["q"]);
    t.wait_dead(WAIT);
    assert_eq!(t.exit_status(), Some(0));
}

#[test]
fn a_key_given_to_two_actions_is_an_error_naming_both_and_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "[keys]\nquit = \"x\"\nsnooze = \"a\"\n").unwrap();
    let out = crate::support::gpumeter(dir.path())
        .args(["--demo", "--no-ledger", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("config.toml:3:"), "{err}");
    assert!(
        err.contains("`acknowledge`") && err.contains("`snooze`"),
        "{err}"
    );
}

#[test]
fn start_needs_a_replay_or_a_demo_and_a_demo_takes_a_duration() {
    let home = tempfile::tempdir().unwrap();
    for (args, says) in [
        (
            vec!["--no-ledger", "--start", "90s"],
            "--start needs --replay FILE or --demo NAME",
        ),
        (
            vec!["--demo", "hung", "--no-ledger", "--start", "03:10"],
            "with --demo, --start is a duration",
        ),
        (
            vec!["--demo", "hung", "--no-ledger", "--start", "25h"],
            "at most 24h",
        ),
    ] {
        let out = crate::support::gpumeter(home.path())
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// `--demo hung --start 6m`: the six minutes before are played at once, so the hung verdict
/// (a 2-minute window after the hang at ~2 min) is on screen from the start, and the clock
/// then runs live.
#[test]
fn a_demo_started_later_shows_the_verdicts_of_that_moment() {
    if !tmux::available() {
        return;
    }
    let t = Tmux::start(
        &format!("exec {BIN} --demo hung --start 6m --no-ledger"),
        120,
        40,
        ISOLATED,
    );
    // Caught up: the readings are live again (the header gives their period, not an age).
    t.wait_for("the hung alert, live", WAIT, |s| {
        s.contains("busy but do no work") && s.contains("sample every 1s")
    });
}
