//! Enter on a process (nvitop's detail view) and Enter on an alert, as a user meets them:
//! Enter opens what was selected last (the alert strip at the start and after `n`/`p`, the
//! process after the table's selection moved), the view's contents, its wrapping and scroll at
//! 80×24 and smaller, and Esc closing it.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use gpumeter_core::engine::Engine;

use crate::ui::tests::fixtures::{self, T0, buffer_to_string, render};
use crate::ui::*;

fn app() -> App {
    App::new(&fixtures::options())
}

fn key(app: &mut App, code: KeyCode) {
    app.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
}

/// The detail's history row `name` (`VRAM`, `SM`) of the first GPU it lists.
fn row<'s>(s: &'s str, name: &str) -> &'s str {
    let label = format!("    {name:<11}   5m ");
    s.lines().find(|l| l.contains(&label)).unwrap_or("")
}

/// The sparkline glyphs of a row.
fn spark(row: &str) -> impl Iterator<Item = char> + '_ {
    row.chars().filter(|c| ('▁'..='█').contains(c))
}

/// One GPU for five minutes at 2 s ticks, GPU 0's trainer (PID 1000) changed by `edit` at
/// each tick (`k` counts down to 0, the last reading).
fn engine_where(edit: impl Fn(i64, &mut gpumeter_model::ProcessReading)) -> Engine {
    let mut e = Engine::new();
    for k in (0..150).rev() {
        let mut s = fixtures::snapshot_at(1, T0 - k * 2000);
        if let Some(p) = s.processes.iter_mut().find(|p| p.pid == 1000) {
            edit(k, p);
        }
        e.ingest(s);
    }
    e
}

/// Opens the detail of the table's first row (GPU 0's trainer, the most VRAM) at `w`×`h`.
fn open_first(engine: &Engine, w: u16, h: u16) -> String {
    let mut a = app();
    render(&mut a, engine, w, h);
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::Up);
    key(&mut a, KeyCode::Enter);
    buffer_to_string(&render(&mut a, engine, w, h))
}

#[test]
fn the_detail_draws_the_process_own_sm_not_the_cards() {
    // Its SM share climbs from 0 to 100 % over the window while the card's util stays put.
    let engine = engine_where(|k, p| {
        p.gpu[0].sm_util_pct = Some(((149 - k) * 100 / 149) as u32);
    });
    for (w, h) in [(80, 24), (120, 40)] {
        let s = open_first(&engine, w, h);
        assert!(s.contains(" Process 1000 "), "{s}");
        let sm: Vec<char> = spark(row(&s, "SM share")).collect();
        assert!(sm.len() > 10, "{w}x{h}: {s}");
        // Low on the left, full on the right: the process's own rise.
        assert!(sm.first() < sm.last(), "{w}x{h}: {sm:?}");
        assert_eq!(sm.last(), Some(&'█'), "{w}x{h}: {sm:?}");
        assert!(spark(row(&s, "VRAM")).count() > 10, "{w}x{h}: {s}");
    }
}

#[test]
fn an_sm_share_the_driver_never_gives_is_na_not_a_flat_zero() {
    let engine = engine_where(|_, p| p.gpu[0].sm_util_pct = None);
    for (w, h) in [(80, 24), (120, 40)] {
        let s = open_first(&engine, w, h);
        let sm = row(&s, "SM share");
        assert!(sm.contains("N/A"), "{w}x{h}: {s}");
        assert_eq!(spark(sm).count(), 0, "{w}x{h}: {sm}");
        // Its VRAM is known: that row draws.
        assert!(spark(row(&s, "VRAM")).count() > 10, "{w}x{h}: {s}");
    }
}

#[test]
fn a_reused_pid_does_not_inherit_the_old_process_history() {
    // PID 1000 exits and a new process takes its PID for the last reading only: its own
    // history is that one reading, not the five minutes before it.
    let engine = engine_where(|k, p| {
        if k == 0 {
            p.start_time_unix_s = Some(T0 / 1000);
        }
    });
    let s = open_first(&engine, 120, 40);
    assert!(s.contains(" Process 1000 "), "{s}");
    assert_eq!(spark(row(&s, "SM share")).count(), 1, "{s}");
    assert_eq!(spark(row(&s, "VRAM")).count(), 1, "{s}");
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
    // Its own history over the charts' window, as sparklines: VRAM and SM.
    assert!(spark(row(&s, "VRAM")).count() > 10, "{s}");
    assert!(spark(row(&s, "SM share")).count() > 10, "{s}");
    assert!(!s.contains("whole card's"), "{s}");
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

#[test]
fn snapshot_of_the_detail_at_120x40() {
    // Its SM share climbs over the window: the snapshot shows its own line, not the card's.
    let engine = engine_where(|k, p| {
        p.gpu[0].sm_util_pct = Some(((149 - k) * 100 / 149) as u32);
    });
    insta::assert_snapshot!("120x40_process_detail", open_first(&engine, 120, 40));
}

#[test]
fn a_live_process_shows_its_directory_and_gpu_environment_never_its_secrets_at_80x24() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .current_dir(dir.path())
        .env_clear()
        .env("CUDA_VISIBLE_DEVICES", "1")
        .env("LOCAL_RANK", "0")
        .env("HF_TOKEN", "hf_do_not_show")
        .env("PATH", "/usr/bin:/bin")
        .spawn()
        .expect("spawn sleep");
    let mut snap = fixtures::snapshot(1);
    let mut p = fixtures::process(child.id(), 1, "alice", "sleep 30");
    p.start_time_unix_s = None;
    p.gpu = snap.processes[0].gpu.clone();
    p.gpu[0].memory_bytes = Some(70 * fixtures::GIB);
    snap.processes.push(p);
    let engine = fixtures::engine_with(snap.clone());
    let mut a = App::new(&UiOptions {
        acting: process_action::Acting::ReadOnly,
        ..fixtures::options()
    });
    render(&mut a, &engine, 80, 24);
    a.process_detail = Some(process_view::ProcessDetail::new(child.id()));
    process_view::inspect_opened(&mut a, Some(&snap));
    let s = buffer_to_string(&render(&mut a, &engine, 80, 24));
    let _ = child.kill();
    let _ = child.wait();
    let want = format!("Directory: {}", dir.path().display());
    assert!(s.contains(&want), "{s}");
    assert!(s.contains("CUDA_VISIBLE_DEVICES=1"), "{s}");
    assert!(s.contains("LOCAL_RANK=0"), "{s}");
    assert!(
        s.contains("Environment: 2 GPU-related; 2 others not shown"),
        "{s}"
    );
    assert!(
        !s.contains("hf_do_not_show") && !s.contains("HF_TOKEN"),
        "{s}"
    );
}

#[test]
fn a_demo_process_is_not_read_and_says_why() {
    let engine = fixtures::engine(1);
    let s = open_first(&engine, 120, 40);
    assert!(
        s.contains("Directory: N/A (a demo's or a recording's process: nothing to read here)"),
        "{s}"
    );
}
