//! The dashboard's widgets, one per file, in ratatui's own shape: a struct holding `&`
//! references to what it draws (the engine's readings, the billing view, the alerts, the
//! [`App`](super::App) view state, the [`Theme`](super::theme::Theme)), with
//! `impl Widget` (`widget.render(area, buf)`); none mutates what it draws. Shared text helpers
//! (widths, padding, bars) are in [`fmt`].

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
pub mod picker;
pub mod process_detail;
pub mod process_table;
pub mod spend_line;
pub mod spend_panel;
pub mod status_line;
mod text;
