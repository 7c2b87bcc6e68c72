//! [`App`]: the dashboard's view state (selection, scroll, sort, filter, tree, help, GPU filter,
//! the alert selection and detail view ([`AlertView`]), the charts' window, a status message)
//! and the transitions keys and mouse make on it, keys looked up in the one [`KeyMap`]
//! (what each key does in the main view is `normal.rs`, the mouse `mouse.rs`; the process
//! detail, user filter, sort menu, tags and focus rooms hold their own state). Pure but for
//! one read: tagging a process of this machine pins it by its kernel start ticks (`crate::act`).
//! It holds no readings: those stay in the engine. The event loop tells it what the screen
//! currently lists through [`App::sync`], so moves can be clamped and the selection can follow
//! a process when rows reorder.

use crossterm::event::MouseEventKind;
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent};
use ratatui::layout::Position;

use super::UiOptions;
use super::alert_view::AlertView;
use super::chart_window::ChartWindow;
use super::keys::{KeyAction, KeyMap};
use super::layout::{GpuMode, Screen};
use super::process_action::{Acting, Ask, Pending};
use super::process_view::{Focus, ProcessDetail};
use super::sort::SortColumn;
use super::sort_menu::SortMenu;
use super::tags::Tags;
use super::theme::Theme;
use super::user_filter::UserFilter;
use super::widgets::charts::Metric;
use crate::act::Signal;

/// Longest filter text kept.
const MAX_FILTER_CHARS: usize = 64;
/// Rows one mouse-wheel notch scrolls.
const WHEEL_ROWS: isize = 3;

/// What the event loop should do after an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Nothing changed.
    None,
    /// The view changed: draw again.
    Redraw,
    /// Leave the dashboard.
    Quit,
    /// Acknowledge the selected alert (the loop owns the engine), then draw again.
    Acknowledge,
    /// Snooze the selected alert for [`SNOOZE_MS`], then draw again.
    Snooze,
    /// A replay key (pause, speed, step, seek): the loop owns the player.
    Replay(KeyAction),
    /// Open the confirmation for a signal or renice of the selected process (the loop has
    /// the readings it names).
    Act(Ask),
    /// The open confirmation was accepted: act, then draw again.
    ConfirmAct,
}

/// How long `z` hides an alert.
pub const SNOOZE_MS: i64 = 60 * 60 * 1000;

/// The dashboard's view state.
#[derive(Debug, Clone)]
pub struct App {
    pub(crate) selected: usize,
    pub(crate) scroll: usize,
    selected_pid: Option<u32>,
    /// The user has moved the selection (a key, a click, the wheel). Until then the table stays
    /// at its top row while the first readings re-sort it.
    touched: bool,
    pub(crate) sort: SortColumn,
    pub(crate) sort_desc: bool,
    pub(crate) filter: String,
    pub(crate) filter_active: bool,
    pub(crate) tree: bool,
    /// Pids whose subtree the tree view folds (`-`; `+` unfolds).
    pub(crate) folded: std::collections::BTreeSet<u32>,
    /// The tagged processes (Space), which a signal or renice then reaches.
    pub(crate) tags: Tags,
    pub(crate) help: bool,
    /// Rows the help is scrolled down, and how far it can go (set at sync).
    pub(crate) help_scroll: usize,
    pub(crate) help_scroll_max: usize,
    /// Full command lines in the table (`e`) instead of the name.
    pub(crate) full_command: bool,
    /// The alert selection, the detail view and the history overlay.
    pub(crate) alerts: AlertView,
    /// What Enter opens: the alert or the process selected last.
    pub(crate) enter_focus: Focus,
    /// The open process detail view, if any.
    pub(crate) process_detail: Option<ProcessDetail>,
    /// One user's processes only (`u`), and its picker.
    pub(crate) users: UserFilter,
    /// The sort menu (`F6`).
    pub(crate) sort_menu: SortMenu,
    /// How far back the charts look (the zoom keys).
    pub(crate) window: ChartWindow,
    /// The series the per-GPU charts show (the chart-series key cycles it).
    pub(crate) chart_metric: Metric,
    /// Whether a card has SM activity (GPM) history, so the cycle offers it (set at sync).
    pub(crate) chart_gpm: bool,
    /// The keys.
    pub(crate) keymap: KeyMap,
    /// Where the replay stands, while a recording plays (the replay keys work only then).
    pub(crate) replay: Option<super::replay::ReplayStatus>,
    /// The GPU the process table (and charts) are narrowed to; `None` = all.
    pub(crate) gpu_filter: Option<u32>,
    pub(crate) status: Option<String>,
    /// Whether processes may be signalled here, and the open confirmation, if any.
    pub(crate) acting: Acting,
    pub(crate) confirm: Option<Pending>,
    pub(crate) theme: Theme,
    /// How frames are reduced for the terminal (see [`super::fallback`]).
    pub(crate) colour_depth: super::fallback::ColourDepth,
    pub(crate) ascii: bool,
    pub(crate) source_label: String,
    /// What the first reading waits for, when the source said (it is still opening).
    pub(crate) waiting: Option<String>,
    /// How often readings come (the header's period, and how late is stale).
    pub(crate) interval_ms: i64,
    /// When the collector last reported a whole-source failure (for the retry countdown).
    pub(crate) last_failure_unix_ms: Option<i64>,
    // What the screen listed at the last sync.
    row_pids: Vec<u32>,
    /// The start time each row showed (by row, as `row_pids`), which a tag pins.
    pub(crate) row_starts: Vec<Option<i64>>,
    gpu_indices: Vec<u32>,
    page_rows: usize,
    /// The table's optional columns, container and pod (its header's columns depend on them).
    pub(crate) table_columns: crate::ui::widgets::process_table::Optional,
    /// Where the visible rows' pids go (the source reads those every tick).
    focus: gpumeter_core::source::focus::ProcessFocus,
}

impl App {
    pub fn new(options: &UiOptions) -> Self {
        Self {
            selected: 0,
            scroll: 0,
            selected_pid: None,
            touched: false,
            sort: SortColumn::Vram,
            sort_desc: SortColumn::Vram.descending_by_default(),
            filter: String::new(),
            filter_active: false,
            // Dataloader workers under their trainer is what a GPU renter wants to see first.
            tree: true,
            folded: Default::default(),
            tags: Tags::default(),
            help: false,
            help_scroll: 0,
            help_scroll_max: 0,
            full_command: false,
            alerts: AlertView::default(),
            enter_focus: Focus::default(),
            process_detail: None,
            users: UserFilter::default(),
            sort_menu: SortMenu::default(),
            window: ChartWindow::default(),
            chart_metric: Metric::default(),
            chart_gpm: false,
            keymap: options.keys.clone(),
            replay: None,
            gpu_filter: None,
            status: None,
            acting: options.acting,
            confirm: None,
            theme: Theme::for_options(options.no_color, &options.theme),
            colour_depth: options.colour_depth,
            ascii: options.ascii,
            source_label: options.source_label.clone(),
            waiting: None,
            interval_ms: options.interval_ms,
            last_failure_unix_ms: None,
            row_pids: Vec::new(),
            row_starts: Vec::new(),
            gpu_indices: Vec::new(),
            page_rows: 1,
            table_columns: Default::default(),
            focus: options.focus.clone(),
        }
    }

    /// The pids of the table rows on screen now.
    pub fn visible_pids(&self) -> &[u32] {
        let start = self.scroll.min(self.row_pids.len());
        let end = start
            .saturating_add(self.page_rows.max(1))
            .min(self.row_pids.len());
        &self.row_pids[start..end]
    }

    /// Tells the state what the screen lists now: the PIDs of the table rows in display order,
    /// the GPU indices, and how many table rows are visible. Keeps the selected process selected
    /// when rows reorder, and clamps selection and scroll.
    pub fn sync(&mut self, row_pids: Vec<u32>, gpu_indices: Vec<u32>, page_rows: usize) {
        self.page_rows = page_rows;
        self.gpu_indices = gpu_indices;
        let found = self
            .selected_pid
            .filter(|_| self.touched)
            .and_then(|pid| row_pids.iter().position(|p| *p == pid));
        self.row_pids = row_pids;
        match found {
            Some(i) => self.selected = i,
            None => {
                self.selected = self.selected.min(self.row_pids.len().saturating_sub(1));
                self.selected_pid = self.row_pids.get(self.selected).copied();
            }
        }
        self.keep_selection_visible();
        self.focus.set_pids(self.visible_pids().iter().copied());
    }

    /// Records a whole-source failure reported at `now_unix_ms`.
    pub fn note_source_failure(&mut self, now_unix_ms: i64) {
        self.last_failure_unix_ms = Some(now_unix_ms);
    }

    /// Shows a message in the status line until the next key.
    pub fn set_status(&mut self, message: impl Into<String>) {
        self.status = Some(message.into());
    }

    /// The PID of the selected row, if any.
    pub fn selected_pid(&self) -> Option<u32> {
        self.selected_pid
    }

    /// The GPU the view is narrowed to, if any.
    pub fn gpu_filter(&self) -> Option<u32> {
        self.gpu_filter
    }

    /// Whether Enter opens the selected process (the table was selected last, or no alert
    /// stands) rather than the selected alert.
    pub fn enter_opens_process(&self) -> bool {
        self.selected_pid.is_some()
            && (self.enter_focus == Focus::Table || self.alerts.selected_id().is_none())
    }

    /// The filter text.
    pub fn filter(&self) -> &str {
        &self.filter
    }

    /// One key press.
    pub fn handle_key(&mut self, key: KeyEvent) -> Action {
        if key.kind == KeyEventKind::Release {
            return Action::None;
        }
        if key.modifiers.contains(KeyModifiers::CONTROL)
            && matches!(key.code, KeyCode::Char('c' | 'C'))
        {
            return Action::Quit;
        }
        // A terminal sends Esc as a lone ESC byte and Alt-x as ESC x; when the app reads Esc and
        // the next key in one go (a busy machine, ssh lag) crossterm sees Alt-x. gpumeter binds
        // nothing to Alt, so such a key is what was typed: Esc, then x.
        if key.modifiers == KeyModifiers::ALT
            && let KeyCode::Char(c) = key.code
        {
            let esc = self.handle_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
            let next = self.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
            return if next == Action::None { esc } else { next };
        }
        let had_status = self.status.take().is_some();
        let action = if self.confirm.is_some() {
            match confirm_key(&mut self.confirm, key) {
                Some(action) => action,
                None => {
                    if let Some(p) = self.confirm.take() {
                        self.status = Some(cancelled_text(&p));
                    }
                    // Said now: the status line keeps it until the next key.
                    return Action::Redraw;
                }
            }
        } else if self.help {
            self.help_key(key)
        } else if self.alerts.overlay_open() {
            let act = self.key_action(&key);
            self.alerts.overlay_key(act, self.replay.is_some())
        } else if self.process_detail.is_some() {
            let act = self.key_action(&key);
            let Some(d) = self.process_detail.as_mut() else {
                return Action::None;
            };
            d.key(act, self.replay.is_some()).unwrap_or_else(|| {
                self.process_detail = None;
                Action::Redraw
            })
        } else if self.users.picking.is_some() {
            self.users.key(key)
        } else if self.sort_menu.picking.is_some() {
            let (action, picked) = self.sort_menu.key(key);
            if let Some(col) = picked.filter(|c| *c != self.sort) {
                self.sort = col;
                self.sort_desc = col.descending_by_default();
            }
            action
        } else if self.filter_active {
            self.filter_key(key)
        } else {
            self.normal_key(key)
        };
        if had_status && action == Action::None {
            Action::Redraw
        } else {
            action
        }
    }

    /// The action `key` is bound to here: a key shared by tagging and a replay key is the
    /// replay's while a recording plays.
    fn key_action(&self, key: &KeyEvent) -> Option<KeyAction> {
        self.keymap.action(key, self.replay.is_some())
    }

    /// Opens the confirmation dialog (the loop built it from the readings).
    pub fn open_confirm(&mut self, pending: Pending) {
        self.confirm = Some(pending);
    }

    /// Sorts by `col` in its natural direction; asked again, the other way (a header click, or
    /// htop's `P`/`M`/`T`/`N`).
    fn sort_by(&mut self, col: SortColumn) -> Action {
        if col == self.sort {
            self.sort_desc = !self.sort_desc;
        } else {
            self.sort = col;
            self.sort_desc = col.descending_by_default();
        }
        Action::Redraw
    }

    fn move_by(&mut self, delta: isize) -> Action {
        self.touched = true;
        self.enter_focus = Focus::Table;
        let Some(last) = self.row_pids.len().checked_sub(1) else {
            return Action::None;
        };
        let target = (self.selected as isize)
            .saturating_add(delta)
            .clamp(0, last as isize) as usize;
        if target == self.selected && self.selected_pid == self.row_pids.get(target).copied() {
            return Action::None;
        }
        self.selected = target;
        self.selected_pid = self.row_pids.get(target).copied();
        self.keep_selection_visible();
        Action::Redraw
    }

    /// Moves the view; the selection stays on screen.
    fn scroll_by(&mut self, delta: isize) -> Action {
        self.touched = true;
        self.enter_focus = Focus::Table;
        let page = self.page_rows.max(1);
        let max_scroll = self.row_pids.len().saturating_sub(page);
        let target = (self.scroll as isize)
            .saturating_add(delta)
            .clamp(0, max_scroll as isize) as usize;
        if target == self.scroll {
            return Action::None;
        }
        self.scroll = target;
        let last_visible = (self.scroll + page - 1).min(self.row_pids.len().saturating_sub(1));
        self.selected = self
            .selected
            .clamp(self.scroll, last_visible.max(self.scroll));
        self.selected_pid = self.row_pids.get(self.selected).copied();
        Action::Redraw
    }

    fn cycle_gpu(&mut self, step: isize) -> Action {
        if self.gpu_indices.is_empty() {
            return Action::None;
        }
        // Positions: 0 = all, i + 1 = the i-th GPU.
        let n = self.gpu_indices.len() as isize + 1;
        let current = self
            .gpu_filter
            .and_then(|g| self.gpu_indices.iter().position(|i| *i == g))
            .map_or(0, |p| p as isize + 1);
        let next = (current + step).rem_euclid(n);
        self.gpu_filter = match next {
            0 => None,
            p => self.gpu_indices.get(p as usize - 1).copied(),
        };
        Action::Redraw
    }

    fn keep_selection_visible(&mut self) {
        let page = self.page_rows.max(1);
        if self.selected < self.scroll {
            self.scroll = self.selected;
        } else if self.selected >= self.scroll + page {
            self.scroll = self.selected + 1 - page;
        }
        self.scroll = self.scroll.min(self.row_pids.len().saturating_sub(page));
    }
}

/// Keys while a confirmation is open: Enter or `y` acts, `w` toggles the whole job (not for
/// tagged processes), `+` `-`
/// (or the arrows) move a renice's value; anything else cancels, so a stray key never sends.
/// `None`: the key cancels (the caller takes the confirmation and says so).
fn confirm_key(slot: &mut Option<Pending>, key: KeyEvent) -> Option<Action> {
    let Some(pending) = slot else {
        return Some(Action::None);
    };
    let renice = matches!(pending.ask, Ask::Renice { .. });
    Some(match key.code {
        KeyCode::Enter | KeyCode::Char('y' | 'Y') => Action::ConfirmAct,
        // The tagged processes are the act's whole scope: no job to widen to.
        KeyCode::Char('w') if !pending.tagged.is_empty() => Action::None,
        KeyCode::Char('w') => {
            pending.whole_job = !pending.whole_job;
            Action::Redraw
        }
        KeyCode::Char('+') | KeyCode::Up | KeyCode::Right if renice => {
            pending.step_nice(1);
            Action::Redraw
        }
        KeyCode::Char('-') | KeyCode::Down | KeyCode::Left if renice => {
            pending.step_nice(-1);
            Action::Redraw
        }
        _ => return None,
    })
}

/// What the status line says when a confirmation is cancelled: nothing was sent.
fn cancelled_text(pending: &Pending) -> String {
    let what = match pending.ask {
        Ask::Signal(sig) => format!("SIG{} not sent", sig.name()),
        Ask::Renice { .. } => "nice value not changed".into(),
    };
    let who = pending
        .many()
        .unwrap_or_else(|| format!("PID {}", pending.one.target.pid));
    format!("cancelled: {what} to {who}")
}

mod mouse;
mod normal;
#[cfg(test)]
mod tests;
