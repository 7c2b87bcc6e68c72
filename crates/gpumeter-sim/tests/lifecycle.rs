//! Processes and signals that start late, stop, and repeat: a sweep's trials, a loop that
//! begins after loading, a job that ends.
// Always true in a test crate; it lets clippy.toml's allow-*-in-tests cover helpers, not only #[test] fns.
#![cfg(test)]

use gpumeter_sim::{Scenario, Simulator};

const BASE: &str = r#"
name = "t"
description = "t"
[[gpu]]
count = 1
name = "G"
memory_total_gib = 80
util_gpu_pct = { square = { low = 0, high = 90, period_s = 100, duty = 0.5 }, starts = [20, 5], ends = [300, 1] }
"#;

fn sim(extra: &str) -> Simulator {
    Simulator::new(Scenario::from_toml("t.toml", &format!("{BASE}{extra}")).unwrap())
}

fn pids_at(sim: &mut Simulator, t_s: u64) -> Vec<u32> {
    sim.snapshot_at(t_s * 1000, 1_700_000_000_000 + (t_s * 1000) as i64)
        .processes
        .iter()
        .map(|p| p.pid)
        .collect()
}

#[test]
fn a_signal_holds_its_start_value_before_starts_and_its_end_value_from_ends() {
    let mut s = sim("");
    let util = |s: &mut Simulator, t: u64| s.snapshot_at(t * 1000, 0).gpus[0].util_gpu_pct;
    assert_eq!(util(&mut s, 10), Some(5));
    assert_eq!(util(&mut s, 20), Some(90));
    assert_eq!(util(&mut s, 70), Some(0));
    assert_eq!(util(&mut s, 299), Some(0));
    assert_eq!(util(&mut s, 300), Some(1));
}

#[test]
fn repeated_processes_come_and_go_with_their_own_pids_and_start_times() {
    let mut s = sim(r#"
[[process]]
pid = 100
count = 2
command = "python train.py --trial {trial} --rank {rank}"
start_offset_s = 10
until_s = 40
repeat = { every_s = 50, times = 3 }
gpus = [{ gpu = 0, memory_gib = { const = 1 } }]
gpu_stride = 0
"#);
    assert!(pids_at(&mut s, 5).is_empty(), "not started yet");
    assert_eq!(pids_at(&mut s, 10), vec![100, 101]);
    assert!(pids_at(&mut s, 45).is_empty(), "between trials");
    assert_eq!(pids_at(&mut s, 60), vec![102, 103]);
    let snap = s.snapshot_at(110_000, 1_700_000_110_000);
    let p = &snap.processes[0];
    assert_eq!(p.pid, 104);
    assert_eq!(
        p.command.as_deref(),
        Some("python train.py --trial 2 --rank 0")
    );
    assert_eq!(p.start_time_unix_s, Some(1_700_000_000 + 110));
    assert!(pids_at(&mut s, 160).is_empty(), "three trials only");
}

#[test]
fn a_repeat_that_reuses_pids_or_never_advances_is_refused() {
    let body = |repeat: &str| {
        format!(
            "{BASE}[[process]]\npid = 100\ncount = 2\ngpus = [{{ gpu = 0 }}]\ngpu_stride = 0\n\
             repeat = {repeat}\n"
        )
    };
    let err = Scenario::from_toml("t.toml", &body("{ every_s = 60, times = 2, pid_step = 1 }"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("process[0].pid") && err.contains("used twice"),
        "{err}"
    );
    let err = Scenario::from_toml("t.toml", &body("{ every_s = 0, times = 2 }"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("process[0].repeat"), "{err}");
}

#[test]
fn a_process_parent_and_the_network_mounts_reach_the_reading() {
    let mut s = sim(
        "[host]\nnetwork_mounts = [\"nfs4 /data\"]\n[[process]]\npid = 10\nppid = 9\nparent = \"bash\"\ngpus = [{ gpu = 0, memory_gib = { const = 1 } }]\n",
    );
    let snap = s.snapshot_at(1000, 1_700_000_001_000);
    assert_eq!(snap.host.network_mounts, vec!["nfs4 /data".into()]);
    assert_eq!(snap.processes[0].parent_name.as_deref(), Some("bash"));
}

#[test]
fn a_process_pod_names_it_its_workers_and_its_gpus() {
    let mut s = sim("[[gpu]]\ncount = 1\nname = \"G\"\nmemory_total_gib = 80\n\
         [[process]]\npid = 10\ncontainer = \"3f9c2b7e1a04\"\npod = { name = \"trainer-7f9c\", namespace = \"ml\", container = \"trainer\" }\n\
         workers = { count = 1 }\ngpus = [{ gpu = 0, memory_gib = { const = 1 } }]\n\
         [[process]]\npid = 20\ncontainer = \"aa11bb22cc33\"\npod = { uid = \"7b3e91f0-2c4d-4e6f-8a1b-3c5d7e9f0a12\" }\n\
         gpus = [{ gpu = 1, memory_gib = { const = 1 } }]\n\
         [[process]]\npid = 30\ngpus = [{ gpu = 1, memory_gib = { const = 1 } }]\n");
    let snap = s.snapshot_at(1000, 1_700_000_001_000);
    let pod = |pid: u32| {
        snap.processes
            .iter()
            .find(|p| p.pid == pid)
            .and_then(|p| p.pod.clone())
    };
    let trainer = pod(10).unwrap();
    assert_eq!(trainer.pod.as_deref(), Some("trainer-7f9c"));
    assert_eq!(trainer.namespace.as_deref(), Some("ml"));
    assert_eq!(trainer.container.as_deref(), Some("trainer"));
    // Its worker is in the same pod.
    assert_eq!(pod(11), Some(trainer.clone()));
    // A pod known by its UID only: the container is the process's id, as a cgroup gives it.
    let by_uid = pod(20).unwrap();
    assert_eq!(by_uid.pod, None);
    assert_eq!(by_uid.short_name(), Some("7b3e91f0"));
    assert_eq!(by_uid.container.as_deref(), Some("aa11bb22cc33"));
    assert_eq!(pod(30), None);
    // Each GPU is its processes' pods', once; a GPU no pod uses has none.
    assert_eq!(snap.gpus[0].pods, vec![trainer]);
    assert_eq!(snap.gpus[1].pods, vec![by_uid]);
    let mut bare = sim("[[process]]\npid = 10\ngpus = [{ gpu = 0, memory_gib = { const = 1 } }]\n");
    let snap = bare.snapshot_at(1000, 1_700_000_001_000);
    assert!(snap.gpus.iter().all(|g| g.pods.is_empty()));
    assert_eq!(snap.processes[0].pod, None);
}
