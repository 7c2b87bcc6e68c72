//! The names of the GPU processes' parents: whether a run was started by hand (its parent a
//! shell or a terminal multiplexer, so its exit is its end) or by a launcher (torchrun, a
//! sweep agent, whose next trial may follow). The scan reads only the GPU processes and their
//! descendants; a parent is one more small file, `/proc/<ppid>/comm`, read when first asked for
//! and again after [`REFRESH_MS`] (an `exec` renames a process), kept only while a GPU process
//! still names it.
//!
//! Touches `/proc/<pid>/comm` and nothing else.

use std::path::Path;

use foldhash::{HashMap, HashMapExt};
use gpumeter_model::SharedStr;

use crate::sanitize::{MAX_NAME_CHARS, sanitize_bytes};

/// A parent's name is read again after this long.
pub(super) const REFRESH_MS: i64 = 30_000;

/// Parents' names by pid, with when each was read and whether this tick asked for it.
#[derive(Debug, Default)]
pub(super) struct ParentNames {
    names: HashMap<u32, (Option<SharedStr>, i64, bool)>,
}

impl ParentNames {
    pub(super) fn new() -> Self {
        Self {
            names: HashMap::new(),
        }
    }

    /// The name of `ppid` (`None`: init, the kernel, gone or unreadable).
    pub(super) fn name(&mut self, proc: &Path, ppid: u32, now_ms: i64) -> Option<SharedStr> {
        if ppid <= 1 {
            return None;
        }
        let entry = self.names.entry(ppid).or_insert((None, i64::MIN, false));
        if now_ms.saturating_sub(entry.1) >= REFRESH_MS || now_ms < entry.1 {
            entry.0 = std::fs::read(proc.join(ppid.to_string()).join("comm"))
                .ok()
                .map(|raw| sanitize_bytes(raw.strip_suffix(b"\n").unwrap_or(&raw), MAX_NAME_CHARS))
                .filter(|n| !n.is_empty())
                .map(SharedStr::from);
            entry.1 = now_ms;
        }
        entry.2 = true;
        entry.0.clone()
    }

    /// Forgets the parents no GPU process named this tick.
    pub(super) fn end_tick(&mut self) {
        self.names.retain(|_, (_, _, asked)| std::mem::take(asked));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parent_is_read_once_refreshed_later_and_forgotten_when_no_longer_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::create_dir_all(p.join("700")).unwrap();
        std::fs::write(p.join("700/comm"), "bash\n").unwrap();
        let mut names = ParentNames::new();
        assert_eq!(names.name(p, 700, 0).as_deref(), Some("bash"));
        assert_eq!(names.name(p, 1, 0), None, "init is nobody's launcher");
        // It execs into tmux: the cached name holds until the refresh.
        std::fs::write(p.join("700/comm"), "tmux: server\n").unwrap();
        assert_eq!(names.name(p, 700, 1_000).as_deref(), Some("bash"));
        assert_eq!(
            names.name(p, 700, REFRESH_MS).as_deref(),
            Some("tmux: server")
        );
        names.end_tick();
        names.end_tick();
        assert!(names.names.is_empty(), "not asked for in the last tick");
        // A hostile name is sanitized; a parent gone reads as unknown.
        std::fs::write(p.join("700/comm"), "\x1b[31mevil\n").unwrap();
        let evil = names.name(p, 700, 2 * REFRESH_MS).unwrap();
        assert!(!evil.contains('\x1b'), "{evil:?}");
        assert_eq!(names.name(p, 701, 0), None);
    }
}
