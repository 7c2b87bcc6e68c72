use std::os::unix::fs::DirEntryExt;
use std::path::PathBuf;
use std::process::Command;

use super::super::tests::live::Reaped;
use super::{Listed, ProcDir};

fn sleeper() -> Reaped {
    Reaped(Command::new("sleep").arg("5").spawn().unwrap())
}

fn pids(listed: &[(u32, u64)]) -> Vec<u32> {
    listed.iter().map(|&(pid, _)| pid).collect()
}

#[test]
fn a_whole_listing_of_proc_is_in_pid_order_with_the_inodes_read_dir_gives() {
    let child = sleeper();
    let mut dir = ProcDir::new(PathBuf::from("/proc"));
    let mut listed = Vec::new();
    assert_eq!(dir.list(false, &mut listed).unwrap(), Listed::Whole);
    let got = pids(&listed);
    assert!(got.is_sorted(), "{got:?}");
    assert!(dir.base.is_some(), "this procfs allows resumed listings");
    assert!(dir.loadavg.is_some(), "its loadavg is procfs's own");
    let own = std::process::id();
    for pid in [own, child.0.id()] {
        let ino = std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(Result::ok)
            .find(|e| e.file_name().to_str() == Some(&pid.to_string()))
            .map(|e| e.ino());
        let here = listed.iter().find(|&&(p, _)| p == pid).map(|&(_, ino)| ino);
        assert!(
            here.is_some() && here == ino,
            "pid {pid}: {here:?} vs {ino:?}"
        );
    }
}

#[test]
fn a_resumed_listing_holds_the_processes_born_since_the_last_and_no_others() {
    let old = sleeper();
    let mut dir = ProcDir::new(PathBuf::from("/proc"));
    let mut listed = Vec::new();
    assert_eq!(
        dir.list(true, &mut listed).unwrap(),
        Listed::Whole,
        "the first is whole"
    );
    assert!(pids(&listed).contains(&1));
    let born = sleeper();
    let born_pid = born.0.id();
    let gone = sleeper();
    let gone_pid = gone.0.id();
    drop(gone);
    assert_eq!(dir.list(true, &mut listed).unwrap(), Listed::Born);
    let got = pids(&listed);
    assert!(got.contains(&born_pid), "{born_pid} not in {got:?}");
    for pid in [1, std::process::id(), old.0.id(), gone_pid] {
        assert!(!got.contains(&pid), "{pid} in {got:?}");
    }
    // The next one starts after this one.
    let later = sleeper();
    assert_eq!(dir.list(true, &mut listed).unwrap(), Listed::Born);
    let got = pids(&listed);
    assert!(
        got.contains(&later.0.id()) && !got.contains(&born_pid),
        "{got:?}"
    );
    // Asked for whole, it is whole again.
    assert_eq!(dir.list(false, &mut listed).unwrap(), Listed::Whole);
    let got = pids(&listed);
    assert!([1, born_pid, later.0.id()].iter().all(|p| got.contains(p)));
}

#[test]
fn after_the_pids_wrapped_a_resumed_listing_goes_on_from_the_lowest() {
    let mut dir = ProcDir::new(PathBuf::from("/proc"));
    let mut listed = Vec::new();
    dir.list(true, &mut listed).unwrap();
    let born = sleeper();
    // As if the last listing came just before the pids wrapped.
    let pid_max: u32 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    dir.last_pid = Some(pid_max - 1);
    assert_eq!(dir.list(true, &mut listed).unwrap(), Listed::Born);
    let got = pids(&listed);
    assert!(got.contains(&1) && got.contains(&born.0.id()), "{got:?}");
}

#[test]
fn a_directory_that_is_not_a_procfs_is_always_listed_whole() {
    let fixture = tempfile::tempdir().unwrap();
    for name in ["30", "7", "self", "12x", "100"] {
        std::fs::create_dir(fixture.path().join(name)).unwrap();
    }
    std::fs::write(fixture.path().join("loadavg"), "0.00 0.00 0.00 1/3 100\n").unwrap();
    let mut dir = ProcDir::new(fixture.path().to_path_buf());
    let mut listed = Vec::new();
    assert_eq!(dir.list(true, &mut listed).unwrap(), Listed::Whole);
    let mut got = pids(&listed);
    got.sort_unstable();
    assert_eq!(got, [7, 30, 100]);
    std::fs::create_dir(fixture.path().join("2")).unwrap();
    std::fs::write(fixture.path().join("loadavg"), "0.00 0.00 0.00 1/4 2\n").unwrap();
    assert_eq!(dir.list(true, &mut listed).unwrap(), Listed::Whole);
    let mut got = pids(&listed);
    got.sort_unstable();
    assert_eq!(got, [2, 7, 30, 100]);
}

#[test]
fn a_position_the_directory_refuses_means_a_whole_listing() {
    let mut dir = ProcDir::new(PathBuf::from("/proc"));
    let mut listed = Vec::new();
    dir.list(true, &mut listed).unwrap();
    dir.last_pid = Some(u32::MAX - 5);
    assert_eq!(dir.list(true, &mut listed).unwrap(), Listed::Whole);
    assert!(pids(&listed).contains(&1));
    // That listing learnt the positions again.
    assert_eq!(dir.list(true, &mut listed).unwrap(), Listed::Born);
}

#[test]
fn a_missing_directory_is_an_error() {
    let mut dir = ProcDir::new(PathBuf::from("/nonexistent/proc"));
    assert!(dir.list(false, &mut Vec::new()).is_err());
}
