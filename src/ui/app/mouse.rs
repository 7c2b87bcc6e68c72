//! The mouse on the dashboard: a click selects a row, sorts by a column header, narrows to a
//! GPU or closes what is open over the screen; the wheel scrolls the table.

use super::*;

impl App {
    /// One mouse event; `screen` is the layout the last frame was drawn with.
    pub fn handle_mouse(&mut self, ev: MouseEvent, screen: &Screen) -> Action {
        let Screen::Dashboard(layout) = screen else {
            return Action::None;
        };
        let pos = Position::new(ev.column, ev.row);
        match ev.kind {
            MouseEventKind::Down(MouseButton::Left) => {
                // A click away from the confirmation cancels it; it never confirms.
                if let Some(p) = self.confirm.take() {
                    self.status = Some(cancelled_text(&p));
                    return Action::Redraw;
                }
                if self.help
                    || self.alerts.overlay_open()
                    || self.process_detail.is_some()
                    || self.users.picking.is_some()
                    || self.sort_menu.picking.is_some()
                {
                    self.help = false;
                    self.alerts.close();
                    self.process_detail = None;
                    self.users.picking = None;
                    self.sort_menu.picking = None;
                    return Action::Redraw;
                }
                // The column header: sort by that column (again: the other way).
                let header_row = layout.table.y + 1;
                if layout.table.height >= 2
                    && pos.y == header_row
                    && pos.x >= layout.table.x
                    && pos.x < layout.table.right()
                {
                    let x = usize::from(pos.x - layout.table.x);
                    let width = usize::from(layout.table.width);
                    let Some(col) =
                        crate::ui::widgets::process_table::column_at(width, self.table_columns, x)
                    else {
                        return Action::None;
                    };
                    return self.sort_by(col);
                }
                let body = layout.table_body();
                if body.contains(pos) {
                    self.enter_focus = Focus::Table;
                    let index = self.scroll + usize::from(pos.y - body.y);
                    if index < self.row_pids.len() && index != self.selected {
                        return self.move_by(index as isize - self.selected as isize);
                    }
                    return Action::None;
                }
                if layout.gpu_mode == GpuMode::Message {
                    return Action::None;
                }
                let Some(gpu) = layout
                    .gpu_cells
                    .iter()
                    .position(|r| r.contains(pos))
                    .and_then(|i| self.gpu_indices.get(i).copied())
                else {
                    return Action::None;
                };
                // Clicking the GPU already shown alone goes back to all.
                self.gpu_filter = if self.gpu_filter == Some(gpu) {
                    None
                } else {
                    Some(gpu)
                };
                Action::Redraw
            }
            MouseEventKind::ScrollDown => self.scroll_by(WHEEL_ROWS),
            MouseEventKind::ScrollUp => self.scroll_by(-WHEEL_ROWS),
            _ => Action::None,
        }
    }
}
