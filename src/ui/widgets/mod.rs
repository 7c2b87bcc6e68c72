//! The dashboard's widgets, one per file: each draws one part of the screen from `&` references
//! (the engine's readings, the billing view, the alerts, the [`App`](super::App) view state) in
//! the styles of the [`Theme`](super::theme::Theme) it is given, and never mutates. Shared text
//! helpers (widths, padding, bars) are in [`fmt`].

pub mod alerts;
mod braille;
pub mod charts;
pub mod confirm;
pub mod fmt;
mod frame_box;
mod glyph;
pub mod gpu_line;
pub mod gpu_panel;
pub mod header;
pub mod help;
pub mod process_table;
pub mod spend_line;
pub mod spend_panel;
pub mod status_line;
mod text;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;

/// What the widgets draw on: the frame's buffer, with the two calls they used on ratatui's
/// `Frame`. The dashboard renders into one buffer of its own (`ui::screen_writer`), which no `Frame`
/// can wrap; ratatui's `Terminal` (tests, the fleet view) passes `frame.buffer_mut()`.
pub trait Canvas {
    /// Renders `widget` into `area`.
    fn render_widget<W: Widget>(&mut self, widget: W, area: Rect);
    /// The buffer itself.
    fn buffer_mut(&mut self) -> &mut Buffer;
}

impl Canvas for Buffer {
    fn render_widget<W: Widget>(&mut self, widget: W, area: Rect) {
        widget.render(area, self);
    }

    fn buffer_mut(&mut self) -> &mut Buffer {
        self
    }
}
