//! gpumeter's core: everything the front-ends share, and nothing of terminals, HTTP or the
//! command line (no ratatui, crossterm, clap or hyper here; the compiler keeps it so).
//!
//! Layering (dependencies point one way):
//! `source` (NVML, /proc, simulator) → `engine` (history, alert rules, autostop) → `session`
//! (one metering run: engine + billing + ledger writer + alert fan-out + autostop guard; one
//! `Step` per reading). `billing`, `ledger`, `notify` and `export` are rooms the session and
//! the front-ends use; `cloud` says where the machine is rented and what such a box lists at
//! (DMI, pod environment, the opt-in metadata service, the price catalog); `config` reads the config file and hands each room its resolved
//! settings; `money`, `units`, `clock`, `sanitize` and `recording` are the shared ground;
//! `endpoint` (port, listen address, tokens), `expect` (what was paid for) and `fleet` (the
//! fleet's hosts, polling and rows) are what two front-ends would otherwise share sideways. The
//! engine imports none of `config`, `notify` or `session`; time comes through a
//! [`clock::Clock`] so every rule is testable with a fake clock. The front-ends (the `gpumeter`
//! crate: the dashboard, `watch`, `serve`, `fleet`, `check`) use this crate and never each other.

// The surface is deliberate: an item public inside a private room is the room's business,
// and every public item says what it means (units, what `None` is, the key it comes from).
#![warn(unreachable_pub, missing_docs)]

pub mod billing;
pub mod clock;
pub mod cloud;
pub mod config;
pub mod endpoint;
pub mod engine;
pub mod expect;
pub mod export;
pub mod fleet;
pub mod ledger;
pub mod money;
pub mod notify;
pub mod recording;
pub mod sanitize;
pub mod session;
pub mod source;
pub mod textfile;
pub mod units;

pub use gpumeter_model as model;
