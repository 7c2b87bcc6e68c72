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
pub mod billing;
pub mod check;
pub mod cli;
pub mod clock;
pub mod config;
pub mod engine;
pub mod eval;
pub mod export;
pub mod fleet;
pub mod launch;
pub mod ledger;
pub mod money;
pub mod notify;
pub mod recording;
pub mod report;
pub mod residency;
pub mod sanitize;
pub mod serve;
pub mod session;
pub mod source;
pub mod ui;
pub mod units;
pub mod watch;

pub use gpumeter_model as model;
