//! Pairs the driver's PIDs that this /proc does not have (host PIDs, seen from a container)
//! with the processes here that hold GPUs open. Pure: the inputs are what NVML and the fd scan
//! said.
//!
//! A process here can be the driver's PID only if it holds every GPU the driver lists that PID
//! on (CUDA processes often hold more nodes open than they have contexts on, so "holds" is a
//! superset test, not equality). Then:
//! 1. a PID with exactly one such process, which fits no other PID, is certain ([`PidMatch::Device`]);
//! 2. the rest are paired in start order — host PIDs are handed out in increasing order, so
//!    the lower host PID started first — largest VRAM first among equals, and labelled
//!    [`PidMatch::Guess`].
//!
//! A PID with no fitting process stays unmatched (shown as "not in this container").

use std::collections::BTreeSet;

use gpumeter_model::PidMatch;

/// A driver PID not found here, with the GPUs it is on and its VRAM there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Wanted {
    pub(super) host_pid: u32,
    pub(super) gpus: BTreeSet<u32>,
    pub(super) memory_bytes: u64,
}

/// A process here holding GPU device nodes open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Candidate {
    pub(super) pid: u32,
    pub(super) start_ticks: u64,
    pub(super) gpus: BTreeSet<u32>,
}

/// (host pid, local pid, how) for each pair found.
pub(super) fn pair(wanted: &[Wanted], candidates: &[Candidate]) -> Vec<(u32, u32, PidMatch)> {
    let fits = |w: &Wanted, c: &Candidate| !w.gpus.is_empty() && w.gpus.is_subset(&c.gpus);
    let mut open_w: Vec<&Wanted> = wanted.iter().collect();
    let mut open_c: Vec<&Candidate> = candidates.iter().collect();
    let mut out = Vec::new();

    // 1. Certain pairs, repeatedly: taking one can make another certain.
    loop {
        let certain = open_w.iter().enumerate().find_map(|(wi, w)| {
            let mut fitting = open_c.iter().enumerate().filter(|(_, c)| fits(w, c));
            let (ci, c) = fitting.next()?;
            if fitting.next().is_some() {
                return None;
            }
            let rivals = open_w.iter().filter(|o| fits(o, c)).count();
            (rivals == 1).then_some((wi, ci))
        });
        let Some((wi, ci)) = certain else { break };
        out.push((open_w[wi].host_pid, open_c[ci].pid, PidMatch::Device));
        open_w.remove(wi);
        open_c.remove(ci);
    }

    // 2. The rest, by start order: the oldest host pid (largest VRAM among equals) takes the
    //    oldest fitting process.
    open_w.sort_by_key(|w| (w.host_pid, std::cmp::Reverse(w.memory_bytes)));
    open_c.sort_by_key(|c| (c.start_ticks, c.pid));
    for w in open_w {
        if let Some(ci) = open_c.iter().position(|c| fits(w, c)) {
            out.push((w.host_pid, open_c[ci].pid, PidMatch::Guess));
            open_c.remove(ci);
        }
    }
    out.sort_unstable_by_key(|&(host, local, _)| (host, local));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(host_pid: u32, gpus: &[u32], gib: u64) -> Wanted {
        Wanted {
            host_pid,
            gpus: gpus.iter().copied().collect(),
            memory_bytes: gib << 30,
        }
    }

    fn c(pid: u32, start: u64, gpus: &[u32]) -> Candidate {
        Candidate {
            pid,
            start_ticks: start,
            gpus: gpus.iter().copied().collect(),
        }
    }

    #[test]
    fn one_process_per_gpu_is_certain() {
        let wanted = [
            w(4_000_100, &[0], 20),
            w(4_000_200, &[1], 20),
            w(4_000_300, &[2], 20),
            w(4_000_400, &[3], 20),
        ];
        let cands = [
            c(40, 9, &[3]),
            c(10, 1, &[0]),
            c(20, 2, &[1]),
            c(30, 3, &[2]),
        ];
        assert_eq!(
            pair(&wanted, &cands),
            vec![
                (4_000_100, 10, PidMatch::Device),
                (4_000_200, 20, PidMatch::Device),
                (4_000_300, 30, PidMatch::Device),
                (4_000_400, 40, PidMatch::Device),
            ]
        );
    }

    #[test]
    fn two_processes_on_one_gpu_are_paired_by_start_order_as_a_guess() {
        let wanted = [w(5_002, &[0], 10), w(5_001, &[0], 30)];
        let cands = [c(12, 200, &[0]), c(11, 100, &[0])];
        assert_eq!(
            pair(&wanted, &cands),
            vec![(5_001, 11, PidMatch::Guess), (5_002, 12, PidMatch::Guess)]
        );
    }

    #[test]
    fn ranks_holding_every_node_open_are_a_guess_and_a_superset_still_fits() {
        // DDP ranks each open all four nodes but have a context on one GPU each.
        let all = [0, 1, 2, 3];
        let wanted = [w(900, &[0], 1), w(901, &[1], 1), w(902, &[2], 1)];
        let cands = [c(7, 3, &all), c(5, 1, &all), c(6, 2, &all)];
        assert_eq!(
            pair(&wanted, &cands),
            vec![
                (900, 5, PidMatch::Guess),
                (901, 6, PidMatch::Guess),
                (902, 7, PidMatch::Guess)
            ]
        );
        // One process on two GPUs holding both: certain.
        assert_eq!(
            pair(&[w(1, &[0, 1], 2)], &[c(9, 1, &[0, 1]), c(8, 1, &[1])]),
            vec![(1, 9, PidMatch::Device)]
        );
    }

    #[test]
    fn a_host_pid_with_no_fitting_process_stays_unmatched() {
        let wanted = [w(100, &[0], 1), w(200, &[2], 1)];
        let cands = [c(3, 1, &[0])];
        assert_eq!(pair(&wanted, &cands), vec![(100, 3, PidMatch::Device)]);
        assert!(pair(&wanted, &[]).is_empty());
        assert!(pair(&[w(1, &[], 1)], &cands).is_empty());
    }
}
