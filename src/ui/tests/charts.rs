//! The per-GPU charts as a user sees them: one small chart per GPU with the series and the GPU
//! in its title, the mean of the GPUs that do not fit ("+k more"), the series key, the GPU
//! filter, and the zoom floor (no window with fewer readings than the chart has columns), at
//! 80×24 and larger.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::ui::chart_grid::CELL_MIN_W;
use crate::ui::tests::fixtures::{self, NOW, buffer_to_string, render};
use crate::ui::*;
use gpumeter_core::engine::Engine;

fn app() -> App {
    App::new(&fixtures::options())
}

fn key(app: &mut App, code: KeyCode) {
    app.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
}

/// Four GPUs, the third lost: at 80×24 the GPUs are lines and the charts row fits.
fn four_with_lost() -> Engine {
    let mut s = fixtures::snapshot(4);
    s.gpus[2] = fixtures::lost_gpu(2);
    s.processes = fixtures::processes(&s.gpus);
    fixtures::engine_with(s)
}

/// The screen's rows holding a chart title (a `┌ ` then the series name).
fn titles<'a>(screen: &'a str, series: &str) -> Vec<&'a str> {
    screen
        .lines()
        .filter(|l| l.contains(&format!("┌ {series} ")))
        .collect()
}

/// Each chart frame's width on `row` (from `┌` to its `┐`).
fn frame_widths(row: &str) -> Vec<usize> {
    let chars: Vec<char> = row.chars().collect();
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in chars.iter().enumerate() {
        match c {
            '┌' => start = Some(i),
            '┐' => {
                if let Some(s) = start.take() {
                    out.push(i - s + 1);
                }
            }
            _ => {}
        }
    }
    out
}

#[test]
fn at_80x24_each_gpu_gets_its_own_readable_chart_and_the_rest_a_mean() {
    let s = buffer_to_string(&render(&mut app(), &four_with_lost(), 80, 24));
    let rows = titles(&s, "util");
    assert_eq!(rows.len(), 1, "{s}");
    let row = rows[0];
    assert!(row.contains("util GPU0 75%"), "{row}");
    assert!(row.contains("util GPU1 60%"), "{row}");
    // Three charts fit 80 columns: the third is the mean of GPUs 2 and 3.
    assert!(row.contains("util +2 more mean"), "{row}");
    let widths = frame_widths(row);
    assert_eq!(widths.len(), 3, "{row}");
    assert!(
        widths.iter().all(|w| *w >= usize::from(CELL_MIN_W)),
        "{row}"
    );
    // No overlaid legend of GPU numbers any more.
    assert!(!s.contains("GPU 0 1"), "{s}");
    // Each chart has its time axis: two different times.
    let from =
        gpumeter_core::clock::utc_text(NOW - 300_000, gpumeter_core::clock::UtcStyle::ClockSeconds);
    let to = gpumeter_core::clock::utc_text(NOW, gpumeter_core::clock::UtcStyle::ClockSeconds);
    let axis = s.lines().find(|l| l.contains(&to)).unwrap_or("");
    assert_eq!(axis.matches(&from).count(), 3, "{s}");
    assert_eq!(axis.matches(&to).count(), 3, "{s}");
}

#[test]
fn larger_screens_give_more_gpus_a_chart_of_their_own() {
    // 200×60 with 8 GPUs: seven charts of their own is not enough room; every GPU up to the
    // last cell is named, the last cell is the mean of what is left.
    let s = buffer_to_string(&render(&mut app(), &fixtures::engine(8), 200, 60));
    let rows = titles(&s, "util");
    let all: String = rows.concat();
    let own = (0..8)
        .filter(|g| all.contains(&format!("util GPU{g} ")))
        .count();
    let cells: usize = rows.iter().map(|r| frame_widths(r).len()).sum();
    assert!(cells >= 4, "{s}");
    if own < 8 {
        assert_eq!(own, cells - 1, "{s}");
        assert!(all.contains(&format!("+{} more", 8 - own)), "{s}");
    }
    for r in &rows {
        assert!(
            frame_widths(r)
                .iter()
                .all(|w| *w >= usize::from(CELL_MIN_W)),
            "{r}"
        );
    }
    // 120×40 with 2 GPUs: two charts side by side, half the width each.
    let s = buffer_to_string(&render(&mut app(), &fixtures::engine(2), 120, 40));
    let rows = titles(&s, "util");
    assert_eq!(rows.len(), 1, "{s}");
    assert_eq!(frame_widths(rows[0]), vec![60, 60], "{s}");
    assert!(rows[0].contains("util GPU0") && rows[0].contains("util GPU1"));
}

#[test]
fn the_series_key_cycles_util_vram_power_skipping_sm_activity_without_gpm() {
    let engine = fixtures::engine(2);
    let mut a = app();
    render(&mut a, &engine, 120, 40);
    let mut seen = Vec::new();
    for _ in 0..4 {
        key(&mut a, KeyCode::Char('c'));
        let s = buffer_to_string(&render(&mut a, &engine, 120, 40));
        let series = ["util", "SM act", "VRAM", "power"]
            .into_iter()
            .find(|m| s.contains(&format!("┌ {m} GPU0 ")))
            .unwrap_or("none");
        seen.push(series);
    }
    // The fixture's cards have no GPM: SM activity is never offered.
    assert_eq!(seen, ["VRAM", "power", "util", "VRAM"]);
    // Power reads against the card's limit.
    key(&mut a, KeyCode::Char('c'));
    let s = buffer_to_string(&render(&mut a, &engine, 120, 40));
    assert!(s.contains("│700W│"), "{s}");
    assert!(s.contains("power GPU0 525W"), "{s}");
}

#[test]
fn narrowed_to_one_gpu_the_charts_row_is_its_chart() {
    let engine = fixtures::engine(4);
    let mut a = app();
    render(&mut a, &engine, 200, 60);
    key(&mut a, KeyCode::Tab);
    key(&mut a, KeyCode::Tab);
    let s = buffer_to_string(&render(&mut a, &engine, 200, 60));
    let rows = titles(&s, "util");
    assert_eq!(rows.len(), 1, "{s}");
    assert_eq!(frame_widths(rows[0]), vec![200], "{s}");
    assert!(rows[0].contains("util GPU1 60%"), "{s}");
    assert!(!s.contains("util GPU0"), "{s}");
}

#[test]
fn zoom_never_offers_a_window_with_fewer_readings_than_columns() {
    let engine = fixtures::engine(4);
    // One chart 200 columns wide at 1 s readings: 193 plot columns, so 1 m is not offered.
    let mut a = app();
    render(&mut a, &engine, 200, 60);
    key(&mut a, KeyCode::Tab);
    render(&mut a, &engine, 200, 60);
    key(&mut a, KeyCode::Char('('));
    let s = buffer_to_string(&render(&mut a, &engine, 200, 60));
    assert!(titles(&s, "util")[0].contains("· 5m "), "{s}");
    // Four charts of 50 columns: 1 m holds a reading per column.
    let mut a = app();
    render(&mut a, &engine, 200, 60);
    key(&mut a, KeyCode::Char('('));
    let s = buffer_to_string(&render(&mut a, &engine, 200, 60));
    assert!(titles(&s, "util")[0].contains("· 1m "), "{s}");
    // A slow interval (20 s) raises the floor past the default 5 m: the shortest window
    // with a reading per column stands in, and its axis spans it.
    let mut slow = App::new(&UiOptions {
        interval_ms: 20_000,
        ..fixtures::options()
    });
    let s = buffer_to_string(&render(&mut slow, &engine, 200, 60));
    let title = titles(&s, "util")[0];
    assert!(title.contains("of 15m"), "{title}");
}

#[test]
fn the_healthy_training_demo_shows_no_alert_colour_in_any_size() {
    let engine = crate::ui::tests::demo::played("training");
    let theme = crate::ui::theme::Theme::default();
    // No cell in the HIGH alert's colour at all (VRAM near its cache size, power near the
    // cap and a trainer's CPU are a busy box, not an alarm), and none in MODERATE's colour
    // with its emphasis (partial work may be yellow, never bold yellow).
    let is_alarm = |c: &ratatui::buffer::Cell| {
        theme.alert_high.fg.is_some_and(|fg| fg == c.fg)
            || theme.alert_moderate.fg.is_some_and(|fg| fg == c.fg)
                && c.modifier.contains(theme.alert_moderate.add_modifier)
    };
    // The check sees an alert where one stands: gpu-lost's HIGH strip.
    let lost = crate::ui::tests::demo::played("gpu-lost");
    let now = crate::ui::tests::demo::NOW;
    let buf = crate::ui::tests::fixtures::render_at(&mut app(), &lost, 80, 24, now);
    assert!(
        buf.content().iter().any(is_alarm),
        "{}",
        buffer_to_string(&buf)
    );
    for (w, h) in [(80, 24), (120, 40), (200, 60)] {
        for series in 0..4 {
            let mut a = app();
            render(&mut a, &engine, w, h);
            for _ in 0..series {
                key(&mut a, KeyCode::Char('c'));
            }
            let buf = crate::ui::tests::fixtures::render_at(
                &mut a,
                &engine,
                w,
                h,
                crate::ui::tests::demo::NOW,
            );
            for cell in buf.content() {
                assert!(
                    !is_alarm(cell),
                    "{w}x{h} series {series}: {cell:?}\n{}",
                    buffer_to_string(&buf)
                );
            }
        }
    }
}
