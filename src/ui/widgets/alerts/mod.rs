//! The alert widgets: the panel (standing alerts with evidence and next step, wrapped, the
//! selected one highlighted), the one-line strip for small terminals, the history overlay
//! (`H`) and the detail view of one alert (`Enter`). They draw the engine's alerts
//! (`engine::rules`) in the theme's severity styles.

pub mod detail;
pub mod history;
pub mod panel;
pub mod strip;
