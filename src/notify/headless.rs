//! Alerts and autostop without a dashboard (`gpumeter watch`): after each tick, billing's
//! budget events join the alert path, each alert transition is printed as a line (and sent to
//! the webhook and hooks when configured), autostop warnings are printed (and `wall`ed), and on
//! the stop event the stop command runs, its output going to ours (the journal, under systemd).

use std::io::Write;
use std::time::Duration;

use super::{Notifier, NotifyConfig, run_stop_command};
use crate::engine::Engine;
use crate::engine::autostop::{AutostopConfig, AutostopEvent};
use crate::engine::rules::{AlertKind, RulesConfig, Transition};

/// Longest the stop command may run before it is killed.
pub const STOP_TIMEOUT: Duration = Duration::from_secs(120);

/// What `watch` does about alerts.
#[derive(Debug, Default)]
pub struct HeadlessAlerts {
    pub rules: RulesConfig,
    pub autostop: AutostopConfig,
    /// Webhook and hooks (terminal channels are forced off: there is no terminal to ring).
    notifier: Option<Notifier>,
    /// Alert ids fired, in order (for tests and the summary).
    pub fired: Vec<String>,
    /// Stop commands run and how they ended.
    pub stops: Vec<Result<(), String>>,
}

impl HeadlessAlerts {
    pub fn new(
        rules: RulesConfig,
        autostop: AutostopConfig,
        notify: Option<(NotifyConfig, Option<&std::path::Path>)>,
    ) -> Self {
        let notifier = notify.map(|(mut cfg, file)| {
            cfg.bell = false;
            cfg.desktop = false;
            Notifier::new(cfg, file, false)
        });
        Self {
            rules,
            autostop,
            notifier,
            fired: Vec::new(),
            stops: Vec::new(),
        }
    }

    /// An engine with these rules and autostop settings.
    pub fn engine(&self) -> Engine {
        Engine::new()
            .with_rules(self.rules.clone())
            .with_autostop(self.autostop.clone())
    }

    /// After `engine.ingest` (which has already turned billing's budget events into alerts):
    /// writes one line per alert transition and autostop event to `out`.
    pub fn after_tick(
        &mut self,
        engine: &mut Engine,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> std::io::Result<()> {
        let currency = engine
            .billing()
            .map_or("USD", |v| v.currency.code())
            .to_string();
        let now = engine.latest().map_or(0, |s| s.taken_at_unix_ms);
        for t in engine.drain_alert_transitions() {
            let a = t.alert();
            if let Transition::Fired(_) = t {
                self.fired.push(a.id.clone());
            }
            // Budget crossings already have their own line.
            if a.kind != AlertKind::Budget {
                write_transition(out, &t, now)?;
            }
            if let Some(n) = &mut self.notifier {
                n.on_transition(&t, now, &currency, &mut std::io::sink())?;
            }
        }
        let host = engine
            .latest()
            .and_then(|s| s.system.hostname.clone())
            .unwrap_or_else(|| "this machine".into());
        for e in engine.drain_autostop_events() {
            let cfg = engine.autostop_config().clone();
            match &e {
                AutostopEvent::Armed { .. } => writeln!(
                    out,
                    "{}  autostop: armed (stops after {} idle)",
                    hhmm(now),
                    minutes(cfg.after_ms)
                )?,
                AutostopEvent::Warning {
                    remaining_ms,
                    idle_ms,
                    ..
                } => writeln!(
                    out,
                    "{}  autostop: idle for {}, running `{}` in {}",
                    hhmm(now),
                    minutes(*idle_ms),
                    cfg.command.join(" "),
                    minutes(*remaining_ms)
                )?,
                AutostopEvent::Cancelled { .. } => {
                    writeln!(out, "{}  autostop: cancelled", hhmm(now))?
                }
                AutostopEvent::Stop { idle_ms, .. } => {
                    writeln!(
                        out,
                        "{}  autostop: idle for {}: running `{}`",
                        hhmm(now),
                        minutes(*idle_ms),
                        cfg.command.join(" ")
                    )?;
                    out.flush()?;
                    let result = run_stop_command(&cfg.command, true, STOP_TIMEOUT)
                        .map_err(|e| e.to_string());
                    if let Err(e) = &result {
                        writeln!(err, "gpumeter: autostop: {e}")?;
                    }
                    self.stops.push(result);
                }
            }
            if let Some(n) = &mut self.notifier {
                n.on_autostop(&e, &cfg, &host, &mut std::io::sink())?;
            }
        }
        if let Some(n) = &mut self.notifier {
            for note in n.drain_notes() {
                writeln!(err, "gpumeter: {note}")?;
            }
        }
        Ok(())
    }
}

fn minutes(ms: i64) -> String {
    crate::engine::rules::alert::minutes_text(ms)
}

fn hhmm(unix_ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(unix_ms).map_or_else(
        || unix_ms.to_string(),
        |t| t.format("%Y-%m-%d %H:%MZ").to_string(),
    )
}

/// One transition as a line (fired ones with their next step on a second, indented line).
fn write_transition(out: &mut dyn Write, t: &Transition, now: i64) -> std::io::Result<()> {
    let a = t.alert();
    writeln!(
        out,
        "{}  alert {} [{}] {}: {}",
        hhmm(now),
        t.name(),
        a.severity.name(),
        a.kind.name(),
        a.title
    )?;
    if matches!(t, Transition::Fired(_)) {
        for (k, v) in &a.evidence {
            writeln!(out, "    {k}: {v}")?;
        }
        if let Some(n) = &a.next_step {
            writeln!(out, "    next step: {n}")?;
        }
    }
    Ok(())
}

/// Why `watch` cannot set up autostop.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AutostopSetupError {
    #[error("--autostop needs a command: --stop-cmd '…' or [autostop] command in the config file")]
    NoCommand,
    #[error("autostop: {0}")]
    Refused(String),
    #[error("--autostop must be at least 1m")]
    TooShort,
}

/// The alert settings of the config, with `--autostop` (idle time; turns autostop on) and
/// `--stop-cmd` (the command) laid over them. A stop command from a config file that others
/// can write is refused, as hooks are.
pub fn headless_alerts(
    settings: &crate::config::AlertSettings,
    autostop_after_ms: Option<i64>,
    stop_cmd: Option<Vec<String>>,
) -> Result<HeadlessAlerts, AutostopSetupError> {
    let mut autostop = settings.autostop.clone();
    if let Some(after) = autostop_after_ms {
        if after < 60_000 {
            return Err(AutostopSetupError::TooShort);
        }
        autostop.enabled = true;
        autostop.after_ms = after;
    }
    let from_flag = stop_cmd.is_some();
    if let Some(cmd) = stop_cmd {
        autostop.command = cmd;
    }
    if autostop.enabled {
        if autostop.command.is_empty() {
            return Err(AutostopSetupError::NoCommand);
        }
        if !from_flag && let Some(file) = &settings.commands_file {
            super::hook::check_config_file(file)
                .map_err(|e| AutostopSetupError::Refused(e.to_string()))?;
        }
    }
    let notify = settings.notify.clone();
    let wanted = notify.webhook.is_some() || !notify.hooks.is_empty();
    Ok(HeadlessAlerts::new(
        settings.rules.clone(),
        autostop,
        wanted.then_some((notify, settings.commands_file.as_deref())),
    ))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::billing::{Budget, ClockStart, Pricing, Rate};
    use crate::clock::{Clock, FakeClock};
    use crate::source::sim::SimSource;
    use crate::watch::{WatchClock, WatchOptions, run_watch};

    #[test]
    fn budget_crossings_and_rule_verdicts_reach_the_alert_path() {
        let clock = FakeClock::new(1_750_000_000_000);
        let scenario = gpumeter_sim::Scenario::builtin("idle").unwrap();
        let mut source = SimSource::new(scenario, Arc::new(clock.clone()));
        let mut pricing = Pricing::simple(Rate::parse("31/h").unwrap());
        pricing.clock_start = ClockStart::FirstSample;
        pricing.budget = Some(Budget::parse("10/run").unwrap());
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let summary = run_watch(
            &mut source,
            &WatchClock::Fast(clock.clone()),
            Some(&pricing),
            None,
            WatchOptions {
                for_ms: Some(25 * 60_000),
                interval_ms: 1_000,
            },
            &mut out,
            &mut err,
        )
        .unwrap();
        let fired = summary.alerts_fired;
        // $31/h: 50 % of $10 after ~10 min, 100 % after ~19 min; idle fires at 10 min.
        assert!(fired.contains(&"idle".to_string()), "{fired:?}");
        assert_eq!(
            fired
                .iter()
                .filter(|id| id.as_str() == "budget:run:actual")
                .count(),
            3,
            "{fired:?}"
        );
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("alert fired [moderate] idle: GPUs idle 10 min"),
            "{text}"
        );
        assert!(clock.now_unix_ms() > 1_750_000_000_000);
    }

    #[test]
    fn autostop_flags_need_a_command_and_at_least_a_minute() {
        let s = crate::config::AlertSettings::default();
        assert_eq!(
            headless_alerts(&s, Some(30 * 60_000), None).unwrap_err(),
            AutostopSetupError::NoCommand
        );
        let cmd = Some(vec!["true".to_string()]);
        assert_eq!(
            headless_alerts(&s, Some(5_000), cmd.clone()).unwrap_err(),
            AutostopSetupError::TooShort
        );
        let h = headless_alerts(&s, Some(30 * 60_000), cmd).unwrap();
        assert!(h.autostop.enabled && h.autostop.after_ms == 30 * 60_000);
        assert!(!headless_alerts(&s, None, None).unwrap().autostop.enabled);
    }
}
