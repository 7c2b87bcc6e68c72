//! Host memory from `<proc>/meminfo`: total and used, where used means "not available to new
//! work" (total − MemAvailable), the figure `free` and htop show, so page cache does not read
//! as pressure.

use procfs::prelude::*;
use procfs::{Meminfo, ProcError, ProcResult};

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
    Meminfo::from_read(buf.as_slice()).map(|m| from_meminfo(&m))
}

fn from_meminfo(m: &Meminfo) -> Memory {
    // Kernels before 3.14 lack MemAvailable: approximate it the way `free` used to.
    let available = m.mem_available.unwrap_or_else(|| {
        m.mem_free
            .saturating_add(m.buffers)
            .saturating_add(m.cached)
    });
    Memory {
        total_bytes: Some(m.mem_total).filter(|&t| t > 0),
        used_bytes: Some(m.mem_total.saturating_sub(available)).filter(|_| m.mem_total > 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::host::fixture::meminfo_text;

    #[test]
    fn used_is_total_minus_available() {
        let m = Meminfo::from_read(meminfo_text(16_000_000, 10_000_000).as_bytes()).unwrap();
        let mem = from_meminfo(&m);
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
        let m = Meminfo::from_read(text.as_bytes()).unwrap();
        // fixture: MemFree 100, Buffers 10, Cached 90.
        assert_eq!(from_meminfo(&m).used_bytes, Some(800 * 1024));
    }
}
