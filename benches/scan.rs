//! The host side of one tick on this machine's real /proc: `HostSampler::sample` over a process
//! tree the bench spawns — 64 sleeping "GPU" processes, every fourth a `sh` with 4 sleeping
//! workers (the `bench/overhead` machine) — beside 0 or 1 000 idle host processes.
//!
//! - `tick`: samples 1 s apart on the sampler's clock, as in use: the GPU processes' stat
//!   every tick, the workers' and the children lists at their cadences, a listing of /proc
//!   every tenth sample.
//! - `listing`: samples 10 s apart, so every one lists /proc (and reads every member).
//!
//! Linux only (it reads /proc); the spawned processes are killed when the bench ends.

use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use gpumeter_core::source::host::HostSampler;
use gpumeter_model::{GpuProcessKind, GpuUse};

const GPU_PROCS: usize = 64;

/// Children that are killed (with their workers) when dropped.
struct Spawned(Vec<Child>);

impl Drop for Spawned {
    fn drop(&mut self) {
        for c in &mut self.0 {
            // The `sh` leaders run in their own process group: kill the group (the workers).
            let _ = Command::new("kill")
                .args(["-9", "--", &format!("-{}", c.id())])
                .stderr(Stdio::null())
                .status();
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn spawn(args: &[&str], own_group: bool) -> Option<Child> {
    let mut cmd = Command::new(args[0]);
    cmd.args(&args[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if own_group {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    cmd.spawn().ok()
}

/// The GPU processes (and their workers): their pids with a GPU use each.
fn gpu_machine() -> Option<(Spawned, BTreeMap<u32, Vec<GpuUse>>)> {
    let mut children = Vec::new();
    let mut procs = BTreeMap::new();
    let workers = "sleep 100000 & sleep 100000 & sleep 100000 & sleep 100000 & wait";
    for i in 0..GPU_PROCS {
        let child = if i % 4 == 0 {
            spawn(&["sh", "-c", workers], true)?
        } else {
            spawn(&["sleep", "100000"], true)?
        };
        procs.insert(
            child.id(),
            vec![GpuUse {
                gpu_index: (i % 8) as u32,
                kind: GpuProcessKind::Compute,
                memory_bytes: Some(1 << 30),
                sm_util_pct: Some(40),
                memory_util_pct: None,
            }],
        );
        children.push(child);
    }
    // Let the shells fork their workers.
    std::thread::sleep(Duration::from_millis(300));
    Some((Spawned(children), procs))
}

fn host_procs(n: usize) -> Option<Spawned> {
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        v.push(spawn(&["sleep", "100000"], false)?);
    }
    Some(Spawned(v))
}

fn scan(c: &mut Criterion) {
    let Some((_gpu, procs)) = gpu_machine() else {
        eprintln!("scan bench: cannot spawn `sh`/`sleep`");
        return;
    };
    let mut group = c.benchmark_group("host_sample");
    group.measurement_time(Duration::from_secs(8));
    for hosts in [0usize, 1_000] {
        let Some(_idle) = host_procs(hosts) else {
            eprintln!("scan bench: cannot spawn {hosts} host processes");
            return;
        };
        for (name, step_ms) in [("tick", 1_000i64), ("listing", 10_000)] {
            let mut sampler = HostSampler::new();
            let mut now = 1_700_000_000_000i64;
            // Warm: statics cached, files kept open, first listing done.
            for _ in 0..12 {
                now += step_ms;
                sampler.sample(now, &procs);
            }
            let n = sampler.sample(now + step_ms, &procs).processes.len();
            now += step_ms;
            eprintln!("scan bench: {hosts} host processes, {name}: {n} processes in the reading");
            group.bench_function(BenchmarkId::new(name, hosts), |b| {
                b.iter(|| {
                    now += step_ms;
                    sampler.sample(now, &procs)
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, scan);
criterion_main!(benches);
