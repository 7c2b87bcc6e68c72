//! The spend ledger: an SQLite file (WAL mode) with per-minute rollups, sessions and alert
//! events, so that totals survive restarts and `gpumeter report` can look back.
//!
//! Guarantees: one transaction per minute, so a kill -9 loses at most the last minute and never
//! leaves a half-written one (SQLite's journal); `synchronous = NORMAL` in WAL mode is durable
//! against process death (only a power cut can roll back the last commits). One writer per
//! file: the first instance takes an advisory lock, later ones open the ledger read-only and say
//! so. A file that is not ours or is damaged is renamed aside (`ledger.sqlite.corrupt-<unix>`),
//! never overwritten, and said in one line; the rows of a damaged ledger that are still
//! readable are copied into the new one (`salvage`). Touches only the ledger's own files.

mod apportion;
pub mod lock;
pub mod query;
pub mod recorder;
mod salvage;
pub mod schema;
pub mod session;
pub mod writer;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

pub use lock::LedgerLock;
pub use recorder::{FlushedMinute, Recorder};
pub use schema::{APPLICATION_ID, FileCheck, SCHEMA_VERSION};
pub use session::{SessionKey, SessionStart};

/// Why the ledger cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// No ledger file at this path (nothing was recorded there yet).
    #[error("no ledger at {0} (gpumeter writes one while it runs with pricing configured)")]
    Missing(PathBuf),
    /// The file exists but is not a gpumeter ledger, or is damaged.
    #[error("{path} is not a usable gpumeter ledger: {why}")]
    NotALedger {
        /// The ledger file.
        path: PathBuf,
        /// What was wrong with it.
        why: String,
    },
    /// The file's schema is newer than this build understands.
    #[error("{path} was written by a newer gpumeter (schema {version}); upgrade to use it")]
    Newer {
        /// The ledger file.
        path: PathBuf,
        /// The schema version found in the file (newer than [`SCHEMA_VERSION`]).
        version: i64,
    },
    /// A filesystem error (creating its folder, taking the lock, reading the file).
    #[error("ledger {path}: {message}")]
    Io {
        /// The ledger file.
        path: PathBuf,
        /// The underlying error, as text.
        message: String,
    },
    /// SQLite refused a statement.
    #[error("ledger {path}: {source}")]
    Sql {
        /// The ledger file.
        path: PathBuf,
        /// The SQLite error.
        #[source]
        source: rusqlite::Error,
    },
    /// A write was asked of a ledger opened read-only.
    #[error("the ledger is open read-only (another gpumeter writes it)")]
    ReadOnly,
}

/// Whether this process writes the ledger.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LedgerMode {
    /// This process holds the lock and writes.
    ReadWrite,
    /// Another instance holds the lock: read totals, write nothing.
    ReadOnly,
}

/// An open ledger.
#[derive(Debug)]
pub struct Ledger {
    conn: Connection,
    path: PathBuf,
    mode: LedgerMode,
    _lock: Option<LedgerLock>,
}

const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

impl Ledger {
    /// Opens (or creates) the ledger for a running meter. Takes the writer lock when it is
    /// free, else opens read-only. A foreign or damaged file is set aside (only by the writer).
    /// Returns the ledger and the lines worth telling the user.
    pub fn open(path: &Path, now_unix_ms: i64) -> Result<(Ledger, Vec<String>), LedgerError> {
        let io = |e: std::io::Error| LedgerError::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let mut notes = Vec::new();
        let Some(lock) = LedgerLock::try_acquire(path).map_err(io)? else {
            notes.push(format!(
                "another gpumeter is writing the ledger {}; this one reads it only (live data \
                 is still shown, nothing is counted twice)",
                path.display()
            ));
            if !path.exists() {
                return Err(LedgerError::Missing(path.to_path_buf()));
            }
            return Ok((Ledger::open_read_only(path)?, notes));
        };
        let aside = match Self::inspect(path)? {
            Some(why) => Some((why, set_aside(path, now_unix_ms).map_err(io)?)),
            None => None,
        };
        let sql = |source| LedgerError::Sql {
            path: path.to_path_buf(),
            source,
        };
        let mut conn = Connection::open(path).map_err(sql)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(sql)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(sql)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(sql)?;
        schema::create(&mut conn).map_err(sql)?;
        if let Some((why, aside)) = aside {
            // One line: what was wrong, where the file went, what came back from it.
            let salvaged = salvage::salvage(&aside, &mut conn)
                .map_or_else(String::new, |s| format!("; {}", s.text()));
            notes.push(format!(
                "{} was {why}; moved it to {} and started a new ledger{salvaged}",
                path.display(),
                aside.display()
            ));
        }
        Ok((
            Ledger {
                conn,
                path: path.to_path_buf(),
                mode: LedgerMode::ReadWrite,
                _lock: Some(lock),
            },
            notes,
        ))
    }

    /// Why the file at `path` is not usable as ours (None: ours, or absent/empty).
    fn inspect(path: &Path) -> Result<Option<String>, LedgerError> {
        let head = match read_head(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(LedgerError::Io {
                    path: path.to_path_buf(),
                    message: e.to_string(),
                });
            }
        };
        if head.is_empty() {
            return Ok(None);
        }
        if !head.starts_with(SQLITE_MAGIC) {
            return Ok(Some("not an SQLite database".into()));
        }
        let conn = match Connection::open(path) {
            Ok(c) => c,
            Err(e) => return Ok(Some(format!("unreadable ({e})"))),
        };
        match schema::check(&conn) {
            FileCheck::Ours => Ok(None),
            FileCheck::Foreign(why) => Ok(Some(why)),
            FileCheck::Newer(version) => Err(LedgerError::Newer {
                path: path.to_path_buf(),
                version,
            }),
        }
    }

    /// Opens an existing ledger for reading only (`report`, a second instance). Never changes
    /// the file; a missing, foreign or damaged one is an error.
    pub fn open_read_only(path: &Path) -> Result<Ledger, LedgerError> {
        if !path.exists() {
            return Err(LedgerError::Missing(path.to_path_buf()));
        }
        let not_ours = |why: String| LedgerError::NotALedger {
            path: path.to_path_buf(),
            why,
        };
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| not_ours(e.to_string()))?;
        let _ = conn.busy_timeout(std::time::Duration::from_secs(5));
        match schema::check(&conn) {
            FileCheck::Ours => {}
            FileCheck::Foreign(why) => return Err(not_ours(why)),
            FileCheck::Newer(version) => {
                return Err(LedgerError::Newer {
                    path: path.to_path_buf(),
                    version,
                });
            }
        }
        let has_tables: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name = 'minutes'",
                [],
                |r| r.get(0),
            )
            .map_err(|e| not_ours(e.to_string()))?;
        if has_tables == 0 {
            return Err(not_ours("empty".into()));
        }
        Ok(Ledger {
            conn,
            path: path.to_path_buf(),
            mode: LedgerMode::ReadOnly,
            _lock: None,
        })
    }

    /// Whether this process writes the ledger or only reads it.
    pub fn mode(&self) -> LedgerMode {
        self.mode
    }

    /// The ledger file this was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }

    pub(crate) fn conn_mut(&mut self) -> Result<&mut Connection, LedgerError> {
        match self.mode {
            LedgerMode::ReadWrite => Ok(&mut self.conn),
            LedgerMode::ReadOnly => Err(LedgerError::ReadOnly),
        }
    }

    pub(crate) fn sql_error(&self, source: rusqlite::Error) -> LedgerError {
        LedgerError::Sql {
            path: self.path.clone(),
            source,
        }
    }

    /// `PRAGMA integrity_check` (tests and diagnostics): "ok" when sound.
    pub fn integrity_check(&self) -> Result<String, LedgerError> {
        self.conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .map_err(|e| self.sql_error(e))
    }
}

/// The first 16 bytes of a file (fewer if it is shorter).
fn read_head(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut head = Vec::with_capacity(SQLITE_MAGIC.len());
    std::fs::File::open(path)?
        .take(SQLITE_MAGIC.len() as u64)
        .read_to_end(&mut head)?;
    Ok(head)
}

/// Renames the file (and its -wal/-shm companions) to `<name>.corrupt-<unix seconds>`, adding a
/// counter if that name is taken. Returns the new path.
fn set_aside(path: &Path, now_unix_ms: i64) -> std::io::Result<PathBuf> {
    let base = format!(
        "{}.corrupt-{}",
        path.file_name().unwrap_or_default().to_string_lossy(),
        now_unix_ms.div_euclid(1_000)
    );
    let mut target = path.with_file_name(&base);
    let mut n = 1;
    while target.exists() {
        target = path.with_file_name(format!("{base}.{n}"));
        n += 1;
    }
    std::fs::rename(path, &target)?;
    for suffix in ["-wal", "-shm"] {
        let mut from = path.as_os_str().to_os_string();
        from.push(suffix);
        let from = PathBuf::from(from);
        if from.exists() {
            let mut to = target.as_os_str().to_os_string();
            to.push(suffix);
            std::fs::rename(&from, PathBuf::from(to))?;
        }
    }
    Ok(target)
}
