//! gpumeter: a terminal dashboard for rented GPU machines.
//!
//! Layering (dependencies point one way):
//! `source` (NVML, /proc, simulator) → `engine` (history, derived state) → `ui` / `export`.
//! The engine knows nothing of terminals; the UI renders from `&` references only; time comes
//! through a [`clock::Clock`] so every rule is testable with a fake clock.

pub mod billing;
pub mod cli;
pub mod clock;
pub mod config;
pub mod engine;
pub mod export;
pub mod launch;
pub mod ledger;
pub mod money;
pub mod notify;
pub mod report;
pub mod sanitize;
pub mod session;
pub mod source;
pub mod ui;
pub mod units;
pub mod watch;

pub use gpumeter_model as model;
