//! gpumeter: a terminal dashboard for rented GPU machines.
//!
//! Layering (dependencies point one way):
//! `source` (NVML, /proc, simulator) → `engine` (history, alert rules, autostop) → `session`
//! (one metering run: engine + billing + ledger writer + alert fan-out + autostop guard; one
//! `Step` per reading) → front-ends (`ui` the dashboard, `watch` headless, `serve` over HTTP;
//! they only show the step; `export` and `report` print one-shot output).
//! `billing`, `ledger`, `notify` and `export` are rooms the session and front-ends use; `config`
//! reads the config file and hands each room its resolved settings; `cli` parses arguments and
//! `main.rs` wires them together. The engine imports none of `cli`, `config`, `notify`, `ui`,
//! `watch`, `serve` or `session`; front-ends render from `&` references only; time comes through
//! a [`clock::Clock`] so every rule is testable with a fake clock.

pub mod act;
pub mod check;
pub mod cli;
pub mod eval;
pub mod fleet;
pub mod launch;
pub mod report;
pub mod residency;
pub mod serve;
pub mod ui;
pub mod watch;

pub use gpumeter_core::{
    billing, clock, config, engine, export, ledger, model, money, notify, recording, sanitize,
    session, source, units,
};

#[cfg(test)]
mod money_tests;
