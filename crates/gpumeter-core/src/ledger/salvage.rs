//! Salvage from a damaged ledger: a few bad pages must not cost the whole bill history. When
//! the file set aside was ours (our application id and schema) but failed SQLite's check, the
//! rows still readable are copied into the new ledger: each table is read in key order until
//! a damaged page stops the scan, and again from the other end, so rows on both sides of the
//! damage come back (a row read twice is kept once). Reads only the file set aside (read-only)
//! and writes only the new ledger, in one transaction.

use std::path::Path;

use rusqlite::types::Value;
use rusqlite::{Connection, OpenFlags};

use super::schema::{APPLICATION_ID, SCHEMA_VERSION};

/// The tables, each with the key it is scanned by, parents first (minutes name a session).
const TABLES: [(&str, &str); 4] = [
    ("sessions", "id"),
    ("minutes", "session_id, minute"),
    ("gpu_minutes", "session_id, minute, gpu"),
    ("alerts", "id"),
];

/// What was copied.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Salvaged {
    pub sessions: usize,
    pub minutes: usize,
    /// Whether some scan stopped at damage (rows between the two ends may be lost).
    pub stopped_at_damage: bool,
}

impl Salvaged {
    /// "copied in what was still readable: 121 minute(s) of 2 session(s)", or that nothing was.
    pub(crate) fn text(&self) -> String {
        if self.minutes == 0 && self.sessions == 0 {
            return "nothing in it was readable".into();
        }
        let lost = if self.stopped_at_damage {
            " (rows on the damaged pages are lost)"
        } else {
            ""
        };
        format!(
            "copied in what was still readable: {} minute(s) of {} session(s){lost}",
            self.minutes, self.sessions
        )
    }
}

/// Copies the readable rows of `damaged` into `into` (a new, empty ledger). `None` when the
/// file is not a ledger of this schema or cannot be opened: nothing to salvage.
pub(super) fn salvage(damaged: &Path, into: &mut Connection) -> Option<Salvaged> {
    let from = Connection::open_with_flags(damaged, OpenFlags::SQLITE_OPEN_READ_ONLY).ok()?;
    let pragma = |name: &str| from.pragma_query_value(None, name, |r| r.get::<_, i64>(0));
    if pragma("application_id").ok()? != APPLICATION_ID
        || pragma("user_version").ok()? != SCHEMA_VERSION
    {
        return None;
    }
    let tx = into.transaction().ok()?;
    let mut out = Salvaged::default();
    for (table, key) in TABLES {
        for order in ["ASC", "DESC"] {
            let complete = copy(&from, &tx, table, key, order);
            out.stopped_at_damage |= !complete;
            if complete {
                break;
            }
        }
        match table {
            "sessions" => out.sessions = count(&tx, table),
            "minutes" => out.minutes = count(&tx, table),
            _ => {}
        }
    }
    tx.commit().ok()?;
    Some(out)
}

/// Rows of `table` in `order` of `key` into `to` until the scan fails; whether it reached its
/// end.
fn copy(from: &Connection, to: &Connection, table: &str, key: &str, order: &str) -> bool {
    let keys: Vec<String> = key.split(", ").map(|k| format!("{k} {order}")).collect();
    let Ok(mut stmt) = from.prepare(&format!(
        "SELECT * FROM {table} ORDER BY {}",
        keys.join(", ")
    )) else {
        return false;
    };
    let columns = stmt.column_count();
    let marks = vec!["?"; columns].join(", ");
    let Ok(mut insert) = to.prepare(&format!("INSERT OR IGNORE INTO {table} VALUES ({marks})"))
    else {
        return false;
    };
    let Ok(mut rows) = stmt.query([]) else {
        return false;
    };
    loop {
        match rows.next() {
            Ok(Some(row)) => {
                let values: Vec<Value> = (0..columns)
                    .map(|i| row.get::<_, Value>(i).unwrap_or(Value::Null))
                    .collect();
                // A row the new schema refuses is one row lost, not the salvage.
                let _ = insert.execute(rusqlite::params_from_iter(values));
            }
            Ok(None) => return true,
            Err(_) => return false,
        }
    }
}

fn count(conn: &Connection, table: &str) -> usize {
    conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| {
        r.get::<_, i64>(0)
    })
    .map_or(0, |n| usize::try_from(n).unwrap_or(0))
}
