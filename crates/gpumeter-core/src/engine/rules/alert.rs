//! What a rule says: an [`Alert`] (the verdict, its evidence, what it cost and what to try) and
//! the [`Transition`]s the rule set returns each tick. Also money formatting for the messages
//! and [`Alert::from_budget`], through which billing's budget events join the same path.

use crate::money::{Currency, Money};
use serde::Serialize;

/// Which rule an alert comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AlertKind {
    /// All GPUs idle while the meter runs.
    IdlePaid,
    /// A process holds VRAM without running kernels.
    Forgotten,
    /// A job holds the GPU but the GPU mostly waits.
    Starved,
    /// Clocks held down by temperature, power or a hardware signal.
    Throttle,
    /// A budget threshold crossed (from billing).
    Budget,
    /// GPUs pausing periodically while the job writes checkpoints.
    Checkpoint,
    /// A GPU reports busy (util) while its SMs do no work (GPM): a hung job.
    Hung,
    /// A critical XID error from the driver.
    Xid,
    /// GPUs lost (`GPU_IS_LOST`: fell off the bus) while the box still bills.
    Lost,
    /// VRAM running out: steady growth towards full, or sustained near full.
    Vram,
    /// Another tenant, user or partition on the cards (a notice, never idle-time blame).
    Shared,
    /// A job ended (or its GPUs went idle) while the meter runs.
    JobDone,
    /// The provider posted its notice that it takes this spot/preemptible machine back.
    Spot,
}

impl AlertKind {
    /// Stable lower-case name (config keys, hook environment, JSON).
    pub fn name(self) -> &'static str {
        match self {
            AlertKind::IdlePaid => "idle",
            AlertKind::Forgotten => "forgotten",
            AlertKind::Starved => "starved",
            AlertKind::Throttle => "throttle",
            AlertKind::Budget => "budget",
            AlertKind::Checkpoint => "checkpoint",
            AlertKind::Hung => "hung",
            AlertKind::Xid => "xid",
            AlertKind::Lost => "lost",
            AlertKind::Vram => "vram",
            AlertKind::Shared => "shared",
            AlertKind::JobDone => "job_done",
            AlertKind::Spot => "spot",
        }
    }

    /// Every kind, in declaration order (the order [`AlertKind`] sorts in).
    pub const ALL: [AlertKind; 13] = [
        AlertKind::IdlePaid,
        AlertKind::Forgotten,
        AlertKind::Starved,
        AlertKind::Throttle,
        AlertKind::Budget,
        AlertKind::Checkpoint,
        AlertKind::Hung,
        AlertKind::Xid,
        AlertKind::Lost,
        AlertKind::Vram,
        AlertKind::Shared,
        AlertKind::JobDone,
        AlertKind::Spot,
    ];

    /// The kind named `name` (as [`AlertKind::name`] writes it).
    pub fn parse(name: &str) -> Option<AlertKind> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// How much an alert matters. Ordered: `High` is the greatest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// A notice: worth knowing, no action needed (a power cap, another tenant on the cards).
    Info,
    /// Costs money or time; worth a look.
    Moderate,
    /// Act now: money burns or the job is at risk.
    High,
}

impl Severity {
    /// Stable lower-case name (`info`, `moderate`, `high`), as JSON and the hook environment write
    /// it.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Moderate => "moderate",
            Severity::High => "high",
        }
    }
}

/// One verdict with everything a reader needs: what is wrong, the numbers that say so, what it
/// has cost and what to try.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Alert {
    /// Stable while the verdict stands (`idle`, `starved:job:20488`, `forgotten:22817`).
    pub id: String,
    /// The rule it comes from.
    pub kind: AlertKind,
    /// How much it matters; the panel sorts most severe first.
    pub severity: Severity,
    /// The GPU concerned, when exactly one is.
    pub gpu: Option<u32>,
    /// One line, fit for a notification.
    pub title: String,
    /// A sentence or two of explanation.
    pub detail: String,
    /// The numbers that fired it, as (label, value) pairs, in reading order.
    pub evidence: Vec<(String, String)>,
    /// What it has cost so far, in micro-units of the currency; `None` when unknown (no rate).
    pub cost_micros: Option<i64>,
    /// A concrete thing to try.
    pub next_step: Option<String>,
    /// When the condition began, ms since the Unix epoch.
    pub since_unix_ms: i64,
    /// The currency of `cost_micros` (as its ISO code in JSON).
    pub currency: Currency,
}

impl Alert {
    /// A billing budget crossing as an alert (its next step for a box in an unknown state; the
    /// engine sets it by what the GPUs do, [`budget_next_step`]). `threshold_pct` is 50, 80 or 100; `forecast` is
    /// true when the projection to the end of the period (not the spend) crossed it; `period`
    /// is `day`, `month` or `run` and `period_key` names the period (`day:2026-05-01`).
    #[allow(clippy::too_many_arguments)]
    pub fn from_budget(
        threshold_pct: u8,
        forecast: bool,
        spent_micros: i64,
        budget_micros: i64,
        currency: Currency,
        period: &str,
        period_key: &str,
        at_unix_ms: i64,
    ) -> Alert {
        let spent = currency.format(Money::from_micros(spent_micros));
        let budget = currency.format(Money::from_micros(budget_micros));
        let scope = match period {
            "day" => "today's budget",
            "month" => "this month's budget",
            _ => "the budget",
        };
        let (title, severity) = if forecast {
            (
                format!(
                    "Spend will cross {scope} ({budget}) at the current burn: {spent} projected"
                ),
                Severity::Moderate,
            )
        } else {
            let severity = match threshold_pct {
                100.. => Severity::High,
                80..=99 => Severity::Moderate,
                _ => Severity::Info,
            };
            // The share spent now, which the spend line shows too: a meter started late (or a
            // jump in spend) crosses the 50 % mark at 67 %, and says 67 %.
            let share = crate::billing::spent_share(
                Money::from_micros(spent_micros),
                Money::from_micros(budget_micros),
            );
            let pct = (share * 100.0).round() as i64;
            let title = if pct > i64::from(threshold_pct) {
                format!(
                    "{pct} % of {scope} spent: {spent} of {budget} (past the {threshold_pct} % mark)"
                )
            } else {
                format!("{threshold_pct} % of {scope} spent: {spent} of {budget}")
            };
            (title, severity)
        };
        let which = if forecast { "forecast" } else { "actual" };
        Alert {
            id: format!("budget:{period_key}:{which}"),
            kind: AlertKind::Budget,
            severity,
            gpu: None,
            title,
            detail: format!(
                "Budget {budget} per {period}; {} {spent} ({which}).",
                if forecast {
                    "projected to the period's end:"
                } else {
                    "spent so far:"
                }
            ),
            evidence: vec![
                ("threshold".into(), format!("{threshold_pct} % ({which})")),
                (if forecast { "projected" } else { "spent" }.into(), spent),
                ("budget".into(), budget),
                ("period".into(), period_key.to_string()),
            ],
            cost_micros: Some(spent_micros),
            next_step: Some(budget_next_step(None)),
            since_unix_ms: at_unix_ms,
            currency,
        }
    }

    /// The cost as text (`$21.70`), or `N/A`.
    pub fn cost_text(&self) -> String {
        self.cost_micros.map_or_else(
            || crate::units::NA.to_string(),
            |c| self.currency.format(Money::from_micros(c)),
        )
    }
}

/// What changed in the set of alerts this tick.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "transition", content = "alert", rename_all = "snake_case")]
pub enum Transition {
    /// A new verdict: notify.
    Fired(Alert),
    /// A standing verdict due for another reminder (idle paid time): notify again.
    Reminded(Alert),
    /// A standing verdict changed severity or cause: shown, notified only when it got worse.
    Updated(Alert),
    /// The cause went away.
    Cleared(Alert),
}

impl Transition {
    /// The alert the transition carries (as it stood at the transition).
    pub fn alert(&self) -> &Alert {
        match self {
            Transition::Fired(a)
            | Transition::Reminded(a)
            | Transition::Updated(a)
            | Transition::Cleared(a) => a,
        }
    }

    /// `fired`, `reminded`, `updated` or `cleared`.
    pub fn name(&self) -> &'static str {
        match self {
            Transition::Fired(_) => "fired",
            Transition::Reminded(_) => "reminded",
            Transition::Updated(_) => "updated",
            Transition::Cleared(_) => "cleared",
        }
    }
}

/// What to do at a budget crossing: autostop is advice only where the GPUs are idle (it acts
/// on an idle box only); a working run's spend is either planned or to be stopped at a
/// checkpoint. `gpus_idle`: `None` when unknown.
pub fn budget_next_step(gpus_idle: Option<bool>) -> String {
    match gpus_idle {
        Some(true) => "The GPUs are idle: stop the machine if its work is done (gpumeter watch \
                       --autostop stops an idle box for you), or raise the budget ([pricing] \
                       budget) if the spend is planned."
            .into(),
        Some(false) => "The GPUs are working: raise the budget ([pricing] budget) if this spend \
                        is planned; otherwise checkpoint and stop the run where it can resume, \
                        or move it to a cheaper box."
            .into(),
        None => "Stop the machine if its work is done, or raise the budget in the config \
                 ([pricing] budget) if the spend is planned."
            .into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alert_money_is_the_currency_formatter() {
        let mut a = Alert::from_budget(
            100,
            false,
            80_000_000_000,
            1,
            Currency::from_code("JPY").unwrap(),
            "run",
            "run",
            0,
        );
        assert_eq!(a.cost_text(), "¥80,000");
        a.cost_micros = Some(21_705_000);
        a.currency = Currency::USD;
        assert_eq!(a.cost_text(), "$21.71");
        a.cost_micros = None;
        assert_eq!(a.cost_text(), "N/A");
    }

    #[test]
    fn budget_alert_reads_well_and_has_stable_ids() {
        let a = Alert::from_budget(
            80,
            false,
            400_000_000,
            500_000_000,
            Currency::USD,
            "day",
            "day:2026-05-01",
            7,
        );
        assert_eq!(a.title, "80 % of today's budget spent: $400.00 of $500.00");
        assert_eq!(a.severity, Severity::Moderate);
        assert_eq!(a.id, "budget:day:2026-05-01:actual");
        assert_eq!(a.cost_micros, Some(400_000_000));
        // Crossed 50 % at 67 % (a meter started late): the title says what the spend line says.
        let late = Alert::from_budget(
            50,
            false,
            998_430_000,
            1_500_000_000,
            Currency::USD,
            "run",
            "run",
            7,
        );
        assert_eq!(
            late.title,
            "67 % of the budget spent: $998.43 of $1,500.00 (past the 50 % mark)"
        );
        let share = crate::billing::spent_share(
            Money::from_micros(998_430_000),
            Money::from_micros(1_500_000_000),
        );
        assert_eq!(format!("{:.0}", (share * 100.0).round()), "67");
        let f = Alert::from_budget(
            100,
            true,
            612_000_000,
            500_000_000,
            Currency::from_code("EUR").unwrap(),
            "month",
            "month:2026-05",
            7,
        );
        assert!(f.title.contains("€612.00 projected"), "{}", f.title);
        assert_eq!(f.id, "budget:month:2026-05:forecast");
        assert_eq!(
            Alert::from_budget(100, false, 1, 1, Currency::USD, "run", "run", 0).severity,
            Severity::High
        );
    }

    #[test]
    fn kinds_round_trip_their_names() {
        for k in AlertKind::ALL {
            assert_eq!(AlertKind::parse(k.name()), Some(k));
        }
    }
}
