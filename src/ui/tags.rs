//! Tagged processes (htop's Space): the PIDs the user marked so a signal or a renice reaches
//! them together. Each tag keeps the start time its process had when the next reading saw it,
//! so a PID the kernel hands to a new process is never acted on as the old one: a tag whose
//! process is gone, or whose PID now names another start, is dropped at [`Tags::reconcile`].
//! Pure view state; the readings stay in the engine.

use std::collections::BTreeMap;

use gpumeter_model::Snapshot;

/// The tagged PIDs; see the module docs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tags {
    /// PID → its start time as a reading gave it; `None` inside: not seen since it was
    /// tagged, or the reading had no start time.
    by_pid: BTreeMap<u32, Seen>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    /// Tagged since the last reconcile.
    New,
    /// Its process as the readings give it: its start time (`None`: not known).
    Started(Option<i64>),
}

impl Tags {
    /// Tags `pid`, or untags it when it is tagged; whether it is tagged now.
    pub fn toggle(&mut self, pid: u32) -> bool {
        if self.by_pid.remove(&pid).is_some() {
            return false;
        }
        self.by_pid.insert(pid, Seen::New);
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

    /// Whether `pid`'s tag still names the process `start` (the reading's start time).
    pub fn names(&self, pid: u32, start: Option<i64>) -> bool {
        match self.by_pid.get(&pid) {
            Some(Seen::New) => true,
            Some(Seen::Started(s)) => *s == start,
            None => false,
        }
    }

    /// Brings the tags up to `snap`: a new tag takes its process's start time, and a tag
    /// whose process is no longer listed, or started again under the same PID, goes. How
    /// many went.
    pub fn reconcile(&mut self, snap: &Snapshot) -> usize {
        let before = self.by_pid.len();
        self.by_pid.retain(|pid, seen| {
            let Some(p) = snap.processes.iter().find(|p| p.pid == *pid) else {
                return false;
            };
            match *seen {
                Seen::New => {
                    *seen = Seen::Started(p.start_time_unix_s);
                    true
                }
                Seen::Started(start) => start == p.start_time_unix_s,
            }
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
        assert!(t.toggle(10));
        assert!(t.toggle(20));
        assert!(!t.toggle(10));
        assert_eq!(t.pids().collect::<Vec<_>>(), vec![20]);
        assert!(t.contains(20) && !t.contains(10));
        assert_eq!(t.clear(), 1);
        assert!(t.is_empty());
    }

    #[test]
    fn a_tag_goes_when_its_process_exits_or_its_pid_is_reused() {
        let mut t = Tags::default();
        t.toggle(10);
        t.toggle(20);
        t.toggle(30);
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
        // A start time the readings never had stays comparable: None is None.
        t.toggle(40);
        assert_eq!(t.reconcile(&reading(&[(10, Some(100)), (40, None)])), 0);
        assert_eq!(t.reconcile(&reading(&[(10, Some(100)), (40, None)])), 0);
        assert_eq!(t.len(), 2);
    }
}
