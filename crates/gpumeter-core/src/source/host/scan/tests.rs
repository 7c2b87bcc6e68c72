use super::cadence::{EARLY_MS, QUIET_STAT_MS};
use super::*;

/// A running process (never quiet: the cadence tests see [`MEMBER_STAT_MS`]).
fn write_stat(dir: &Path, pid: u32, ppid: u32, start: u64) {
    write_stat_as(dir, pid, ppid, start, 'R', 10);
}

fn write_stat_as(dir: &Path, pid: u32, ppid: u32, start: u64, state: char, cpu: u64) {
    std::fs::create_dir_all(dir.join(format!("{pid}/task/{pid}"))).unwrap();
    let line = format!(
        "{pid} (p{pid}) {state} {ppid} 0 0 0 -1 0 0 0 0 0 {cpu} 0 0 0 20 0 1 0 {start} 0 10 0\n"
    );
    std::fs::write(dir.join(format!("{pid}/stat")), line).unwrap();
}

fn write_children(dir: &Path, pid: u32, kids: &[u32]) {
    let text: Vec<String> = kids.iter().map(u32::to_string).collect();
    std::fs::write(
        dir.join(format!("{pid}/task/{pid}/children")),
        text.join(" "),
    )
    .unwrap();
}

/// A proc tree of `(pid, ppid)` (started at `pid`00) with children lists (or without, like
/// a fixture).
fn tree(dir: &Path, procs: &[(u32, u32)], lists: bool) {
    for &(pid, ppid) in procs {
        write_stat(dir, pid, ppid, u64::from(pid) * 100);
        if lists {
            let kids: Vec<u32> = procs
                .iter()
                .filter(|(_, pp)| *pp == pid)
                .map(|&(p, _)| p)
                .collect();
            write_children(dir, pid, &kids);
        }
    }
}

fn pids(scan: &Scan) -> Vec<u32> {
    let mut v: Vec<u32> = scan.stats.keys().copied().collect();
    v.sort_unstable();
    v
}

fn link(scan: &Scan, pid: u32) -> Option<u32> {
    scan.links().find(|&(p, _)| p == pid).map(|(_, pp)| pp)
}

const CAP: usize = 4096;
const ALL: Watched = Watched::All;

#[test]
fn the_first_tick_walks_the_trees_the_second_lists_then_only_the_trees() {
    let dir = tempfile::tempdir().unwrap();
    // 10 is a GPU process with a worker 11 and grandchild 12; 20 and 21 are elsewhere.
    tree(
        dir.path(),
        &[(1, 0), (10, 1), (11, 10), (12, 11), (20, 1), (21, 20)],
        true,
    );
    let mut s = Scanner::new(dir.path().to_path_buf());
    let first = s.scan(0, &[10], &HashSet::new(), &ALL, CAP).unwrap();
    assert!(!first.full);
    assert_eq!(pids(&first), vec![10, 11, 12]);
    assert!(first.kept_links.is_empty());
    let members: HashSet<u32> = HashSet::from_iter([11, 12]);
    // The first listing reads everything it has not seen.
    let listed = s.scan(1_000, &[10], &members, &ALL, CAP).unwrap();
    assert_eq!(pids(&listed), vec![1, 10, 11, 12, 20, 21]);
    let next = s.scan(2_000, &[10], &members, &ALL, CAP).unwrap();
    assert_eq!(pids(&next), vec![10, 11, 12]);
    assert!(next.kept_links.is_empty());
    // A new worker appears in its parent's list: in the tree within CHILDREN_MS.
    tree(dir.path(), &[(10, 1), (13, 10)], true);
    let found_at = (1..=CHILDREN_MS / 1_000)
        .map(|k| 2_000 + k * 1_000)
        .find(|&t| {
            s.scan(t, &[10], &members, &ALL, CAP)
                .unwrap()
                .stats
                .contains_key(&13)
        })
        .expect("the new worker is found");
    assert!(found_at - 2_000 <= CHILDREN_MS, "found after {found_at} ms");
    // Every LISTING_MS a listing: the others come as kept links.
    let listed = s
        .scan(2_000 + LISTING_MS, &[10], &members, &ALL, CAP)
        .unwrap();
    assert!(!listed.full);
    assert_eq!((link(&listed, 20), link(&listed, 21)), (Some(1), Some(20)));
}

#[test]
fn a_listing_reads_only_the_processes_it_has_not_seen() {
    let dir = tempfile::tempdir().unwrap();
    let mut procs = vec![(1, 0), (10, 1), (11, 10)];
    procs.extend((1000..1300).map(|p| (p, 1)));
    tree(dir.path(), &procs, true);
    let mut s = Scanner::new(dir.path().to_path_buf());
    let members: HashSet<u32> = HashSet::from_iter([11]);
    s.scan(0, &[10], &HashSet::new(), &ALL, CAP).unwrap();
    s.scan(1_000, &[10], &members, &ALL, CAP).unwrap();
    // Three processes born elsewhere; the 300 others are not read again.
    tree(dir.path(), &[(2000, 1), (2001, 1), (2002, 2001)], true);
    let before = s.reads;
    let listed = s
        .scan(1_000 + LISTING_MS, &[10], &members, &ALL, CAP)
        .unwrap();
    assert_eq!(
        s.reads - before,
        2 + 3,
        "the tree (10, 11) and the newborns"
    );
    assert_eq!(pids(&listed), vec![10, 11, 2000, 2001, 2002]);
    assert_eq!(listed.kept_links.len(), 1 + 300);
    // One that exited is forgotten.
    std::fs::remove_dir_all(dir.path().join("1000")).unwrap();
    let listed = s
        .scan(1_000 + 2 * LISTING_MS, &[10], &members, &ALL, CAP)
        .unwrap();
    assert_eq!(link(&listed, 1000), None);
    assert_eq!(listed.kept_links.len(), 1 + 299 + 3);
}

#[test]
fn a_child_forked_by_another_thread_is_found_by_the_next_listing() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path(), &[(1, 0), (10, 1)], true);
    let mut s = Scanner::new(dir.path().to_path_buf());
    s.scan(0, &[10], &HashSet::new(), &ALL, CAP).unwrap();
    s.scan(1_000, &[10], &HashSet::new(), &ALL, CAP).unwrap();
    // 13's parent is 10, but it is not in the main thread's list.
    write_stat(dir.path(), 13, 10, 1300);
    assert_eq!(
        link(
            &s.scan(2_000, &[10], &HashSet::new(), &ALL, CAP).unwrap(),
            13
        ),
        None
    );
    let listed = s
        .scan(1_000 + LISTING_MS, &[10], &HashSet::new(), &ALL, CAP)
        .unwrap();
    assert_eq!(link(&listed, 13), Some(10));
}

#[test]
fn a_kept_link_is_read_again_when_its_parent_exits_or_its_pid_is_reused() {
    let dir = tempfile::tempdir().unwrap();
    // 30 and 40 are elsewhere, children of 20 and 25; 10 is the GPU process.
    tree(
        dir.path(),
        &[(1, 0), (10, 1), (20, 1), (25, 1), (30, 20), (40, 25)],
        true,
    );
    let mut s = Scanner::new(dir.path().to_path_buf());
    s.scan(0, &[10], &HashSet::new(), &ALL, CAP).unwrap();
    let listed = s.scan(1_000, &[10], &HashSet::new(), &ALL, CAP).unwrap();
    assert_eq!((link(&listed, 30), link(&listed, 40)), (Some(20), Some(25)));
    // 20 exits: 30 is re-parented to 1.
    std::fs::remove_dir_all(dir.path().join("20")).unwrap();
    write_stat(dir.path(), 30, 1, 3000);
    // 25 exits and its pid goes to a new child of the GPU process (a new directory, so a
    // new inode: the old one is still there, renamed, while the new one is made).
    let d = dir.path();
    std::fs::rename(d.join("25"), d.join("old-25")).unwrap();
    write_stat(d, 25, 10, 9_000);
    write_children(d, 25, &[]);
    write_children(d, 10, &[25]);
    std::fs::remove_dir_all(d.join("old-25")).unwrap();
    write_stat(d, 40, 1, 4000);
    let before = s.reads;
    let listed = s
        .scan(
            1_000 + LISTING_MS,
            &[10],
            &HashSet::from_iter([25]),
            &ALL,
            CAP,
        )
        .unwrap();
    assert_eq!((link(&listed, 30), link(&listed, 40)), (Some(1), Some(1)));
    assert_eq!(link(&listed, 25), Some(10));
    assert_eq!(
        s.reads - before,
        2 + 2,
        "the tree (10, 25), then 30 and 40 again"
    );
}

#[test]
fn the_walk_stops_following_children_past_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let mut procs = vec![(1, 0), (10, 1)];
    procs.extend((100..200).map(|p| (p, 10)));
    tree(dir.path(), &procs, true);
    let mut s = Scanner::new(dir.path().to_path_buf());
    let first = s.scan(0, &[10], &HashSet::new(), &ALL, 5).unwrap();
    assert!(!first.full, "a big tree is no reason to read every process");
    // The root, the cap, and one more to show the list was cut.
    assert_eq!(first.stats.len(), 1 + 5 + 1);
}

#[test]
fn a_root_not_found_directly_or_no_children_lists_means_a_full_scan() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path(), &[(1, 0), (10, 1), (11, 10)], true);
    let mut s = Scanner::new(dir.path().to_path_buf());
    s.scan(0, &[10], &HashSet::new(), &ALL, CAP).unwrap();
    assert!(
        s.scan(1_000, &[10, 999], &HashSet::new(), &ALL, CAP)
            .unwrap()
            .full
    );

    let bare = tempfile::tempdir().unwrap();
    tree(bare.path(), &[(1, 0), (10, 1), (11, 10)], false);
    let mut s = Scanner::new(bare.path().to_path_buf());
    assert!(s.scan(0, &[10], &HashSet::new(), &ALL, CAP).unwrap().full);
    let next = s.scan(1_000, &[10], &HashSet::new(), &ALL, CAP).unwrap();
    assert!(next.full);
    assert_eq!(pids(&next), vec![1, 10, 11]);
}

#[test]
fn the_clock_stepping_back_is_a_listing() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path(), &[(1, 0), (10, 1)], true);
    let mut s = Scanner::new(dir.path().to_path_buf());
    s.scan(50_000, &[10], &HashSet::new(), &ALL, CAP).unwrap();
    s.scan(51_000, &[10], &HashSet::new(), &ALL, CAP).unwrap();
    let walked = s.scan(52_000, &[10], &HashSet::new(), &ALL, CAP).unwrap();
    assert!(walked.kept_links.is_empty());
    let listed = s.scan(1_000, &[10], &HashSet::new(), &ALL, CAP).unwrap();
    assert_eq!(link(&listed, 1), Some(0));
}

#[test]
fn gpu_processes_every_tick_members_at_their_cadence_and_the_reads_spread() {
    let dir = tempfile::tempdir().unwrap();
    // 20 GPU processes (100..120), each with two workers (1000 + 2i, 1001 + 2i).
    let mut procs = vec![(1, 0)];
    for i in 0..20u32 {
        procs.extend([
            (100 + i, 1),
            (1000 + 2 * i, 100 + i),
            (1001 + 2 * i, 100 + i),
        ]);
    }
    tree(dir.path(), &procs, true);
    let roots: Vec<u32> = (100..120).collect();
    let mut s = Scanner::new(dir.path().to_path_buf());
    let mut members = HashSet::new();
    let mut stat_reads = Vec::new();
    let mut member_reads: HashMap<u32, Vec<i64>> = HashMap::new();
    for k in 0..30i64 {
        let now = k * 1_000;
        let before = s.reads;
        let scan = s.scan(now, &roots, &members, &ALL, CAP).unwrap();
        assert!(!scan.full);
        // Every root read every tick, never carried.
        assert!(
            roots
                .iter()
                .all(|r| scan.stats.contains_key(r) && !scan.carried.contains(r))
        );
        for (&pid, _) in scan.stats.iter().filter(|(p, _)| **p >= 1000) {
            if !scan.carried.contains(&pid) {
                member_reads.entry(pid).or_default().push(now);
            }
        }
        members = scan.stats.keys().copied().filter(|&p| p >= 1000).collect();
        assert_eq!(members.len(), 40, "every member is in the tree every tick");
        if k >= 2 && now % LISTING_MS != 0 {
            stat_reads.push(s.reads - before);
        }
    }
    // Each member: read when found, then at most MEMBER_STAT_MS apart (one tick of slack),
    // and not every tick.
    for (pid, at) in &member_reads {
        let gaps: Vec<i64> = at.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps.iter().all(|&g| g <= MEMBER_STAT_MS), "{pid}: {gaps:?}");
        assert!(at.len() <= 1 + 30 * 1_000 / (MEMBER_STAT_MS - EARLY_MS) as usize + 1);
    }
    // Steady ticks read the 20 roots plus about 40 / 5 members: spread, not 60 at once.
    let max = stat_reads.iter().copied().max().unwrap();
    let total: u64 = stat_reads.iter().sum();
    assert!(max <= 20 + 20, "at most {max} reads in one tick");
    assert!(
        total <= stat_reads.len() as u64 * (20 + 40 / 4),
        "{total} reads in all"
    );
}

#[test]
fn an_exited_member_leaves_within_its_cadence_a_gpu_process_at_once() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path(), &[(1, 0), (10, 1), (11, 10), (12, 10)], true);
    let mut s = Scanner::new(dir.path().to_path_buf());
    // Read by path: a fixture file removed stays readable through a kept one (not so in /proc).
    s.max_kept = 0;
    let mut members: HashSet<u32> = HashSet::new();
    for k in 0..3 {
        let scan = s.scan(k * 1_000, &[10], &members, &ALL, CAP).unwrap();
        members = scan
            .stats
            .keys()
            .copied()
            .filter(|&p| p != 10 && p != 1)
            .collect();
    }
    assert_eq!(members, HashSet::from_iter([11, 12]));
    std::fs::remove_dir_all(dir.path().join("11")).unwrap();
    write_children(dir.path(), 10, &[12]);
    let gone_at = (3..=3 + MEMBER_STAT_MS / 1_000)
        .map(|k| k * 1_000)
        .find(|&t| {
            let scan = s.scan(t, &[10], &members, &ALL, CAP).unwrap();
            members = scan.stats.keys().copied().filter(|&p| p > 10).collect();
            !scan.stats.contains_key(&11)
        })
        .expect("the exited member leaves");
    assert!(gone_at - 3_000 <= MEMBER_STAT_MS);
    assert!(members.contains(&12));
    // The GPU process exiting: the next tick cannot walk (and falls back to every process).
    std::fs::remove_dir_all(dir.path().join("10")).unwrap();
    assert!(
        s.scan(gone_at + 1_000, &[10], &members, &ALL, CAP)
            .unwrap()
            .full
    );
}

/// Ticks `from..to` of the scanner over the tree under `root`, noting when each member's stat
/// was read (not carried).
fn member_reads(
    s: &mut Scanner,
    root: u32,
    members: &mut HashSet<u32>,
    ticks: std::ops::Range<i64>,
    mut each: impl FnMut(i64),
) -> HashMap<u32, Vec<i64>> {
    let mut reads: HashMap<u32, Vec<i64>> = HashMap::new();
    for k in ticks {
        let now = k * 1_000;
        each(now);
        let scan = s.scan(now, &[root], members, &ALL, CAP).unwrap();
        for &pid in scan.stats.keys().filter(|&&p| p != root && p != 1) {
            if !scan.carried.contains(&pid) {
                reads.entry(pid).or_default().push(now);
            }
        }
        *members = scan
            .stats
            .keys()
            .copied()
            .filter(|&p| p != root && p != 1)
            .collect();
    }
    reads
}

fn gaps(at: &[i64]) -> Vec<i64> {
    at.windows(2).map(|w| w[1] - w[0]).collect()
}

#[test]
fn a_quiet_member_waits_longer_and_is_back_on_the_member_cadence_once_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A GPU process (10) and its tree: 11 asleep and idle, 12 running, 13 in D (waiting on
    // I/O, no CPU), 14 asleep at each read but using CPU in between.
    tree(
        d,
        &[(1, 0), (10, 1), (11, 10), (12, 10), (13, 10), (14, 10)],
        true,
    );
    write_stat_as(d, 11, 10, 1_100, 'S', 7);
    write_stat_as(d, 13, 10, 1_300, 'D', 7);
    let mut s = Scanner::new(d.to_path_buf());
    s.max_kept = 0; // read by path: the fixture's files are rewritten
    let mut members = HashSet::new();
    let reads = member_reads(&mut s, 10, &mut members, 0..60, |now| {
        write_stat_as(d, 14, 10, 1_400, 'S', 10 + now as u64 / 100);
    });
    // The quiet one: read when found and at its phase, then every QUIET_STAT_MS (one tick of
    // slack each way), so about a third as often as the others.
    let quiet = &reads[&11];
    let later = &gaps(quiet)[1..];
    assert!(!later.is_empty());
    assert!(
        later
            .iter()
            .all(|&g| g > MEMBER_STAT_MS && g <= QUIET_STAT_MS),
        "{quiet:?}"
    );
    for pid in [12, 13, 14] {
        let at = &reads[&pid];
        assert!(
            gaps(at).iter().all(|&g| g <= MEMBER_STAT_MS),
            "{pid}: {at:?}"
        );
        assert!(at.len() >= 60 / 5, "{pid}: {at:?}");
        assert!(
            quiet.len() * 2 < at.len(),
            "{pid}: {at:?} against {quiet:?}"
        );
    }
    // 11 starts to run: its next read (within QUIET_STAT_MS) sees it, and from then on it is
    // read at the member cadence.
    let mut cpu = 7;
    let reads = member_reads(&mut s, 10, &mut members, 60..90, |_| {
        cpu += 50;
        write_stat_as(d, 11, 10, 1_100, 'S', cpu);
    });
    let woke = &reads[&11];
    assert!(woke[0] - 59_000 <= QUIET_STAT_MS, "{woke:?}");
    assert!(gaps(woke).iter().all(|&g| g <= MEMBER_STAT_MS), "{woke:?}");
    assert!(woke.len() > (89_000 - woke[0]) as usize / 5_000, "{woke:?}");
}

#[test]
fn a_quiet_member_that_exits_leaves_within_the_quiet_cadence() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    tree(d, &[(1, 0), (10, 1), (11, 10), (12, 10)], true);
    write_stat_as(d, 11, 10, 1_100, 'S', 7);
    let mut s = Scanner::new(d.to_path_buf());
    s.max_kept = 0;
    let mut members = HashSet::new();
    let reads = member_reads(&mut s, 10, &mut members, 0..30, |_| {});
    assert!(
        gaps(&reads[&11])
            .last()
            .is_some_and(|&g| g > MEMBER_STAT_MS)
    );
    std::fs::remove_dir_all(d.join("11")).unwrap();
    write_children(d, 10, &[12]);
    let gone_at = (30..=30 + QUIET_STAT_MS / 1_000)
        .map(|k| k * 1_000)
        .find(|&t| {
            member_reads(&mut s, 10, &mut members, t / 1_000..t / 1_000 + 1, |_| {});
            !members.contains(&11)
        })
        .expect("the exited member leaves");
    assert!(gone_at - 30_000 <= QUIET_STAT_MS, "gone at {gone_at}");
    assert!(members.contains(&12));
}

#[test]
fn the_same_answer_as_procfs_for_this_machine() {
    // Our own stat, parsed both ways.
    let raw = std::fs::read("/proc/self/stat").unwrap();
    let ours = parse_stat(&raw).unwrap();
    let theirs = {
        use procfs::FromRead;
        procfs::process::Stat::from_read(raw.as_slice()).unwrap()
    };
    assert_eq!(ours.ppid as i32, theirs.ppid);
    assert_eq!(&*ours.comm, theirs.comm.as_str());
    assert_eq!(ours.start_ticks, theirs.starttime);
    assert_eq!(ours.cpu_ticks, theirs.utime + theirs.stime);
    assert_eq!(ours.rss_pages, theirs.rss);
}

/// Ticks of the scanner over `roots` with `watched`, noting when each root's stat was read.
fn root_reads(
    s: &mut Scanner,
    roots: &[u32],
    watched: &Watched,
    ticks: std::ops::Range<i64>,
) -> HashMap<u32, Vec<i64>> {
    let mut reads: HashMap<u32, Vec<i64>> = HashMap::new();
    for k in ticks {
        let now = k * 1_000;
        let scan = s.scan(now, roots, &HashSet::new(), watched, CAP).unwrap();
        for r in roots {
            assert!(scan.stats.contains_key(r), "{r} is in every tick's reading");
            if !scan.carried.contains(r) {
                reads.entry(*r).or_default().push(now);
            }
        }
    }
    reads
}

#[test]
fn gpu_processes_not_shown_are_read_at_the_member_cadence_twice_at_first_and_spread() {
    let dir = tempfile::tempdir().unwrap();
    let mut procs = vec![(1, 0)];
    procs.extend((100..120).map(|p| (p, 1)));
    tree(dir.path(), &procs, true);
    let roots: Vec<u32> = (100..120).collect();
    let mut s = Scanner::new(dir.path().to_path_buf());
    // The dashboard shows 100 and 101; the others are off screen.
    let watched = Watched::only([100, 101]);
    let reads = root_reads(&mut s, &roots, &watched, 0..30);
    for (pid, at) in &reads {
        if watched.covers(*pid) {
            assert_eq!(at.len(), 30, "{pid}: shown, read every tick");
            continue;
        }
        // Found at 0 and read again at 1 s (its first CPU %), then at most MEMBER_STAT_MS
        // apart, and far from every tick.
        assert_eq!(&at[..2], &[0, 1_000], "{pid}: {at:?}");
        let gaps: Vec<i64> = at.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps.iter().all(|&g| g <= MEMBER_STAT_MS), "{pid}: {gaps:?}");
        assert!(at.len() <= 2 + 29 * 1_000 / (MEMBER_STAT_MS - EARLY_MS) as usize + 1);
    }
    // Spread: no tick after the first two reads all 18 at once.
    let mut per_tick: HashMap<i64, usize> = HashMap::new();
    for (pid, at) in &reads {
        if !watched.covers(*pid) {
            for &t in at.iter().filter(|&&t| t >= 2_000) {
                *per_tick.entry(t).or_default() += 1;
            }
        }
    }
    let max = per_tick.values().copied().max().unwrap();
    assert!(
        max <= 18 / 2,
        "at most {max} of 18 in one tick: {per_tick:?}"
    );
}

#[test]
fn a_gpu_process_shown_is_read_at_once_and_one_no_longer_shown_waits_its_cadence() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path(), &[(1, 0), (100, 1), (101, 1)], true);
    let roots = [100, 101];
    let mut s = Scanner::new(dir.path().to_path_buf());
    let none = Watched::only([]);
    root_reads(&mut s, &roots, &none, 0..8);
    // Scrolled onto the screen: read at once, then every tick.
    let shown = Watched::only([101]);
    let reads = root_reads(&mut s, &roots, &shown, 8..12);
    assert_eq!(reads[&101], vec![8_000, 9_000, 10_000, 11_000]);
    // Off the screen again: its last read counts, the next is a cadence later.
    let reads = root_reads(&mut s, &roots, &none, 12..12 + MEMBER_STAT_MS / 1_000 + 1);
    let next = reads[&101][0];
    assert!(next > 12_000 && next - 11_000 <= MEMBER_STAT_MS, "{next}");
}

/// A shell that forks a sleeping child when a line comes on its stdin.
fn forks_on_a_line() -> (super::super::tests::live::Reaped, std::process::ChildStdin) {
    let mut sh = std::process::Command::new("sh")
        .args(["-c", "read _; sleep 30 & wait"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = sh.stdin.take().unwrap();
    (super::super::tests::live::Reaped(sh), stdin)
}

/// The children `pid`'s main thread has now, waiting up to 10 s for one.
fn await_a_child(pid: u32) -> u32 {
    for _ in 0..1_000 {
        let list = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"));
        if let Some(kid) = list
            .ok()
            .and_then(|l| l.split_whitespace().next()?.parse().ok())
        {
            return kid;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("{pid} forked no child");
}

#[test]
fn a_children_list_waits_while_no_pid_is_given_out_and_is_read_once_one_is() {
    use std::io::Write;
    let (sh, mut stdin) = forks_on_a_line();
    let root = sh.0.id();
    let mut s = Scanner::new(PathBuf::from("/proc"));
    let none = HashSet::new();
    // The first tick walks; the second lists /proc whole, and learns that this procfs's
    // `loadavg` names its own pids.
    s.scan(0, &[root], &none, &ALL, CAP).unwrap();
    s.scan(1_000, &[root], &none, &ALL, CAP).unwrap();
    assert!(
        s.dir.names_own_pids(),
        "the tests run on a procfs of their own"
    );
    // The caller's `loadavg` names the same last pid at every tick from here on (a fixed
    // number: the real one moves with every test running beside this one).
    const LAST: u32 = 4_000_000;
    let mut t = 2_000;
    let tick = |s: &mut Scanner, t: &mut i64, last: u32| {
        *t += CHILDREN_MS;
        s.note_last_pid(*t, Some(last));
        s.scan(*t, &[root], &none, &ALL, CAP).unwrap();
    };
    // Read once more (its last read came before the first note), then not again.
    tick(&mut s, &mut t, LAST);
    let quiet = s.children_reads;
    for _ in 0..3 {
        tick(&mut s, &mut t, LAST);
    }
    assert_eq!(s.children_reads, quiet, "no pid given out: no list read");
    // A child is born, but the last pid (as given here) says none was: not looked for.
    writeln!(stdin).unwrap();
    let kid = await_a_child(root);
    tick(&mut s, &mut t, LAST);
    assert_eq!(s.children_reads, quiet);
    assert!(!s.cadence.contains_key(&kid), "not walked to");
    // A pid given out: the list is read at the next due tick, and the child is in the tree.
    tick(&mut s, &mut t, LAST + 1);
    assert_eq!(
        s.children_reads,
        quiet + 2,
        "the root's list, then the child's own"
    );
    assert!(s.cadence.contains_key(&kid), "walked to");
}

#[test]
fn a_last_pid_not_of_this_procfs_leaves_the_children_lists_at_their_cadence() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path(), &[(1, 0), (10, 1), (11, 10)], true);
    let mut s = Scanner::new(dir.path().to_path_buf());
    let members: HashSet<u32> = [11].into_iter().collect();
    let mut reads = Vec::new();
    for k in 0..12i64 {
        let now = k * 1_000;
        let before = s.children_reads;
        // A fixture's `loadavg` is no procfs's: the same last pid proves nothing.
        s.note_last_pid(now, Some(77));
        s.scan(now, &[10], &members, &ALL, CAP).unwrap();
        reads.push(s.children_reads - before);
    }
    // The two tree processes' lists, each read every CHILDREN_MS.
    let total: u64 = reads.iter().sum();
    assert!(total >= 2 * 12 * 1_000 / CHILDREN_MS as u64, "{reads:?}");
}
