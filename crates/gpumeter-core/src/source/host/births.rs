//! Whether any process was born since a given tick, from the last pid `loadavg` names at each
//! tick.
//!
//! A new process needs a new pid, and `loadavg`'s last field names the last pid given out (in
//! the reader's pid namespace; a process born in a namespace below it gets a pid here too).
//! So when it names the same pid at two ticks, no process was born in between, and a
//! `children` list read at the first of them is still whole (a child re-parented to a tree
//! process, by a subreaper, already was in the tree). The trees' periodic `children` reads are
//! skipped then: on a quiet machine (a rented box running one job) they cost nothing.
//!
//! Only a `loadavg` that names this procfs's own pids is given here (see `proc_dir`); without
//! one, or after the clock stepped back, every read counts as needed. Holds no file: the
//! caller reads `loadavg` once a tick, before the tick's `children` reads.

/// The last pid given out, at the ticks since it last changed.
#[derive(Debug, Default)]
pub(super) struct Births {
    /// The last pid given out, at the last tick.
    last_pid: Option<u32>,
    /// The first tick that saw `last_pid` (`None`: not trusted at the last tick).
    since_ms: Option<i64>,
    /// The last tick.
    at_ms: Option<i64>,
}

impl Births {
    /// This tick's last pid given out (`None`: unknown), read before any `children` list of
    /// the tick.
    pub(super) fn note(&mut self, now_ms: i64, last_pid: Option<u32>) {
        let stepped_back = self.at_ms.is_some_and(|t| now_ms < t);
        self.since_ms = match last_pid {
            None => None,
            Some(_) if stepped_back => None,
            Some(p) if self.last_pid == Some(p) => self.since_ms.or(Some(now_ms)),
            Some(_) => Some(now_ms),
        };
        self.last_pid = last_pid;
        self.at_ms = Some(now_ms);
    }

    /// Whether no process was born since a tick at `ms`, so that what was read then (after
    /// that tick's note) still holds. A stamp after the last tick is from before the clock
    /// stepped back: not known. (Older stamps from before a step compare as they read: the
    /// caller reads again at the tick that steps back, where every read is due.)
    pub(super) fn none_since(&self, ms: i64) -> bool {
        self.since_ms.is_some_and(|since| since <= ms) && self.at_ms.is_some_and(|at| ms <= at)
    }
}

#[cfg(test)]
mod tests {
    use super::Births;

    #[test]
    fn the_same_last_pid_means_no_birth_since_the_first_tick_that_saw_it() {
        let mut b = Births::default();
        b.note(1_000, Some(500));
        b.note(2_000, Some(500));
        b.note(3_000, Some(500));
        assert!(b.none_since(1_000) && b.none_since(2_500));
        assert!(
            !b.none_since(999),
            "a read before the first tick that saw it"
        );
    }

    #[test]
    fn a_new_last_pid_means_births_before_this_tick() {
        let mut b = Births::default();
        b.note(1_000, Some(500));
        b.note(2_000, Some(501));
        assert!(!b.none_since(1_000));
        assert!(
            b.none_since(2_000),
            "a read at this tick comes after the note"
        );
        // A wrap back to a lower pid is a change too.
        b.note(3_000, Some(7));
        assert!(!b.none_since(2_000));
    }

    #[test]
    fn an_unknown_last_pid_means_every_read_is_needed() {
        let mut b = Births::default();
        assert!(!b.none_since(0), "nothing noted yet");
        b.note(1_000, Some(500));
        b.note(2_000, None);
        assert!(!b.none_since(1_000) && !b.none_since(2_000));
        // Known again: quiet from that tick on only.
        b.note(3_000, Some(500));
        assert!(!b.none_since(2_000));
        assert!(b.none_since(3_000));
    }

    #[test]
    fn a_clock_stepping_back_means_every_read_is_needed_at_that_tick() {
        let mut b = Births::default();
        b.note(10_000, Some(500));
        b.note(11_000, Some(500));
        b.note(5_000, Some(501));
        // A read stamped 11 000 happened before this tick's note, whatever its stamp says.
        assert!(!b.none_since(11_000) && !b.none_since(5_000));
        b.note(6_000, Some(501));
        assert!(b.none_since(6_000));
        assert!(!b.none_since(5_999));
        assert!(!b.none_since(11_000), "stamped before the step");
    }
}
