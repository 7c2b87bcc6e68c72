//! `--theme mono` and `NO_COLOR` draw no colour anywhere: every demo scenario, fast-forwarded
//! until its alerts stand, drawn at three sizes with the alerts panel or strip, the alert
//! history and the help overlay, must leave every cell in the terminal's own colours.

use crate::ui::tests::demo::{START, names, played_for};
use crate::ui::tests::fixtures;
use crate::ui::tests::fixtures::render_at;
use crate::ui::*;

/// Long enough for every rule to have fired in the scenarios that trigger it (idle reminds at
/// 10 min, forgotten after 15 min).
const SECONDS: i64 = 16 * 60;
const NOW: i64 = START + SECONDS * 1_000 + 400;

fn coloured_cells(buf: &ratatui::buffer::Buffer) -> Vec<(u16, u16, String)> {
    let a = buf.area;
    let mut out = Vec::new();
    for y in a.top()..a.bottom() {
        for x in a.left()..a.right() {
            let c = &buf[(x, y)];
            if c.fg != ratatui::style::Color::Reset || c.bg != ratatui::style::Color::Reset {
                out.push((x, y, c.symbol().to_string()));
            }
        }
    }
    out
}

#[test]
fn mono_and_no_color_draw_no_colour_in_any_scenario_with_its_alerts() {
    let mono = theme::file::builtin("mono").unwrap().unwrap();
    let ways = [
        (
            "--theme mono",
            UiOptions {
                theme: mono,
                ..fixtures::options()
            },
        ),
        (
            "NO_COLOR",
            UiOptions {
                no_color: true,
                ..fixtures::options()
            },
        ),
    ];
    let mut with_alerts = 0;
    for name in names() {
        let engine = played_for(name, SECONDS);
        let alerts = engine.rules().visible(NOW).len();
        with_alerts += usize::from(alerts > 0);
        for (way, options) in &ways {
            for (w, h) in [(80, 24), (120, 40), (200, 60)] {
                for overlay in ["", "history", "help", "detail"] {
                    let mut app = App::new(options);
                    if overlay == "history" {
                        app.alerts.open_history();
                    }
                    app.help = overlay == "help";
                    if overlay == "detail" {
                        // The detail needs the alert list the sync gives it.
                        crate::ui::sync(
                            &mut app,
                            &engine,
                            ratatui::layout::Rect::new(0, 0, w, h),
                            NOW,
                        );
                        app.alerts.open_detail();
                    }
                    let buf = render_at(&mut app, &engine, w, h, NOW);
                    let coloured = coloured_cells(&buf);
                    assert!(
                        coloured.is_empty(),
                        "{way}: {name} {w}x{h} {overlay} ({alerts} alerts): coloured cells {:?}",
                        &coloured[..coloured.len().min(8)]
                    );
                }
            }
        }
    }
    // The point is the alert widgets: most scenarios must have some standing.
    assert!(
        with_alerts >= 5,
        "only {with_alerts} scenarios raised an alert"
    );
}

#[test]
fn the_colour_theme_does_colour_the_alerts() {
    // The check above would pass vacuously if nothing were ever coloured.
    let engine = played_for("idle", SECONDS);
    assert!(!engine.rules().visible(NOW).is_empty());
    let mut app = App::new(&fixtures::options());
    let buf = render_at(&mut app, &engine, 120, 40, NOW);
    let text = fixtures::buffer_to_string(&buf);
    let y = text.lines().position(|l| l.contains("Alerts (")).unwrap() as u16;
    assert!(
        coloured_cells(&buf).iter().any(|(_, cy, _)| *cy == y),
        "the alerts panel's border has no colour:\n{text}"
    );
}
