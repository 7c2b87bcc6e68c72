//! The alert detail view (`Enter` on the panel or the strip, or on a history entry): one
//! alert whole — severity and title, since when (or, for a history entry, what happened
//! when), the explanation, what it has cost, the next step and every piece of evidence —
//! wrapped to the overlay's width and scrolled, at any terminal size. The keys that act on it
//! are in its bottom border, from the key map. Reads the engine through `&`; never mutates.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget};

use crate::ui::alert_view::{Detail, DetailOf};
use crate::ui::app::App;
use crate::ui::keys::KeyAction;
use crate::ui::theme::Theme;
use crate::ui::widgets::alerts::panel::wrapped;
use crate::ui::widgets::fmt::styled;
use gpumeter_core::clock::{UtcStyle, utc_text};
use gpumeter_core::engine::Engine;
use gpumeter_core::engine::rules::{Alert, HistoryEntry};

/// The alert a detail view shows, and the history entry it came from.
fn find(of: &DetailOf, engine: &Engine) -> Option<(Alert, Option<HistoryEntry>)> {
    let rules = engine.rules();
    match of {
        DetailOf::Standing(id) => rules
            .alerts()
            .iter()
            .find(|a| a.id == *id)
            .map(|a| (a.clone(), None)),
        DetailOf::History { at_unix_ms, id } => rules
            .history()
            .iter()
            .rev()
            .find(|e| e.at_unix_ms == *at_unix_ms && e.alert.id == *id)
            .map(|e| (e.alert.clone(), Some(e.clone()))),
    }
}

/// The overlay's place in a screen of `area`: all of it but a margin where there is room
/// (the process detail view takes the same place).
pub(crate) fn overlay(area: Rect) -> Rect {
    let margin_x = if area.width >= 60 { 2 } else { 0 };
    let margin_y = u16::from(area.height >= 20);
    let w = area.width.saturating_sub(2 * margin_x).min(120);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + margin_y,
        w,
        area.height.saturating_sub(2 * margin_y),
    )
}

/// Every line of the view at `cols` wide.
pub fn lines(
    alert: &Alert,
    entry: Option<&HistoryEntry>,
    cols: usize,
    now_unix_ms: i64,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let sev = theme.severity(alert.severity);
    let label = |k: &str| Span::styled(format!("{k}: "), theme.label);
    let mut out = wrapped(
        Span::styled(format!("{} ", alert.severity.name().to_uppercase()), sev),
        &alert.title,
        cols,
    );
    let when = match entry {
        Some(e) => format!(
            "{} at {} ({} ago)",
            e.event.name(),
            utc_text(e.at_unix_ms, UtcStyle::DayClock),
            gpumeter_core::units::duration(
                now_unix_ms - e.at_unix_ms,
                gpumeter_core::units::DurationStyle::Words
            )
        ),
        None => format!(
            "standing since {} ({})",
            utc_text(alert.since_unix_ms, UtcStyle::DayClock),
            gpumeter_core::units::duration(
                now_unix_ms - alert.since_unix_ms,
                gpumeter_core::units::DurationStyle::Words
            )
        ),
    };
    out.extend(wrapped(label(alert.kind.name()), &when, cols));
    out.push(Line::default());
    if !alert.detail.is_empty() {
        out.extend(wrapped(Span::raw(""), &alert.detail, cols));
        out.push(Line::default());
    }
    let cost = match alert.cost_micros {
        Some(_) => alert.cost_text(),
        None => "not priced (no rate configured, or this alert costs nothing by itself)".into(),
    };
    out.extend(wrapped(label("What it has cost"), &cost, cols));
    if let Some(n) = &alert.next_step {
        out.extend(wrapped(label("Next step"), n, cols));
    }
    if !alert.evidence.is_empty() {
        out.push(Line::default());
        out.push(Line::from(styled("Evidence", theme.title)));
        for (k, v) in &alert.evidence {
            out.extend(wrapped(
                Span::styled(format!("  {k}: "), theme.dim),
                v,
                cols,
            ));
        }
    }
    out
}

/// The inside of the overlay in a screen of `area`: (rows, cols).
pub(crate) fn inner(area: Rect) -> (usize, usize) {
    let r = overlay(area);
    (
        usize::from(r.height.saturating_sub(2)),
        usize::from(r.width.saturating_sub(2)),
    )
}

/// The `rows` of `body` an overlay scrolled by `scroll` shows, and where they stand
/// (` 3–20 of 41 `; empty when it all fits). Shared by the alert and process details.
pub(crate) fn window(
    body: Vec<Line<'static>>,
    rows: usize,
    scroll: usize,
) -> (Vec<Line<'static>>, String) {
    let total = body.len();
    let scroll = scroll.min(total.saturating_sub(rows));
    let position = if total > rows {
        format!(" {}–{} of {total} ", scroll + 1, (scroll + rows).min(total))
    } else {
        String::new()
    };
    (body.into_iter().skip(scroll).take(rows).collect(), position)
}

/// How far the view of `of` can scroll on a screen of `area`.
pub fn max_scroll(area: Rect, of: &DetailOf, engine: &Engine, now_unix_ms: i64) -> usize {
    let (rows, cols) = inner(area);
    find(of, engine).map_or(0, |(a, e)| {
        lines(&a, e.as_ref(), cols, now_unix_ms, &Theme::monochrome())
            .len()
            .saturating_sub(rows)
    })
}

/// The view of `detail`, drawn over its area.
pub struct AlertDetail<'a> {
    pub detail: &'a Detail,
    pub engine: &'a Engine,
    pub now_unix_ms: i64,
    pub app: &'a App,
}

impl Widget for AlertDetail<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let Self {
            detail,
            engine,
            now_unix_ms,
            app,
        } = self;
        let theme = &app.theme;
        let rect = overlay(area);
        if rect.width < 8 || rect.height < 3 {
            return;
        }
        let (rows, cols) = inner(area);
        let body = match find(&detail.of, engine) {
            Some((a, e)) => lines(&a, e.as_ref(), cols, now_unix_ms, theme),
            None => vec![Line::from(styled(
                "This alert is no longer kept (it cleared, or the history dropped it).",
                theme.dim,
            ))],
        };
        let (shown, position) = window(body, rows, detail.scroll);
        let k = |a: KeyAction| app.keymap.first_label(a);
        let standing = matches!(detail.of, DetailOf::Standing(_));
        let mut keys = vec![format!(
            "{} {} scroll",
            k(KeyAction::Up),
            k(KeyAction::Down)
        )];
        if standing {
            keys.push(format!("{} ack", k(KeyAction::Acknowledge)));
            keys.push(format!("{} snooze", k(KeyAction::Snooze)));
            keys.push(format!("{} next", k(KeyAction::NextAlert)));
        }
        keys.push("Esc close".into());
        // As many key hints as the border holds.
        let room = usize::from(rect.width.saturating_sub(4));
        let mut footer = String::new();
        for h in keys {
            let next = if footer.is_empty() {
                h
            } else {
                format!("{footer} · {h}")
            };
            if unicode_width::UnicodeWidthStr::width(next.as_str()) > room {
                break;
            }
            footer = next;
        }
        let block = Block::bordered()
            .border_style(theme.border_selected)
            .title(Line::from(vec![
                styled(" Alert details ", theme.title),
                styled(position, theme.dim),
            ]))
            .title_bottom(Line::from(styled(format!(" {footer} "), theme.key)));
        Clear.render(rect, buf);
        Paragraph::new(shown).block(block).render(rect, buf);
    }
}

#[cfg(test)]
mod tests;
