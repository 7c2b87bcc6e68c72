//! Where fired alerts go, each channel on or off in `[alerts]`: the terminal bell, desktop
//! notifications by OSC 9 / OSC 777 (through ssh, wrapped for tmux), an optional webhook
//! (Slack-compatible JSON, rate-limited, never retried), optional command hooks per alert kind
//! (argv, timeout, refused from a config file others can write), and `wall` plus the stop command
//! for autostop. Fed one transition or autostop event at a time by the session core's fan-out
//! (`src/session/`); every alert carries its own currency, so the channels print money as
//! the alert text does. Never blocks the caller on the network or a child process except the
//! stop command, which the front-end runs ([`run_stop_command`]).

pub mod hook;
pub mod run;
pub mod settings;
pub mod terminal;
pub mod wall;
pub mod webhook;

use std::io::Write;
use std::path::Path;
use std::time::Duration;

pub use settings::NotifyConfig;

use crate::engine::autostop::{AutostopConfig, AutostopEvent};
use crate::engine::rules::{Severity, Transition};
use terminal::TerminalChannels;

/// The channels, started.
#[derive(Debug)]
pub struct Notifier {
    cfg: NotifyConfig,
    term: TerminalChannels,
    webhook: Option<webhook::Webhook>,
    hooks: Option<hook::HookRunner>,
    /// Lines worth showing once (a refused hook config, a failed hook), drained by the caller.
    notes: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

fn push_note(notes: &std::sync::Mutex<Vec<String>>, line: String) {
    let mut n = match notes.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    if n.len() < 32 {
        n.push(line);
    }
}

impl Notifier {
    /// Starts the channels. `config_file` is the user's config file the hooks came from (its
    /// permissions are checked); `in_tmux` wraps terminal sequences for tmux (`$TMUX` set).
    pub fn new(cfg: NotifyConfig, config_file: Option<&Path>, in_tmux: bool) -> Notifier {
        let notes = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let hooks = if cfg.hooks.is_empty() {
            None
        } else {
            match config_file.map(hook::check_config_file) {
                Some(Err(refused)) => {
                    push_note(&notes, refused.to_string());
                    None
                }
                _ => {
                    let n = std::sync::Arc::clone(&notes);
                    Some(hook::HookRunner::start(move |line| push_note(&n, line)))
                }
            }
        };
        Notifier {
            term: TerminalChannels {
                bell: cfg.bell,
                desktop: cfg.desktop,
                tmux: in_tmux,
            },
            webhook: cfg.webhook.clone().map(webhook::Webhook::start),
            hooks,
            cfg,
            notes,
        }
    }

    /// Notes since the last call (refused hooks, failed hooks, dropped webhook messages).
    pub fn drain_notes(&mut self) -> Vec<String> {
        let mut n = match self.notes.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        std::mem::take(&mut *n)
    }

    /// One alert transition: terminal and hooks for fired, reminded and worsened alerts; the
    /// webhook for every transition (clearing included), at most once each.
    pub fn on_transition(
        &mut self,
        t: &Transition,
        now_ms: i64,
        term: &mut dyn Write,
    ) -> std::io::Result<()> {
        let a = t.alert();
        let loud = match t {
            Transition::Fired(_) | Transition::Reminded(_) => true,
            Transition::Updated(a) => a.severity >= Severity::Moderate,
            Transition::Cleared(_) => false,
        };
        if loud {
            let seq = terminal::sequences(self.term, "gpumeter", &a.title);
            if !seq.is_empty() {
                term.write_all(seq.as_bytes())?;
                term.flush()?;
            }
            if let Some(runner) = &self.hooks {
                let argv = self
                    .cfg
                    .hooks
                    .get(&Some(a.kind))
                    .or_else(|| self.cfg.hooks.get(&None));
                if let Some(argv) = argv
                    && !runner.queue(argv.clone(), hook::hook_env(t), self.cfg.hook_timeout)
                {
                    push_note(
                        &self.notes,
                        format!(
                            "alert hook for {} dropped: earlier hooks still running",
                            a.id
                        ),
                    );
                }
            }
        }
        if let Some(w) = &mut self.webhook {
            let text = webhook_text(t);
            if w.send(&text, now_ms) != webhook::Outcome::Queued {
                push_note(
                    &self.notes,
                    format!("webhook message for {} dropped (rate limit)", a.id),
                );
            }
        }
        Ok(())
    }

    /// One autostop event: warnings ring the terminal channels and `wall` (when configured).
    /// The stop itself is the caller's to run ([`run_stop_command`]).
    pub fn on_autostop(
        &mut self,
        e: &AutostopEvent,
        cfg: &AutostopConfig,
        host: &str,
        term: &mut dyn Write,
    ) -> std::io::Result<()> {
        let text = match e {
            AutostopEvent::Warning {
                remaining_ms,
                idle_ms,
                tolerated,
                ..
            } => {
                let msg = wall::autostop_message(
                    host,
                    *remaining_ms,
                    *idle_ms,
                    tolerated.as_deref(),
                    &cfg.command,
                );
                if cfg.wall
                    && let Err(err) = wall::wall(&msg)
                {
                    push_note(&self.notes, format!("autostop: wall: {err}"));
                }
                msg
            }
            AutostopEvent::Cancelled { .. } => "gpumeter autostop: countdown cancelled".to_string(),
            AutostopEvent::Stop { .. } => {
                format!("gpumeter autostop: running `{}`", cfg.command.join(" "))
            }
            AutostopEvent::Armed { .. } => return Ok(()),
        };
        let seq = terminal::sequences(self.term, "gpumeter autostop", &text);
        term.write_all(seq.as_bytes())?;
        term.flush()
    }
}

/// The webhook text of one transition.
pub fn webhook_text(t: &Transition) -> String {
    let a = t.alert();
    let mut text = format!(
        "[gpumeter] {} ({}, {}): {}",
        t.name(),
        a.kind.name(),
        a.severity.name(),
        a.title
    );
    if !matches!(t, Transition::Cleared(_)) {
        if a.cost_micros.is_some() {
            text.push_str(&format!("\nCost so far: {}", a.cost_text()));
        }
        if let Some(n) = &a.next_step {
            text.push_str(&format!("\nNext step: {n}"));
        }
    }
    text
}

/// Runs the autostop command (argv, no shell) with a timeout of `timeout`.
pub fn run_stop_command(
    argv: &[String],
    inherit_output: bool,
    timeout: Duration,
) -> Result<(), run::RunError> {
    run::run(&run::RunSpec {
        argv,
        env: vec![("GPUMETER_AUTOSTOP".into(), "1".into())],
        timeout,
        stdin: None,
        inherit_output,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rules::Alert;
    use std::os::unix::fs::PermissionsExt;

    fn alert() -> Alert {
        Alert::from_budget(
            100,
            false,
            512_340_000,
            500_000_000,
            crate::money::Currency::USD,
            "run",
            "run",
            0,
        )
    }

    #[test]
    fn fired_rings_and_notifies_cleared_stays_silent_and_channels_turn_off() {
        let mut n = Notifier::new(NotifyConfig::default(), None, false);
        let mut term = Vec::new();
        n.on_transition(&Transition::Fired(alert()), 0, &mut term)
            .unwrap();
        let s = String::from_utf8(term).unwrap();
        assert!(
            s.starts_with("\x1b]9;gpumeter: 102 % of the budget spent"),
            "{s:?}"
        );
        assert!(s.ends_with('\x07'));
        let mut term = Vec::new();
        n.on_transition(&Transition::Cleared(alert()), 0, &mut term)
            .unwrap();
        assert!(term.is_empty());
        let quiet = NotifyConfig {
            bell: false,
            desktop: false,
            ..NotifyConfig::default()
        };
        let mut n = Notifier::new(quiet, None, true);
        let mut term = Vec::new();
        n.on_transition(&Transition::Fired(alert()), 0, &mut term)
            .unwrap();
        assert!(term.is_empty());
    }

    #[test]
    fn hooks_from_a_writable_config_are_refused_and_say_why() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o664)).unwrap();
        let mut cfg = NotifyConfig::default();
        cfg.hooks.insert(
            None,
            vec!["touch".into(), dir.path().join("ran").display().to_string()],
        );
        let mut n = Notifier::new(cfg, Some(&path), false);
        let notes = n.drain_notes();
        assert_eq!(notes.len(), 1);
        assert!(
            notes[0].contains("command hooks disabled") && notes[0].contains("group-writable"),
            "{notes:?}"
        );
        n.on_transition(&Transition::Fired(alert()), 0, &mut Vec::new())
            .unwrap();
        std::thread::sleep(Duration::from_millis(300));
        assert!(!dir.path().join("ran").exists());
    }

    #[test]
    fn webhook_text_has_cost_and_next_step() {
        let t = webhook_text(&Transition::Fired(alert()));
        assert!(
            t.starts_with("[gpumeter] fired (budget, high): 102 % of the budget spent"),
            "{t}"
        );
        assert!(t.contains("Cost so far: $512.34"));
        assert!(t.contains("Next step: "));
    }

    #[test]
    fn stop_command_runs_a_harmless_command() {
        let dir = tempfile::tempdir().unwrap();
        let flag = dir.path().join("stopped");
        let argv = vec!["touch".to_string(), flag.display().to_string()];
        run_stop_command(&argv, false, Duration::from_secs(10)).unwrap();
        assert!(flag.exists());
    }
}
