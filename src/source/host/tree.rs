//! Descendants of the GPU processes (dataloader workers, compile helpers, shells) found
//! through the parent links of this tick's process list. The walk's buffers ([`TreeWalk`])
//! are kept between ticks, so a steady tick builds no map or list.

use std::collections::VecDeque;

use foldhash::HashSet;

/// Descendants found, and whether the walk stopped at the cap.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Descendants {
    /// Breadth first from the roots (a parent's children in pid order); the roots themselves
    /// are not included.
    pub(super) pids: Vec<u32>,
    pub(super) truncated: bool,
}

/// The buffers of a walk, kept for the next one.
#[derive(Debug, Default)]
pub(super) struct TreeWalk {
    /// `(ppid, pid)`, sorted: a parent's children are one run.
    links: Vec<(u32, u32)>,
    seen: HashSet<u32>,
    queue: VecDeque<u32>,
}

/// All processes below `roots` given `(pid, ppid)` links, at most `cap` of them. A pid reached
/// twice (a root below another root, or links changing between reads) is listed once.
#[cfg(test)]
pub(super) fn descendants(
    roots: &[u32],
    links: impl IntoIterator<Item = (u32, u32)>,
    cap: usize,
) -> Descendants {
    let mut out = Descendants::default();
    TreeWalk::default().descendants(roots, links, cap, &mut out);
    out
}

impl TreeWalk {
    /// As [`descendants`], into `out` (cleared first), with the buffers kept here.
    pub(super) fn descendants(
        &mut self,
        roots: &[u32],
        links: impl IntoIterator<Item = (u32, u32)>,
        cap: usize,
        out: &mut Descendants,
    ) {
        out.pids.clear();
        out.truncated = false;
        self.links.clear();
        self.links.extend(
            links
                .into_iter()
                .filter(|&(pid, ppid)| pid != ppid)
                .map(|(pid, ppid)| (ppid, pid)),
        );
        self.links.sort_unstable();
        self.seen.clear();
        self.seen.extend(roots.iter().copied());
        self.queue.clear();
        self.queue.extend(roots.iter().copied());
        while let Some(pid) = self.queue.pop_front() {
            let from = self.links.partition_point(|&(ppid, _)| ppid < pid);
            for &(ppid, kid) in &self.links[from..] {
                if ppid != pid {
                    break;
                }
                if !self.seen.insert(kid) {
                    continue;
                }
                if out.pids.len() == cap {
                    out.truncated = true;
                    return;
                }
                out.pids.push(kid);
                self.queue.push_back(kid);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(mut v: Vec<u32>) -> Vec<u32> {
        v.sort_unstable();
        v
    }

    #[test]
    fn finds_children_and_grandchildren_only() {
        // 1 ─ 10 (gpu) ─ 11 ─ 12
        //   │          └ 13
        //   └ 20 (unrelated) ─ 21
        let links = [(10, 1), (11, 10), (12, 11), (13, 10), (20, 1), (21, 20)];
        let d = descendants(&[10], links, 100);
        assert_eq!(sorted(d.pids), vec![11, 12, 13]);
        assert!(!d.truncated);
    }

    #[test]
    fn roots_are_not_repeated_and_cycles_end() {
        let links = [(11, 10), (10, 11), (12, 11)];
        let d = descendants(&[10, 11], links, 100);
        assert_eq!(d.pids, vec![12]);
    }

    #[test]
    fn stops_at_the_cap() {
        let links: Vec<(u32, u32)> = (100..200).map(|p| (p, 1)).collect();
        let d = descendants(&[1], links, 10);
        assert_eq!(d.pids.len(), 10);
        assert!(d.truncated);
        assert_eq!(descendants(&[5], [(6, 5)], 1).pids, vec![6]);
        assert!(!descendants(&[5], [(6, 5)], 1).truncated);
    }

    /// The walk as it was: a map of each parent's children, breadth first.
    fn by_children_map(roots: &[u32], links: &[(u32, u32)], cap: usize) -> Descendants {
        let mut children: std::collections::HashMap<u32, Vec<u32>> = Default::default();
        for &(pid, ppid) in links {
            if pid != ppid {
                children.entry(ppid).or_default().push(pid);
            }
        }
        let mut seen: std::collections::HashSet<u32> = roots.iter().copied().collect();
        let mut queue: VecDeque<u32> = roots.iter().copied().collect();
        let mut out = Descendants::default();
        while let Some(pid) = queue.pop_front() {
            for &kid in children.get(&pid).into_iter().flatten() {
                if !seen.insert(kid) {
                    continue;
                }
                if out.pids.len() == cap {
                    out.truncated = true;
                    return out;
                }
                out.pids.push(kid);
                queue.push_back(kid);
            }
        }
        out
    }

    #[test]
    fn a_kept_walk_gives_what_a_fresh_one_does() {
        // The buffers carry nothing from one walk into the next: trees that grow, shrink,
        // re-parent and hit the cap, walked with one TreeWalk and with fresh ones.
        let mut walk = TreeWalk::default();
        let mut out = Descendants::default();
        let mut state: u64 = 7;
        for round in 0..200u32 {
            let mut links = Vec::new();
            for pid in 2..(20 + round % 37) {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                links.push((pid, (state >> 33) as u32 % pid));
            }
            let roots = [1, 2 + round % 5];
            let cap = [3, 10, 100][(round % 3) as usize];
            walk.descendants(&roots, links.iter().copied(), cap, &mut out);
            let fresh = descendants(&roots, links.iter().copied(), cap);
            assert_eq!(out, fresh, "round {round}");
            assert!(out.pids.len() <= cap);
            // The same processes as the map-of-children walk this replaced (uncut trees; a cut
            // one keeps as many, and which is arbitrary in both).
            let reference = by_children_map(&roots, &links, cap);
            assert_eq!(out.truncated, reference.truncated, "round {round}");
            assert_eq!(out.pids.len(), reference.pids.len(), "round {round}");
            if !out.truncated {
                assert_eq!(
                    sorted(out.pids.clone()),
                    sorted(reference.pids),
                    "round {round}"
                );
            }
        }
    }
}
