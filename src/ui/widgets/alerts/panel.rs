//! The alerts panel: the standing alerts, most severe first, each with its severity (in the
//! theme's severity style), title, how long it has stood, what it cost, its evidence and the next
//! step. Renders a slice of [`Alert`]s (the engine's, filtered by the caller:
//! `engine.rules().visible(now)`) into a buffer; reads nothing else and never mutates.
//!
//! Detail lines wrap at the panel's edge, continuation rows indented under their text. When the
//! whole text does not fit, the panel degrades: every alert keeps its title line first; detail
//! lines (cost, next step, evidence) go to the most severe alerts while rows remain; then
//! titles are clipped. With another alert than the first selected (`n` `N`), it shows the whole
//! text from that alert's title on; the selected title is highlighted when there are several.
//! Everything else is the detail view's (`Enter`). No size panics.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Widget};

use crate::ui::theme::Theme;
use crate::ui::widgets::fmt::{width, wrap_words};
use gpumeter_core::engine::rules::{Alert, Severity};

/// Evidence lines shown per alert at most.
const MAX_EVIDENCE: usize = 6;

fn label(s: Severity) -> &'static str {
    match s {
        Severity::High => "HIGH",
        Severity::Moderate => "MOD ",
        Severity::Info => "INFO",
    }
}

/// The title line of one alert.
fn title_line(a: &Alert, now_unix_ms: i64, theme: &Theme) -> Line<'static> {
    Line::from(vec![
        Span::styled(label(a.severity), theme.severity(a.severity)),
        Span::raw(" "),
        Span::raw(a.title.clone()),
        Span::styled(
            format!(
                "  ({})",
                gpumeter_core::units::duration(
                    now_unix_ms - a.since_unix_ms,
                    gpumeter_core::units::DurationStyle::Words
                )
            ),
            theme.dim,
        ),
    ])
}

/// `text` after `prefix`, word-wrapped to `cols` cells; later rows are indented by the
/// prefix's width so the text reads as one block. A word longer than a row is cut.
pub fn wrapped(prefix: Span<'static>, text: &str, cols: usize) -> Vec<Line<'static>> {
    let indent = width(&prefix.content);
    let room = cols.saturating_sub(indent).max(1);
    let pad = " ".repeat(indent);
    wrap_words(text, room)
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            let first = if i == 0 {
                prefix.clone()
            } else {
                Span::raw(pad.clone())
            };
            Line::from(vec![first, Span::raw(r)])
        })
        .collect()
}

/// The detail entries of one alert, most useful first, each wrapped to `cols`.
fn detail_entries(a: &Alert, cols: usize, theme: &Theme) -> Vec<Vec<Line<'static>>> {
    let mut out = Vec::new();
    let key = |k: &str| Span::styled(format!("  {k}: "), theme.dim);
    if a.cost_micros.is_some() {
        out.push(wrapped(key("cost so far"), &a.cost_text(), cols));
    }
    if let Some(n) = &a.next_step {
        let arrow = Span::styled("  → ", theme.severity(a.severity));
        out.push(wrapped(arrow, n, cols));
    }
    for (k, v) in a.evidence.iter().take(MAX_EVIDENCE) {
        out.push(wrapped(key(k), v, cols));
    }
    out
}

/// Every line of the panel's text for `alerts` at `cols` wide: each title, then its details.
pub fn all_lines(
    alerts: &[Alert],
    cols: usize,
    now_unix_ms: i64,
    theme: &Theme,
) -> Vec<Line<'static>> {
    if alerts.is_empty() {
        return vec![Line::styled("No alerts.", theme.dim)];
    }
    let mut out = Vec::new();
    for a in alerts {
        out.push(title_line(a, now_unix_ms, theme));
        out.extend(detail_entries(a, cols, theme).into_iter().flatten());
    }
    out
}

/// The lines for `alerts` within `rows`: every title, whole details to the first alerts that
/// fit.
pub fn lines(
    alerts: &[Alert],
    rows: usize,
    cols: usize,
    now_unix_ms: i64,
    theme: &Theme,
) -> Vec<Line<'static>> {
    if alerts.is_empty() {
        return vec![Line::styled("No alerts.", theme.dim)];
    }
    let mut out = Vec::new();
    let mut left = rows;
    for (i, a) in alerts.iter().enumerate() {
        if left == 0 {
            break;
        }
        out.push(title_line(a, now_unix_ms, theme));
        left -= 1;
        // Keep a title row for each alert after this one.
        let reserve = alerts.len() - i - 1;
        let mut room = left.saturating_sub(reserve);
        for entry in detail_entries(a, cols, theme) {
            if entry.len() > room {
                break;
            }
            room -= entry.len();
            left -= entry.len();
            out.extend(entry);
        }
    }
    out
}

/// The inside of the panel drawn in `area`: (rows, cols), and whether it has a border.
fn inner(area: Rect) -> (usize, usize, bool) {
    let bordered = area.height >= 3 && area.width >= 12;
    let trim = if bordered { 2 } else { 0 };
    (
        usize::from(area.height.saturating_sub(trim)),
        usize::from(area.width.saturating_sub(trim)),
        bordered,
    )
}

/// The panel of `alerts`, drawn into its area (clipped to the buffer), `selected` the position
/// of the selected alert.
pub struct AlertPanel<'a> {
    pub alerts: &'a [Alert],
    pub now_unix_ms: i64,
    pub theme: &'a Theme,
    pub selected: usize,
}

impl Widget for AlertPanel<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let Self {
            alerts,
            now_unix_ms,
            theme,
            selected,
        } = self;
        let area = area.intersection(buf.area);
        if area.width == 0 || area.height == 0 {
            return;
        }
        let (rows, cols, bordered) = inner(area);
        let selected = selected.min(alerts.len().saturating_sub(1));
        let all = all_lines(alerts, cols, now_unix_ms, theme);
        let hidden = all.len().saturating_sub(rows);
        // Where the selected alert's title is in the whole text.
        let start: usize = alerts
            .iter()
            .take(selected)
            .map(|a| {
                1 + detail_entries(a, cols, theme)
                    .iter()
                    .map(Vec::len)
                    .sum::<usize>()
            })
            .sum();
        // The selected title's row in what is shown.
        let (mut body, row) = if hidden == 0 {
            (all, start)
        } else if selected == 0 {
            (lines(alerts, rows, cols, now_unix_ms, theme), 0)
        } else {
            (all.into_iter().skip(start).take(rows).collect(), 0)
        };
        if alerts.len() > 1
            && let Some(line) = body.get_mut(row)
        {
            *line = line.clone().patch_style(theme.selected_row);
        }
        let body = Paragraph::new(body);
        if bordered {
            let worst = alerts.iter().map(|a| a.severity).max();
            let border = worst.map_or(theme.border, |s| {
                theme.severity(s).remove_modifier(Modifier::REVERSED)
            });
            let more = match (hidden, alerts.len()) {
                (0, 0 | 1) => String::new(),
                (0, _) => " · n next".to_string(),
                (_, 1) => " · Enter details".to_string(),
                _ => " · Enter details · n next".to_string(),
            };
            let block = Block::default()
                .borders(Borders::ALL)
                .border_style(border)
                .title(format!(" Alerts ({}){more} ", alerts.len()));
            body.block(block).render(area, buf);
        } else {
            body.render(area, buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(
        buf: &mut Buffer,
        area: Rect,
        alerts: &[Alert],
        now_unix_ms: i64,
        theme: &Theme,
        selected: usize,
    ) {
        AlertPanel {
            alerts,
            now_unix_ms,
            theme,
            selected,
        }
        .render(area, buf);
    }
    use gpumeter_core::engine::rules::AlertKind;
    use ratatui::style::Color;

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
            currency: gpumeter_core::money::Currency::USD,
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
        draw_scrolled(w, h, alerts, no_color, 0)
    }

    fn draw_scrolled(w: u16, h: u16, alerts: &[Alert], no_color: bool, scroll: usize) -> Buffer {
        let theme = if no_color {
            Theme::monochrome()
        } else {
            Theme::colour()
        };
        let mut buf = Buffer::empty(Rect::new(0, 0, w, h));
        let area = buf.area;
        render(&mut buf, area, alerts, NOW, &theme, scroll);
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
                draw_scrolled(w, h, &alerts, false, usize::from(h));
                draw(w, h, &[], false);
            }
        }
        // An area outside the buffer is clipped, not a panic.
        let mut buf = Buffer::empty(Rect::new(0, 0, 10, 4));
        render(
            &mut buf,
            Rect::new(5, 2, 40, 40),
            &alerts,
            NOW,
            &Theme::colour(),
            3,
        );
    }

    #[test]
    fn long_lines_wrap_under_their_text_instead_of_being_cut() {
        let mut a = alert("a", Severity::High, "GPU 0 starved");
        a.next_step = Some(
            "raise DataLoader num_workers to the cores the job may use and keep pin_memory on"
                .into(),
        );
        let t = text(&draw(50, 14, &[a], false));
        // `  → ` is 4 cells: continuation rows start under the text, not at the edge.
        assert!(
            t.contains("│  → raise DataLoader num_workers to the cores   │"),
            "{t}"
        );
        assert!(
            t.contains("│    the job may use and keep pin_memory on      │"),
            "{t}"
        );
        let rows = wrapped(Span::raw("  k: "), "a verylongwordthatcannotfit b", 12);
        let texts: Vec<String> = rows.iter().map(|l| l.to_string()).collect();
        assert_eq!(
            texts,
            [
                "  k: a",
                "     verylon",
                "     gwordth",
                "     atcanno",
                "     tfit b"
            ]
        );
        assert!(wrapped(Span::raw("x"), "", 1).len() == 1);
    }

    #[test]
    fn selecting_an_alert_shows_its_text_and_highlights_it() {
        let alerts = [
            alert("a", Severity::High, "first"),
            alert("b", Severity::Moderate, "second"),
        ];
        // 2 titles + 4 details each = 10 rows in 4: the overview, every title.
        let top = text(&draw(60, 6, &alerts, false));
        assert!(top.contains("Enter details · n next"), "{top}");
        assert!(top.contains("first") && top.contains("second"), "{top}");
        // The second selected: its title on top, then its details.
        let buf = draw_scrolled(60, 6, &alerts, false, 1);
        let second = text(&buf);
        assert!(!second.contains("first"), "{second}");
        let lines: Vec<&str> = second.lines().collect();
        assert!(lines[1].contains("MOD  second"), "{second}");
        assert!(second.contains("cost so far"), "{second}");
        assert_eq!(buf[(2, 1)].bg, Theme::colour().selected_row.bg.unwrap());
        // Everything fits: no hint but `n`, the selected title highlighted where it is.
        let big = draw_scrolled(60, 14, &alerts, false, 1);
        let t = text(&big);
        assert!(t.contains("first") && t.contains(" · n next "), "{t}");
        let row = t.lines().position(|l| l.contains("second")).unwrap() as u16;
        assert_eq!(big[(2, row)].bg, Theme::colour().selected_row.bg.unwrap());
        assert_ne!(big[(2, 1)].bg, Theme::colour().selected_row.bg.unwrap());
        // One alert: nothing to select, nothing highlighted.
        let one = draw(60, 14, &alerts[..1], false);
        assert_ne!(one[(2, 1)].bg, Theme::colour().selected_row.bg.unwrap());
    }
}
