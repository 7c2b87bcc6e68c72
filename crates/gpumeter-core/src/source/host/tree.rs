//! Descendants of the GPU processes (dataloader workers, compile helpers, shells) found
//! through the parent links of this tick's process list. The walk's buffers ([`TreeWalk`])
//! are kept between ticks, so a steady tick builds no map or list.

use std::collections::VecDeque;

use foldhash::{HashMap, HashSet};

/// Descendants found, and whether the walk stopped at the cap.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Descendants {
    /// In pid order (found breadth first from the roots); the roots themselves are not
    /// included.
    pub(super) pids: Vec<u32>,
    pub(super) truncated: bool,
}

/// A walk's buffers and its last answer, kept between ticks: a tick whose links and roots are
/// the last one's (the usual case: the trees did not change) gets the last answer after one
/// look-up per link, and no tick builds a map or a list.
#[derive(Debug, Default)]
pub(super) struct TreeWalk {
    /// This walk's `(pid, ppid)` links.
    current: Vec<(u32, u32)>,
    /// `(ppid, pid)`, sorted: a parent's children are one run.
    links: Vec<(u32, u32)>,
    seen: HashSet<u32>,
    queue: VecDeque<u32>,
    last: Last,
    out: Descendants,
}

/// What the last walk was asked.
#[derive(Debug, Default)]
struct Last {
    /// Whether `out` answers `roots`, `cap` and `parents`.
    valid: bool,
    roots: Vec<u32>,
    cap: usize,
    /// Each linked pid's parent, and the walk that last matched it (a pid listed twice in
    /// one walk is not the same links).
    parents: HashMap<u32, (u32, u64)>,
    walk: u64,
    /// Walks answered with the last answer; whether the latest was.
    hits: u64,
    reused: bool,
}

/// All processes below `roots` given `(pid, ppid)` links, at most `cap` of them. A pid reached
/// twice (a root below another root, or links changing between reads) is listed once.
#[cfg(test)]
pub(super) fn descendants(
    roots: &[u32],
    links: impl IntoIterator<Item = (u32, u32)>,
    cap: usize,
) -> Descendants {
    TreeWalk::default().descendants(roots, links, cap).clone()
}

impl TreeWalk {
    /// As [`descendants`], with the buffers and the last answer kept here.
    pub(super) fn descendants(
        &mut self,
        roots: &[u32],
        links: impl IntoIterator<Item = (u32, u32)>,
        cap: usize,
    ) -> &Descendants {
        self.current.clear();
        self.current
            .extend(links.into_iter().filter(|&(pid, ppid)| pid != ppid));
        self.last.reused = self.same_as_last(roots, cap);
        if self.last.reused {
            self.last.hits += 1;
        } else {
            self.walk(roots, cap);
            self.remember(roots, cap);
        }
        &self.out
    }

    /// The latest walk's answer.
    pub(super) fn answer(&self) -> &Descendants {
        &self.out
    }

    /// Whether the latest walk gave the answer of the one before (the same object, unchanged).
    pub(super) fn reused(&self) -> bool {
        self.last.reused
    }

    /// Whether this walk's roots, cap and links are the last one's.
    fn same_as_last(&mut self, roots: &[u32], cap: usize) -> bool {
        let last = &mut self.last;
        if !last.valid
            || last.cap != cap
            || last.roots != roots
            || last.parents.len() != self.current.len()
        {
            return false;
        }
        last.walk = last.walk.wrapping_add(1);
        let walk = last.walk;
        self.current
            .iter()
            .all(|&(pid, ppid)| match last.parents.get_mut(&pid) {
                Some((parent, seen)) if *parent == ppid && *seen != walk => {
                    *seen = walk;
                    true
                }
                _ => false,
            })
    }

    fn remember(&mut self, roots: &[u32], cap: usize) {
        let last = &mut self.last;
        last.roots.clear();
        last.roots.extend_from_slice(roots);
        last.cap = cap;
        last.parents.clear();
        let walk = last.walk;
        last.parents
            .extend(self.current.iter().map(|&(pid, ppid)| (pid, (ppid, walk))));
        // A pid listed twice: the check above could not tell such links apart.
        last.valid = last.parents.len() == self.current.len();
    }

    fn walk(&mut self, roots: &[u32], cap: usize) {
        let out = &mut self.out;
        out.pids.clear();
        out.truncated = false;
        self.links.clear();
        self.links
            .extend(self.current.iter().map(|&(pid, ppid)| (ppid, pid)));
        self.links.sort_unstable();
        self.seen.clear();
        self.seen.extend(roots.iter().copied());
        self.queue.clear();
        self.queue.extend(roots.iter().copied());
        'walk: while let Some(pid) = self.queue.pop_front() {
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
                    break 'walk;
                }
                out.pids.push(kid);
                self.queue.push_back(kid);
            }
        }
        out.pids.sort_unstable();
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
        // Trees that grow, shrink, re-parent and hit the cap, often the same as the walk
        // before (the kept answer) and sometimes not, walked with one TreeWalk and with fresh
        // ones.
        let mut walk = TreeWalk::default();
        let mut state: u64 = 7;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 33) as u32
        };
        let mut links: Vec<(u32, u32)> = (2..30).map(|pid| (pid, pid / 2)).collect();
        let mut reused = 0;
        for round in 0..400u32 {
            match next() % 6 {
                0 => links.push((100 + round, next() % (100 + round))),
                1 if links.len() > 3 => {
                    let i = next() as usize % links.len();
                    links.remove(i);
                }
                2 => {
                    let i = next() as usize % links.len();
                    links[i].1 = next() % 40;
                }
                3 => {
                    // The same links in another order: the same tree.
                    let i = next() as usize % links.len();
                    links.swap(0, i);
                }
                _ => {}
            }
            let roots = [1, 2 + (round / 50) % 3];
            let cap = [3, 100][((round / 20) % 2) as usize];
            let before = walk.last.hits;
            let kept = walk.descendants(&roots, links.iter().copied(), cap).clone();
            reused += usize::from(walk.last.hits != before);
            let fresh = descendants(&roots, links.iter().copied(), cap);
            assert_eq!(kept, fresh, "round {round}");
            assert!(kept.pids.len() <= cap);
            assert!(kept.pids.is_sorted());
            // The same processes as the map-of-children walk this replaced (uncut trees; a cut
            // one keeps as many, and which is arbitrary in both).
            let reference = by_children_map(&roots, &links, cap);
            assert_eq!(kept.truncated, reference.truncated, "round {round}");
            assert_eq!(kept.pids.len(), reference.pids.len(), "round {round}");
            if !kept.truncated {
                assert_eq!(kept.pids, sorted(reference.pids), "round {round}");
            }
        }
        assert!(reused > 100, "the kept answer was given {reused} times");
    }

    #[test]
    fn a_pid_listed_twice_is_not_taken_for_the_same_links() {
        let mut walk = TreeWalk::default();
        let first = walk.descendants(&[1], [(5, 1), (6, 1)], 10).clone();
        assert_eq!(first.pids, vec![5, 6]);
        // As many links, each one of the last walk's, but 6 is gone.
        let second = walk.descendants(&[1], [(5, 1), (5, 1)], 10).clone();
        assert_eq!(second.pids, vec![5]);
        // Links that list a pid twice are never kept as an answer to compare with.
        let third = walk.descendants(&[1], [(5, 1), (5, 1)], 10).clone();
        assert_eq!(third.pids, vec![5]);
        assert!(!walk.last.valid);
    }
}
