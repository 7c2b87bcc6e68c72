//! The engine's tick alone: one snapshot of a simulated 8-GPU machine with ~500 processes
//! folded in (history, the alert rules, autostop), after a quarter hour of history so every
//! rule's windows are full. The snapshot is made outside the timing.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use gpumeter_core::engine::Engine;
use gpumeter_sim::{Scenario, Simulator};

/// The `training` machine plus extra GPU jobs with dataloader workers, to ~500 processes.
fn big_scenario() -> Result<Scenario, gpumeter_sim::ScenarioError> {
    let mut text = String::from(include_str!(
        "../crates/gpumeter-sim/scenarios/training.toml"
    ));
    for job in 0..60u32 {
        let pid = 200_000 + job * 100;
        let gpu = job % 8;
        text.push_str(&format!(
            "\n[[process]]\npid = {pid}\nppid = 1\nuser = \"bench\"\nname = \"python\"\n\
             command = \"python worker.py --job {job}\"\ncpu_pct = {{ const = 50 }}\n\
             gpus = [{{ gpu = {gpu}, memory_gib = {{ const = 0.5 }}, sm_util_pct = {{ const = 30 }} }}]\n\
             workers = {{ count = 7, name = \"pt_data_worker\", cpu_pct = {{ const = 90 }} }}\n"
        ));
    }
    Scenario::from_toml("bench", &text)
}

fn ingest(c: &mut Criterion) {
    let scenario = match big_scenario() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("bench scenario does not parse: {e}");
            std::process::exit(1);
        }
    };
    let mut sim = Simulator::new(scenario);
    let mut engine = Engine::new();
    for s in 0..900u64 {
        engine.ingest(sim.snapshot_at(s * 1000, s as i64 * 1000));
    }
    let mut t = 900u64;
    c.bench_function("engine ingest: 8 GPUs, ~500 procs, full windows", |b| {
        b.iter_batched(
            || {
                t += 1;
                sim.snapshot_at(t * 1000, t as i64 * 1000)
            },
            |snap| engine.ingest(snap),
            BatchSize::SmallInput,
        )
    });
}

criterion_group!(benches, ingest);
criterion_main!(benches);
