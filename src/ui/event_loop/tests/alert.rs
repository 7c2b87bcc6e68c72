//! The loop's alert side driven with a `TestBackend`: the `idle` demo scenario played through
//! the collector channel on a fake clock fires its alert on screen, `a` acknowledges it (gone
//! from the panel, kept in the history), and autostop runs a harmless stop command unless a key
//! is pressed.

use std::sync::Arc;
use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use futures_util::stream;
use gpumeter_sim::Scenario;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tokio::sync::mpsc;

use super::super::*;
use crate::ui::tests::demo::START;
use crate::ui::tests::fixtures::{self as testing, buffer_to_string};
use gpumeter_core::clock::FakeClock;
use gpumeter_core::source::Source;
use gpumeter_core::source::sim::SimSource;

type Events = std::pin::Pin<Box<dyn Stream<Item = io::Result<Event>>>>;

fn key(c: char) -> io::Result<Event> {
    Ok(Event::Key(KeyEvent::new(
        KeyCode::Char(c),
        KeyModifiers::NONE,
    )))
}

fn scripted() -> (mpsc::Sender<io::Result<Event>>, Events) {
    let (tx, rx) = mpsc::channel(8);
    let events = stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|e| (e, rx)) });
    (tx, Box::pin(events))
}

/// Long enough for the loop to draw a frame (the frame cap is 50 ms).
async fn settle() {
    tokio::time::sleep(Duration::from_millis(150)).await;
}

/// Options with the idle alert due after one minute of idleness.
fn quick_idle() -> UiOptions {
    let mut options = testing::options();
    let idle = &mut options.alerts.rules.idle;
    idle.window_ms = 30_000;
    idle.remind_after_ms = 60_000;
    idle.arm_after_boot_ms = 0;
    options
}

/// What one run did: how it ended and the last screen.
struct Run {
    end: Ended,
    screen: String,
}

/// Plays `phases` of the `idle` scenario (seconds of one-second readings, then the keys to
/// press), and ends the loop by a signal unless it ended itself.
async fn run(options: &UiOptions, phases: &[(u32, &[char])]) -> Run {
    let (keys, events) = scripted();
    let (tx, rx) = mpsc::channel(8);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let clock = FakeClock::new(START);
    let mut source = SimSource::new(Scenario::builtin("idle").unwrap(), Arc::new(clock.clone()));
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
    let script = async {
        for (seconds, pressed) in phases {
            for _ in 0..*seconds {
                let snap = source.sample().unwrap();
                if tx
                    .send(CollectorEvent::Snapshot(Box::new(snap)))
                    .await
                    .is_err()
                {
                    return; // the loop ended (autostop)
                }
                clock.advance_ms(1_000);
            }
            settle().await;
            for c in *pressed {
                if keys.send(key(*c)).await.is_err() {
                    return;
                }
                settle().await;
            }
        }
        let _ = stop.send(());
        settle().await;
    };
    let shutdown = async {
        let _ = stopped.await;
    };
    let (end, ()) = tokio::join!(
        drive(&mut terminal, events, rx, &clock, options, shutdown),
        script
    );
    Run {
        end: end.unwrap(),
        screen: buffer_to_string(terminal.backend().buffer()),
    }
}

#[tokio::test(start_paused = true)]
async fn the_idle_alert_shows_in_the_panel() {
    let r = run(&quick_idle(), &[(180, &[])]).await;
    assert!(r.screen.contains("Alerts (1)"), "{}", r.screen);
    assert!(r.screen.to_lowercase().contains("idle"), "{}", r.screen);
}

#[tokio::test(start_paused = true)]
async fn a_acknowledges_the_alert_which_stays_in_the_history() {
    let r = run(&quick_idle(), &[(180, &['a'])]).await;
    assert!(!r.screen.contains("Alerts ("), "{}", r.screen);
    assert!(r.screen.contains("acknowledged"), "{}", r.screen);
    let r = run(&quick_idle(), &[(180, &['a', 'H'])]).await;
    assert!(r.screen.contains("Alert history"), "{}", r.screen);
    assert!(r.screen.contains("acknowledged"), "{}", r.screen);
    assert!(r.screen.contains("fired"), "{}", r.screen);
}

/// Autostop after two idle minutes, warned 60 s before, stopping by touching `marker`.
fn quick_autostop(marker: &std::path::Path) -> UiOptions {
    let mut options = quick_idle();
    let a = &mut options.alerts.autostop;
    a.enabled = true;
    a.after_ms = 120_000;
    a.warn_before_ms = vec![60_000];
    a.arm_after_boot_ms = 0;
    a.wall = false;
    a.command = vec!["touch".into(), marker.display().to_string()];
    options.alerts.notify.bell = false;
    options.alerts.notify.desktop = false;
    options
}

#[tokio::test(start_paused = true)]
async fn autostop_runs_the_stop_command_when_nobody_is_there() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("stopped");
    let options = quick_autostop(&marker);
    // The countdown shows once the warning is due.
    let r = run(&options, &[(90, &[])]).await;
    assert!(r.screen.contains("autostop in"), "{}", r.screen);
    assert!(r.screen.contains("any key cancels"), "{}", r.screen);
    assert_eq!(r.end.reason, EndReason::Signal);

    let r = run(&options, &[(400, &[])]).await;
    assert_eq!(r.end.reason, EndReason::Autostop);
    let argv = r.end.stop.clone().unwrap();
    assert_eq!(argv[0], "touch");
    assert!(!marker.exists(), "not before the terminal is restored");
    let notes = super::super::loop_alerts::run_stop(&argv);
    assert!(marker.exists(), "{notes:?}");
}

#[tokio::test(start_paused = true)]
async fn a_key_cancels_the_autostop_countdown() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("stopped");
    let options = quick_autostop(&marker);
    // Warned at 60 s left; a key (that also moves the selection) starts the countdown over,
    // and 50 s more of idleness is not enough for a new warning.
    let r = run(&options, &[(90, &['j']), (50, &[])]).await;
    assert_eq!(r.end.reason, EndReason::Signal);
    assert!(r.end.stop.is_none());
    assert!(!r.screen.contains("autostop in"), "{}", r.screen);
    assert!(!marker.exists());
}

/// [`quick_autostop`] with a command hook for every alert that touches `hook_marker`.
fn with_hook(mut options: UiOptions, hook_marker: &std::path::Path) -> UiOptions {
    options.alerts.notify.hooks.insert(
        None,
        vec!["touch".into(), hook_marker.display().to_string()],
    );
    options
}

/// Waits (real time: hooks run on their own thread) until `path` exists, at most 10 s.
fn appears(path: &std::path::Path) -> bool {
    for _ in 0..200 {
        if path.exists() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    false
}

#[tokio::test(start_paused = true)]
async fn read_only_runs_no_autostop_and_no_hook() {
    let dir = tempfile::tempdir().unwrap();
    let (stop_marker, hook_marker) = (dir.path().join("stopped"), dir.path().join("hooked"));
    let options = with_hook(quick_autostop(&stop_marker), &hook_marker);

    // As a control, the same settings stop the machine and run the hook.
    let r = run(&options, &[(400, &[])]).await;
    assert_eq!(r.end.reason, EndReason::Autostop);
    assert!(appears(&hook_marker), "the hook ran");
    std::fs::remove_file(&hook_marker).unwrap();

    let readonly = UiOptions {
        acting: crate::ui::process_action::Acting::ReadOnly,
        ..options
    };
    let r = run(&readonly, &[(400, &[])]).await;
    assert_eq!(r.end.reason, EndReason::Signal, "no autostop");
    assert!(r.end.stop.is_none());
    assert!(
        r.screen.contains("Alerts ("),
        "the alert still shows: {}",
        r.screen
    );
    assert!(r.screen.contains("READONLY"), "{}", r.screen);
    // The control run's hook took well under this; a hook here would have run by now.
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(!hook_marker.exists(), "no hook ran");
}
