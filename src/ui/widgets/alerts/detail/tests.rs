//! The detail view at the small and the large size: whole text, wrapped, scrolled.

use super::*;
use crate::ui::UiOptions;
use crate::ui::tests::fixtures::buffer_to_string;
use gpumeter_core::engine::rules::{AlertKind, HistoryEvent, Severity};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const NOW: i64 = 1_750_000_000_000;

fn alert() -> Alert {
    Alert {
        id: "starved:job:1".into(),
        kind: AlertKind::Starved,
        severity: Severity::High,
        gpu: None,
        title: "GPUs 0–7 starved (40 % util) — consistent with a CPU-bound input pipeline".into(),
        detail: "The GPUs wait for input most of the time while the job's process tree holds \
                 every core it may use."
            .into(),
        evidence: (0..12)
            .map(|i| {
                (
                    format!("evidence {i}"),
                    format!("value number {i} with several words"),
                )
            })
            .collect(),
        cost_micros: Some(4_200_000),
        next_step: Some(
            "raise DataLoader num_workers towards the cores the job may use, keep pin_memory on, \
             and prefetch"
                .into(),
        ),
        since_unix_ms: NOW - 25 * 60_000,
        currency: gpumeter_core::money::Currency::USD,
    }
}

fn screen(w: u16, h: u16, scroll: usize, entry: Option<&HistoryEntry>) -> String {
    let app = App::new(&UiOptions::default());
    let a = alert();
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| {
        let area = f.area();
        let rect = overlay(area);
        let (rows, cols) = inner(area);
        // The same drawing as `AlertDetail`, on a known alert instead of an engine's.
        let body = lines(&a, entry, cols, NOW, &app.theme);
        let shown: Vec<Line<'static>> = body.into_iter().skip(scroll).take(rows).collect();
        f.render_widget(Paragraph::new(shown).block(Block::bordered()), rect);
    })
    .unwrap();
    buffer_to_string(t.backend().buffer())
}

#[test]
fn at_80x24_everything_is_reachable_by_scrolling() {
    let (rows, cols) = inner(Rect::new(0, 0, 80, 24));
    let all: Vec<String> = lines(&alert(), None, cols, NOW, &Theme::monochrome())
        .iter()
        .map(|l| l.to_string())
        .collect();
    assert!(
        all.len() > rows,
        "the test alert should not fit: {}",
        all.len()
    );
    // Nothing is cut at the edge: every line fits, and the words are all there.
    assert!(all.iter().all(|l| l.chars().count() <= cols), "{all:#?}");
    let text = all
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for want in [
        "HIGH GPUs 0–7 starved",
        "CPU-bound input pipeline",
        "standing since",
        "(25 min)",
        "What it has cost: $4.20",
        "Next step: raise DataLoader num_workers",
        "prefetch",
        "evidence 0: value number 0",
        "evidence 11: value number 11 with several words",
    ] {
        assert!(text.contains(want), "{want}: {text}");
    }
    let top = screen(80, 24, 0, None);
    assert!(top.contains("Next step"), "{top}");
    assert!(!top.contains("evidence 11"), "{top}");
    let bottom = screen(80, 24, all.len() - rows, None);
    assert!(bottom.contains("evidence 11: value number 11"), "{bottom}");
}

#[test]
fn at_200x60_it_all_fits_and_a_history_entry_says_what_happened() {
    let (rows, cols) = inner(Rect::new(0, 0, 200, 60));
    assert!(cols <= 118, "the view keeps a readable width: {cols}");
    let n = lines(&alert(), None, cols, NOW, &Theme::monochrome()).len();
    assert!(n <= rows, "{n} rows in {rows}");
    let e = HistoryEntry {
        at_unix_ms: NOW - 5 * 60_000,
        event: HistoryEvent::Cleared,
        alert: alert(),
    };
    let s = screen(200, 60, 0, Some(&e));
    assert!(s.contains("starved: cleared at"), "{s}");
    assert!(s.contains("(5 min ago)"), "{s}");
    assert!(s.contains("evidence 11"), "{s}");
}

#[test]
fn no_size_panics() {
    let app = App::new(&UiOptions::default());
    let engine = gpumeter_core::engine::Engine::new();
    let d = Detail {
        of: DetailOf::Standing("gone".into()),
        scroll: 7,
    };
    for w in 0..40 {
        for h in 0..12 {
            let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
            t.draw(|f| {
                let area = f.area();
                f.render_widget(
                    AlertDetail {
                        detail: &d,
                        engine: &engine,
                        now_unix_ms: NOW,
                        app: &app,
                    },
                    area,
                );
            })
            .unwrap();
        }
    }
    let mut t = Terminal::new(TestBackend::new(80, 24)).unwrap();
    t.draw(|f| {
        let area = f.area();
        f.render_widget(
            AlertDetail {
                detail: &d,
                engine: &engine,
                now_unix_ms: NOW,
                app: &app,
            },
            area,
        );
    })
    .unwrap();
    assert!(buffer_to_string(t.backend().buffer()).contains("no longer kept"));
    assert_eq!(max_scroll(Rect::new(0, 0, 80, 24), &d.of, &engine, NOW), 0);
}
