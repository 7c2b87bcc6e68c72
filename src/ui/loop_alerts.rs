//! The event loop's alert side, as the dashboard shows it: the acknowledge/snooze keys applied
//! to the session, the autostop countdown line, and the stop command run once the terminal is
//! restored. The rules, channels and autostop themselves are the session core's
//! ([`gpumeter_core::session`]); this only reads the engine and calls the session.

use gpumeter_core::engine::Engine;
use gpumeter_core::session::Session;

use super::app::{Action, App, SNOOZE_MS};

/// Applies an alert action to the selected alert (the one whose details are open, else the
/// one selected in the panel or strip, else the top one); returns whether anything changed.
pub fn apply_action(action: Action, app: &mut App, session: &mut Session, now_ms: i64) -> bool {
    if !matches!(action, Action::Acknowledge | Action::Snooze) {
        return false;
    }
    let visible = session.engine().rules().visible(now_ms);
    let target = app
        .alerts
        .target_id()
        .and_then(|id| visible.iter().find(|a| a.id == id))
        .or_else(|| visible.first())
        .cloned();
    let Some(alert) = target else {
        app.set_status("no alert to acknowledge or snooze");
        return true;
    };
    let (done, what) = match action {
        Action::Acknowledge => (session.acknowledge(&alert.id, now_ms), "acknowledged"),
        _ => (
            session.snooze(&alert.id, SNOOZE_MS, now_ms),
            "snoozed for 1 h",
        ),
    };
    if done {
        app.set_status(format!("{what}: {}", alert.title));
        // The detail view of an alert now hidden has nothing left to show.
        app.alerts.detail = None;
    } else {
        app.set_status("no alert to acknowledge or snooze");
    }
    true
}

/// Runs the stop command after the terminal is restored, and says what happened.
pub fn run_stop(argv: &[String]) -> Vec<String> {
    let shown = argv.join(" ");
    println!("gpumeter: autostop: the machine was idle; running `{shown}`");
    match gpumeter_core::session::run_stop(argv, true) {
        Ok(()) => vec![format!("autostop: `{shown}` finished")],
        Err(e) => vec![format!("autostop: `{shown}` failed: {e}")],
    }
}

/// The countdown line for the header/status line while autostop is about to stop the machine.
pub fn countdown(engine: &Engine) -> Option<String> {
    let s = engine.autostop();
    let warn = engine
        .autostop_config()
        .warn_before_ms
        .iter()
        .copied()
        .max()
        .unwrap_or(0);
    let remaining = s
        .remaining_ms
        .filter(|r| s.enabled && !s.fired && *r <= warn)?;
    let secs = remaining / 1000;
    Some(format!(
        "autostop in {}m{:02}s — any key cancels",
        secs / 60,
        secs % 60
    ))
}
