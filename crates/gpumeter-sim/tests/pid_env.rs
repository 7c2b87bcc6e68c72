//! `pid_env` (a process whose pid comes from the environment, for the fake NVML) and thousands
//! of processes on one GPU through `count` + `gpu_stride = 0`.
// Always true in a test crate; it lets clippy.toml's allow-*-in-tests cover helpers, not only #[test] fns.
#![cfg(test)]

use gpumeter_sim::{Scenario, Simulator};

const BASE: &str = r#"
name = "t"
description = "test"
[[gpu]]
count = 2
name = "Test GPU"
memory_total_gib = 16
[[process]]
pid = 100
pid_env = "FAKE_TRAINER_PID"
gpus = [{ gpu = 0, memory_gib = { const = 1 } }]
[[process]]
pid = 5000
count = 3000
gpu_stride = 0
gpus = [{ gpu = 1, memory_gib = { const = 0.01 } }]
"#;

fn pids(s: &Scenario) -> Vec<u32> {
    let mut sim = Simulator::new(s.clone());
    sim.truth_at(0, 0).processes.iter().map(|p| p.pid).collect()
}

#[test]
fn pid_env_replaces_the_pid_when_set() {
    let mut s = Scenario::from_toml("t.toml", BASE).unwrap();
    s.resolve_pid_env("t.toml", |name| {
        (name == "FAKE_TRAINER_PID").then(|| " 4242 ".to_string())
    })
    .unwrap();
    assert_eq!(pids(&s)[0], 4242);
}

#[test]
fn pid_env_unset_keeps_the_pid() {
    let mut s = Scenario::from_toml("t.toml", BASE).unwrap();
    s.resolve_pid_env("t.toml", |_| None).unwrap();
    assert_eq!(pids(&s)[0], 100);
}

#[test]
fn pid_env_that_is_not_a_pid_names_the_field_and_variable() {
    let mut s = Scenario::from_toml("t.toml", BASE).unwrap();
    let e = s
        .resolve_pid_env("t.toml", |_| Some("abc".into()))
        .unwrap_err()
        .to_string();
    assert!(e.contains("process[0].pid_env"), "{e}");
    assert!(e.contains("$FAKE_TRAINER_PID"), "{e}");
}

#[test]
fn pid_env_colliding_with_another_pid_is_rejected() {
    let mut s = Scenario::from_toml("t.toml", BASE).unwrap();
    let e = s
        .resolve_pid_env("t.toml", |_| Some("5001".into()))
        .unwrap_err()
        .to_string();
    assert!(e.contains("used twice"), "{e}");
}

#[test]
fn empty_pid_env_is_rejected_at_load() {
    let text = BASE.replace("\"FAKE_TRAINER_PID\"", "\"\"");
    let e = Scenario::from_toml("t.toml", &text)
        .unwrap_err()
        .to_string();
    assert!(e.contains("process[0].pid_env"), "{e}");
}

#[test]
fn gpu_stride_zero_puts_thousands_of_consecutive_pids_on_one_gpu() {
    let s = Scenario::from_toml("t.toml", BASE).unwrap();
    let mut sim = Simulator::new(s);
    let snap = sim.truth_at(1_000, 0);
    let on_gpu1: Vec<u32> = snap
        .processes
        .iter()
        .filter(|p| p.gpu.iter().any(|u| u.gpu_index == 1))
        .map(|p| p.pid)
        .collect();
    assert_eq!(on_gpu1.len(), 3000);
    assert_eq!(on_gpu1.first(), Some(&5000));
    assert_eq!(on_gpu1.last(), Some(&7999));
}
