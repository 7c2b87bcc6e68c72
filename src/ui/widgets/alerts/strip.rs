//! The small-screen alert strip (one line under the header: the most severe alert, coloured by
//! severity, and how many more stand) and the alert history overlay (`H`). Reads the engine's
//! alerts through `&`; never mutates.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use crate::engine::Engine;
use crate::engine::rules::Alert;

use crate::ui::layout::centered;
use crate::ui::theme::Theme;

/// Draws the strip for `visible` (most severe first) into `area`.
pub fn render(frame: &mut Frame, area: Rect, visible: &[Alert], theme: &Theme) {
    let Some(top) = visible.first() else {
        return;
    };
    let style = theme.severity(top.severity);
    let mut spans = vec![
        Span::styled(format!(" {} ", top.severity.name().to_uppercase()), style),
        Span::raw(" "),
        Span::styled(top.title.clone(), style),
    ];
    if visible.len() > 1 {
        spans.push(Span::raw(format!("  (+{} more)", visible.len() - 1)));
    }
    spans.push(Span::raw("  a ack · z snooze 1h · H history"));
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The history overlay, centred over `area`.
pub fn render_history(frame: &mut Frame, area: Rect, engine: &Engine, now: i64, theme: &Theme) {
    let width = area.width.saturating_sub(4).min(110);
    let height = area.height.saturating_sub(2).min(30);
    let rect = centered(area, width, height);
    if rect.width < 12 || rect.height < 3 {
        return;
    }
    frame.render_widget(Clear, rect);
    crate::ui::widgets::alerts::history::render(
        rect,
        frame.buffer_mut(),
        engine.rules().history(),
        now,
        theme,
    );
}
