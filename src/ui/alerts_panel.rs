//! The alerts panel: the standing alerts, most severe first, each with its severity (coloured),
//! title, how long it has stood, what it cost, its evidence and the next step. Renders a slice
//! of [`Alert`]s (the engine's, filtered by the caller: `engine.rules().visible(now)`) into a
//! buffer; reads nothing else and never mutates.
//!
//! Small areas degrade: every alert keeps its title line first; detail lines (cost, evidence,
//! next step) go to the most severe alerts while rows remain; then titles are clipped. No size
//! panics.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Widget};

use crate::engine::rules::alert::minutes_text;
use crate::engine::rules::{Alert, Severity};

/// Evidence lines shown per alert at most.
const MAX_EVIDENCE: usize = 6;

/// The colour of a severity (bold without colours).
pub fn severity_style(s: Severity, no_color: bool) -> Style {
    let base = Style::default().add_modifier(Modifier::BOLD);
    if no_color {
        return match s {
            Severity::High => base.add_modifier(Modifier::REVERSED),
            _ => base,
        };
    }
    match s {
        Severity::High => base.fg(Color::Red),
        Severity::Moderate => base.fg(Color::Yellow),
        Severity::Info => base.fg(Color::Cyan),
    }
}

fn label(s: Severity) -> &'static str {
    match s {
        Severity::High => "HIGH",
        Severity::Moderate => "MOD ",
        Severity::Info => "INFO",
    }
}

fn dim(no_color: bool) -> Style {
    if no_color {
        Style::default()
    } else {
        Style::default().fg(Color::DarkGray)
    }
}

/// The title line of one alert.
fn title_line(a: &Alert, now_unix_ms: i64, no_color: bool) -> Line<'static> {
    Line::from(vec![
        Span::styled(label(a.severity), severity_style(a.severity, no_color)),
        Span::raw(" "),
        Span::raw(a.title.clone()),
        Span::styled(
            format!("  ({})", minutes_text(now_unix_ms - a.since_unix_ms)),
            dim(no_color),
        ),
    ])
}

/// The detail lines of one alert, most useful first.
fn detail_lines(a: &Alert, no_color: bool) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let key = |k: &str| Span::styled(format!("  {k}: "), dim(no_color));
    if a.cost_micros.is_some() {
        out.push(Line::from(vec![
            key("cost so far"),
            Span::raw(a.cost_text()),
        ]));
    }
    if let Some(n) = &a.next_step {
        out.push(Line::from(vec![
            Span::styled("  → ", severity_style(a.severity, no_color)),
            Span::raw(n.clone()),
        ]));
    }
    for (k, v) in a.evidence.iter().take(MAX_EVIDENCE) {
        out.push(Line::from(vec![key(k), Span::raw(v.clone())]));
    }
    out
}

/// The lines for `alerts` within `rows`: every title, details to the first alerts that fit.
pub fn lines(
    alerts: &[Alert],
    rows: usize,
    now_unix_ms: i64,
    no_color: bool,
) -> Vec<Line<'static>> {
    if alerts.is_empty() {
        return vec![Line::styled("No alerts.", dim(no_color))];
    }
    let mut out = Vec::new();
    let mut left = rows;
    for (i, a) in alerts.iter().enumerate() {
        if left == 0 {
            break;
        }
        out.push(title_line(a, now_unix_ms, no_color));
        left -= 1;
        // Keep a title row for each alert after this one.
        let reserve = alerts.len() - i - 1;
        let room = left.saturating_sub(reserve);
        let details = detail_lines(a, no_color);
        let take = details.len().min(room);
        out.extend(details.into_iter().take(take));
        left -= take;
    }
    out
}

/// Draws the panel into `area` of `buf`.
pub fn render(area: Rect, buf: &mut Buffer, alerts: &[Alert], now_unix_ms: i64, no_color: bool) {
    let area = area.intersection(buf.area);
    if area.width == 0 || area.height == 0 {
        return;
    }
    let bordered = area.height >= 3 && area.width >= 12;
    let inner_rows = if bordered {
        area.height - 2
    } else {
        area.height
    };
    let body = Paragraph::new(lines(
        alerts,
        usize::from(inner_rows),
        now_unix_ms,
        no_color,
    ));
    if bordered {
        let worst = alerts.iter().map(|a| a.severity).max();
        let border = worst.map_or(dim(no_color), |s| {
            severity_style(s, no_color).remove_modifier(Modifier::REVERSED)
        });
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(border)
            .title(format!(" Alerts ({}) ", alerts.len()));
        body.block(block).render(area, buf);
    } else {
        body.render(area, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rules::AlertKind;

    const NOW: i64 = 1_750_000_000_000;

    fn alert(id: &str, severity: Severity, title: &str) -> Alert {
        Alert {
            id: id.into(),
            kind: AlertKind::Starved,
            severity,
            gpu: Some(0),
            title: title.into(),
            detail: "detail".into(),
            evidence: vec![
                ("verdict".into(), "CPU-bound input".into()),
                ("job CPU".into(), "16.0 of 16.0 cores (100 %)".into()),
            ],
            cost_micros: Some(1_160_000),
            next_step: Some("raise DataLoader num_workers".into()),
            since_unix_ms: NOW - 12 * 60_000,
            currency: crate::money::Currency::USD,
        }
    }

    fn text(buf: &Buffer) -> String {
        let a = buf.area;
        (a.top()..a.bottom())
            .map(|y| {
                (a.left()..a.right())
                    .map(|x| buf[(x, y)].symbol())
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn draw(w: u16, h: u16, alerts: &[Alert], no_color: bool) -> Buffer {
        let mut buf = Buffer::empty(Rect::new(0, 0, w, h));
        render(buf.area, &mut buf, alerts, NOW, no_color);
        buf
    }

    #[test]
    fn shows_severity_title_age_cost_next_step_and_evidence() {
        let alerts = [alert("a", Severity::High, "GPUs 0–7 starved (40 % util)")];
        let buf = draw(90, 12, &alerts, false);
        let t = text(&buf);
        assert!(t.contains("Alerts (1)"), "{t}");
        assert!(
            t.contains("HIGH GPUs 0–7 starved (40 % util)  (12 min)"),
            "{t}"
        );
        assert!(t.contains("cost so far: $1.16"), "{t}");
        assert!(t.contains("→ raise DataLoader num_workers"), "{t}");
        assert!(t.contains("job CPU: 16.0 of 16.0 cores"), "{t}");
        // The severity label is red, the border too.
        assert_eq!(buf[(1, 1)].fg, Color::Red);
        assert_eq!(buf[(0, 0)].fg, Color::Red);
        let mono = draw(90, 12, &alerts, true);
        assert_eq!(mono[(1, 1)].fg, Color::Reset);
        assert!(mono[(1, 1)].modifier.contains(Modifier::REVERSED));
    }

    #[test]
    fn small_areas_keep_every_title_before_any_detail() {
        let alerts = [
            alert("a", Severity::High, "first"),
            alert("b", Severity::Moderate, "second"),
            alert("c", Severity::Info, "third"),
        ];
        let t = text(&draw(60, 5, &alerts, false));
        assert!(
            t.contains("first") && t.contains("second") && t.contains("third"),
            "{t}"
        );
        assert!(!t.contains("cost so far"), "{t}");
        let t = text(&draw(60, 7, &alerts, false));
        assert!(t.contains("cost so far") && t.contains("third"), "{t}");
        let t = text(&draw(60, 2, &alerts, false));
        assert!(
            t.contains("first") && t.contains("second"),
            "no border when tiny: {t}"
        );
    }

    #[test]
    fn empty_says_so_and_no_size_panics() {
        assert!(text(&draw(40, 3, &[], false)).contains("No alerts."));
        let alerts = [
            alert("a", Severity::High, "x"),
            alert("b", Severity::Info, "y"),
        ];
        for w in 0..50 {
            for h in 0..16 {
                draw(w, h, &alerts, w % 2 == 0);
                draw(w, h, &[], false);
            }
        }
        // An area outside the buffer is clipped, not a panic.
        let mut buf = Buffer::empty(Rect::new(0, 0, 10, 4));
        render(Rect::new(5, 2, 40, 40), &mut buf, &alerts, NOW, false);
    }
}
