//! One test against the real /proc of the machine running the tests.

use std::collections::BTreeMap;
use std::process::{Child, Command};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use gpumeter_model::{GpuProcessKind, GpuUse};

use super::super::HostSampler;

/// Kills the child even when an assertion fails.
pub(in crate::source::host) struct Reaped(pub(in crate::source::host) Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// `pid` as a compute process on GPU 0.
fn on_gpu0(pid: u32) -> BTreeMap<u32, Vec<GpuUse>> {
    let uses = vec![GpuUse {
        gpu_index: 0,
        kind: GpuProcessKind::Compute,
        memory_bytes: None,
        sm_util_pct: None,
        memory_util_pct: None,
    }];
    [(pid, uses)].into_iter().collect()
}

/// A sleeping child forked by a thread other than the main one, which lives on until `done`
/// is sent (a child of an exited thread goes to another thread).
fn fork_from_another_thread() -> (
    u32,
    std::sync::mpsc::Sender<()>,
    std::thread::JoinHandle<()>,
) {
    let (to_test, from_forker) = std::sync::mpsc::channel();
    let (done, wait_done) = std::sync::mpsc::channel::<()>();
    let forker = std::thread::spawn(move || {
        let child = Reaped(Command::new("sleep").arg("5").spawn().unwrap());
        to_test.send(child.0.id()).unwrap();
        let _ = wait_done.recv();
        drop(child);
    });
    (from_forker.recv().unwrap(), done, forker)
}

#[test]
fn live_proc_sees_this_test_and_its_child() {
    let child = Reaped(Command::new("sleep").arg("5").spawn().unwrap());
    let child_pid = child.0.id();
    let own_pid = std::process::id();
    let uses = |gpu_index| {
        vec![GpuUse {
            gpu_index,
            kind: GpuProcessKind::Compute,
            memory_bytes: None,
            sm_util_pct: None,
            memory_util_pct: None,
        }]
    };
    let gpu_procs: BTreeMap<u32, Vec<GpuUse>> = [(child_pid, uses(0)), (own_pid, uses(1))]
        .into_iter()
        .collect();

    let mut sampler = HostSampler::new();
    let first = sampler.sample(now_ms(), &gpu_procs);
    assert_eq!(first.host.cpu_util_pct, None);
    std::thread::sleep(Duration::from_millis(300));
    let second = sampler.sample(now_ms(), &gpu_procs);

    let host = &second.host;
    assert!(host.cpu_count.is_some_and(|n| n >= 1), "{host:?}");
    assert!(host.mem_total_bytes.is_some_and(|m| m > 0), "{host:?}");
    assert!(
        host.cpu_util_pct
            .is_some_and(|u| (0.0..=100.0).contains(&u)),
        "{host:?}"
    );
    assert!(
        second
            .system
            .boot_time_unix_s
            .is_some_and(|b| b > 0 && b * 1000 < now_ms())
    );

    let find = |pid: u32| {
        let matches: Vec<_> = second.processes.iter().filter(|p| p.pid == pid).collect();
        assert_eq!(
            matches.len(),
            1,
            "pid {pid} once in {:#?}",
            second.processes
        );
        matches[0]
    };
    let sleeper = find(child_pid);
    assert!(sleeper.visible);
    assert!(
        sleeper
            .command
            .as_deref()
            .is_some_and(|c| c.contains("sleep")),
        "{sleeper:?}"
    );
    assert_eq!(sleeper.ppid, Some(own_pid));
    assert!(
        sleeper.user.as_deref().is_some_and(|u| !u.is_empty()),
        "{sleeper:?}"
    );
    assert!(sleeper.cpu_pct.is_some(), "{sleeper:?}");
    assert_eq!(sleeper.gpu.len(), 1);
    let start = sleeper.start_time_unix_s.unwrap();
    assert!((start - now_ms() / 1000).abs() < 120, "start {start}");

    let me = find(own_pid);
    assert!(me.visible);
    assert!(me.rss_bytes.is_some_and(|r| r > 0));
    assert!(me.threads.is_some_and(|t| t >= 1));
    assert_eq!(me.user, sleeper.user);
}

#[test]
fn a_child_forked_by_another_thread_is_found_by_the_listing_and_kept() {
    // Forked by a thread other than the main one, which lives on (a child of an exited thread
    // goes to another thread): not in the main thread's children list, so only a listing of
    // /proc finds it.
    let (child_pid, done, forker) = fork_from_another_thread();
    let own_pid = std::process::id();
    let gpu_procs = on_gpu0(own_pid);
    let mut sampler = HostSampler::new();
    let t = now_ms();
    sampler.sample(t, &gpu_procs);
    for (tick, at) in [(2, t + 1_000), (3, t + 2_000)] {
        let reading = sampler.sample(at, &gpu_procs);
        let kid = reading.processes.iter().find(|p| p.pid == child_pid);
        assert!(
            kid.is_some_and(|k| k.ppid == Some(own_pid) && k.name.as_deref() == Some("sleep")),
            "tick {tick}: {kid:?}"
        );
    }
    done.send(()).unwrap();
    forker.join().unwrap();
}

#[test]
fn a_child_forked_by_another_thread_later_is_found_by_the_next_resumed_listing() {
    let own_pid = std::process::id();
    let gpu_procs = on_gpu0(own_pid);
    let mut sampler = HostSampler::new();
    let t = now_ms();
    sampler.sample(t, &gpu_procs);
    // The whole listing, before the child is born.
    sampler.sample(t + 1_000, &gpu_procs);
    let (child_pid, done, forker) = fork_from_another_thread();
    let find = |reading: &super::super::HostSample| {
        reading
            .processes
            .iter()
            .find(|p| p.pid == child_pid)
            .cloned()
    };
    let before = sampler.sample(t + 2_000, &gpu_procs);
    assert!(find(&before).is_none(), "no listing due yet");
    let listed = sampler.sample(t + 1_000 + super::super::scan::LISTING_MS, &gpu_procs);
    let kid = find(&listed);
    assert!(
        kid.as_ref()
            .is_some_and(|k| k.ppid == Some(own_pid) && k.name.as_deref() == Some("sleep")),
        "{kid:?}"
    );
    done.send(()).unwrap();
    forker.join().unwrap();
}

#[test]
fn a_worker_that_exits_leaves_the_tree_and_its_sibling_stays() {
    // A GPU process with two workers; the first worker is killed between ticks (its kept stat
    // file then reads as an error, never as a process that got the pid).
    let sh = Reaped(
        Command::new("sh")
            .args(["-c", "sleep 5 & sleep 5 & wait"])
            .spawn()
            .unwrap(),
    );
    let root = sh.0.id();
    let gpu_procs: BTreeMap<u32, Vec<GpuUse>> = [(
        root,
        vec![GpuUse {
            gpu_index: 0,
            kind: GpuProcessKind::Compute,
            memory_bytes: None,
            sm_util_pct: None,
            memory_util_pct: None,
        }],
    )]
    .into_iter()
    .collect();
    let mut sampler = HostSampler::new();
    let t = now_ms();
    let workers = |at: i64, sampler: &mut HostSampler| -> Vec<u32> {
        let reading = sampler.sample(at, &gpu_procs);
        let mut w: Vec<u32> = reading
            .processes
            .iter()
            .filter(|p| p.ppid == Some(root))
            .map(|p| p.pid)
            .collect();
        w.sort_unstable();
        w
    };
    // sh may take a moment to fork both.
    let mut tick = 0;
    let mut seen = Vec::new();
    while seen.len() < 2 && tick < 200 {
        tick += 1;
        std::thread::sleep(Duration::from_millis(10));
        seen = workers(t + tick * 100, &mut sampler);
    }
    assert_eq!(seen.len(), 2, "{seen:?}");
    let (gone, stays) = (seen[0], seen[1]);
    Command::new("kill").arg(gone.to_string()).status().unwrap();
    // sh reaps it soon after (a zombie still has a stat).
    let mut now = seen.clone();
    while now.contains(&gone) && tick < 400 {
        tick += 1;
        std::thread::sleep(Duration::from_millis(10));
        now = workers(t + tick * 100, &mut sampler);
    }
    assert_eq!(now, vec![stays]);
}
