//! The built-in scenarios: they parse, they are deterministic, and each shows the pattern it
//! is named for.
// Always true in a test crate; it lets clippy.toml's allow-*-in-tests cover helpers, not only #[test] fns.
#![cfg(test)]

use gpumeter_model::{GpuState, Snapshot};
use gpumeter_sim::{Scenario, Simulator, builtin_scenarios};

const T0: i64 = 1_750_000_000_000;

fn sim(name: &str) -> Simulator {
    Simulator::new(Scenario::builtin(name).unwrap_or_else(|| panic!("builtin {name}")))
}

fn at(sim: &mut Simulator, s: u64) -> Snapshot {
    sim.snapshot_at(s * 1000, T0 + (s * 1000) as i64)
}

/// Mean GPU util over all GPUs, sampled once a second for `secs`.
fn mean_util(sim: &mut Simulator, secs: u64) -> f64 {
    let mut sum = 0.0;
    let mut n = 0.0;
    for s in 0..secs {
        for g in at(sim, s).gpus {
            sum += f64::from(g.util_gpu_pct.unwrap());
            n += 1.0;
        }
    }
    sum / n
}

#[test]
fn all_builtins_parse_and_are_listed_in_order() {
    let list = builtin_scenarios();
    let names: Vec<&str> = list.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names,
        [
            "training",
            "cpu-starved",
            "io-starved",
            "idle",
            "forgotten",
            "gpu-lost",
            "mixed",
            "rented",
            "container",
            "hung",
            "xid",
            "oom-soon",
            "job-done",
            "shared",
            "spot",
            "kubernetes"
        ]
    );
    for (name, desc) in list {
        let s = Scenario::builtin(name).unwrap();
        assert_eq!(s.name, name);
        assert_eq!(s.description, desc);
        assert!(!desc.is_empty() && !desc.contains('\n'), "{name}: {desc:?}");
        assert!(s.pricing.is_some(), "{name} has no pricing");
        assert!(s.gpu_count() > 0);
    }
    assert!(Scenario::builtin("nope").is_none());
}

#[test]
fn same_elapsed_gives_equal_snapshots() {
    for (name, _) in builtin_scenarios() {
        let mut a = sim(name);
        let mut b = sim(name);
        let first = a.snapshot_at(12_345, T0);
        // Other times in between must not change the answer (the energy cache).
        a.snapshot_at(99_000, T0);
        a.snapshot_at(1_000, T0);
        assert_eq!(a.snapshot_at(12_345, T0), first, "{name}");
        assert_eq!(b.snapshot_at(12_345, T0), first, "{name}");
        assert_eq!(first.source, format!("demo:{name}"));
    }
}

#[test]
fn energy_only_grows_and_matches_the_power_integral() {
    let mut s = sim("training");
    let steps = [
        0u64, 500, 1_000, 4_321, 10_000, 7_000, 10_000, 60_000, 60_050,
    ];
    let mut last_forward = 0;
    let mut seen = std::collections::BTreeMap::new();
    for &ms in &steps {
        let e = s.snapshot_at(ms, T0).gpus[0].energy_millijoules.unwrap();
        if let Some(prev) = seen.insert(ms, e) {
            assert_eq!(prev, e, "energy at {ms} ms changed after a backward step");
        }
        if ms >= last_forward {
            assert!(
                seen.range(..ms).all(|(_, v)| *v <= e),
                "energy fell at {ms} ms"
            );
            last_forward = ms;
        }
    }
    // 60 s at 610–695 W is 36.6–41.7 kJ.
    let delta = seen[&60_000] - seen[&0];
    assert!((36_000_000..=42_500_000).contains(&delta), "{delta} mJ");
    assert!(seen[&0] > 0, "the counter starts from a non-zero offset");
}

#[test]
fn cpu_starved_shows_the_starved_pattern() {
    let mut s = sim("cpu-starved");
    let util = mean_util(&mut s, 60);
    assert!((25.0..=55.0).contains(&util), "mean util {util}");
    let snap = at(&mut s, 30);
    assert!(snap.host.cpu_util_pct.unwrap() >= 90.0);
    assert_eq!(snap.host.per_cpu_util_pct.len(), 16);
    let workers: Vec<_> = snap.processes.iter().filter(|p| p.gpu.is_empty()).collect();
    assert_eq!(workers.len(), 16);
    for w in workers {
        let cpu = w.cpu_pct.unwrap();
        assert!((95.0..=100.0).contains(&cpu), "worker cpu {cpu}");
    }
    let iowait = snap.host.iowait_pct.unwrap();
    assert!(iowait < 5.0, "iowait {iowait}");
}

#[test]
fn training_keeps_gpus_busy_with_eight_ranks_and_their_workers() {
    let mut s = sim("training");
    assert!(mean_util(&mut s, 60) >= 90.0);
    let snap = at(&mut s, 5);
    assert_eq!(snap.gpus.len(), 8);
    let ranks: Vec<_> = snap
        .processes
        .iter()
        .filter(|p| p.is_gpu_process())
        .collect();
    assert_eq!(ranks.len(), 8);
    let gpus: Vec<u32> = ranks.iter().map(|p| p.gpu[0].gpu_index).collect();
    assert_eq!(gpus, (0..8).collect::<Vec<_>>());
    for r in &ranks {
        let kids: Vec<_> = snap
            .processes
            .iter()
            .filter(|p| p.ppid == Some(r.pid))
            .collect();
        assert_eq!(kids.len(), 6);
        for (n, k) in kids.iter().enumerate() {
            assert_eq!(k.pid, r.pid + 1 + n as u32, "workers take consecutive pids");
            assert!(k.gpu.is_empty());
        }
    }
    // The 8 GPUs are not identical copies.
    let utils: std::collections::BTreeSet<_> = snap.gpus.iter().map(|g| g.util_gpu_pct).collect();
    assert!(utils.len() > 1);
    // Memory used follows the process (no explicit signal) and stays under the total.
    let g = &snap.gpus[0];
    assert!(g.memory_used_bytes.unwrap() <= g.memory_total_bytes.unwrap());
}

#[test]
fn io_starved_waits_on_disk() {
    let mut s = sim("io-starved");
    assert!(mean_util(&mut s, 60) < 40.0);
    let snap = at(&mut s, 20);
    assert!(snap.host.iowait_pct.unwrap() >= 25.0);
    assert!(snap.host.disk_read_bytes_per_s.unwrap() > 1e9);
    assert!(
        snap.processes
            .iter()
            .filter(|p| p.state == Some('D'))
            .count()
            >= 8
    );
}

#[test]
fn idle_box_has_no_processes_and_empty_vram() {
    let mut s = sim("idle");
    for snap in (0..30).map(|t| at(&mut s, t)) {
        assert!(snap.processes.is_empty());
        for g in &snap.gpus {
            assert!(g.util_gpu_pct.unwrap() <= 1);
            assert!(g.memory_used_bytes.unwrap() < 1 << 30);
        }
    }
    let p = s.scenario().pricing.clone().unwrap();
    assert_eq!(p.rate_micros, 31_000_000);
}

#[test]
fn forgotten_kernel_holds_vram_without_kernels() {
    let mut s = sim("forgotten");
    let snap = at(&mut s, 10);
    let k = snap.processes.iter().find(|p| p.is_gpu_process()).unwrap();
    assert_eq!(k.gpu_memory_bytes(), Some(30 << 30));
    assert_eq!(k.sm_util_pct(), Some(0));
    assert!(k.start_time_unix_s.unwrap() <= T0 / 1000 + 10 - 15 * 60);
    assert_eq!(snap.gpus[0].memory_used_bytes, Some(30 << 30));
    assert_eq!(
        snap.gpus[1].memory_used_bytes,
        Some(0),
        "no process holds memory there"
    );
}

#[test]
fn gpu_lost_loses_gpu_two_at_thirty_seconds() {
    let mut s = sim("gpu-lost");
    let before = at(&mut s, 10);
    assert!(before.gpus.iter().all(|g| g.state == GpuState::Ok));
    assert!(before.warnings.is_empty());
    let after = at(&mut s, 40);
    for g in &after.gpus {
        if g.index == 2 {
            assert_eq!(g.state, GpuState::Lost);
            assert_eq!(g.util_gpu_pct, None);
            assert_eq!(g.power_watts, None);
            assert!(g.uuid.is_some() && g.name.is_some() && g.pci_bus_id.is_some());
        } else {
            assert_eq!(g.state, GpuState::Ok);
            assert!(g.util_gpu_pct.is_some());
        }
    }
    assert!(
        after
            .warnings
            .iter()
            .any(|w| w.contains("GPU 2") && w.contains("lost"))
    );
    // Nothing is listed on the lost GPU; the truth still has it.
    assert!(
        after
            .processes
            .iter()
            .all(|p| p.gpu.iter().all(|u| u.gpu_index != 2))
    );
    let truth = s.truth_at(40_000, T0);
    assert_eq!(truth.gpus[2].state, GpuState::Ok);
    assert!(
        truth
            .processes
            .iter()
            .any(|p| p.gpu.iter().any(|u| u.gpu_index == 2))
    );
}

#[test]
fn mixed_passes_hostile_strings_and_invisible_pids_through() {
    let mut s = sim("mixed");
    let snap = at(&mut s, 3);
    assert_eq!(snap.gpus.len(), 4);
    let ghost = snap.processes.iter().find(|p| p.pid == 771_204).unwrap();
    assert!(!ghost.visible && ghost.user.is_none() && ghost.gpu.len() == 1);
    let evil = snap.processes.iter().find(|p| p.pid == 734_001).unwrap();
    assert!(evil.name.as_deref().unwrap().contains('\u{1b}'));
    assert!(evil.command.as_deref().unwrap().len() > 4096);
    let users: std::collections::BTreeSet<_> = snap
        .processes
        .iter()
        .filter_map(|p| p.user.clone())
        .collect();
    assert!(users.len() >= 4);
    assert!(
        snap.processes
            .iter()
            .filter(|p| p.container.is_some())
            .count()
            >= 3
    );
}

#[test]
fn readings_stay_physical_over_an_hour() {
    for (name, _) in builtin_scenarios() {
        let mut s = sim(name);
        for t in (0..3_600).step_by(7) {
            let snap = s.truth_at(t * 1000, T0);
            for g in &snap.gpus {
                assert!(g.util_gpu_pct.is_none_or(|u| u <= 100));
                assert!(g.power_watts.is_none_or(|p| p >= 0.0));
                if let (Some(u), Some(t)) = (g.memory_used_bytes, g.memory_total_bytes) {
                    assert!(u <= t, "{name}: {u} > {t}");
                }
            }
            assert!(
                snap.host
                    .cpu_util_pct
                    .is_none_or(|c| (0.0..=100.0).contains(&c))
            );
        }
    }
}

#[test]
fn affinity_and_cgroup_quota_reach_the_snapshot_and_default_to_unknown() {
    let text = "name = \"t\"\ndescription = \"d\"\n[host]\ncpu_count = 8\ncpu_quota_cores = 2.5\n\
                [[process]]\npid = 10\ncpus_allowed = 4\nworkers = { count = 1 }\n";
    let mut s = Simulator::new(Scenario::from_toml("t.toml", text).unwrap());
    let snap = s.snapshot_at(0, T0);
    assert_eq!(snap.host.cpu_quota_cores, Some(2.5));
    assert_eq!(snap.processes.len(), 2);
    assert!(snap.processes.iter().all(|p| p.cpus_allowed == Some(4)));
    let snap = at(&mut sim("training"), 5);
    assert_eq!(snap.host.cpu_quota_cores, None);
    assert!(snap.processes.iter().all(|p| p.cpus_allowed.is_none()));
}

#[test]
fn rented_is_an_idle_box_with_one_degraded_link_and_a_newer_torch() {
    let mut s = sim("rented");
    let snap = at(&mut s, 60);
    assert!(snap.processes.is_empty());
    for g in &snap.gpus {
        let expect = if g.index == 5 {
            (Some(4), Some(8))
        } else {
            (Some(5), Some(16))
        };
        assert_eq!(
            (g.pcie_link_gen_max, g.pcie_link_width),
            expect,
            "GPU {}",
            g.index
        );
        assert_eq!(g.util_gpu_pct, Some(0));
    }
    let health = &s.gpu_spec(5).unwrap().health;
    assert_eq!(health.pcie_gen_card_max, Some(5));
    assert_eq!(s.scenario().preflight.torch_cuda.as_deref(), Some("12.9"));
    assert_eq!(s.gpu_spec(3).unwrap().health.numa_node, Some(0));
    assert_eq!(s.gpu_spec(4).unwrap().health.numa_node, Some(1));
}

#[test]
fn the_bench_sweep_churns_eight_new_gpu_processes_every_five_minutes() {
    // bench/run.sh's memory run over per-process history churn: kept valid and churning here.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/sweep-churn.toml");
    let text = std::fs::read_to_string(path).unwrap();
    let mut s = Simulator::new(Scenario::from_toml("sweep-churn.toml", &text).unwrap());
    let gpu_pids = |snap: &Snapshot| -> Vec<u32> {
        let mut p: Vec<u32> = snap
            .processes
            .iter()
            .filter(|p| !p.gpu.is_empty())
            .map(|p| p.pid)
            .collect();
        p.sort_unstable();
        p
    };
    let first = gpu_pids(&at(&mut s, 60));
    let later = gpu_pids(&at(&mut s, 20 * 60 + 60));
    assert_eq!((first.len(), later.len()), (8, 8));
    assert!(
        first.iter().all(|p| !later.contains(p)),
        "{first:?} {later:?}"
    );
    // Still churning near the end of the day it covers.
    assert_eq!(gpu_pids(&at(&mut s, 23 * 3600 + 60)).len(), 8);
}
