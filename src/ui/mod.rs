//! The terminal dashboard.

pub mod spend_panel;
