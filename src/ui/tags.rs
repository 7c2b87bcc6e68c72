//! Tagged processes (htop's Space): the PIDs the user marked so a signal or a renice reaches
//! them together. Each tag is pinned to the process the user saw when tagging it: the start
//! time its row showed and, for this machine's processes, the kernel's start ticks read at
//! that moment. So a PID the kernel hands to a new process is never acted on as the old one:
//! a tag whose process is gone, or whose PID now names another start, is dropped at
//! [`Tags::reconcile`], and the signal dialog compares the ticks again ([`Tags::ticks`]).
//! View state; the readings stay in the engine.

use std::collections::BTreeMap;

use gpumeter_model::Snapshot;

/// The tagged PIDs; see the module docs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tags {
    by_pid: BTreeMap<u32, Pin>,
}

/// What identifies a tagged process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pin {
    /// The start time its row showed (`None`: the reading had none).
    start: Option<i64>,
    /// `/proc/<pid>/stat`'s start ticks when it was tagged (`None`: not this machine's, or
    /// already gone).
    ticks: Option<u64>,
}

impl Tags {
    /// Tags `pid` (its row showed `start`; `ticks`: its kernel start ticks now), or untags it
    /// when it is tagged; whether it is tagged now.
    pub fn toggle(&mut self, pid: u32, start: Option<i64>, ticks: Option<u64>) -> bool {
        if self.by_pid.remove(&pid).is_some() {
            return false;
        }
        self.by_pid.insert(pid, Pin { start, ticks });
        true
    }

    /// Untags everything; how many were tagged.
    pub fn clear(&mut self) -> usize {
        let n = self.by_pid.len();
        self.by_pid.clear();
        n
    }

    pub fn contains(&self, pid: u32) -> bool {
        self.by_pid.contains_key(&pid)
    }

    pub fn len(&self) -> usize {
        self.by_pid.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_pid.is_empty()
    }

    /// The tagged PIDs, lowest first.
    pub fn pids(&self) -> impl Iterator<Item = u32> + '_ {
        self.by_pid.keys().copied()
    }

    /// Whether `pid`'s tag still names the process a reading shows started at `start`.
    pub fn names(&self, pid: u32, start: Option<i64>) -> bool {
        self.by_pid.get(&pid).is_some_and(|p| p.start == start)
    }

    /// The kernel start ticks `pid` had when tagged, when they were read.
    pub fn ticks(&self, pid: u32) -> Option<u64> {
        self.by_pid.get(&pid).and_then(|p| p.ticks)
    }

    /// Brings the tags up to `snap`: a tag whose process is no longer listed, or is listed
    /// with another start time under the same PID, goes. How many went.
    pub fn reconcile(&mut self, snap: &Snapshot) -> usize {
        let before = self.by_pid.len();
        self.by_pid.retain(|pid, pin| {
            snap.processes
                .iter()
                .any(|p| p.pid == *pid && p.start_time_unix_s == pin.start)
        });
        before - self.by_pid.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::tests::fixtures as testing;

    fn reading(procs: &[(u32, Option<i64>)]) -> Snapshot {
        let mut s = Snapshot::empty("nvml", 0);
        s.processes = procs
            .iter()
            .map(|&(pid, start)| {
                let mut p = testing::process(pid, 1, "alice", "python train.py");
                p.start_time_unix_s = start;
                p
            })
            .collect();
        s
    }

    #[test]
    fn space_twice_untags_and_clear_says_how_many() {
        let mut t = Tags::default();
        assert!(t.toggle(10, None, None));
        assert!(t.toggle(20, Some(5), Some(77)));
        assert!(!t.toggle(10, None, None));
        assert_eq!(t.pids().collect::<Vec<_>>(), vec![20]);
        assert!(t.contains(20) && !t.contains(10));
        assert_eq!(t.ticks(20), Some(77));
        assert_eq!(t.clear(), 1);
        assert!(t.is_empty());
    }

    #[test]
    fn a_tag_goes_when_its_process_exits_or_its_pid_is_reused() {
        let mut t = Tags::default();
        t.toggle(10, Some(100), None);
        t.toggle(20, Some(200), None);
        t.toggle(30, Some(300), None);
        assert_eq!(
            t.reconcile(&reading(&[(10, Some(100)), (20, Some(200))])),
            1
        );
        assert_eq!(t.pids().collect::<Vec<_>>(), vec![10, 20]);
        assert!(t.names(10, Some(100)) && !t.names(10, Some(101)));
        // PID 20 now names a process that started later: not the one tagged.
        assert_eq!(
            t.reconcile(&reading(&[(10, Some(100)), (20, Some(900))])),
            1
        );
        assert_eq!(t.pids().collect::<Vec<_>>(), vec![10]);
        // A start time the readings never had stays comparable: None is None (the ticks
        // pinned when tagging are what tells such a process apart, see process_action).
        t.toggle(40, None, None);
        assert_eq!(t.reconcile(&reading(&[(10, Some(100)), (40, None)])), 0);
        assert_eq!(t.len(), 2);
    }
}
