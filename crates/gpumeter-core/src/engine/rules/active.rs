//! What the rule set keeps about each alert beside the alert itself: [`ActiveAlert`] (when it
//! fired, acknowledged, snoozed) and the history view's lines ([`HistoryEntry`], one
//! [`HistoryEvent`] each). Plain data for [`super::Rules`].

use serde::Serialize;

use super::alert::Alert;

/// An alert that stands, with what the user did about it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ActiveAlert {
    pub alert: Alert,
    pub fired_at_unix_ms: i64,
    pub acknowledged: bool,
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
    Fired,
    Reminded,
    Updated,
    Cleared,
    Acknowledged,
    Snoozed,
}

impl HistoryEvent {
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
    pub at_unix_ms: i64,
    pub event: HistoryEvent,
    pub alert: Alert,
}
