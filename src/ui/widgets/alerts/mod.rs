//! The alert widgets: the panel (standing alerts with evidence and next step, wrapped and
//! scrollable), the one-line strip for small terminals, and the history overlay (`H`). They
//! draw the engine's alerts (`engine::rules`) in the theme's severity styles.

pub mod history;
pub mod panel;
pub mod strip;
