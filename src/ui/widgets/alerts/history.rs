//! The alert history view: what fired, was reminded, changed, cleared, acknowledged or snoozed,
//! newest first, one line each (time, how long ago, event, severity, kind, title), the entry
//! under the cursor highlighted and kept in view (Enter opens its details). Renders the
//! engine's bounded history (`engine.rules().history()`); reads nothing else, never mutates,
//! and clips at any size without panicking.

use std::collections::VecDeque;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Widget};

use crate::ui::theme::Theme;
use gpumeter_core::engine::rules::{HistoryEntry, HistoryEvent};

fn hhmm_utc(unix_ms: i64) -> String {
    gpumeter_core::clock::utc_text(unix_ms, gpumeter_core::clock::UtcStyle::Clock)
}

/// One history entry as a line.
pub fn line(e: &HistoryEntry, now_unix_ms: i64, theme: &Theme) -> Line<'static> {
    let event_style = match e.event {
        HistoryEvent::Fired | HistoryEvent::Reminded | HistoryEvent::Updated => {
            theme.severity(e.alert.severity)
        }
        HistoryEvent::Cleared => theme.text.add_modifier(Modifier::BOLD),
        HistoryEvent::Acknowledged | HistoryEvent::Snoozed => theme.dim,
    };
    Line::from(vec![
        Span::styled(format!("{} ", hhmm_utc(e.at_unix_ms)), theme.dim),
        Span::styled(
            format!(
                "{:>11} ",
                format!(
                    "{} ago",
                    gpumeter_core::units::duration(
                        now_unix_ms - e.at_unix_ms,
                        gpumeter_core::units::DurationStyle::Words
                    )
                )
            ),
            theme.dim,
        ),
        Span::styled(format!("{:<12} ", e.event.name()), event_style),
        Span::raw(format!(
            "{:<8} {:<9} ",
            e.alert.severity.name(),
            e.alert.kind.name()
        )),
        Span::raw(e.alert.title.clone()),
    ])
}

/// The history, drawn into its area (clipped to the buffer) newest entry on top, entry
/// `cursor` (0: the newest) highlighted and on screen.
pub struct AlertHistory<'a> {
    pub history: &'a VecDeque<HistoryEntry>,
    pub now_unix_ms: i64,
    pub theme: &'a Theme,
    pub cursor: usize,
}

impl Widget for AlertHistory<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let Self {
            history,
            now_unix_ms,
            theme,
            cursor,
        } = self;
        let area = area.intersection(buf.area);
        if area.width == 0 || area.height == 0 {
            return;
        }
        let bordered = area.height >= 3 && area.width >= 12;
        let rows = usize::from(if bordered {
            area.height - 2
        } else {
            area.height
        });
        let lines: Vec<Line<'static>> = if history.is_empty() {
            vec![Line::styled("No alerts yet.", theme.dim)]
        } else {
            let cursor = cursor.min(history.len() - 1);
            let skip = (cursor + 1).saturating_sub(rows.max(1));
            history
                .iter()
                .rev()
                .enumerate()
                .skip(skip)
                .take(rows)
                .map(|(i, e)| {
                    let l = line(e, now_unix_ms, theme);
                    if i == cursor {
                        l.patch_style(theme.selected_row)
                    } else {
                        l
                    }
                })
                .collect()
        };
        let body = Paragraph::new(lines);
        if bordered {
            let block = Block::default()
                .borders(Borders::ALL)
                .border_style(theme.border)
                .title(format!(
                    " Alert history ({}) · ↑↓ Enter details · Esc closes ",
                    history.len()
                ));
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
        history: &VecDeque<HistoryEntry>,
        now_unix_ms: i64,
        theme: &Theme,
        cursor: usize,
    ) {
        AlertHistory {
            history,
            now_unix_ms,
            theme,
            cursor,
        }
        .render(area, buf);
    }
    use gpumeter_core::engine::rules::Alert;
    use ratatui::style::Color;

    const NOW: i64 = 1_750_000_000_000;

    fn entry(event: HistoryEvent, at: i64, pct: u8) -> HistoryEntry {
        HistoryEntry {
            at_unix_ms: at,
            event,
            alert: Alert::from_budget(
                pct,
                false,
                1,
                2,
                gpumeter_core::money::Currency::USD,
                "day",
                "day:x",
                at,
            ),
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

    #[test]
    fn newest_first_with_time_age_event_and_title() {
        let h: VecDeque<HistoryEntry> = [
            entry(HistoryEvent::Fired, NOW - 30 * 60_000, 50),
            entry(HistoryEvent::Acknowledged, NOW - 20 * 60_000, 50),
            entry(HistoryEvent::Fired, NOW - 5 * 60_000, 100),
        ]
        .into();
        let mut buf = Buffer::empty(Rect::new(0, 0, 120, 6));
        let area = buf.area;
        render(&mut buf, area, &h, NOW, &Theme::colour(), 0);
        let t = text(&buf);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].contains("Alert history (3)"), "{t}");
        assert!(
            lines[1].contains("5 min ago fired        high     budget    100 % of today's budget"),
            "{t}"
        );
        assert!(lines[2].contains("acknowledged"), "{t}");
        assert!(lines[3].contains("30 min ago fired"), "{t}");
        // A fired high alert's event is red.
        let x = lines[1].find("fired").unwrap() as u16;
        assert_eq!(buf[(x, 1)].fg, Color::Red);
        // The cursor's entry is highlighted, and a cursor below the fold scrolls it into view.
        assert_eq!(buf[(1, 1)].bg, Color::Blue);
        assert_ne!(buf[(1, 2)].bg, Color::Blue);
        let mut small = Buffer::empty(Rect::new(0, 0, 120, 4));
        let area = small.area;
        render(&mut small, area, &h, NOW, &Theme::colour(), 2);
        let t = text(&small);
        assert!(t.contains("30 min ago") && !t.contains(" 5 min ago"), "{t}");
        assert_eq!(small[(1, 2)].bg, Color::Blue);
    }

    #[test]
    fn clips_at_any_size() {
        let h: VecDeque<HistoryEntry> = (0..50)
            .map(|i| entry(HistoryEvent::Cleared, NOW - i * 1000, 80))
            .collect();
        for w in 0..60 {
            for ht in 0..12 {
                let mut buf = Buffer::empty(Rect::new(0, 0, w, ht));
                let area = buf.area;
                render(
                    &mut buf,
                    area,
                    &h,
                    NOW,
                    &Theme::monochrome(),
                    usize::from(ht),
                );
                let area = buf.area;
                render(&mut buf, area, &VecDeque::new(), NOW, &Theme::colour(), 0);
            }
        }
        let mut buf = Buffer::empty(Rect::new(0, 0, 30, 3));
        let area = buf.area;
        render(&mut buf, area, &VecDeque::new(), NOW, &Theme::colour(), 0);
        assert!(text(&buf).contains("No alerts yet."));
    }
}
