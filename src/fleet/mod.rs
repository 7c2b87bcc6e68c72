//! `gpumeter fleet --once`: polls every host once and prints the table ([`table`]) or JSON
//! ([`json`]). The fleet's model (hosts, polling, rows, the words of a cell) is the core's
//! [`gpumeter_core::fleet`]; the fleet screen is one of the dashboard's screens, not this room.
//!
//! May touch: the core's fleet model, units. Never: the engine's state, the ledger, notify,
//! the dashboard.

pub mod json;
pub mod table;

use std::io::Write;

use gpumeter_core::clock::SharedClock;
use gpumeter_core::fleet::hosts::Host;
use gpumeter_core::fleet::poll::{self, PollConfig};
use gpumeter_core::fleet::view::{self, Fleet, SortKey};

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
