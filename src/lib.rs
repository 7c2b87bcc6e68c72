//! gpumeter's front-ends, over the core crate (`gpumeter_core`: sources, engine, session,
//! billing, ledger, notify, config, export and the shared ground).
//!
//! Each front-end shows what the core's session decided and never imports another front-end:
//! `ui` (the terminal screens: the dashboard and the fleet screen), `watch` (headless lines),
//! `serve` (HTTP: Prometheus, JSON), `fleet` (`fleet --once`), `check` (pre-flight), `report`
//! (the ledger's spend), `eval` (the accuracy corpus). `cli` parses arguments into plain
//! options; `main.rs` and `subcommands.rs` wire them to the front-ends. `act` signals and
//! renices processes for the dashboard; `launch` turns command-line choices into a source.
//! Front-ends render from `&` references only.

pub mod act;
pub mod check;
pub mod cli;
pub mod eval;
pub mod fleet;
pub mod launch;
pub mod report;
pub mod serve;
pub mod ui;
pub mod watch;

#[cfg(test)]
mod tests;
