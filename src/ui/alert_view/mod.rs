//! The alert side of the view state: which standing alert is selected (by id, so it stays
//! selected when alerts come, go or re-sort), the detail view that is open (a standing alert's
//! or a history entry's) and its scroll, and the history overlay with its cursor. Pure: the
//! event loop tells it what the screen lists through [`AlertView::sync`]; the alerts
//! themselves stay in the engine.

use super::app::Action;
use super::keys::KeyAction;

/// Which alert a detail view shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DetailOf {
    /// A standing alert, by id.
    Standing(String),
    /// A history entry: when it happened and the alert's id (entries have no id of their own).
    History { at_unix_ms: i64, id: String },
}

/// An open detail view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detail {
    pub of: DetailOf,
    /// Rows scrolled down.
    pub scroll: usize,
}

/// See the module docs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AlertView {
    /// Position of the selected alert among the visible ones (0: the most severe).
    pub(crate) selected: usize,
    selected_id: Option<String>,
    /// Whether the user moved the selection (`n`/`p`) or opened an alert: until then it stays
    /// on the worst alert, even when a worse one arrives after the first (a budget INFO at
    /// start, a HIGH starved verdict a minute later).
    chosen: bool,
    /// The visible alerts' ids at the last sync, in display order.
    ids: Vec<String>,
    pub(crate) detail: Option<Detail>,
    /// How far the open detail view can scroll (set by the sync from its text).
    pub(crate) detail_scroll_max: usize,
    /// The history overlay's cursor (0: the newest entry), while it is open.
    pub(crate) history: Option<usize>,
    /// History entries, newest first: (time, alert id), at the last sync.
    history_keys: Vec<(i64, String)>,
}

impl AlertView {
    /// What the screen lists now: the visible alerts' ids (display order) and the history's
    /// entries newest first. The selection stays on the worst alert until the user picks one;
    /// then it follows that alert. A detail whose alert is gone stays open on what it last
    /// showed only for history entries.
    pub fn sync(&mut self, ids: Vec<String>, history_keys: Vec<(i64, String)>) {
        let found = if self.chosen {
            self.selected_id
                .as_ref()
                .and_then(|id| ids.iter().position(|i| i == id))
        } else {
            (!ids.is_empty()).then_some(0)
        };
        self.ids = ids;
        match found {
            Some(i) => {
                self.selected = i;
                self.selected_id = self.ids.get(i).cloned();
            }
            None => {
                self.selected = self.selected.min(self.ids.len().saturating_sub(1));
                self.selected_id = self.ids.get(self.selected).cloned();
            }
        }
        self.history_keys = history_keys;
        if let Some(c) = self.history.as_mut() {
            *c = (*c).min(self.history_keys.len().saturating_sub(1));
        }
        if let Some(d) = self.detail.as_mut() {
            d.scroll = d.scroll.min(self.detail_scroll_max);
        }
    }

    /// The selected standing alert's id.
    pub fn selected_id(&self) -> Option<&str> {
        self.selected_id.as_deref()
    }

    /// The alert `a` and `z` act on: the one whose details are open, else the selected one.
    pub fn target_id(&self) -> Option<&str> {
        match self.detail.as_ref().map(|d| &d.of) {
            Some(DetailOf::Standing(id)) => Some(id),
            Some(DetailOf::History { .. }) => None,
            None => self.selected_id(),
        }
    }

    /// Whether an overlay of this room (detail, history) is open.
    pub fn overlay_open(&self) -> bool {
        self.detail.is_some() || self.history.is_some()
    }

    /// Moves the selection by `step` among the visible alerts, wrapping around.
    pub fn select_by(&mut self, step: isize) -> Action {
        if self.ids.len() < 2 {
            return Action::None;
        }
        let n = self.ids.len() as isize;
        self.chosen = true;
        self.selected = (self.selected as isize + step).rem_euclid(n) as usize;
        self.selected_id = self.ids.get(self.selected).cloned();
        if let Some(d) = self.detail.as_mut()
            && matches!(d.of, DetailOf::Standing(_))
            && let Some(id) = &self.selected_id
        {
            *d = Detail {
                of: DetailOf::Standing(id.clone()),
                scroll: 0,
            };
        }
        Action::Redraw
    }

    /// Opens the selected alert's details.
    pub fn open_detail(&mut self) -> Action {
        let Some(id) = self.selected_id.clone() else {
            return Action::None;
        };
        self.chosen = true;
        self.detail = Some(Detail {
            of: DetailOf::Standing(id),
            scroll: 0,
        });
        Action::Redraw
    }

    pub fn open_history(&mut self) -> Action {
        self.history = Some(0);
        Action::Redraw
    }

    /// A key while the detail view or the history is open. Replay keys pass through (the
    /// recording plays on under the overlay); `a`/`z` act on the alert shown; other keys move
    /// or close.
    pub fn overlay_key(&mut self, act: Option<KeyAction>, replay: bool) -> Action {
        use KeyAction as K;
        if let Some(d) = self.detail.as_mut() {
            let max = self.detail_scroll_max;
            let scroll = |d: &mut Detail, to: usize| {
                if d.scroll == to {
                    Action::None
                } else {
                    d.scroll = to;
                    Action::Redraw
                }
            };
            return match act {
                Some(K::Up) => scroll(d, d.scroll.saturating_sub(1)),
                Some(K::Down) => scroll(d, (d.scroll + 1).min(max)),
                Some(K::PageUp) => scroll(d, d.scroll.saturating_sub(10)),
                Some(K::PageDown) => scroll(d, (d.scroll + 10).min(max)),
                Some(K::First) => scroll(d, 0),
                Some(K::Last) => scroll(d, max),
                Some(K::NextAlert) => self.select_by(1),
                Some(K::PrevAlert) => self.select_by(-1),
                Some(K::Acknowledge) if self.target_id().is_some() => Action::Acknowledge,
                Some(K::Snooze) if self.target_id().is_some() => Action::Snooze,
                Some(a) if replay && is_replay(a) => Action::Replay(a),
                _ => {
                    // Closing a history entry's details goes back to the history.
                    self.detail = None;
                    Action::Redraw
                }
            };
        }
        let Some(cursor) = self.history else {
            return Action::None;
        };
        let last = self.history_keys.len().saturating_sub(1);
        let moved = |v: &mut AlertView, to: usize| {
            if to == cursor {
                Action::None
            } else {
                v.history = Some(to);
                Action::Redraw
            }
        };
        match act {
            Some(K::Up) => moved(self, cursor.saturating_sub(1)),
            Some(K::Down) => moved(self, (cursor + 1).min(last)),
            Some(K::PageUp) => moved(self, cursor.saturating_sub(10)),
            Some(K::PageDown) => moved(self, (cursor + 10).min(last)),
            Some(K::First) => moved(self, 0),
            Some(K::Last) => moved(self, last),
            Some(K::AlertDetail) => match self.history_keys.get(cursor) {
                Some((at, id)) => {
                    self.detail = Some(Detail {
                        of: DetailOf::History {
                            at_unix_ms: *at,
                            id: id.clone(),
                        },
                        scroll: 0,
                    });
                    Action::Redraw
                }
                None => Action::None,
            },
            Some(a) if replay && is_replay(a) => Action::Replay(a),
            _ => {
                self.history = None;
                Action::Redraw
            }
        }
    }

    /// Closes every overlay of this room (a mouse click elsewhere).
    pub fn close(&mut self) -> bool {
        let open = self.overlay_open();
        self.detail = None;
        self.history = None;
        open
    }
}

/// Whether `a` drives the replay.
pub fn is_replay(a: KeyAction) -> bool {
    use KeyAction as K;
    matches!(
        a,
        K::Pause
            | K::Faster
            | K::Slower
            | K::StepForward
            | K::StepBack
            | K::SeekBack
            | K::SeekForward
            | K::ReplayStart
            | K::ReplayEnd
    )
}

#[cfg(test)]
mod tests;
