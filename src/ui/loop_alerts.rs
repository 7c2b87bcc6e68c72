//! The event loop's alert side: the engine built with the configured rules and autostop, the
//! notification channels (bell and OSC sequences to the real terminal, webhook, hooks), the
//! acknowledge/snooze actions applied to the engine, and the autostop stop command run once the
//! terminal is restored. It touches the engine the loop owns and nothing else.

use std::io::Write;

use crate::config::AlertSettings;
use crate::engine::Engine;
use crate::notify::{Notifier, run_stop_command};
use crate::session::STOP_TIMEOUT;

use super::app::{Action, App, SNOOZE_MS};

/// The engine for `settings` and a note when autostop had to be turned off (no command, or a
/// command from a config file others can write: refused as hooks are).
pub fn engine_for(settings: &AlertSettings) -> (Engine, Option<String>) {
    let mut autostop = settings.autostop.clone();
    let mut note = None;
    if autostop.enabled {
        if autostop.command.is_empty() {
            autostop.enabled = false;
            note = Some("autostop is off: [autostop] has no command".to_string());
        } else if let Some(file) = &settings.commands_file
            && let Err(refused) = crate::notify::hook::check_config_file(file)
        {
            autostop.enabled = false;
            note = Some(format!("autostop is off: {refused}"));
        }
    }
    let engine = Engine::new()
        .with_rules(settings.rules.clone())
        .with_autostop(autostop);
    (engine, note)
}

/// The notification channels; terminal sequences are wrapped for tmux when `$TMUX` is set.
pub fn notifier_for(settings: &AlertSettings) -> Notifier {
    let in_tmux = std::env::var_os("TMUX").is_some_and(|v| !v.is_empty());
    Notifier::new(
        settings.notify.clone(),
        settings.commands_file.as_deref(),
        in_tmux,
    )
}

/// Applies an alert action to the top visible alert; returns whether anything changed.
pub fn apply_action(action: Action, app: &mut App, engine: &mut Engine, now_ms: i64) -> bool {
    let Some(top) = engine.rules().visible(now_ms).into_iter().next() else {
        if matches!(action, Action::Acknowledge | Action::Snooze) {
            app.set_status("no alert to acknowledge or snooze");
            return true;
        }
        return false;
    };
    match action {
        Action::Acknowledge => {
            engine.acknowledge(&top.id, now_ms);
            app.set_status(format!("acknowledged: {}", top.title));
            true
        }
        Action::Snooze => {
            engine.snooze(&top.id, now_ms + SNOOZE_MS, now_ms);
            app.set_status(format!("snoozed for 1 h: {}", top.title));
            true
        }
        _ => false,
    }
}

/// Sends what the engine has to say to the channels; returns the stop command when autostop
/// fired. Channel notes (refused hooks, failed webhooks) go to the status line.
pub fn pump(
    notifier: &mut Notifier,
    engine: &mut Engine,
    app: &mut App,
    term: &mut dyn Write,
) -> Option<Vec<String>> {
    let stop = match notifier.pump(engine, term) {
        Ok(stop) => stop,
        Err(e) => {
            app.set_status(format!("notifications: {e}"));
            None
        }
    };
    let _ = term.flush();
    let notes = notifier.drain_notes();
    if !notes.is_empty() {
        app.set_status(notes.join(" · "));
    }
    stop
}

/// Runs the stop command after the terminal is restored, and says what happened.
pub fn run_stop(argv: &[String]) -> Vec<String> {
    let shown = argv.join(" ");
    println!("gpumeter: autostop: the machine was idle; running `{shown}`");
    match run_stop_command(argv, true, STOP_TIMEOUT) {
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
