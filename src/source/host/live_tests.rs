//! One test against the real /proc of the machine running the tests.

use std::collections::BTreeMap;
use std::process::{Child, Command};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use gpumeter_model::{GpuProcessKind, GpuUse};

use super::HostSampler;

/// Kills the child even when an assertion fails.
struct Reaped(Child);

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
