//! The dashboard's widgets, one per file: each draws one part of the screen from `&` references
//! (the engine's readings, the billing view, the alerts, the [`App`](super::App) view state) in
//! the styles of the [`Theme`](super::theme::Theme) it is given, and never mutates. Shared text
//! helpers (widths, padding, bars) are in [`fmt`].

pub mod alerts;
mod braille;
pub mod charts;
pub mod confirm;
pub mod fmt;
pub mod gpu_line;
pub mod gpu_panel;
pub mod header;
pub mod help;
pub mod process_table;
pub mod spend_line;
pub mod spend_panel;
pub mod status_line;
mod text;
