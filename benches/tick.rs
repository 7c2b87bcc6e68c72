//! One dashboard tick at full size: a simulated 8-GPU machine with 500 processes is sampled,
//! folded into the engine's history, and drawn into a 200×60 frame.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{Criterion, criterion_group, criterion_main};
use gpumeter::engine::Engine;
use gpumeter::ui::{self, App};
use gpumeter_sim::{Scenario, Simulator};
use ratatui::{Terminal, backend::TestBackend};

/// The `training` machine with extra processes, to the size the issue asks for.
fn big_scenario() -> Scenario {
    let mut text = String::from(include_str!("../crates/gpumeter-sim/scenarios/training.toml"));
    let mut pid = 200_000;
    while text.matches("[[process]]").count() < 60 {
        text.push_str(&format!(
            "\n[[process]]\npid = {pid}\nppid = 1\nuser = \"bench\"\nname = \"python\"\n\
             command = \"python worker.py --rank {pid}\"\ncpu_pct = {{ const = 50 }}\n\
             workers = {{ count = 7, name = \"pt_data_worker\", cpu_pct = {{ const = 90 }} }}\n"
        ));
        pid += 100;
    }
    Scenario::from_toml("bench", &text).expect("bench scenario parses")
}

fn tick(c: &mut Criterion) {
    let mut sim = Simulator::new(big_scenario());
    let probe = sim.snapshot_at(0, 0);
    eprintln!(
        "bench machine: {} GPUs, {} processes",
        probe.gpus.len(),
        probe.processes.len()
    );
    let mut engine = Engine::new();
    // A quarter hour of history so the charts have something to draw.
    for s in 0..900u64 {
        engine.ingest(sim.snapshot_at(s * 1000, s as i64 * 1000));
    }
    let app = App::default();
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
    let mut t = 900u64;
    c.bench_function("tick: sample + history + draw 200x60, 8 GPUs, ~500 procs", |b| {
        b.iter(|| {
            t += 1;
            let snap = sim.snapshot_at(t * 1000, t as i64 * 1000);
            engine.ingest(snap);
            terminal
                .draw(|f| ui::draw(f, &app, &engine, t as i64 * 1000))
                .unwrap();
        })
    });
    c.bench_function("draw only 200x60", |b| {
        b.iter(|| {
            terminal
                .draw(|f| ui::draw(f, &app, &engine, t as i64 * 1000))
                .unwrap();
        })
    });
}

criterion_group!(benches, tick);
criterion_main!(benches);
