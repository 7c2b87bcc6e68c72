//! htop's `u`: the process table narrowed to one user's processes. This room holds the
//! choice, the picker's state (the users present at the last sync, sorted, and its cursor)
//! and the picker's keys: the arrows move, Enter applies, Esc clears the filter, any other key
//! closes the picker as it was. Pure view state; the rows builder reads [`UserFilter::user`].

use crossterm::event::{KeyCode, KeyEvent};

use super::app::Action;
use super::list_cursor::moved;

/// See the module docs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserFilter {
    /// The user whose processes the table shows; `None`: everyone's.
    user: Option<String>,
    /// The users present at the last sync, sorted.
    users: Vec<String>,
    /// The picker's cursor among `users`, while it is open.
    pub(crate) picking: Option<usize>,
}

impl UserFilter {
    /// The user the table is narrowed to.
    pub fn user(&self) -> Option<&str> {
        self.user.as_deref()
    }

    /// The users the picker lists.
    pub fn users(&self) -> &[String] {
        &self.users
    }

    /// What the screen lists now: the users of the latest reading's processes.
    pub fn sync(&mut self, mut users: Vec<String>) {
        users.sort();
        users.dedup();
        self.users = users;
        if let Some(c) = self.picking.as_mut() {
            *c = (*c).min(self.users.len().saturating_sub(1));
        }
    }

    /// Opens the picker, its cursor on the user chosen now (else the first).
    pub fn open(&mut self) -> Action {
        let at = self
            .user
            .as_ref()
            .and_then(|u| self.users.iter().position(|x| x == u))
            .unwrap_or(0);
        self.picking = Some(at);
        Action::Redraw
    }

    /// A key while the picker is open.
    pub fn key(&mut self, key: KeyEvent) -> Action {
        let Some(cursor) = self.picking else {
            return Action::None;
        };
        let last = self.users.len().saturating_sub(1);
        let to = match (moved(key.code, cursor, last), key.code) {
            (Some(to), _) => to,
            (None, KeyCode::Enter) => {
                self.user = self.users.get(cursor).cloned();
                self.picking = None;
                return Action::Redraw;
            }
            (None, KeyCode::Esc) => {
                self.user = None;
                self.picking = None;
                return Action::Redraw;
            }
            (None, _) => {
                self.picking = None;
                return Action::Redraw;
            }
        };
        if to == cursor {
            return Action::None;
        }
        self.picking = Some(to);
        Action::Redraw
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(code: KeyCode) -> KeyEvent {
        KeyEvent::from(code)
    }

    #[test]
    fn pick_apply_and_clear() {
        let mut f = UserFilter::default();
        f.sync(vec!["bob".into(), "alice".into(), "bob".into()]);
        assert_eq!(f.users(), ["alice", "bob"]);
        f.open();
        assert_eq!(f.picking, Some(0));
        assert_eq!(f.key(k(KeyCode::Down)), Action::Redraw);
        assert_eq!(f.key(k(KeyCode::Down)), Action::None);
        f.key(k(KeyCode::Enter));
        assert_eq!((f.user(), f.picking), (Some("bob"), None));
        // Reopened, the cursor is on the chosen user; another key closes and keeps it.
        f.open();
        assert_eq!(f.picking, Some(1));
        f.key(k(KeyCode::Char('x')));
        assert_eq!((f.user(), f.picking), (Some("bob"), None));
        // Esc clears.
        f.open();
        f.key(k(KeyCode::Esc));
        assert_eq!((f.user(), f.picking), (None, None));
        // With nobody listed, Enter applies nothing.
        f.sync(Vec::new());
        f.open();
        f.key(k(KeyCode::Enter));
        assert_eq!(f.user(), None);
    }
}
