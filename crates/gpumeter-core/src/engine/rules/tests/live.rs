//! End to end on this machine: real CPU-burning processes under a parent that stands in for a
//! training job's GPU process, the real /proc sampler, a synthetic low-util GPU reading (what a
//! GPU waiting on its input shows), and the starved rule must name the CPU-bound pipeline with
//! those PIDs. The burners are many, pinned to one CPU when `taskset` exists and a little
//! favoured by `nice` where allowed, so that other work on a shared machine cannot dilute them
//! below the saturation threshold.

use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use gpumeter_model::{GpuProcessKind, GpuReading, GpuUse, Snapshot};

use super::super::{Rules, RulesConfig};
use crate::clock::{Clock, SystemClock};
use crate::source::host::HostSampler;

/// Kills the whole burner group even when an assertion fails.
struct Burners(Child);

impl Drop for Burners {
    fn drop(&mut self) {
        let pid = self.0.id();
        // The children first, each by its pid (found by their parent's pid), then the parent:
        // killed first, it would leave them to init, out of reach.
        for child in children_of(pid) {
            let _ = Command::new("kill")
                .args(["-KILL", &child.to_string()])
                .status();
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Pids whose parent is `parent`, from /proc/*/stat.
fn children_of(parent: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                // Fields after the parenthesised comm: state, ppid, …
                stat.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok())
                    == Some(parent)
            })
        })
        .collect()
}

#[test]
fn real_cpu_burners_are_named_as_a_cpu_bound_pipeline() {
    let pinned = Command::new("taskset")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    // Many burners, so that other work sharing the CPU (a parallel test run) cannot take more
    // than a small share of it.
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let n = if pinned { 24 } else { 12 * cores };
    let script = format!("for i in $(seq {n}); do sh -c 'while :; do :; done' & done; wait");
    // A little more priority where allowed (root): a loaded machine then still leaves the
    // burners most of their CPU. Without the right, nice says so and runs them anyway.
    let mut cmd = Command::new("nice");
    cmd.args(["-n", "-5"]);
    if pinned {
        cmd.args(["taskset", "-c", "0"]);
    }
    cmd.args(["sh", "-c", &script]).stderr(Stdio::null());
    let burners = Burners(cmd.spawn().unwrap());
    let parent = burners.0.id();

    let gpu_procs: BTreeMap<u32, Vec<GpuUse>> = BTreeMap::from([(
        parent,
        vec![GpuUse {
            gpu_index: 0,
            kind: GpuProcessKind::Compute,
            memory_bytes: Some(8 << 30),
            sm_util_pct: Some(30),
            memory_util_pct: None,
        }],
    )]);
    let mut cfg = RulesConfig::default();
    cfg.starved.window_ms = 3_000;
    // The burners are seconds old: no warm-up hold in a test of the live sampler.
    cfg.starved.warmup_ms = 0;
    let mut rules = Rules::new(cfg);
    let mut sampler = HostSampler::new();
    let mut verdict = None;
    let mut children: Vec<u32> = Vec::new();
    // The verdict may start unclassified while the sampler warms up: wait for it to settle.
    for _ in 0..60 {
        std::thread::sleep(Duration::from_millis(500));
        let now = SystemClock.now_unix_ms();
        let host = sampler.sample(now, &gpu_procs);
        let mut snap = Snapshot::empty("live", now);
        snap.system = host.system;
        snap.host = host.host;
        snap.processes = host.processes;
        snap.gpus = vec![GpuReading {
            index: 0,
            util_gpu_pct: Some(30),
            util_memory_pct: Some(10),
            pcie_rx_bytes_per_s: Some(50_000_000),
            ..GpuReading::default()
        }];
        children = snap
            .processes
            .iter()
            .filter(|p| p.ppid == Some(parent))
            .map(|p| p.pid)
            .collect();
        rules.evaluate(
            &snap,
            now,
            Some(crate::money::Money::from_micros(10_000_000)),
        );
        verdict = rules
            .alerts()
            .iter()
            .find(|a| {
                a.evidence
                    .iter()
                    .any(|(k, v)| k == "verdict" && v == "CPU-bound input")
            })
            .cloned();
        // On a contended machine the verdict can come (from CPU pressure) before the burners
        // have outrun the short-lived shells that start them: wait until the busiest 16 named
        // are burners, as on a quiet machine.
        let settled = verdict.as_ref().is_some_and(|a| {
            a.evidence
                .iter()
                .find(|(k, _)| k == "processes (pid name CPU)")
                .is_some_and(|(_, named)| {
                    named
                        .split(", ")
                        .filter_map(|e| e.split(' ').next()?.parse::<u32>().ok())
                        .all(|p| children.contains(&p))
                })
        });
        if settled {
            break;
        }
    }
    assert_eq!(
        children.len(),
        n,
        "the sampler sees the burners under {parent}"
    );
    let a =
        verdict.unwrap_or_else(|| panic!("no CPU-bound verdict; alerts: {:#?}", rules.alerts()));
    let ev = |k: &str| {
        a.evidence
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
            .unwrap()
    };
    assert_eq!(ev("verdict"), "CPU-bound input", "{a:#?}");
    assert_eq!(a.id, format!("starved:pid-{parent}"));
    assert!(
        a.title
            .contains("consistent with a CPU-bound input pipeline"),
        "{}",
        a.title
    );
    // The busiest processes are named by pid (16 of them, then "… N more"): all burners.
    let named = ev("processes (pid name CPU)");
    let pids: Vec<u32> = named
        .split(", ")
        .filter_map(|entry| entry.split(' ').next()?.parse().ok())
        .collect();
    assert_eq!(pids.len(), 16, "{named}");
    assert!(
        pids.iter().all(|p| children.contains(p)),
        "{named} vs {children:?}"
    );
    assert!(
        named.ends_with(&format!("… {} more", n + 1 - 16)),
        "{named}"
    );
    if pinned {
        assert!(ev("job CPU").contains("of 1.0 cores"), "{}", ev("job CPU"));
    }
}
