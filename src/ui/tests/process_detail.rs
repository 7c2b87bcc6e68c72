//! Enter on a process (nvitop's detail view) and Enter on an alert, as a user meets them:
//! Enter opens what was selected last (the alert strip at the start and after `n`/`p`, the
//! process after the table's selection moved), the view's contents, its wrapping and scroll at
//! 80×24 and smaller, and Esc closing it.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::ui::tests::fixtures::{self, buffer_to_string, render};
use crate::ui::*;

fn app() -> App {
    App::new(&fixtures::options())
}

fn key(app: &mut App, code: KeyCode) {
    app.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
}

#[test]
fn enter_opens_the_alert_until_the_table_is_selected_then_the_process() {
    let engine = fixtures::engine(1);
    let mut a = app();
    let s = buffer_to_string(&render(&mut a, &engine, 80, 24));
    assert!(s.contains("Enter alert details"), "{s}");
    // Untouched table, an alert standing: Enter is the alert's, as before.
    key(&mut a, KeyCode::Enter);
    let s = buffer_to_string(&render(&mut a, &engine, 80, 24));
    assert!(s.contains("Alert details"), "{s}");
    assert!(!s.contains("Process 1000"), "{s}");
    key(&mut a, KeyCode::Esc);
    // The selection moves: Enter is the process's, and the footer says so.
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::Up);
    let s = buffer_to_string(&render(&mut a, &engine, 80, 24));
    assert!(s.contains("Enter process details"), "{s}");
    // The strip says how to give Enter back to the alert.
    assert!(s.contains("n select"), "{s}");
    key(&mut a, KeyCode::Enter);
    let s = buffer_to_string(&render(&mut a, &engine, 80, 24));
    assert!(s.contains(" Process 1000 "), "{s}");
    assert!(!s.contains("Alert details"), "{s}");
    // Esc closes it.
    key(&mut a, KeyCode::Esc);
    let s = buffer_to_string(&render(&mut a, &engine, 80, 24));
    assert!(!s.contains(" Process 1000 "), "{s}");
    // `n` selects an alert again: Enter is the alert's.
    key(&mut a, KeyCode::Char('n'));
    key(&mut a, KeyCode::Enter);
    let s = buffer_to_string(&render(&mut a, &engine, 80, 24));
    assert!(s.contains("Alert details"), "{s}");
}

#[test]
fn the_detail_names_the_process_its_gpus_history_job_and_alerts() {
    let engine = fixtures::engine(2);
    let mut a = app();
    render(&mut a, &engine, 120, 40);
    // Down then Up: the first row (GPU 1's trainer, the most VRAM).
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::Up);
    key(&mut a, KeyCode::Enter);
    let s = buffer_to_string(&render(&mut a, &engine, 120, 40));
    assert!(s.contains(" Process 1001 "), "{s}");
    assert!(s.contains("PID 1001: user alice"), "{s}");
    assert!(s.contains("Command: python train.py"), "{s}");
    assert!(s.contains("GPU1 VRAM 39.0GiB · SM 71%"), "{s}");
    // The card's history over the charts' window, as a sparkline; its own share is N/A.
    let vram = s
        .lines()
        .find(|l| l.contains("VRAM          5m "))
        .unwrap_or("");
    assert!(vram.chars().any(|c| ('▁'..='█').contains(&c)), "{s}");
    assert!(s.contains("N/A"), "{s}");
    assert!(s.contains("Job: trainer 1001"), "{s}");
    assert!(s.contains("+ 2 workers"), "{s}");
    assert!(s.contains("workers: 2010 2011"), "{s}");
}

#[test]
fn a_worker_shows_its_trainer_and_at_80x24_the_view_wraps_and_scrolls() {
    let engine = fixtures::engine(1);
    let mut a = app();
    render(&mut a, &engine, 80, 24);
    // The second row: a dataloader worker of GPU 0's trainer.
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::Enter);
    let s = buffer_to_string(&render(&mut a, &engine, 80, 24));
    assert!(s.contains(" Process 2000 "), "{s}");
    assert!(s.contains("none of its own"), "{s}");
    assert!(s.contains("Job: trainer 1000"), "{s}");
    assert!(s.contains("2000*"), "{s}");
    // Nothing runs past the overlay's right border.
    for l in s.lines().filter(|l| l.starts_with("  │")) {
        assert_eq!(l.chars().nth(77), Some('│'), "{l}");
    }
    // Twelve rows: the text scrolls, and the title says where.
    let s = buffer_to_string(&render(&mut a, &engine, 80, 12));
    let top = s
        .lines()
        .find(|l| l.contains(" Process 2000 "))
        .unwrap_or("");
    assert!(top.contains(" 1–"), "{s}");
    key(&mut a, KeyCode::Down);
    let s = buffer_to_string(&render(&mut a, &engine, 80, 12));
    let top = s
        .lines()
        .find(|l| l.contains(" Process 2000 "))
        .unwrap_or("");
    assert!(top.contains(" 2–"), "{s}");
}

#[test]
fn snapshot_of_the_detail_at_80x24() {
    let engine = fixtures::engine(2);
    let mut a = app();
    render(&mut a, &engine, 80, 24);
    key(&mut a, KeyCode::End);
    key(&mut a, KeyCode::Home);
    key(&mut a, KeyCode::Enter);
    insta::assert_snapshot!(
        "80x24_process_detail",
        buffer_to_string(&render(&mut a, &engine, 80, 24))
    );
}
