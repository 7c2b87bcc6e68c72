//! Listing the process entries of /proc: all of them, or only those born since the last
//! listing.
//!
//! Listing /proc costs the kernel about a microsecond per process (1 ms a listing on a host of
//! a thousand processes), though only the processes born since the last listing are news.
//! Pids are handed out in turn, wrapping at `pid_max`, and `loadavg` names the last one given
//! (in the reader's pid namespace). A procfs lists processes in ascending pid order, each at
//! a directory position that is its pid plus a fixed base, and a directory can be sought to a
//! position. So a listing after a whole one reads only the pids given out since: none at all
//! when `loadavg` names the same pid, else the range up to the pid it names (two ranges when
//! the pids wrapped). A resumed listing does not see the processes that exited: the caller
//! lists the whole of /proc every so often.
//!
//! The base is learnt, not assumed: a whole listing gives each entry's position (the cookie
//! of the entry before it), and only a listing in pid order, every process at its pid plus
//! one and the same base, of a procfs of this process's own pid namespace (its `self` is this
//! process) allows a resumed one, with a `loadavg` of that procfs (not one a container's FUSE
//! view, lxcfs, mounts over it); a resumed listing out of order ends that. Anything else (a
//! test fixture, another kernel's /proc) is always listed whole.
//!
//! Touches nothing but the directory it is given.

use std::fs::File;
use std::io;
use std::path::PathBuf;

use rustix::fd::OwnedFd;
use rustix::fs::{Mode, OFlags, RawDir, SeekFrom};

use super::kept::pread_into;

/// getdents' buffer: a few hundred entries a call (glibc uses the same size).
const BUF_BYTES: usize = 32 * 1024;

/// A /proc directory, kept open between listings.
#[derive(Debug)]
pub(super) struct ProcDir {
    path: PathBuf,
    fd: Option<OwnedFd>,
    loadavg: Option<File>,
    /// A process entry's position less its pid, when a listing may resume (see the module doc).
    base: Option<u64>,
    /// The last pid given out before the last listing began.
    last_pid: Option<u32>,
    buf: Vec<u8>,
    text: Vec<u8>,
}

/// What a listing was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Listed {
    /// Every process.
    Whole,
    /// The processes born since the last listing (still there), perhaps none.
    Born,
}

impl ProcDir {
    pub(super) fn new(path: PathBuf) -> Self {
        Self {
            path,
            fd: None,
            loadavg: None,
            base: None,
            last_pid: None,
            buf: Vec::new(),
            text: Vec::new(),
        }
    }

    /// The process entries, `(pid, inode number)`, into `out` (emptied first): those born
    /// since the last listing when `resume` and the directory allows it, else all.
    pub(super) fn list(&mut self, resume: bool, out: &mut Vec<(u32, u64)>) -> io::Result<Listed> {
        out.clear();
        let fd = match self.fd.take() {
            Some(fd) => fd,
            None => self.open()?,
        };
        let listed = self.list_in(&fd, resume, out);
        self.fd = Some(fd);
        listed
    }

    fn list_in(
        &mut self,
        fd: &OwnedFd,
        resume: bool,
        out: &mut Vec<(u32, u64)>,
    ) -> io::Result<Listed> {
        let now = self.last_pid();
        if let (true, Some(base), Some(before), Some(now)) = (resume, self.base, self.last_pid, now)
        {
            let mut ranges = [(before.saturating_add(1), now), (1, 0)];
            if now < before {
                // Wrapped: the pids above the last one, then from the lowest.
                ranges = [(before.saturating_add(1), u32::MAX), (1, now)];
            }
            for (from, to) in ranges {
                if from <= to
                    && self.base.is_some()
                    && self.range(fd, base, (from, to), out).is_err()
                {
                    // A position this directory refuses: list it whole (and learn again).
                    self.base = None;
                }
            }
            if self.base.is_some() {
                self.last_pid = Some(now);
                return Ok(Listed::Born);
            }
            // Out of order, or refused: what was skipped may be anywhere.
            out.clear();
        }
        self.last_pid = now;
        self.whole(fd, out)?;
        Ok(Listed::Whole)
    }

    /// Whether `loadavg`'s last pid names this procfs's own pids (as a resumed listing needs:
    /// see the module doc), so that the same pid at two ticks means no process was born.
    pub(super) fn names_own_pids(&self) -> bool {
        self.base.is_some() && self.loadavg.is_some()
    }

    /// The directory, opened on first use, with its `loadavg`.
    fn open(&mut self) -> io::Result<OwnedFd> {
        let fd = rustix::fs::open(
            &self.path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        // Only procfs's own `loadavg` names the last pid: one overmounted by a container's
        // FUSE view (lxcfs) may not, and then every listing is whole.
        self.loadavg = File::open(self.path.join("loadavg"))
            .ok()
            .filter(|f| is_procfs(f));
        Ok(fd)
    }

    /// Whether this directory is a procfs of this process's pid namespace.
    fn own_procfs(&self, fd: &OwnedFd) -> bool {
        is_procfs(fd)
            && std::fs::read_link(self.path.join("self"))
                .ok()
                .and_then(|l| l.to_str().and_then(|s| s.parse::<u32>().ok()))
                == Some(std::process::id())
    }

    /// The last pid given out, from `loadavg`'s last field (`None`: unreadable).
    fn last_pid(&mut self) -> Option<u32> {
        let file = self.loadavg.as_ref()?;
        pread_into(file, &mut self.text).ok()?;
        let text = std::str::from_utf8(&self.text).ok()?;
        text.split_ascii_whitespace().last()?.parse().ok()
    }

    /// Every process entry, learning the base from their positions.
    fn whole(&mut self, fd: &OwnedFd, out: &mut Vec<(u32, u64)>) -> io::Result<()> {
        let mut base: Option<Option<u64>> = None;
        let mut last = None;
        self.read(fd, 0, |at, pid, ino| {
            let here = at.checked_sub(u64::from(pid));
            let fits = last.is_none_or(|l| pid > l) && base.is_none_or(|b| b == here);
            base = Some(if fits { here } else { None });
            last = Some(pid);
            out.push((pid, ino));
            true
        })?;
        let base = base.flatten();
        self.base = base.filter(|_| self.own_procfs(fd));
        Ok(())
    }

    /// The process entries with pids in `from..=to`, from the position of `from` on.
    fn range(
        &mut self,
        fd: &OwnedFd,
        base: u64,
        (from, to): (u32, u32),
        out: &mut Vec<(u32, u64)>,
    ) -> io::Result<()> {
        let mut last = None;
        let mut in_order = true;
        let start = base.saturating_add(u64::from(from));
        self.read(fd, start, |_, pid, ino| {
            if pid < from || last.is_some_and(|l| pid <= l) {
                in_order = false;
                return false;
            }
            last = Some(pid);
            if pid > to {
                return false;
            }
            out.push((pid, ino));
            true
        })?;
        if !in_order {
            self.base = None;
        }
        Ok(())
    }

    /// Reads entries from position `start`, giving each process entry's position,
    /// pid and inode number to `each` until it says stop (false) or the directory ends.
    fn read(
        &mut self,
        fd: &OwnedFd,
        start: u64,
        mut each: impl FnMut(u64, u32, u64) -> bool,
    ) -> io::Result<()> {
        if self.buf.capacity() < BUF_BYTES {
            self.buf.reserve_exact(BUF_BYTES);
        }
        let mut at = rustix::fs::seek(fd, SeekFrom::Start(start))?;
        let mut dir = RawDir::new(fd, self.buf.spare_capacity_mut());
        while let Some(entry) = dir.next() {
            let entry = entry?;
            if let Some(pid) = pid_of(entry.file_name().to_bytes())
                && !each(at, pid, entry.ino())
            {
                break;
            }
            at = entry.next_entry_cookie();
        }
        Ok(())
    }
}

/// Whether `fd` is on a procfs.
fn is_procfs(fd: impl rustix::fd::AsFd) -> bool {
    rustix::fs::fstatfs(fd).is_ok_and(|fs| fs.f_type == rustix::fs::PROC_SUPER_MAGIC)
}

/// A process entry's pid: a name of decimal digits (the others are `self`, `sys`, …).
fn pid_of(name: &[u8]) -> Option<u32> {
    if name.is_empty() || !name.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(name).ok()?.parse().ok()
}

#[cfg(test)]
mod tests;
