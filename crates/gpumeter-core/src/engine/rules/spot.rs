//! Spot interruption: the provider posted its notice that it takes this spot or preemptible
//! machine back (AWS gives two minutes, GCP and Azure about 30 s). High at the first reading
//! that carries the notice (`system.interruption`, attached by the live metadata poller or a
//! demo scenario), with when it happens, how long is left and what the run has cost: there is
//! no window to wait out, the time to checkpoint is now.
//!
//! It stands while the readings carry the notice (the machine usually goes first). "Now" is
//! the tick's time, never the wall clock.

use super::alert::{Alert, AlertKind, Severity};
use super::config::SpotConfig;
use super::{Ctx, RuleOutput};
use crate::clock::{UtcStyle, utc_text};
use crate::units::{DurationStyle, duration};

/// The spot-interruption rule's state across ticks (see the module docs).
#[derive(Debug, Clone)]
pub struct SpotRule {
    cfg: SpotConfig,
    /// When the standing notice was first seen.
    since_ms: Option<i64>,
}

impl SpotRule {
    /// A rule with these settings.
    pub fn new(cfg: SpotConfig) -> Self {
        Self {
            cfg,
            since_ms: None,
        }
    }

    /// One tick: folds `ctx` in and returns the alerts that stand now (and any due a reminder).
    pub fn evaluate(&mut self, ctx: &Ctx<'_>) -> RuleOutput {
        let mut out = RuleOutput::default();
        let Some(notice) = &ctx.snap.system.interruption else {
            self.since_ms = None;
            return out;
        };
        let now = ctx.now_ms;
        let since = *self.since_ms.get_or_insert(now);
        if !self.cfg.enabled {
            return out;
        }
        let when = match notice.at_unix_ms {
            Some(at) if at > now => format!(
                "at {} (in {})",
                utc_text(at, UtcStyle::Clock),
                duration(at - now, DurationStyle::Words)
            ),
            Some(at) => format!("due {} (now)", utc_text(at, UtcStyle::Clock)),
            None => "notice (no time given; GCP and Azure allow about 30 s)".to_string(),
        };
        let spent = ctx.run_spent.map(|m| ctx.currency.format(m));
        let cost = match &spent {
            Some(s) => format!("this run has cost {s}"),
            None => "no price set".to_string(),
        };
        let mut evidence = vec![
            ("provider".to_string(), notice.provider.clone()),
            ("action".to_string(), notice.action.clone()),
        ];
        if let Some(at) = notice.at_unix_ms {
            evidence.push((
                "reclaimed at".to_string(),
                utc_text(at, UtcStyle::FullSeconds),
            ));
        }
        evidence.push((
            "notice seen for".to_string(),
            duration(now - since, DurationStyle::Words),
        ));
        if let Some(s) = spent {
            evidence.push(("spent this run".to_string(), s));
        }
        out.alerts.push(Alert {
            id: "spot".to_string(),
            kind: AlertKind::Spot,
            severity: Severity::High,
            gpu: None,
            title: format!("spot interruption {when} — checkpoint now; {cost}"),
            detail: format!(
                "{} posted its interruption notice ({}): it takes this machine back, and \
                 whatever the job has not saved is lost.",
                notice.provider, notice.action
            ),
            evidence,
            cost_micros: ctx.run_spent.map(crate::money::Money::micros),
            next_step: Some(
                "Checkpoint now (an alert hook can signal the job to save), then resume on a \
                 new instance from that checkpoint."
                    .to_string(),
            ),
            since_unix_ms: since,
            currency: ctx.currency,
        });
        out
    }
}
