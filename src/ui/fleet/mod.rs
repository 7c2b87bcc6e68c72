//! The screen of `gpumeter fleet`: a table of hosts ([`screen`]) and, on Enter, the selected
//! host's full dashboard, drawn by `crate::ui::Dashboard` from a local session fed with that
//! host's polled readings ([`remote`]); Esc comes back. [`FleetUi`] is the one owner of the fleet's
//! state (answers arrive from the poller threads as [`PollEvent`]s over a channel, in
//! [`event_loop`]); drawing reads it through `&` only, so every screen is a buffer test.

mod event_loop;
pub mod remote;
pub mod screen;

#[cfg(test)]
pub(crate) mod tests;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;

use crate::ui::theme::Theme;
use crate::ui::{Action, App, Dashboard, UiOptions};
use gpumeter_core::fleet::hosts::Host;
use gpumeter_core::fleet::poll::PollEvent;
use gpumeter_core::fleet::view::{self, Fleet, HostRow, SortKey};

pub use event_loop::run;
use remote::Remote;

/// How the fleet screen starts.
#[derive(Debug, Clone)]
pub struct FleetOptions {
    pub hosts: Vec<Host>,
    pub no_color: bool,
    pub theme: Theme,
    /// The poll interval (the drill-in's sessions bill gaps as the dashboard does).
    pub interval_ms: i64,
    /// What the terminal shows, and `--ascii` (see [`crate::ui::fallback`]).
    pub colour_depth: crate::ui::fallback::ColourDepth,
    pub ascii: bool,
}

/// The host whose dashboard is open.
#[derive(Debug)]
struct Drill {
    host: usize,
    app: App,
}

/// The fleet's state and the screen's view state.
#[derive(Debug)]
pub struct FleetUi {
    fleet: Fleet,
    remotes: Vec<Option<Remote>>,
    sort: SortKey,
    descending: bool,
    /// Position in the sorted rows, and the host there (followed when rows reorder).
    selected: usize,
    selected_host: Option<usize>,
    scroll: usize,
    page_rows: usize,
    drill: Option<Drill>,
    theme: Theme,
    no_color: bool,
    interval_ms: i64,
    colour_depth: crate::ui::fallback::ColourDepth,
    ascii: bool,
    status: Option<String>,
}

impl FleetUi {
    pub fn new(options: &FleetOptions) -> FleetUi {
        FleetUi {
            fleet: Fleet::new(&options.hosts),
            remotes: options.hosts.iter().map(|_| None).collect(),
            sort: SortKey::IdleBurn,
            descending: SortKey::IdleBurn.descending_by_default(),
            selected: 0,
            selected_host: None,
            scroll: 0,
            page_rows: 1,
            drill: None,
            theme: Theme::for_options(options.no_color, &options.theme),
            no_color: options.no_color,
            interval_ms: options.interval_ms,
            colour_depth: options.colour_depth,
            ascii: options.ascii,
            status: None,
        }
    }

    pub fn fleet(&self) -> &Fleet {
        &self.fleet
    }

    /// The host whose dashboard is open, if any.
    pub fn drilled(&self) -> Option<usize> {
        self.drill.as_ref().map(|d| d.host)
    }

    /// Folds one poll answer in: the fleet row, and the host's local session.
    pub fn apply(&mut self, ev: PollEvent) {
        let host = ev.host;
        match &ev.result {
            Ok(doc) => {
                if let Some(slot) = self.remotes.get_mut(host) {
                    if slot.is_none() {
                        *slot = Remote::for_document(doc, self.interval_ms);
                    }
                    if let Some(r) = slot {
                        r.ingest(doc);
                    }
                }
            }
            Err(f) => {
                if let Some(Some(r)) = self.remotes.get_mut(host) {
                    r.failed(f.message(), ev.at_unix_ms, 0);
                }
            }
        }
        self.fleet.apply(ev);
    }

    /// The rows as drawn at `now_unix_ms`.
    pub fn rows(&self, now_unix_ms: i64) -> Vec<HostRow> {
        view::rows(&self.fleet, now_unix_ms, self.sort, self.descending)
    }

    /// Clamps the selection to what the screen lists now (it follows its host when rows
    /// reorder) and keeps it visible; the drilled dashboard syncs its own view.
    pub fn sync(&mut self, area: Rect, now_unix_ms: i64) {
        if let Some(d) = &mut self.drill {
            if let Some(Some(r)) = self.remotes.get(d.host) {
                crate::ui::sync(&mut d.app, r.session.engine(), area, now_unix_ms);
            }
            return;
        }
        let rows = self.rows(now_unix_ms);
        self.page_rows = screen::page_rows(area);
        if let Some(i) = self
            .selected_host
            .and_then(|h| rows.iter().position(|r| r.index == h))
        {
            self.selected = i;
        }
        self.selected = self.selected.min(rows.len().saturating_sub(1));
        self.selected_host = rows.get(self.selected).map(|r| r.index);
        if self.selected < self.scroll {
            self.scroll = self.selected;
        } else if self.selected >= self.scroll + self.page_rows {
            self.scroll = self.selected + 1 - self.page_rows;
        }
    }

    fn select(&mut self, to: usize, now_unix_ms: i64) -> Action {
        let rows = self.rows(now_unix_ms);
        let to = to.min(rows.len().saturating_sub(1));
        self.selected = to;
        self.selected_host = rows.get(to).map(|r| r.index);
        Action::Redraw
    }

    /// One key. In the drill-in, Esc (with no filter, help or history open there) comes back
    /// and every other key is the dashboard's.
    pub fn handle_key(&mut self, key: KeyEvent, now_unix_ms: i64) -> Action {
        if key.kind == KeyEventKind::Release {
            return Action::None;
        }
        if key.modifiers.contains(KeyModifiers::CONTROL)
            && matches!(key.code, KeyCode::Char('c' | 'C'))
        {
            return Action::Quit;
        }
        if let Some(d) = &mut self.drill {
            let plain = !d.app.filter_active
                && d.app.filter.is_empty()
                && !d.app.help
                && !d.app.alerts.overlay_open();
            if key.code == KeyCode::Esc && plain {
                self.drill = None;
                return Action::Redraw;
            }
            let action = d.app.handle_key(key);
            if let (Some(Some(r)), true) = (
                self.remotes.get_mut(d.host),
                matches!(action, Action::Acknowledge | Action::Snooze),
            ) {
                crate::ui::loop_alerts::apply_action(
                    action,
                    &mut d.app,
                    &mut r.session,
                    now_unix_ms,
                );
                return Action::Redraw;
            }
            return action;
        }
        let had_status = self.status.take().is_some();
        let action = match key.code {
            KeyCode::Char('q') => Action::Quit,
            KeyCode::Up | KeyCode::Char('k') => {
                self.select(self.selected.saturating_sub(1), now_unix_ms)
            }
            KeyCode::Down | KeyCode::Char('j') => self.select(self.selected + 1, now_unix_ms),
            KeyCode::PageUp => {
                self.select(self.selected.saturating_sub(self.page_rows), now_unix_ms)
            }
            KeyCode::PageDown => self.select(self.selected + self.page_rows, now_unix_ms),
            KeyCode::Home | KeyCode::Char('g') => self.select(0, now_unix_ms),
            KeyCode::End | KeyCode::Char('G') => self.select(usize::MAX, now_unix_ms),
            KeyCode::Char('s') => {
                self.sort = self.sort.next();
                self.descending = self.sort.descending_by_default();
                Action::Redraw
            }
            KeyCode::Char('S') => {
                self.descending = !self.descending;
                Action::Redraw
            }
            KeyCode::Enter => self.open(now_unix_ms),
            _ => Action::None,
        };
        if had_status && action == Action::None {
            Action::Redraw
        } else {
            action
        }
    }

    /// Enter: the selected host's dashboard, once it has answered.
    fn open(&mut self, now_unix_ms: i64) -> Action {
        let rows = self.rows(now_unix_ms);
        let Some(r) = rows.get(self.selected) else {
            return Action::None;
        };
        if !matches!(self.remotes.get(r.index), Some(Some(_))) {
            self.status = Some(format!("{} has not answered yet: nothing to open", r.name));
            return Action::Redraw;
        }
        let mut app = App::new(&UiOptions {
            no_color: self.no_color,
            source_label: r.name.clone(),
            theme: self.theme.clone(),
            // The PIDs are another machine's: the process keys must never signal one here.
            acting: crate::ui::process_action::Acting::NotLocal,
            colour_depth: self.colour_depth,
            ascii: self.ascii,
            ..UiOptions::default()
        });
        app.set_status(format!(
            "{} · Esc: back to the fleet · spend here counts from when the fleet began watching",
            r.name
        ));
        self.drill = Some(Drill { host: r.index, app });
        Action::Redraw
    }

    /// Draws the fleet table, or the open host's dashboard.
    pub fn draw(&self, buf: &mut Buffer, now_unix_ms: i64) {
        if let Some(d) = &self.drill
            && let Some(Some(r)) = self.remotes.get(d.host)
        {
            let area = buf.area;
            Dashboard::new(&d.app, r.session.engine(), now_unix_ms).render(area, buf);
            return;
        }
        let rows = self.rows(now_unix_ms);
        let totals = view::totals(&rows);
        let f = screen::FleetScreen {
            rows: &rows,
            totals: &totals,
            selected: self.selected,
            scroll: self.scroll,
            sort: self.sort,
            descending: self.descending,
            status: self.status.as_deref(),
            theme: &self.theme,
        };
        let area = buf.area;
        f.render(area, buf);
        crate::ui::fallback::reduce_colours(buf, self.colour_depth);
        if self.ascii {
            crate::ui::fallback::to_ascii(buf);
        }
    }
}
