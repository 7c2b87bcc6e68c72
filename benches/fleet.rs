//! The fleet screen with 50 hosts: the frame (rows, totals, sort, draw into 200×60) and one
//! `fleet --once`-style poll of 50 loopback servers answering a full `training` document.
//! Measured, not asserted: the figures go in `BENCHMARKS.md`.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use gpumeter::ui::fleet::{FleetOptions, FleetUi};
use gpumeter_core::billing::{ClockStart, Pricing, Rate};
use gpumeter_core::clock::{SharedClock, SystemClock};
use gpumeter_core::export::json;
use gpumeter_core::fleet::hosts::Host;
use gpumeter_core::fleet::poll::{self, PollConfig, PollEvent};
use gpumeter_core::session::{Session, SessionConfig};
use gpumeter_model::Document;
use gpumeter_sim::{Scenario, Simulator};
use ratatui::{Terminal, backend::TestBackend, layout::Rect};

const HOSTS: usize = 50;

/// Documents of a priced demo machine, one a second for `n` seconds.
fn documents(scenario: &str, n: u64) -> Vec<Document> {
    let Some(s) = Scenario::builtin(scenario) else {
        eprintln!("no scenario {scenario}");
        std::process::exit(1);
    };
    let mut sim = Simulator::new(s);
    let mut pricing =
        Pricing::simple(Rate::parse("31/h").unwrap_or_else(|_| std::process::exit(1)));
    pricing.clock_start = ClockStart::FirstSample;
    let Ok(mut session) = Session::new(SessionConfig {
        pricing: Some(pricing),
        interval_ms: 1_000,
        ..SessionConfig::default()
    }) else {
        std::process::exit(1)
    };
    let mut out = Vec::new();
    for t in 0..n {
        session.ingest(sim.snapshot_at(t * 1000, 1_800_000_000_000 + t as i64 * 1000));
        let e = session.engine();
        if let Some(snap) = e.latest() {
            out.push(json::document(snap, e.billing(), e.alerts()));
        }
    }
    out
}

fn hosts(base: impl Fn(usize) -> String) -> Vec<Host> {
    (0..HOSTS)
        .map(|i| Host {
            name: format!("gpu-box-{i:02}"),
            base: base(i),
            token: None,
        })
        .collect()
}

fn frame(c: &mut Criterion) {
    let scenarios = ["idle", "training", "cpu-starved", "forgotten", "mixed"];
    let docs: Vec<Vec<Document>> = scenarios.iter().map(|s| documents(s, 30)).collect();
    let hosts = hosts(|i| format!("http://10.0.{}.{}:9958", i / 250, i % 250));
    let mut ui = FleetUi::new(&FleetOptions {
        hosts,
        no_color: false,
        theme: Default::default(),
        interval_ms: 1_000,
        colour_depth: Default::default(),
        ascii: false,
    });
    for (i, _) in (0..HOSTS).enumerate() {
        // Every tenth host is down.
        if i % 10 == 9 {
            ui.apply(PollEvent {
                host: i,
                at_unix_ms: 1_800_000_030_000,
                result: Err(poll::Failure::Timeout),
            });
            continue;
        }
        for d in &docs[i % docs.len()] {
            ui.apply(PollEvent {
                host: i,
                at_unix_ms: d.snapshot.taken_at_unix_ms + 100,
                result: Ok(Box::new(d.clone())),
            });
        }
    }
    let area = Rect::new(0, 0, 200, 60);
    let Ok(mut terminal) = Terminal::new(TestBackend::new(200, 60));
    let mut now = 1_800_000_030_500;
    c.bench_function("fleet frame: 50 hosts, rows + totals + draw 200x60", |b| {
        b.iter(|| {
            now += 1;
            ui.sync(area, now);
            let _ = terminal.draw(|f| ui.draw(f.buffer_mut(), now));
        })
    });
    // What one answer costs the screen's task: the row's state and the host's local session.
    let next = docs[1].last().cloned();
    let mut t = 0;
    c.bench_function(
        "fleet apply: one training answer (row + drill-in session)",
        |b| {
            b.iter(|| {
                let Some(mut d) = next.clone() else { return };
                t += 1_000;
                d.snapshot.taken_at_unix_ms += t;
                ui.apply(PollEvent {
                    host: 1,
                    at_unix_ms: d.snapshot.taken_at_unix_ms,
                    result: Ok(Box::new(d)),
                });
            })
        },
    );
}

/// 50 loopback servers, each answering every request with the same `training` document.
fn servers(body: Arc<Vec<u8>>) -> Vec<String> {
    (0..HOSTS)
        .map(|_| {
            let Ok(l) = TcpListener::bind("127.0.0.1:0") else {
                std::process::exit(1)
            };
            let addr = l.local_addr().map(|a| a.to_string()).unwrap_or_default();
            let body = Arc::clone(&body);
            std::thread::spawn(move || {
                for stream in l.incoming() {
                    let Ok(mut s) = stream else { return };
                    let mut buf = [0u8; 2048];
                    let _ = s.read(&mut buf);
                    let head = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = s.write_all(head.as_bytes());
                    let _ = s.write_all(&body);
                }
            });
            format!("http://{addr}")
        })
        .collect()
}

fn poll_round(c: &mut Criterion) {
    let Some(doc) = documents("training", 5).pop() else {
        std::process::exit(1)
    };
    let Ok(body) = serde_json::to_vec(&doc) else {
        std::process::exit(1)
    };
    eprintln!("document: {} bytes", body.len());
    let urls = servers(Arc::new(body));
    let hosts = hosts(|i| urls[i].clone());
    let clock: SharedClock = Arc::new(SystemClock);
    let cfg = PollConfig::default();
    c.bench_function("fleet poll: 50 loopback hosts once, 8 at a time", |b| {
        b.iter(|| {
            let got = poll::poll_once(&hosts, &cfg, &clock);
            assert!(got.iter().all(|e| e.result.is_ok()));
        })
    });
}

criterion_group!(benches, frame, poll_round);
criterion_main!(benches);
