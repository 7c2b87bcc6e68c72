//! One dashboard tick at full size: a simulated 8-GPU machine with ~500 processes is sampled,
//! folded into the engine's history, and drawn into a 200×60 frame; then the same with the
//! frame's changes written as the terminal gets them (the screen writer, and ratatui's
//! `Terminal` with crossterm's backend for comparison).

use criterion::{Criterion, criterion_group, criterion_main};
use gpumeter::ui::screen_writer::ScreenWriter;
use gpumeter::ui::{self, App, UiOptions};
use gpumeter_core::engine::Engine;
use gpumeter_sim::{Scenario, Simulator};
use ratatui::backend::{CrosstermBackend, TestBackend};
use ratatui::widgets::Widget;
use ratatui::{Terminal, TerminalOptions, Viewport, layout::Rect};

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
                terminal
                    .draw(|f| f.render_widget(ui::Dashboard::new(&app, &engine, now), f.area()))
                    .unwrap();
            })
        },
    );
    c.bench_function("draw only 200x60", |b| {
        let now = t as i64 * 1000;
        b.iter(|| {
            terminal
                .draw(|f| f.render_widget(ui::Dashboard::new(&app, &engine, now), f.area()))
                .unwrap();
        })
    });
    // A tick as the dashboard writes it: one buffer diffed against the record of the screen,
    // the changes turned into bytes (the screen writer), and as ratatui's `Terminal` with
    // crossterm's backend did it before.
    let mut screen = ScreenWriter::with_size(std::io::sink(), 200, 60);
    c.bench_function("tick + write 200x60 (screen writer)", |b| {
        b.iter(|| {
            t += 1;
            let now = t as i64 * 1000;
            engine.ingest(sim.snapshot_at(t * 1000, now));
            // As the event loop draws: the rows built once, by the sync.
            let rows = ui::sync_rows(&mut app, &engine, area, now);
            or_exit(screen.draw(|buf| {
                let area = buf.area;
                ui::Dashboard::new(&app, &engine, now)
                    .with_rows(&rows)
                    .render(area, buf);
            }));
        })
    });
    let mut crossterm = or_exit(Terminal::with_options(
        CrosstermBackend::new(std::io::sink()),
        TerminalOptions {
            viewport: Viewport::Fixed(area),
        },
    ));
    c.bench_function("tick + write 200x60 (crossterm backend)", |b| {
        b.iter(|| {
            t += 1;
            let now = t as i64 * 1000;
            engine.ingest(sim.snapshot_at(t * 1000, now));
            ui::sync(&mut app, &engine, area, now);
            or_exit(
                crossterm
                    .draw(|f| f.render_widget(ui::Dashboard::new(&app, &engine, now), f.area()))
                    .map(|_| ()),
            );
        })
    });
    c.bench_function("sample only (simulator)", |b| {
        b.iter(|| {
            t += 1;
            sim.snapshot_at(t * 1000, t as i64 * 1000)
        })
    });
}

/// The value, or the bench stops saying why (writing to a sink does not fail).
fn or_exit<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => {
            eprintln!("bench: {e}");
            std::process::exit(1)
        }
    }
}

criterion_group!(benches, tick);
criterion_main!(benches);
