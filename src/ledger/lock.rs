//! One writer per ledger: an exclusive advisory lock (`flock`) on `<ledger>.lock` beside the
//! file. The kernel drops it when the process dies, kill -9 included, so there is no stale lock
//! to clean up.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use rustix::fs::{FlockOperation, flock};

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

    /// Takes the lock without waiting: `Ok(None)` when another process holds it.
    pub fn try_acquire(ledger: &Path) -> io::Result<Option<LedgerLock>> {
        let path = Self::path_for(ledger);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)?;
        match flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Ok(Some(LedgerLock { _file: file, path })),
            Err(e) if e == rustix::io::Errno::WOULDBLOCK => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

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
}
