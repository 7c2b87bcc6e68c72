//! `gpumeter fleet`: one screen over several `gpumeter serve` instances, read through their
//! `/api/v1/snapshot` documents. A front-end like the dashboard: it reads the model's
//! [`Document`](gpumeter_model::Document) and borrows the dashboard's widgets and formatters;
//! the engine and the session know nothing of it.
//!
//! Rooms: [`hosts`] (the addresses and tokens, from the command line and a hosts file),
//! [`poll`] (HTTP requests with timeouts, concurrency cap and backoff, on threads of their
//! own), [`view`] (the fleet's state, its rows and totals: pure), [`cells`] (the words of a
//! row), [`table`] and [`json`] (`fleet --once`). The screen is in `crate::ui::fleet`.
//!
//! May touch: model, money, clock, units, sanitize, the idle rule's thresholds, `serve`'s token
//! type, the dashboard's formatters. Never: the engine's state, the ledger, notify.

pub mod cells;
pub mod hosts;
pub mod json;
pub mod poll;
pub mod table;
pub mod view;

use std::io::Write;

use gpumeter_core::clock::SharedClock;
use hosts::Host;
use poll::PollConfig;
use view::{Fleet, SortKey};

/// `fleet --once`: polls every host once and prints the table (or JSON). Hosts that are
/// down are marked in the output, not an error.
pub fn run_once(
    hosts: &[Host],
    cfg: &PollConfig,
    clock: &SharedClock,
    json: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let mut fleet = Fleet::new(hosts);
    for ev in poll::poll_once(hosts, cfg, clock) {
        fleet.apply(ev);
    }
    let now = clock.now_unix_ms();
    let rows = view::rows(&fleet, now, SortKey::IdleBurn, true);
    let totals = view::totals(&rows);
    let text = if json {
        json::to_json(&json::document(&rows, &totals, now)).map_err(std::io::Error::other)?
    } else {
        table::render(&rows, &totals)
    };
    out.write_all(text.as_bytes())?;
    out.flush()
}
