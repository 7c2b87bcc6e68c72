//! Facts about the machine: hostname (`<proc>/sys/kernel/hostname`, else `<etc>/hostname`),
//! uptime (`<proc>/uptime`) and memory (`<proc>/meminfo`, see `memory`), from files kept open
//! between ticks (see `kept`). The hostname and the uptime are read every [`REREAD_MS`] (they
//! change rarely, or steadily: the uptime in between is counted on with the tick clock);
//! memory every tick.

use std::path::Path;

use procfs::Uptime;
use procfs::prelude::*;

use super::Roots;
use super::kept::KeptFile;
use super::memory::{self, Memory};
use crate::sanitize::{MAX_NAME_CHARS, sanitize_bytes};

/// Longest hostname file read; real ones are at most 64 bytes.
const MAX_HOSTNAME_BYTES: u64 = 1024;

/// Longest time a hostname or uptime read stands for.
pub(super) const REREAD_MS: i64 = 60_000;

/// The machine-wide files, kept open, the buffer they are read into and the last reads of
/// the slow ones.
#[derive(Debug)]
pub(super) struct SystemFiles {
    hostname: KeptFile,
    etc_hostname: std::path::PathBuf,
    uptime: KeptFile,
    meminfo: KeptFile,
    buf: Vec<u8>,
    /// When the hostname was last read, and what it gave.
    hostname_read: Option<(i64, Option<String>)>,
    /// When the uptime was last read, and what it gave (in ms).
    uptime_read: Option<(i64, u64)>,
}

/// Whether a read at `at_ms` still stands at `now_ms` (a clock that stepped back: no).
fn stands(now_ms: i64, at_ms: i64) -> bool {
    now_ms >= at_ms && now_ms - at_ms < REREAD_MS
}

impl SystemFiles {
    pub(super) fn new(roots: &Roots) -> Self {
        Self {
            hostname: KeptFile::new(roots.proc.join("sys/kernel/hostname")),
            etc_hostname: roots.etc.join("hostname"),
            uptime: KeptFile::new(roots.proc.join("uptime")),
            meminfo: KeptFile::new(roots.proc.join("meminfo")),
            buf: Vec::with_capacity(2048),
            hostname_read: None,
            uptime_read: None,
        }
    }

    /// The hostname, sanitized; `None` when neither file gives a non-empty one.
    pub(super) fn hostname(&mut self, now_ms: i64) -> Option<String> {
        if let Some((at, name)) = &self.hostname_read
            && stands(now_ms, *at)
        {
            return name.clone();
        }
        let name = self.read_hostname();
        self.hostname_read = Some((now_ms, name.clone()));
        name
    }

    fn read_hostname(&mut self) -> Option<String> {
        if self.hostname.read_into(&mut self.buf).is_ok() {
            let cut = self.buf.len().min(MAX_HOSTNAME_BYTES as usize);
            let name = sanitize_bytes(&self.buf[..cut], MAX_NAME_CHARS);
            if !name.is_empty() {
                return Some(name);
            }
        }
        read_capped(&self.etc_hostname, MAX_HOSTNAME_BYTES)
            .ok()
            .map(|raw| sanitize_bytes(&raw, MAX_NAME_CHARS))
            .filter(|h| !h.is_empty())
    }

    /// Whole seconds since boot (a failed read is tried again at the next tick).
    pub(super) fn uptime_s(&mut self, now_ms: i64) -> Option<u64> {
        let up_ms = match self.uptime_read {
            Some((at, up_ms)) if stands(now_ms, at) => up_ms.saturating_add((now_ms - at) as u64),
            _ => {
                let up_ms = self.read_uptime_ms()?;
                self.uptime_read = Some((now_ms, up_ms));
                up_ms
            }
        };
        Some(up_ms / 1000)
    }

    fn read_uptime_ms(&mut self) -> Option<u64> {
        self.uptime.read_into(&mut self.buf).ok()?;
        Uptime::from_read(self.buf.as_slice())
            .ok()
            .filter(|u| u.uptime.is_finite() && u.uptime >= 0.0)
            .map(|u| (u.uptime * 1000.0) as u64)
    }

    /// Host memory totals.
    pub(super) fn memory(&mut self) -> procfs::ProcResult<Memory> {
        memory::read(&mut self.meminfo, &mut self.buf)
    }
}

/// At most `limit` bytes of a file: /proc files can be huge (cmdline) or endless.
pub(super) fn read_capped(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let mut buf = Vec::new();
    file.take(limit).read_to_end(&mut buf)?;
    Ok(buf)
}
