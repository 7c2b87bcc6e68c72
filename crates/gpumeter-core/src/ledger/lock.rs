//! One writer per ledger: an exclusive advisory lock (`flock`) on `<ledger>.lock` beside the
//! file. The kernel drops it when the process dies, kill -9 included, so there is no stale lock
//! to clean up.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustix::fs::{FlockOperation, flock};

/// How long a lock that looks taken is retried before the ledger is opened read-only.
pub const SETTLE: Duration = Duration::from_millis(200);

/// A held lock; released when dropped (or when the process exits).
#[derive(Debug)]
pub struct LedgerLock {
    _file: File,
    path: PathBuf,
}

impl LedgerLock {
    /// The lock file for a ledger: `ledger.sqlite.lock`.
    pub fn path_for(ledger: &Path) -> PathBuf {
        let mut name = ledger.file_name().unwrap_or_default().to_os_string();
        name.push(".lock");
        ledger.with_file_name(name)
    }

    /// Takes the lock, waiting at most [`SETTLE`]: `Ok(None)` when another process holds it.
    ///
    /// Why wait at all: a flock belongs to the open file description, and a child this process
    /// is spawning (a hook, a test's helper) holds a copy of every descriptor between its fork
    /// and its exec, close-on-exec ones included. A lock this process just let go can look
    /// taken for that instant; a real second instance holds it far longer than [`SETTLE`].
    pub fn try_acquire(ledger: &Path) -> io::Result<Option<LedgerLock>> {
        let path = Self::path_for(ledger);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)?;
        let deadline = Instant::now() + SETTLE;
        loop {
            match flock(&file, FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => return Ok(Some(LedgerLock { _file: file, path })),
                Err(e) if e == rustix::io::Errno::WOULDBLOCK => {
                    if Instant::now() >= deadline {
                        return Ok(None);
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// The lock file held (`<ledger>.lock`).
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = dir.path().join("ledger.sqlite");
        let first = LedgerLock::try_acquire(&ledger).unwrap().unwrap();
        assert_eq!(first.path(), dir.path().join("ledger.sqlite.lock"));
        // flock locks belong to the open file description: a second open is a second holder.
        assert!(LedgerLock::try_acquire(&ledger).unwrap().is_none());
        drop(first);
        assert!(LedgerLock::try_acquire(&ledger).unwrap().is_some());
    }

    #[test]
    fn a_lock_held_only_by_a_spawning_child_is_waited_for() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = dir.path().join("ledger.sqlite");
        let first = LedgerLock::try_acquire(&ledger).unwrap().unwrap();
        // A dup of the descriptor stands in for a child between fork and exec: it keeps the
        // lock's open file description alive after the holder lets go, for less than SETTLE.
        let inherited = first._file.try_clone().unwrap();
        drop(first);
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(SETTLE / 4);
            drop(inherited);
        });
        assert!(LedgerLock::try_acquire(&ledger).unwrap().is_some());
        releaser.join().unwrap();
    }
}
