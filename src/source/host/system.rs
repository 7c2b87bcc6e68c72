//! Facts about the machine: hostname (`<proc>/sys/kernel/hostname`, else `<etc>/hostname`),
//! uptime (`<proc>/uptime`) and memory (`<proc>/meminfo`, see `memory`), from files kept open
//! between ticks (see `kept`).

use std::path::Path;

use procfs::Uptime;
use procfs::prelude::*;

use super::Roots;
use super::kept::KeptFile;
use super::memory::{self, Memory};
use crate::sanitize::{MAX_NAME_CHARS, sanitize_bytes};

/// Longest hostname file read; real ones are at most 64 bytes.
const MAX_HOSTNAME_BYTES: u64 = 1024;

/// The machine-wide files read every tick, kept open, and the buffer they are read into.
#[derive(Debug)]
pub(super) struct SystemFiles {
    hostname: KeptFile,
    etc_hostname: std::path::PathBuf,
    uptime: KeptFile,
    meminfo: KeptFile,
    buf: Vec<u8>,
}

impl SystemFiles {
    pub(super) fn new(roots: &Roots) -> Self {
        Self {
            hostname: KeptFile::new(roots.proc.join("sys/kernel/hostname")),
            etc_hostname: roots.etc.join("hostname"),
            uptime: KeptFile::new(roots.proc.join("uptime")),
            meminfo: KeptFile::new(roots.proc.join("meminfo")),
            buf: Vec::with_capacity(2048),
        }
    }

    /// The hostname, sanitized; `None` when neither file gives a non-empty one.
    pub(super) fn hostname(&mut self) -> Option<String> {
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

    /// Whole seconds since boot.
    pub(super) fn uptime_s(&mut self) -> Option<u64> {
        self.uptime.read_into(&mut self.buf).ok()?;
        Uptime::from_read(self.buf.as_slice())
            .ok()
            .filter(|u| u.uptime.is_finite() && u.uptime >= 0.0)
            .map(|u| u.uptime as u64)
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
