//! Facts about the machine: hostname (`<proc>/sys/kernel/hostname`, else `<etc>/hostname`) and
//! uptime (`<proc>/uptime`).

use std::path::Path;

use procfs::Uptime;
use procfs::prelude::*;

use super::Roots;
use crate::sanitize::{MAX_NAME_CHARS, sanitize_bytes};

/// Longest hostname file read; real ones are at most 64 bytes.
const MAX_HOSTNAME_BYTES: u64 = 1024;

/// The hostname, sanitized; `None` when neither file gives a non-empty one.
pub(super) fn hostname(roots: &Roots) -> Option<String> {
    [
        roots.proc.join("sys/kernel/hostname"),
        roots.etc.join("hostname"),
    ]
    .iter()
    .filter_map(|p| read_capped(p, MAX_HOSTNAME_BYTES).ok())
    .map(|raw| sanitize_bytes(&raw, MAX_NAME_CHARS))
    .find(|h| !h.is_empty())
}

/// Whole seconds since boot.
pub(super) fn uptime_s(proc: &Path) -> Option<u64> {
    Uptime::from_file(proc.join("uptime"))
        .ok()
        .filter(|u| u.uptime.is_finite() && u.uptime >= 0.0)
        .map(|u| u.uptime as u64)
}

/// At most `limit` bytes of a file: /proc files can be huge (cmdline) or endless.
pub(super) fn read_capped(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let mut buf = Vec::new();
    file.take(limit).read_to_end(&mut buf)?;
    Ok(buf)
}
