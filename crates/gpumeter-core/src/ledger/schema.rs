//! The ledger's tables, its identity (`application_id`) and version (`user_version`), and the
//! checks that tell our file from a foreign or damaged one.

use rusqlite::Connection;

/// `PRAGMA application_id`: "GPMT".
pub const APPLICATION_ID: i64 = 0x4750_4D54;
/// `PRAGMA user_version` of this schema.
pub const SCHEMA_VERSION: i64 = 1;

/// What a file turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileCheck {
    /// A gpumeter ledger of this version (or an empty new database).
    Ours,
    /// Not ours or damaged: the reason, for the message.
    Foreign(String),
    /// A ledger from a newer gpumeter: leave it alone.
    Newer(i64),
}

const DDL: &str = "
CREATE TABLE IF NOT EXISTS sessions (
    id INTEGER PRIMARY KEY,
    host TEXT NOT NULL,
    source TEXT NOT NULL,
    clock_start_ms INTEGER NOT NULL,
    effective_start_ms INTEGER NOT NULL,
    pricing TEXT NOT NULL,
    currency TEXT NOT NULL,
    first_seen_ms INTEGER NOT NULL,
    last_ms INTEGER NOT NULL,
    max_gpus INTEGER NOT NULL DEFAULT 0,
    UNIQUE (host, source, clock_start_ms, pricing)
);
CREATE TABLE IF NOT EXISTS minutes (
    session_id INTEGER NOT NULL REFERENCES sessions(id),
    minute INTEGER NOT NULL,
    paid_ms INTEGER NOT NULL,
    observed_ms INTEGER NOT NULL,
    gpu_ms INTEGER NOT NULL,
    busy_gpu_ms INTEGER NOT NULL,
    idle_ms INTEGER NOT NULL,
    spend_micros INTEGER NOT NULL,
    idle_cost_micros INTEGER NOT NULL,
    energy_mj INTEGER,
    egress_bytes INTEGER NOT NULL,
    PRIMARY KEY (session_id, minute)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS gpu_minutes (
    session_id INTEGER NOT NULL REFERENCES sessions(id),
    minute INTEGER NOT NULL,
    gpu INTEGER NOT NULL,
    busy_ms INTEGER NOT NULL,
    idle_ms INTEGER NOT NULL,
    util_pct_ms INTEGER NOT NULL,
    util_known_ms INTEGER NOT NULL,
    energy_mj INTEGER,
    PRIMARY KEY (session_id, minute, gpu)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS alerts (
    id INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL REFERENCES sessions(id),
    at_ms INTEGER NOT NULL,
    kind TEXT NOT NULL,
    threshold_pct INTEGER,
    period_key TEXT,
    spent_micros INTEGER,
    budget_micros INTEGER,
    message TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS minutes_by_time ON minutes(minute);
";

/// Creates the tables in a new file and stamps it as ours.
pub fn create(conn: &mut Connection) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    tx.execute_batch(DDL)?;
    tx.pragma_update(None, "application_id", APPLICATION_ID)?;
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    tx.commit()
}

/// Is this database ours, someone else's, damaged, or newer?
pub fn check(conn: &Connection) -> FileCheck {
    let pragma = |name: &str| conn.pragma_query_value(None, name, |r| r.get::<_, i64>(0));
    let (app, version) = match (pragma("application_id"), pragma("user_version")) {
        (Ok(a), Ok(v)) => (a, v),
        (Err(e), _) | (_, Err(e)) => return FileCheck::Foreign(format!("unreadable: {e}")),
    };
    if app == 0 {
        let tables: rusqlite::Result<i64> =
            conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0));
        return match tables {
            Ok(0) => FileCheck::Ours,
            Ok(_) => FileCheck::Foreign("an SQLite database of another program".into()),
            Err(e) => FileCheck::Foreign(format!("unreadable: {e}")),
        };
    }
    if app != APPLICATION_ID {
        return FileCheck::Foreign(format!(
            "an SQLite database of another program (application_id {app:#x})"
        ));
    }
    if version > SCHEMA_VERSION {
        return FileCheck::Newer(version);
    }
    match quick_check(conn) {
        Ok(problems) if problems.is_empty() => FileCheck::Ours,
        Ok(problems) => {
            // SQLite lists each damaged page on lines of its own (up to a hundred): the user
            // gets how many and the first, on one line.
            let first = crate::units::truncate(&problems[0], 80);
            let more = match problems.len() {
                1 => String::new(),
                n => format!(" and {} more", n - 1),
            };
            FileCheck::Foreign(format!("damaged (SQLite's check: {first}{more})"))
        }
        Err(e) => FileCheck::Foreign(format!("damaged ({e})")),
    }
}

/// The problems `PRAGMA quick_check` lists, one per line; empty when the file is sound.
fn quick_check(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare("PRAGMA quick_check")?;
    let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
    let mut problems = Vec::new();
    for row in rows {
        let row = row?;
        problems.extend(
            row.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && *l != "ok" && !l.starts_with("***"))
                .map(str::to_string),
        );
    }
    Ok(problems)
}
