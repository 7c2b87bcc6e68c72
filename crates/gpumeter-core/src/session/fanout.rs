//! The alert fan-out: after each tick, the engine's alert transitions and autostop events go to
//! the notification channels ([`Notifier`]: bell and OSC sequences, webhook, hooks, `wall`), and
//! come back to the session to be handed to the front-end in its [`Step`]. The terminal channels'
//! bytes are collected into the step (the dashboard writes them between frames; `watch` has no
//! terminal and turns those channels off). Every alert carries its own currency, so the channels
//! write money the way the alert text does. Touches the engine's queues and the notifier.

use crate::engine::Engine;
use crate::engine::autostop::AutostopEvent;
use crate::notify::Notifier;

use super::Step;

/// Drains what the engine said this tick into the channels and into `step`.
pub(super) fn pump(notifier: &mut Notifier, engine: &mut Engine, step: &mut Step) {
    let now = engine.latest().map_or(0, |s| s.taken_at_unix_ms);
    let mut failed = None;
    for t in engine.drain_alert_transitions() {
        if let Err(e) = notifier.on_transition(&t, now, &mut step.terminal) {
            failed = Some(e);
        }
        step.transitions.push(t);
    }
    let events = engine.drain_autostop_events();
    // Most ticks have no autostop news: the host name and the config are copied only then.
    if !events.is_empty() {
        let host = engine
            .latest()
            .and_then(|s| s.system.hostname.clone())
            .unwrap_or_else(|| "this machine".into());
        let cfg = engine.autostop_config().clone();
        for e in events {
            if let Err(err) = notifier.on_autostop(&e, &cfg, &host, &mut step.terminal) {
                failed = Some(err);
            }
            if matches!(e, AutostopEvent::Stop { .. }) {
                step.stop = Some(cfg.command.clone());
            }
            step.autostop.push(e);
        }
    }
    // Writing to a Vec cannot fail today; should a channel's writer ever fail, say it once.
    if let Some(e) = failed {
        step.notes.push(format!("notifications: {e}"));
    }
    step.notes.extend(notifier.drain_notes());
}
