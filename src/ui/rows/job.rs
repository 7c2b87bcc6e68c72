//! A process's job as the readings give it: its topmost ancestor among the listed processes
//! (the trainer), then every descendant of that one (its dataloader workers), the trainer
//! first. One definition for the detail view (which shows it) and the signal dialog's `w`
//! (which acts on it). Pure; bounded against ppid cycles in odd readings.

use gpumeter_model::{ProcessReading, Snapshot};

/// The job of `pid` in `snap`; `visible_only`: only processes this /proc shows (what can be
/// signalled), else every listed process.
pub(crate) fn job_of(snap: &Snapshot, pid: u32, visible_only: bool) -> Vec<&ProcessReading> {
    let listed = |p: &&ProcessReading| !visible_only || p.visible;
    let by_pid = |x: u32| snap.processes.iter().filter(listed).find(|p| p.pid == x);
    let mut root = pid;
    // Bounded: a ppid cycle cannot loop forever.
    for _ in 0..snap.processes.len() {
        match by_pid(root).and_then(|p| p.ppid).and_then(by_pid) {
            Some(parent) if parent.pid != root => root = parent.pid,
            _ => break,
        }
    }
    let mut job: Vec<&ProcessReading> = by_pid(root).into_iter().collect();
    let mut i = 0;
    while i < job.len() {
        let parent = job[i].pid;
        for p in snap
            .processes
            .iter()
            .filter(listed)
            .filter(|p| p.ppid == Some(parent))
        {
            if !job.iter().any(|q| q.pid == p.pid) {
                job.push(p);
            }
        }
        i += 1;
    }
    job
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::tests::fixtures as testing;

    fn pids(job: Vec<&ProcessReading>) -> Vec<u32> {
        job.iter().map(|p| p.pid).collect()
    }

    #[test]
    fn a_worker_leads_to_its_trainer_and_all_its_workers() {
        let mut s = Snapshot::empty("nvml", 0);
        s.processes = vec![
            testing::process(10, 1, "alice", "python train.py"),
            testing::process(11, 10, "alice", "pt_data_worker"),
            testing::process(12, 10, "alice", "pt_data_worker"),
            testing::process(13, 11, "alice", "helper"),
            testing::process(20, 1, "bob", "jupyter"),
        ];
        assert_eq!(pids(job_of(&s, 13, true)), [10, 11, 12, 13]);
        assert_eq!(pids(job_of(&s, 20, true)), [20]);
        // A worker this /proc cannot see is in the job shown, not in the one signalled.
        s.processes[2].visible = false;
        assert_eq!(pids(job_of(&s, 10, false)), [10, 11, 12, 13]);
        assert_eq!(pids(job_of(&s, 10, true)), [10, 11, 13]);
    }

    #[test]
    fn a_ppid_cycle_ends() {
        let mut s = Snapshot::empty("nvml", 0);
        s.processes = vec![
            testing::process(10, 11, "alice", "a"),
            testing::process(11, 10, "alice", "b"),
            testing::process(12, 12, "alice", "self"),
        ];
        assert_eq!(job_of(&s, 10, true).len(), 2);
        assert_eq!(pids(job_of(&s, 12, true)), [12]);
    }
}
