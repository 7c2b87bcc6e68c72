//! Which GPU processes a front-end shows as they move, so the host sampler can read the others
//! less often. A GPU process's `/proc/<pid>/stat` read every tick was most of a headless tick's
//! kernel time; a value nobody sees every second need not be read every second. The
//! front-end holds one end ([`ProcessFocus`], cheap to clone) and says what it shows; the
//! source's host sampler reads it once per tick.
//!
//! - [`Watched::All`] (the default): every GPU process every tick.
//! - [`Watched::Only`]: these every tick, the other GPU processes at the trees' member cadence
//!   (every 5 s, staggered; see `host::scan`). Headless front-ends (`watch`, `serve`) watch
//!   none; the dashboard the rows on screen.
//!
//! Touches nothing else: the front-ends write it, `source::host` reads it.

use std::sync::{Arc, Mutex, PoisonError};

/// What a front-end shows every reading.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Watched {
    /// Every GPU process.
    #[default]
    All,
    /// These pids (sorted, without repeats); the other GPU processes at the slower cadence.
    Only(Vec<u32>),
}

impl Watched {
    /// `pids`, sorted and without repeats.
    pub fn only(pids: impl IntoIterator<Item = u32>) -> Watched {
        let mut v: Vec<u32> = pids.into_iter().collect();
        v.sort_unstable();
        v.dedup();
        Watched::Only(v)
    }

    /// Whether `pid` is read every tick.
    pub fn covers(&self, pid: u32) -> bool {
        match self {
            Watched::All => true,
            Watched::Only(pids) => pids.binary_search(&pid).is_ok(),
        }
    }
}

#[derive(Debug, Default)]
struct Shared {
    watched: Watched,
    /// Bumped on every change, so the reader copies only what changed.
    generation: u64,
}

/// The shared hint: set by the front-end, read by the host sampler on the collector thread.
#[derive(Debug, Clone, Default)]
pub struct ProcessFocus(Arc<Mutex<Shared>>);

/// Two handles are equal when they are ends of the same hint.
impl PartialEq for ProcessFocus {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl ProcessFocus {
    /// A focus on every GPU process (what a sampler without one does).
    pub fn new() -> ProcessFocus {
        ProcessFocus::default()
    }

    /// A focus on none: for front-ends that show no process every second.
    pub fn headless() -> ProcessFocus {
        let focus = ProcessFocus::default();
        focus.set(Watched::Only(Vec::new()));
        focus
    }

    /// Says what is shown from now on (the same as before changes nothing).
    pub fn set(&self, watched: Watched) {
        let mut shared = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if shared.watched != watched {
            shared.watched = watched;
            shared.generation = shared.generation.wrapping_add(1);
        }
    }

    /// Shows these pids every tick (a convenience for [`ProcessFocus::set`]).
    pub fn set_pids(&self, pids: impl IntoIterator<Item = u32>) {
        self.set(Watched::only(pids));
    }

    /// What is shown now, if it changed since `generation` (which is updated).
    pub fn changed_since(&self, generation: &mut Option<u64>) -> Option<Watched> {
        let shared = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if *generation == Some(shared.generation) {
            return None;
        }
        *generation = Some(shared.generation);
        Some(shared.watched.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reader_sees_each_change_once() {
        let focus = ProcessFocus::new();
        let mut seen = None;
        assert_eq!(focus.changed_since(&mut seen), Some(Watched::All));
        assert_eq!(focus.changed_since(&mut seen), None);
        focus.set_pids([30, 10, 30]);
        assert_eq!(
            focus.changed_since(&mut seen),
            Some(Watched::Only(vec![10, 30]))
        );
        // The same set again is no change.
        focus.set_pids([10, 30]);
        assert_eq!(focus.changed_since(&mut seen), None);
        let other_end = focus.clone();
        other_end.set(Watched::All);
        assert_eq!(focus.changed_since(&mut seen), Some(Watched::All));
    }

    #[test]
    fn covers_what_it_names() {
        let only = Watched::only([7, 3]);
        assert!(only.covers(3) && only.covers(7) && !only.covers(5));
        assert!(Watched::All.covers(5));
        assert!(!ProcessFocus::headless().0.lock().unwrap().watched.covers(1));
    }
}
