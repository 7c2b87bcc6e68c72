//! What each key does in the dashboard's main view, in the help and in the filter input: the
//! key map's actions turned into [`App`] transitions (the overlays' keys are their rooms').

use super::*;

impl App {
    pub(super) fn normal_key(&mut self, key: KeyEvent) -> Action {
        let page = self.page_rows.max(1) as isize;
        let Some(act) = self.key_action(&key) else {
            return match key.code {
                KeyCode::Esc if !self.filter.is_empty() => {
                    self.filter.clear();
                    Action::Redraw
                }
                _ => Action::None,
            };
        };
        match act {
            KeyAction::Quit => Action::Quit,
            KeyAction::Up => self.move_by(-1),
            KeyAction::Down => self.move_by(1),
            KeyAction::PageUp => self.move_by(-page),
            KeyAction::PageDown => self.move_by(page),
            KeyAction::First => self.move_by(isize::MIN / 2),
            KeyAction::Last => self.move_by(isize::MAX / 2),
            KeyAction::NextGpu => self.cycle_gpu(1),
            KeyAction::PrevGpu => self.cycle_gpu(-1),
            KeyAction::Filter => {
                self.filter_active = true;
                Action::Redraw
            }
            KeyAction::UserFilter => self.users.open(),
            KeyAction::Sort => {
                self.sort = self.sort.next(self.table_columns.pod);
                self.sort_desc = self.sort.descending_by_default();
                Action::Redraw
            }
            KeyAction::SortMenu => self.sort_menu.open(self.sort, self.table_columns.pod),
            KeyAction::SortCpu => self.sort_by(SortColumn::Cpu),
            KeyAction::SortMemory => self.sort_by(SortColumn::Vram),
            KeyAction::SortTime => self.sort_by(SortColumn::Runtime),
            KeyAction::SortPid => self.sort_by(SortColumn::Pid),
            KeyAction::SortPod => self.sort_by(SortColumn::Pod),
            KeyAction::Reverse => {
                self.sort_desc = !self.sort_desc;
                Action::Redraw
            }
            KeyAction::Tree => {
                self.tree = !self.tree;
                Action::Redraw
            }
            KeyAction::Expand => self.fold(false),
            KeyAction::Collapse => self.fold(true),
            KeyAction::FullCommand => {
                self.full_command = !self.full_command;
                Action::Redraw
            }
            KeyAction::NextAlert => {
                self.enter_focus = Focus::Alerts;
                self.alerts.select_by(1)
            }
            KeyAction::PrevAlert => {
                self.enter_focus = Focus::Alerts;
                self.alerts.select_by(-1)
            }
            KeyAction::AlertDetail => {
                match self.selected_pid.filter(|_| self.enter_opens_process()) {
                    Some(pid) => {
                        self.process_detail = Some(ProcessDetail::new(pid));
                        Action::Redraw
                    }
                    None => self.alerts.open_detail(),
                }
            }
            KeyAction::Acknowledge => Action::Acknowledge,
            KeyAction::Snooze => Action::Snooze,
            KeyAction::History => self.alerts.open_history(),
            KeyAction::Tag => self.tag_selected(),
            KeyAction::UntagAll => {
                let n = self.tags.clear();
                if n == 0 {
                    return Action::None;
                }
                self.set_status(format!("untagged {n}"));
                Action::Redraw
            }
            KeyAction::SignalTerm => Action::Act(Ask::Signal(Signal::Term)),
            KeyAction::SignalInt => Action::Act(Ask::Signal(Signal::Int)),
            KeyAction::SignalKill => Action::Act(Ask::Signal(Signal::Kill)),
            KeyAction::Renice => Action::Act(Ask::Renice { nicer: true }),
            KeyAction::ReniceHigher => Action::Act(Ask::Renice { nicer: false }),
            KeyAction::WiderWindow => self.window.wider(),
            KeyAction::NarrowerWindow => self.window.narrower(),
            KeyAction::ChartSeries => {
                self.chart_metric = self.chart_metric.next(self.chart_gpm);
                Action::Redraw
            }
            KeyAction::Help => {
                self.help = true;
                Action::Redraw
            }
            KeyAction::Pause
            | KeyAction::Faster
            | KeyAction::Slower
            | KeyAction::StepForward
            | KeyAction::StepBack
            | KeyAction::SeekBack
            | KeyAction::SeekForward
            | KeyAction::ReplayStart
            | KeyAction::ReplayEnd => {
                if self.replay.is_some() {
                    Action::Replay(act)
                } else {
                    Action::None
                }
            }
        }
    }

    /// Tags (or untags) the selected process and moves down one row, as htop does, so Space
    /// held down tags a run of rows.
    fn tag_selected(&mut self) -> Action {
        let Some(pid) = self.selected_pid else {
            return Action::None;
        };
        // Pinned to the process the user sees: its row's start time and, for this machine's
        // processes, the kernel's start ticks now.
        let start = self.row_starts.get(self.selected).copied().flatten();
        let ticks = (self.acting != Acting::NotLocal)
            .then(|| crate::act::start_ticks(pid).ok())
            .flatten();
        let tagged = self.tags.toggle(pid, start, ticks);
        let n = self.tags.len();
        let k = |a: KeyAction| self.keymap.first_label(a);
        let status = if n == 0 {
            format!("untagged PID {pid}; nothing is tagged")
        } else {
            let what = if tagged { "tagged" } else { "untagged" };
            format!(
                "{what} PID {pid} · {n} tagged: {} {} {} {} reach them all · {} untags all",
                k(KeyAction::SignalTerm),
                k(KeyAction::SignalInt),
                k(KeyAction::SignalKill),
                k(KeyAction::Renice),
                k(KeyAction::UntagAll)
            )
        };
        self.move_by(1);
        self.set_status(status);
        Action::Redraw
    }

    /// Folds (or unfolds) the selected process's subtree, in the tree view only.
    fn fold(&mut self, fold: bool) -> Action {
        let Some(pid) = self.selected_pid.filter(|_| self.tree) else {
            return Action::None;
        };
        let changed = if fold {
            self.folded.insert(pid)
        } else {
            self.folded.remove(&pid)
        };
        if changed {
            Action::Redraw
        } else {
            Action::None
        }
    }

    /// Keys while the help is open: the arrows and pages scroll it, any other key closes it.
    pub(super) fn help_key(&mut self, key: KeyEvent) -> Action {
        let max = self.help_scroll_max;
        let to = match self.key_action(&key) {
            Some(KeyAction::Up) => self.help_scroll.saturating_sub(1),
            Some(KeyAction::Down) => (self.help_scroll + 1).min(max),
            Some(KeyAction::PageUp) => self.help_scroll.saturating_sub(10),
            Some(KeyAction::PageDown) => (self.help_scroll + 10).min(max),
            _ => {
                self.help = false;
                self.help_scroll = 0;
                return Action::Redraw;
            }
        };
        if to == self.help_scroll {
            return Action::None;
        }
        self.help_scroll = to;
        Action::Redraw
    }

    /// Keys while the filter input is open: typing edits, Enter keeps, Esc clears.
    pub(super) fn filter_key(&mut self, key: KeyEvent) -> Action {
        match key.code {
            KeyCode::Enter => {
                self.filter_active = false;
                Action::Redraw
            }
            KeyCode::Esc => {
                self.filter_active = false;
                self.filter.clear();
                Action::Redraw
            }
            KeyCode::Backspace => {
                self.filter.pop();
                Action::Redraw
            }
            KeyCode::Up => self.move_by(-1),
            KeyCode::Down => self.move_by(1),
            KeyCode::Char(c)
                if !c.is_control()
                    && !key.modifiers.contains(KeyModifiers::CONTROL)
                    && self.filter.chars().count() < MAX_FILTER_CHARS =>
            {
                self.filter.push(c);
                Action::Redraw
            }
            _ => Action::None,
        }
    }
}
