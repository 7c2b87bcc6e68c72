//! The process detail view's state (nvitop's Enter on a process): which PID it shows and how
//! far it is scrolled, and the keys while it is open (the arrows and pages scroll, replay keys
//! pass through, anything else closes). Which of Enter's two targets is meant, the selected
//! alert or the selected process, follows [`Focus`]: what the user selected last. View state,
//! and one read when the view opens on this machine's process: its working directory and the
//! GPU part of its environment, through the core's [`inspect`] (pinned with `act::Target`:
//! the reading's start time is checked first where the reading and the boot time give it,
//! and the kernel's start ticks before and after, so a PID reused during the read shows
//! nothing). The widget is
//! `widgets/process_detail`.

use std::path::Path;

use gpumeter_core::source::host::inspect::{Inspection, inspect};
use gpumeter_model::Snapshot;

use super::alert_view::is_replay;
use super::app::{Action, App};
use super::keys::KeyAction;
use super::process_action::Acting;
use crate::act::Target;

/// What the user selected last, so Enter opens its details.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Focus {
    /// The alerts (the start, and after `n` / `p`): Enter opens the selected alert.
    #[default]
    Alerts,
    /// The process table (after moving its selection): Enter opens the selected process.
    Table,
}

/// An open process detail view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessDetail {
    pub pid: u32,
    /// Rows scrolled down.
    pub scroll: usize,
    /// How far it can scroll (set by the sync from its text).
    pub scroll_max: usize,
    /// Its directory and environment, once read ([`inspect_opened`]); `Err`: why not.
    pub inspection: Option<Result<Inspection, String>>,
}

impl ProcessDetail {
    pub fn new(pid: u32) -> Self {
        Self {
            pid,
            scroll: 0,
            scroll_max: 0,
            inspection: None,
        }
    }

    /// A key while the view is open; `None`: the key closes it.
    pub fn key(&mut self, act: Option<KeyAction>, replay: bool) -> Option<Action> {
        use KeyAction as K;
        let to = match act {
            Some(K::Up) => self.scroll.saturating_sub(1),
            Some(K::Down) => self.scroll + 1,
            Some(K::PageUp) => self.scroll.saturating_sub(10),
            Some(K::PageDown) => self.scroll + 10,
            Some(K::First) => 0,
            Some(K::Last) => self.scroll_max,
            Some(a) if replay && is_replay(a) => return Some(Action::Replay(a)),
            _ => return None,
        };
        let to = to.min(self.scroll_max);
        if to == self.scroll {
            return Some(Action::None);
        }
        self.scroll = to;
        Some(Action::Redraw)
    }

    /// The sync's new scroll limit; the scroll stays inside it.
    pub fn set_scroll_max(&mut self, max: usize) {
        self.scroll_max = max;
        self.scroll = self.scroll.min(max);
    }
}

/// Reads the open view's process once, when it is this machine's (`snap`: the reading it was
/// opened from). A demo's or a recording's PIDs are not read: they name nothing here.
pub fn inspect_opened(app: &mut App, snap: Option<&Snapshot>) {
    if app.acting == Acting::NotLocal {
        return;
    }
    let Some(detail) = app
        .process_detail
        .as_mut()
        .filter(|d| d.inspection.is_none())
    else {
        return;
    };
    let pid = detail.pid;
    let Some(p) = snap.and_then(|s| s.processes.iter().find(|p| p.pid == pid)) else {
        return;
    };
    detail.inspection = Some(if !p.visible {
        Err("not visible in /proc here (another PID namespace)".into())
    } else {
        let boot = snap.and_then(|s| s.system.boot_time_unix_s);
        Target::take(pid, p.start_time_unix_s, boot)
            .and_then(|target| {
                let read = inspect(Path::new("/proc"), pid);
                target.check().map(|_| read)
            })
            .map_err(|e| e.to_string())
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrows_scroll_within_the_text_and_other_keys_close() {
        let mut d = ProcessDetail::new(42);
        d.set_scroll_max(3);
        assert_eq!(d.key(Some(KeyAction::Up), false), Some(Action::None));
        assert_eq!(d.key(Some(KeyAction::Down), false), Some(Action::Redraw));
        assert_eq!(
            d.key(Some(KeyAction::PageDown), false),
            Some(Action::Redraw)
        );
        assert_eq!(d.scroll, 3);
        assert_eq!(d.key(Some(KeyAction::Last), false), Some(Action::None));
        d.set_scroll_max(1);
        assert_eq!(d.scroll, 1);
        assert_eq!(d.key(Some(KeyAction::Pause), false), None);
        assert_eq!(
            d.key(Some(KeyAction::Pause), true),
            Some(Action::Replay(KeyAction::Pause))
        );
        assert_eq!(d.key(None, false), None);
        assert_eq!(d.key(Some(KeyAction::Quit), false), None);
    }
}
