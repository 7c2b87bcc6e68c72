//! Host memory from `<proc>/meminfo`: total and used, where used means "not available to new
//! work" (total − MemAvailable), the figure `free` and htop show, so page cache does not read
//! as pressure.
//!
//! Parsed here, not with procfs' `Meminfo`: that builds a map of all ~55 lines (a `String`
//! each, through `io::Lines`) every tick to use five of them.

use procfs::{ProcError, ProcResult};

use super::kept::KeptFile;

/// Memory totals in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Memory {
    pub(super) total_bytes: Option<u64>,
    pub(super) used_bytes: Option<u64>,
}

/// Reads `<proc>/meminfo` (kept open).
pub(super) fn read(file: &mut KeptFile, buf: &mut Vec<u8>) -> ProcResult<Memory> {
    file.read_into(buf)
        .map_err(|e| ProcError::Io(e, Some(file.path().to_path_buf())))?;
    parse(buf).ok_or_else(|| ProcError::Incomplete(Some(file.path().to_path_buf())))
}

/// One bit per line this reads: all five seen, the rest of the file is not looked at.
const ALL_SEEN: u8 = 0b1_1111;

/// The totals from meminfo's text; `None` without a `MemTotal` line.
fn parse(text: &[u8]) -> Option<Memory> {
    let (mut total, mut free, mut available, mut buffers, mut cached) =
        (None, None, None, None, None);
    let mut seen = 0u8;
    for line in text.split(|&b| b == b'\n') {
        // The five lead the file on kernels that have them all: the other ~50 lines (most
        // of the parse's cost) are then skipped.
        if seen == ALL_SEEN {
            break;
        }
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            continue;
        };
        let (slot, bit) = match &line[..colon] {
            b"MemTotal" => (&mut total, 1),
            b"MemFree" => (&mut free, 2),
            b"MemAvailable" => (&mut available, 4),
            b"Buffers" => (&mut buffers, 8),
            b"Cached" => (&mut cached, 16),
            _ => continue,
        };
        seen |= bit;
        *slot = kib_bytes(&line[colon + 1..]);
    }
    let total: u64 = total?;
    // Kernels before 3.14 lack MemAvailable: approximate it the way `free` used to.
    let available = available.unwrap_or_else(|| {
        free.unwrap_or(0)
            .saturating_add(buffers.unwrap_or(0))
            .saturating_add(cached.unwrap_or(0))
    });
    Some(Memory {
        total_bytes: Some(total).filter(|&t| t > 0),
        used_bytes: Some(total.saturating_sub(available)).filter(|_| total > 0),
    })
}

/// `   16384 kB` in bytes (a value without the unit is taken as it is).
fn kib_bytes(field: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(field).ok()?.trim();
    match text.strip_suffix("kB") {
        Some(kib) => kib.trim_end().parse::<u64>().ok()?.checked_mul(1024),
        None => text.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::host::fixture::meminfo_text;

    #[test]
    fn used_is_total_minus_available() {
        let mem = parse(meminfo_text(16_000_000, 10_000_000).as_bytes()).unwrap();
        assert_eq!(mem.total_bytes, Some(16_000_000 * 1024));
        assert_eq!(mem.used_bytes, Some(6_000_000 * 1024));
    }

    #[test]
    fn old_kernels_without_mem_available_fall_back_to_free_buffers_cached() {
        let text: String = meminfo_text(1000, 0)
            .lines()
            .filter(|l| !l.starts_with("MemAvailable"))
            .map(|l| format!("{l}\n"))
            .collect();
        // fixture: MemFree 100, Buffers 10, Cached 90.
        assert_eq!(parse(text.as_bytes()).unwrap().used_bytes, Some(800 * 1024));
    }

    #[test]
    fn no_total_is_no_reading_and_junk_lines_are_skipped() {
        assert_eq!(parse(b"MemFree: 100 kB\n"), None);
        let mem = parse(b"garbage\nMemTotal:  2048 kB\nMemAvailable: x kB\n:\n").unwrap();
        // An unreadable MemAvailable is treated as missing (free + buffers + cached: 0).
        assert_eq!(mem.total_bytes, Some(2048 * 1024));
        assert_eq!(mem.used_bytes, Some(2048 * 1024));
    }

    #[test]
    fn lines_after_the_five_are_not_looked_at() {
        let text = b"MemTotal: 2048 kB\nMemFree: 1 kB\nMemAvailable: 1024 kB\nBuffers: 0 kB\n\
                     Cached: 0 kB\nMemTotal: 9 kB\n";
        let mem = parse(text).unwrap();
        assert_eq!(mem.total_bytes, Some(2048 * 1024));
        assert_eq!(mem.used_bytes, Some(1024 * 1024));
        // Without one of the five, the whole file is read (a later line still counts).
        let mem = parse(b"MemTotal: 2048 kB\nMemFree: 1 kB\nMemTotal: 4096 kB\n").unwrap();
        assert_eq!(mem.total_bytes, Some(4096 * 1024));
    }

    /// The same answer as procfs' parser on this machine's meminfo (one read, both parses).
    #[test]
    fn the_same_answer_as_procfs_on_this_machine() {
        use procfs::FromRead;
        let Ok(text) = std::fs::read("/proc/meminfo") else {
            eprintln!("skipped: no /proc/meminfo here");
            return;
        };
        let m = procfs::Meminfo::from_read(text.as_slice()).unwrap();
        let available = m
            .mem_available
            .unwrap_or_else(|| m.mem_free + m.buffers + m.cached);
        let ours = parse(&text).unwrap();
        assert_eq!(ours.total_bytes, Some(m.mem_total));
        assert_eq!(ours.used_bytes, Some(m.mem_total - available));
    }
}
