//! What the rule set keeps about each alert beside the alert itself: [`ActiveAlert`] (when it
//! fired, acknowledged, snoozed) and the history view's lines ([`HistoryEntry`], one
//! [`HistoryEvent`] each). Plain data for [`super::Rules`].

use serde::Serialize;

use super::alert::Alert;

/// An alert that stands, with what the user did about it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ActiveAlert {
    /// The verdict as of the latest tick (its numbers update while it stands).
    pub alert: Alert,
    /// When it first fired, ms since the Unix epoch.
    pub fired_at_unix_ms: i64,
    /// The user dismissed it; it stays hidden until it clears or gets worse.
    pub acknowledged: bool,
    /// Hidden until this time, ms since the Unix epoch (`None`: not snoozed); it comes back with a
    /// reminder.
    pub snoozed_until_unix_ms: Option<i64>,
}

impl ActiveAlert {
    /// Shown in the panel and allowed to notify: neither acknowledged nor snoozed at `now`.
    pub fn is_live(&self, now_unix_ms: i64) -> bool {
        !self.acknowledged && self.snoozed_until_unix_ms.is_none_or(|t| now_unix_ms >= t)
    }
}

/// What happened, for the history view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HistoryEvent {
    /// A new alert stood.
    Fired,
    /// A standing alert was due again (a reminder, or its snooze ended).
    Reminded,
    /// A standing alert got worse or changed cause.
    Updated,
    /// The alert's cause went away.
    Cleared,
    /// The user dismissed the alert.
    Acknowledged,
    /// The user snoozed the alert.
    Snoozed,
}

impl HistoryEvent {
    /// Stable lower-case name (`fired`, `reminded`, …), as the JSON writes it.
    pub fn name(self) -> &'static str {
        match self {
            HistoryEvent::Fired => "fired",
            HistoryEvent::Reminded => "reminded",
            HistoryEvent::Updated => "updated",
            HistoryEvent::Cleared => "cleared",
            HistoryEvent::Acknowledged => "acknowledged",
            HistoryEvent::Snoozed => "snoozed",
        }
    }
}

/// One line of the history.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistoryEntry {
    /// When it happened, ms since the Unix epoch.
    pub at_unix_ms: i64,
    /// What happened to the alert.
    pub event: HistoryEvent,
    /// The alert as it stood at that moment.
    pub alert: Alert,
}
