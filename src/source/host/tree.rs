//! Descendants of the GPU processes (dataloader workers, compile helpers, shells) found
//! through the parent links of this tick's process list.

use std::collections::VecDeque;

use foldhash::{HashMap, HashMapExt, HashSet};

/// Descendants found, and whether the walk stopped at the cap.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Descendants {
    /// Breadth first from the roots; the roots themselves are not included.
    pub(super) pids: Vec<u32>,
    pub(super) truncated: bool,
}

/// All processes below `roots` given `(pid, ppid)` links, at most `cap` of them. A pid reached
/// twice (a root below another root, or links changing between reads) is listed once.
pub(super) fn descendants(
    roots: &[u32],
    links: impl IntoIterator<Item = (u32, u32)>,
    cap: usize,
) -> Descendants {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for (pid, ppid) in links {
        if pid != ppid {
            children.entry(ppid).or_default().push(pid);
        }
    }
    let mut seen: HashSet<u32> = roots.iter().copied().collect();
    let mut queue: VecDeque<u32> = roots.iter().copied().collect();
    let mut out = Descendants::default();
    while let Some(pid) = queue.pop_front() {
        let Some(kids) = children.get(&pid) else {
            continue;
        };
        for &kid in kids {
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
}
