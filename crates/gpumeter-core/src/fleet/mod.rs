//! The fleet's model: several `gpumeter serve` instances read through their
//! `/api/v1/snapshot` documents, shared by the two fleet front-ends (the fleet screen in the
//! dashboard and `fleet --once`). Rooms: [`hosts`] (the addresses and tokens, from the
//! command line and a hosts file), [`poll`] (HTTP requests with timeouts, concurrency cap and
//! backoff, on threads of their own), [`view`] (the fleet's state, its rows and totals: pure),
//! [`cells`] (the words of a row).
//!
//! May touch: the model, money, clock, units, sanitize, the idle rule's thresholds, the
//! endpoint's tokens. Never: the engine's state, the ledger, notify, a terminal.

pub mod cells;
pub mod hosts;
pub mod poll;
pub mod view;
