//! One dashboard tick at full size: a simulated 8-GPU machine with ~500 processes is sampled,
//! folded into the engine's history, and drawn into a 200×60 frame.

use criterion::{Criterion, criterion_group, criterion_main};
use gpumeter::engine::Engine;
use gpumeter::ui::{self, App, UiOptions};
use gpumeter_sim::{Scenario, Simulator};
use ratatui::{Terminal, backend::TestBackend, layout::Rect};

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

fn tick(c: &mut Criterion) {
    let scenario = match big_scenario() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("bench scenario does not parse: {e}");
            std::process::exit(1);
        }
    };
    let mut sim = Simulator::new(scenario);
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
    let mut app = App::new(&UiOptions {
        no_color: false,
        source_label: "bench".into(),
        billing: None,
        ..Default::default()
    });
    let area = Rect::new(0, 0, 200, 60);
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
    let mut t = 900u64;
    c.bench_function(
        "tick: sample + history + draw 200x60, 8 GPUs, ~500 procs",
        |b| {
            b.iter(|| {
                t += 1;
                let now = t as i64 * 1000;
                engine.ingest(sim.snapshot_at(t * 1000, now));
                ui::sync(&mut app, &engine, area, now);
                terminal.draw(|f| ui::draw(f, &app, &engine, now)).unwrap();
            })
        },
    );
    c.bench_function("draw only 200x60", |b| {
        let now = t as i64 * 1000;
        b.iter(|| {
            terminal.draw(|f| ui::draw(f, &app, &engine, now)).unwrap();
        })
    });
    c.bench_function("sample only (simulator)", |b| {
        b.iter(|| {
            t += 1;
            sim.snapshot_at(t * 1000, t as i64 * 1000)
        })
    });
}

criterion_group!(benches, tick);
criterion_main!(benches);
