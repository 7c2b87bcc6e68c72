//! The fleet screen drawn into a `TestBackend` from demo scenarios' documents (as their
//! `serve` would answer), driven by keys: rows, totals, a dead host, sorting, the drill-in
//! and back. Also draws `screenshots/fleet.svg`.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use gpumeter_model::Document;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::{FleetOptions, FleetUi};
use crate::ui::Action;
use crate::ui::tests::demo::{START, played_with};
use crate::ui::tests::fixtures::buffer_to_string;
use gpumeter_core::fleet::hosts::Host;
use gpumeter_core::fleet::poll::{Failure, PollEvent};

/// What a `serve --demo NAME` answers after `seconds`, its readings one second apart.
pub(crate) fn demo_documents(name: &str, seconds: i64) -> Vec<Document> {
    // The last few readings, so the drill-in's charts have something.
    let mut docs = Vec::new();
    played_with(name, seconds, |s, session| {
        if s > seconds - 5 {
            let e = session.engine();
            docs.push(gpumeter_core::export::json::document(
                e.latest().unwrap(),
                e.billing(),
                e.alerts(),
            ));
        }
    });
    docs
}

pub(crate) fn hosts(names: &[&str]) -> Vec<Host> {
    names
        .iter()
        .map(|n| Host {
            name: (*n).to_string(),
            base: format!("http://{n}:9958"),
            token: None,
        })
        .collect()
}

/// A fleet of the `idle`, `training` and `cpu-starved` demos, plus a host that refuses
/// connections, after `seconds`.
pub(crate) fn demo_fleet(seconds: i64) -> FleetUi {
    let names = ["gpu-idle-01", "train-a", "train-b", "gpu-dead-04"];
    let mut ui = FleetUi::new(&FleetOptions {
        hosts: hosts(&names),
        no_color: false,
        theme: Default::default(),
        interval_ms: 1_000,
        colour_depth: Default::default(),
        ascii: false,
    });
    for (host, scenario) in [(0, "idle"), (1, "training"), (2, "cpu-starved")] {
        for doc in demo_documents(scenario, seconds) {
            let at = doc.snapshot.taken_at_unix_ms + 200;
            ui.apply(PollEvent {
                host,
                at_unix_ms: at,
                result: Ok(Box::new(doc)),
            });
        }
    }
    ui.apply(PollEvent {
        host: 3,
        at_unix_ms: START + seconds * 1_000,
        result: Err(Failure::Unreachable("connection refused".into())),
    });
    ui
}

pub(crate) fn draw(ui: &mut FleetUi, w: u16, h: u16, now: i64) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    ui.sync(Rect::new(0, 0, w, h), now);
    terminal.draw(|f| ui.draw(f.buffer_mut(), now)).unwrap();
    terminal.backend().buffer().clone()
}

fn key(ui: &mut FleetUi, code: KeyCode, now: i64) -> Action {
    ui.handle_key(KeyEvent::new(code, KeyModifiers::NONE), now)
}

const SECONDS: i64 = 900;
const NOW: i64 = START + SECONDS * 1_000 + 400;

fn row_order(text: &str) -> Vec<&str> {
    text.lines()
        .skip(3)
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| w.starts_with("gpu-") || w.starts_with("train-"))
        .collect()
}

#[test]
fn the_fleet_shows_totals_rows_by_idle_spend_and_a_dead_host_marked() {
    let mut ui = demo_fleet(SECONDS);
    let text = buffer_to_string(&draw(&mut ui, 140, 12, NOW));
    let first = text.lines().next().unwrap();
    assert!(first.contains("gpumeter fleet · 4 hosts"), "{text}");
    assert!(
        first.contains("1 of 4 hosts idle") && first.contains("1 down"),
        "{text}"
    );
    assert!(first.contains("idle $31.00/h"), "{text}");
    assert!(text.contains("IDLE/H▼"), "{text}");
    // The idle box on top; the dead one last, with why.
    let order = row_order(&text);
    assert_eq!(order.first(), Some(&"gpu-idle-01"), "{text}");
    assert_eq!(order.last(), Some(&"gpu-dead-04"), "{text}");
    let dead = text.lines().find(|l| l.contains("gpu-dead-04")).unwrap();
    assert!(
        dead.contains("down") && dead.contains("never answered · connection refused"),
        "{dead}"
    );
    assert!(text.contains("Enter open the host"), "{text}");
}

#[test]
fn keys_sort_select_drill_in_and_come_back() {
    let mut ui = demo_fleet(SECONDS);
    draw(&mut ui, 140, 12, NOW);
    assert_eq!(key(&mut ui, KeyCode::Char('s'), NOW), Action::Redraw);
    let text = buffer_to_string(&draw(&mut ui, 140, 12, NOW));
    assert!(text.contains("BURN/H▼"), "{text}");
    key(&mut ui, KeyCode::Char('S'), NOW);
    let text = buffer_to_string(&draw(&mut ui, 140, 12, NOW));
    assert!(text.contains("BURN/H▲"), "{text}");
    // Cycle on to the name column, A to Z.
    while !buffer_to_string(&draw(&mut ui, 140, 12, NOW)).contains("HOST▲") {
        key(&mut ui, KeyCode::Char('s'), NOW);
    }
    let text = buffer_to_string(&draw(&mut ui, 140, 12, NOW));
    assert_eq!(
        row_order(&text),
        ["gpu-dead-04", "gpu-idle-01", "train-a", "train-b"]
    );
    // The selection followed its host (the idle box) to the second row; Home goes to the top.
    key(&mut ui, KeyCode::Home, NOW);
    // The dead host has nothing to open.
    assert_eq!(key(&mut ui, KeyCode::Enter, NOW), Action::Redraw);
    assert_eq!(ui.drilled(), None);
    let text = buffer_to_string(&draw(&mut ui, 140, 12, NOW));
    assert!(text.contains("gpu-dead-04 has not answered yet"), "{text}");
    // Down to train-a and in: its dashboard, from its own readings.
    key(&mut ui, KeyCode::Down, NOW);
    key(&mut ui, KeyCode::Down, NOW);
    draw(&mut ui, 140, 12, NOW);
    key(&mut ui, KeyCode::Enter, NOW);
    assert_eq!(ui.drilled(), Some(1));
    let text = buffer_to_string(&draw(&mut ui, 120, 40, NOW));
    assert!(text.contains("demo:training"), "{text}");
    assert!(text.contains("PID") && text.contains("GPU7"), "{text}");
    assert!(text.contains("Esc: back to the fleet"), "{text}");
    // Dashboard keys work there; Esc comes back to the same selection.
    assert_eq!(key(&mut ui, KeyCode::Char('?'), NOW), Action::Redraw);
    key(&mut ui, KeyCode::Esc, NOW);
    assert_eq!(ui.drilled(), Some(1), "Esc first closes the help");
    key(&mut ui, KeyCode::Esc, NOW);
    assert_eq!(ui.drilled(), None);
    let text = buffer_to_string(&draw(&mut ui, 140, 12, NOW));
    assert!(text.contains("gpumeter fleet"), "{text}");
    assert_eq!(key(&mut ui, KeyCode::Char('q'), NOW), Action::Quit);
}

#[test]
fn a_host_that_fails_after_answering_shows_when_it_was_last_seen() {
    let mut ui = demo_fleet(SECONDS);
    ui.apply(PollEvent {
        host: 1,
        at_unix_ms: NOW,
        result: Err(Failure::Timeout),
    });
    let text = buffer_to_string(&draw(&mut ui, 140, 12, NOW));
    let line = text.lines().find(|l| l.contains("train-a")).unwrap();
    assert!(
        line.contains("timeout") && line.contains("last seen Jan 05 09:15Z"),
        "{line}"
    );
    assert!(line.contains("no answer within the timeout"), "{line}");
    assert!(text.lines().next().unwrap().contains("2 down"), "{text}");
}

/// At 80 columns the fleet keeps what it is for — the host, its state, the money and the
/// alert — whole, and gives up the columns a host's own screen shows (age, VRAM, GPUs, budget).
#[test]
fn at_80_columns_host_names_money_and_alerts_are_kept_whole() {
    let mut ui = demo_fleet(SECONDS);
    let text = buffer_to_string(&draw(&mut ui, 80, 24, NOW));
    let head = text.lines().nth(2).unwrap();
    for kept in ["HOST", "STATE", "BURN/H", "IDLE/H", "TODAY", "ALERT"] {
        assert!(head.contains(kept), "{head}");
    }
    for given_up in ["AGE", "VRAM"] {
        assert!(!head.contains(given_up), "{head}");
    }
    for host in ["gpu-idle-01", "train-a", "train-b", "gpu-dead-04"] {
        assert!(text.contains(host), "{host} cut: {text}");
    }
    let idle = text.lines().find(|l| l.contains("gpu-idle-01")).unwrap();
    assert!(idle.contains("$31.00/h"), "money cut: {idle}");
    let starved = text.lines().find(|l| l.contains("train-b")).unwrap();
    assert!(
        starved.contains("HIGH") || starved.contains("high"),
        "alert dropped: {starved}"
    );
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
}

#[test]
fn narrow_and_tiny_terminals_draw_without_panicking() {
    let mut ui = demo_fleet(60);
    for (w, h) in [(80, 24), (40, 6), (10, 2), (1, 1), (0, 0)] {
        let text = buffer_to_string(&draw(&mut ui, w, h, NOW));
        if w >= 40 {
            assert!(text.contains("gpumeter fleet"), "{w}×{h}: {text}");
        }
    }
}
