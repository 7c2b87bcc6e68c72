//! Whole-screen tests: insta snapshots at 80×24, 120×40 and 200×60 from hand-built fixtures, a
//! sweep of sizes and GPU counts (with and without billing) that must never panic, `LOST`/`N/A`
//! instead of zeros, no money without pricing, and the hot colour on a busy GPU.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Color;

use crate::ui::layout::{self, Screen};
use crate::ui::tests::fixtures::{self, NOW, T0, buffer_to_string, render};
use crate::ui::*;

fn app() -> App {
    App::new(&fixtures::options())
}

fn press(app: &mut App, c: char) {
    app.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
}

/// Four GPUs, the third one lost.
fn engine_with_lost() -> Engine {
    let mut s = fixtures::snapshot(4);
    s.gpus[2] = fixtures::lost_gpu(2);
    s.processes = fixtures::processes(&s.gpus);
    fixtures::engine_with(s)
}

fn snap(name: &str, buf: &Buffer) {
    insta::assert_snapshot!(name, buffer_to_string(buf));
}

#[test]
fn snapshot_80x24() {
    snap(
        "80x24_1gpu",
        &render(&mut app(), &fixtures::engine(1), 80, 24),
    );
    snap(
        "80x24_2gpus",
        &render(&mut app(), &fixtures::engine(2), 80, 24),
    );
    snap(
        "80x24_8gpus",
        &render(&mut app(), &fixtures::engine(8), 80, 24),
    );
    snap(
        "80x24_lost",
        &render(&mut app(), &engine_with_lost(), 80, 24),
    );
    let mut help = app();
    press(&mut help, '?');
    snap(
        "80x24_help",
        &render(&mut help, &fixtures::engine(8), 80, 24),
    );
    let mut filtering = app();
    press(&mut filtering, '/');
    for c in "ipy".chars() {
        press(&mut filtering, c);
    }
    snap(
        "80x24_filter",
        &render(&mut filtering, &fixtures::engine(4), 80, 24),
    );
    snap("80x24_waiting", &render(&mut app(), &Engine::new(), 80, 24));
}

#[test]
fn snapshot_120x40() {
    snap(
        "120x40_4gpus",
        &render(&mut app(), &fixtures::engine(4), 120, 40),
    );
    snap(
        "120x40_8gpus",
        &render(&mut app(), &fixtures::engine(8), 120, 40),
    );
    let mut one_gpu = app();
    let engine = fixtures::engine(8);
    render(&mut one_gpu, &engine, 120, 40);
    for _ in 0..2 {
        one_gpu.handle_key(KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE));
    }
    snap(
        "120x40_gpu1_selected",
        &render(&mut one_gpu, &engine, 120, 40),
    );
}

#[test]
fn snapshot_200x60() {
    snap(
        "200x60_8gpus",
        &render(&mut app(), &fixtures::engine(8), 200, 60),
    );
    snap(
        "200x60_2gpus",
        &render(&mut app(), &fixtures::engine(2), 200, 60),
    );
    let mut failing = engine_with_lost();
    failing.source_failed("NVML: Unknown Error".into(), NOW - 6_000, 8_000);
    let mut a = app();
    a.note_source_failure(NOW - 3_000);
    snap("200x60_failing", &render(&mut a, &failing, 200, 60));
}

#[test]
fn snapshot_scrolled_many_processes_flat_by_cpu() {
    let engine = fixtures::engine_with(fixtures::crowded(2, 120));
    let mut a = app();
    render(&mut a, &engine, 80, 24);
    press(&mut a, 't');
    // VRAM → SM% → CPU%.
    press(&mut a, 's');
    press(&mut a, 's');
    // The loop syncs the view before each key; so does this test.
    render(&mut a, &engine, 80, 24);
    a.handle_key(KeyEvent::new(KeyCode::PageDown, KeyModifiers::NONE));
    a.handle_key(KeyEvent::new(KeyCode::PageDown, KeyModifiers::NONE));
    let buf = render(&mut a, &engine, 80, 24);
    snap("80x24_scrolled_by_cpu", &buf);
    let text = buffer_to_string(&buf);
    assert!(text.contains("CPU%▼"), "{text}");
    // The user had not moved the selection before the re-sorts, so it stayed on the top row
    // (the table opens at the top and stays there); two pages of 10 rows down from there: row 21
    // selected, rows 12–21 shown. (One alert strip line, the shared-card notice: the fixture's
    // GPU 0 has other users, GPU 1 memory no listed process holds; no starved strip: the GPUs
    // average ~79 % util, above the threshold of 60 %.)
    assert!(text.contains("12–21 of 129"), "{text}");
}

#[test]
fn a_failing_source_takes_the_only_header_line_on_short_screens() {
    let mut failing = fixtures::engine(1);
    failing.source_failed("NVML: Unknown Error".into(), NOW, 2_000);
    let text = buffer_to_string(&render(&mut app(), &failing, 100, 12));
    let first = text.lines().next().unwrap_or_default();
    assert!(
        first.contains("SOURCE FAILING: NVML: Unknown Error"),
        "{text}"
    );
    assert!(first.contains("retrying every 2.0s"), "{text}");
}

#[test]
fn tiny_terminals_say_so_and_nothing_else() {
    let text = buffer_to_string(&render(&mut app(), &fixtures::engine(8), 10, 3));
    assert_eq!(text, "too small \n          \n          \n");
    let text = buffer_to_string(&render(&mut app(), &fixtures::engine(8), 60, 5));
    assert!(
        text.starts_with("terminal too small: 60×5 (need 40×8)"),
        "{text}"
    );
    let text = buffer_to_string(&render(&mut app(), &fixtures::engine(8), 1, 1));
    assert_eq!(text, " \n");
}

#[test]
fn draw_never_panics_at_any_size_or_gpu_count() {
    let mut widths: Vec<u16> = (0..=220).step_by(11).collect();
    widths.extend([1, 10, 39, 40, 41, 79, 80, 119, 120, 199, 200]);
    let mut heights: Vec<u16> = (0..=70).step_by(5).collect();
    heights.extend([1, 3, 7, 8, 9, 19, 20, 23, 24, 39, 40, 59, 60]);
    for (n, billed) in [0u32, 1, 2, 4, 8]
        .into_iter()
        .flat_map(|n| [(n, false), (n, true)])
    {
        let last = if n == 0 {
            Snapshot::empty("demo:none", T0)
        } else {
            fixtures::snapshot(n)
        };
        let engine = if billed {
            fixtures::billed_engine_with(last)
        } else {
            fixtures::engine_with(last)
        };
        assert_eq!(engine.billing().is_some(), billed);
        for &w in &widths {
            for &h in &heights {
                let mut a = app();
                // Vary the view too: help, filter input, a GPU filter, flat view.
                match (w as usize + h as usize) % 4 {
                    0 => press(&mut a, '?'),
                    1 => {
                        press(&mut a, '/');
                        press(&mut a, 'x');
                    }
                    2 => a.gpu_filter = Some(1),
                    _ => press(&mut a, 't'),
                }
                let buf = render(&mut a, &engine, w, h);
                assert_eq!(buf.area, Rect::new(0, 0, w, h));
            }
        }
    }
}

use gpumeter_model::Snapshot;

/// The text inside `r`.
fn region(buf: &Buffer, r: Rect) -> String {
    let mut sub = Buffer::empty(r);
    for y in r.top()..r.bottom() {
        for x in r.left()..r.right() {
            if let (Some(src), Some(dst)) = (buf.cell((x, y)), sub.cell_mut((x, y))) {
                *dst = src.clone();
            }
        }
    }
    buffer_to_string(&sub)
}

#[test]
fn lost_gpus_and_unsupported_readings_read_lost_and_na_never_zero() {
    let mut s = fixtures::snapshot(2);
    s.gpus[0] = fixtures::lost_gpu(0);
    s.gpus[1] = fixtures::bare_gpu(1);
    s.processes.clear();
    let engine = fixtures::engine_with(s);
    let buf = render(&mut app(), &engine, 200, 60);
    let Screen::Dashboard(l) = layout::compute(Rect::new(0, 0, 200, 60), 2, false) else {
        panic!("dashboard expected");
    };
    let lost = region(&buf, l.gpu_cells[0]);
    assert!(lost.contains("LOST — fell off the bus"), "{lost}");
    assert!(
        !lost.contains('%') && !lost.contains("0W") && !lost.contains("°C"),
        "{lost}"
    );
    let bare = region(&buf, l.gpu_cells[1]);
    for expected in [
        "mem N/A",
        "pwr N/A/N/A",
        "energy N/A",
        "temp N/A",
        "fan N/A",
        "SM N/A  mem N/A MHz",
        "PCIe RX N/A TX N/A  link N/A",
        "throttle N/A",
    ] {
        assert!(bare.contains(expected), "missing {expected:?} in\n{bare}");
    }
    // An absent memory-controller util reads N/A once, not as a bar and again as a value.
    let util_line = bare.lines().find(|l| l.contains("util ")).unwrap();
    assert_eq!(util_line.matches("N/A").count(), 1, "{util_line}");
    for zero in ["0W", "0°C", "0MHz", "0B/s", "0.0Wh"] {
        assert!(!bare.contains(zero), "{zero:?} in\n{bare}");
    }
    // The compact variant says the same.
    let small = buffer_to_string(&render(&mut app(), &engine, 80, 12));
    assert!(small.contains("LOST — fell off the bus"), "{small}");
    assert!(small.contains("N/A/N/A"), "{small}");
}

#[test]
fn a_busy_gpu_is_drawn_as_good_news_and_a_half_used_one_as_a_warning() {
    // On a tool about idle money a busy GPU is not the alarm's red (and VRAM near full is).
    let mut s = fixtures::snapshot(2);
    s.gpus[0].util_gpu_pct = Some(97);
    s.gpus[1].util_gpu_pct = Some(40);
    let engine = fixtures::engine_with(s);
    let buf = render(&mut app(), &engine, 120, 40);
    let Screen::Dashboard(l) = layout::compute(Rect::new(0, 0, 120, 40), 2, false) else {
        panic!("dashboard expected");
    };
    // First bar cell: right after "util " on the first inner row of each panel.
    let bar_cell = |r: Rect| buf.cell((r.x + 1 + 5, r.y + 1)).unwrap().clone();
    let busy = bar_cell(l.gpu_cells[0]);
    assert_eq!(busy.symbol(), "█");
    assert_eq!(busy.fg, Color::Green);
    let partial = bar_cell(l.gpu_cells[1]);
    assert_eq!(partial.symbol(), "█");
    assert_eq!(partial.fg, Color::Yellow);
    // Without colour the busy bar is still emphasised, and nothing is coloured.
    let mut mono = App::new(&UiOptions {
        no_color: true,
        source_label: "x".into(),
        billing: None,
        theme: theme::Theme::default(),
        alerts: Default::default(),
        ..Default::default()
    });
    let buf = render(&mut mono, &engine, 120, 40);
    assert!(
        buf.content()
            .iter()
            .all(|c| c.fg == Color::Reset && c.bg == Color::Reset)
    );
}

#[test]
fn hostile_names_arrive_sanitized_and_stay_inside_their_cell() {
    let buf = render(&mut app(), &fixtures::engine(1), 200, 60);
    let text = buffer_to_string(&buf);
    assert!(text.contains("evil --steal"), "{text}");
    assert!(!text.contains('\u{1b}') && !text.contains('\u{202e}'));
    assert!(
        buf.content()
            .iter()
            .all(|c| !c.symbol().chars().any(char::is_control))
    );
}

#[test]
fn selected_row_is_highlighted_and_follows_moves() {
    let engine = fixtures::engine(2);
    let mut a = app();
    render(&mut a, &engine, 100, 30);
    press(&mut a, 'j');
    let buf = render(&mut a, &engine, 100, 30);
    // The fixture fires an alert, so the layout is the one drawn (alerts included).
    let Screen::Dashboard(l) =
        crate::ui::screen_for(Rect::new(0, 0, 100, 30), &engine, fixtures::NOW)
    else {
        panic!("dashboard expected");
    };
    let body = l.table_body();
    let row_bg = |i: u16| buf.cell((body.x, body.y + i)).unwrap().bg;
    assert_eq!(row_bg(1), Color::Blue);
    assert_ne!(row_bg(0), Color::Blue);
}

#[test]
fn money_shows_only_with_pricing() {
    for (w, h) in [(80, 24), (120, 40), (200, 60)] {
        let plain = buffer_to_string(&render(&mut app(), &fixtures::engine(2), w, h));
        assert!(
            !plain.contains('$') && !plain.contains("Spend") && !plain.contains("spent"),
            "{w}x{h}:\n{plain}"
        );
        let billed = fixtures::billed_engine_with(fixtures::snapshot(2));
        let text = buffer_to_string(&render(&mut app(), &billed, w, h));
        assert!(
            text.contains("spent") && text.contains("$31.00/h"),
            "{w}x{h}:\n{text}"
        );
    }
}

#[test]
fn a_replay_shows_replay_and_the_recorded_time_not_its_age() {
    let mut s = fixtures::snapshot(2);
    s.source = "replay:night.ndjson.zst".into();
    let engine = fixtures::engine_with(s);
    // Drawn a day after the reading was recorded.
    let buf = fixtures::render_at(&mut app(), &engine, 160, 40, T0 + 86_400_000);
    let first = buffer_to_string(&buf)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    let recorded = gpumeter_core::clock::utc_text(T0, gpumeter_core::clock::UtcStyle::Full);
    assert!(first.contains(&format!("REPLAY {recorded}")), "{first}");
    assert!(!first.contains(" ago"), "{first}");
}

#[test]
fn a_fresh_reading_shows_its_period_and_a_late_one_its_age() {
    let engine = fixtures::engine_with(fixtures::snapshot(2));
    let first_line = |app: &mut App, late_ms: i64| {
        let buf = fixtures::render_at(app, &engine, 160, 40, T0 + late_ms);
        buffer_to_string(&buf)
            .lines()
            .next()
            .unwrap_or_default()
            .to_string()
    };
    let mut a = app();
    // Drawn as it arrives, and a second later: the period, no "0.0s ago".
    for late in [0, 1_000] {
        let line = first_line(&mut a, late);
        assert!(line.contains("sample every 1s"), "{line}");
        assert!(!line.contains(" ago"), "{line}");
    }
    // Readings stopped: the age, from 5 s (two intervals of 1 s are less).
    let line = first_line(&mut a, 12_000);
    assert!(line.contains("sample 12s ago"), "{line}");
    // Every 30 s, 40 s is one late reading short of stale; 61 s is late.
    a.interval_ms = 30_000;
    let line = first_line(&mut a, 40_000);
    assert!(line.contains("sample every 30s"), "{line}");
    let line = first_line(&mut a, 61_000);
    assert!(line.contains("sample 1m01s ago"), "{line}");
}

#[test]
fn the_first_minutes_say_what_the_rules_still_wait_for() {
    let status_line = |engine: &Engine| {
        let mut a = app();
        let buf = fixtures::render_at(&mut a, engine, 80, 24, T0);
        buffer_to_string(&buf)
            .lines()
            .last()
            .unwrap_or_default()
            .to_string()
    };
    // Twenty seconds in: nothing has been judged, and the line says so before the hints.
    let mut engine = Engine::new();
    for k in (0..=10).rev() {
        engine.ingest(fixtures::snapshot_at(2, T0 - k * 2_000));
    }
    let line = status_line(&engine);
    assert!(
        line.starts_with("judging: 20s of 1m for starved, throttle, shared; 2m for idle"),
        "{line}"
    );
    // Five minutes in (the fixture's history): every window has passed, the hints are back.
    let line = status_line(&fixtures::engine(2));
    assert!(!line.contains("judging"), "{line}");
    assert!(line.contains("quit"), "{line}");
}

/// At 80×24 the command tells processes apart: the column keeps 30 cells (TIME and RSS give
/// way), and a job's root shows its totals short so its own command still shows.
#[test]
fn at_80x24_the_command_column_shows_the_commands() {
    let engine = fixtures::engine(2);
    let mut a = app();
    let text = buffer_to_string(&render(&mut a, &engine, 80, 24));
    let head = text
        .lines()
        .find(|l| l.contains("PID") && l.contains("COMMAND"))
        .unwrap();
    let room = head.chars().count() - head.find("COMMAND").unwrap();
    assert!(room >= 30, "{head}");
    assert!(!head.contains("TIME") && !head.contains("RSS"), "{head}");
    let root = text.lines().find(|l| l.contains("[job ")).unwrap();
    assert!(
        root.contains("[job 3 · ") && root.contains("python"),
        "{root}"
    );
}
