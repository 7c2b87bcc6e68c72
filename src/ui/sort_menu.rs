//! htop's `F6`: the sort menu, every column the table can be sorted by in one list with the
//! cursor on the current one, so any column is one pick away whichever way `s` would cycle.
//! Enter sorts by the picked column (in its natural direction; the current one keeps its
//! direction), Esc or any other key closes it as it was. The pod is listed only while the
//! table shows its column. Pure view state; drawn by `widgets/picker`.

use crossterm::event::{KeyCode, KeyEvent};

use super::app::Action;
use super::list_cursor::moved;
use super::sort::SortColumn;

/// See the module docs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SortMenu {
    /// The cursor among [`SortMenu::columns`], while the menu is open.
    pub(crate) picking: Option<usize>,
    /// Whether the pod was listed when it opened (the list stays as it opened).
    pods: bool,
}

impl SortMenu {
    /// The columns listed, in the table's cycling order.
    pub fn columns(&self) -> Vec<SortColumn> {
        SortColumn::ALL
            .into_iter()
            .filter(|c| *c != SortColumn::Pod || self.pods)
            .collect()
    }

    /// Opens the menu with the cursor on `current`; `pods`: the table shows the POD column.
    pub fn open(&mut self, current: SortColumn, pods: bool) -> Action {
        self.pods = pods;
        let at = self
            .columns()
            .iter()
            .position(|c| *c == current)
            .unwrap_or(0);
        self.picking = Some(at);
        Action::Redraw
    }

    /// The lines it shows: each column's name, the current one with its direction.
    pub fn items(&self, current: SortColumn, descending: bool) -> Vec<String> {
        self.columns()
            .into_iter()
            .map(|c| {
                if c == current {
                    let arrow = if descending { "▼" } else { "▲" };
                    format!("{:<8} {arrow} now", c.name())
                } else {
                    c.name().to_string()
                }
            })
            .collect()
    }

    /// A key while the menu is open, and the column it picked (Enter).
    pub fn key(&mut self, key: KeyEvent) -> (Action, Option<SortColumn>) {
        let Some(cursor) = self.picking else {
            return (Action::None, None);
        };
        let columns = self.columns();
        let last = columns.len().saturating_sub(1);
        let to = match moved(key.code, cursor, last) {
            Some(to) => to,
            None if key.code == KeyCode::Enter => {
                self.picking = None;
                return (Action::Redraw, columns.get(cursor).copied());
            }
            None => {
                self.picking = None;
                return (Action::Redraw, None);
            }
        };
        if to == cursor {
            return (Action::None, None);
        }
        self.picking = Some(to);
        (Action::Redraw, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(code: KeyCode) -> KeyEvent {
        KeyEvent::from(code)
    }

    #[test]
    fn it_opens_on_the_current_column_and_enter_picks_another() {
        let mut m = SortMenu::default();
        m.open(SortColumn::Vram, false);
        assert!(!m.columns().contains(&SortColumn::Pod));
        let at = m.picking.expect("open");
        assert_eq!(m.columns()[at], SortColumn::Vram);
        assert!(m.items(SortColumn::Vram, true)[at].ends_with("▼ now"));
        // Up twice: VRAM → GPU → user (no pod between them off Kubernetes).
        m.key(k(KeyCode::Up));
        m.key(k(KeyCode::Up));
        assert_eq!(
            m.key(k(KeyCode::Enter)),
            (Action::Redraw, Some(SortColumn::User))
        );
        assert_eq!(m.picking, None);
    }

    #[test]
    fn other_keys_close_it_as_it_was_and_the_ends_hold() {
        let mut m = SortMenu::default();
        m.open(SortColumn::Pid, true);
        assert!(m.columns().contains(&SortColumn::Pod));
        assert_eq!(m.key(k(KeyCode::Up)), (Action::None, None));
        m.key(k(KeyCode::End));
        assert_eq!(m.columns()[m.picking.unwrap()], SortColumn::Command);
        assert_eq!(m.key(k(KeyCode::Down)), (Action::None, None));
        assert_eq!(m.key(k(KeyCode::Esc)), (Action::Redraw, None));
        assert_eq!(m.picking, None);
    }
}
