//! The small-screen alert strip (one line under the header: the selected alert — the most
//! severe one unless `n` moved on — coloured by severity, how many more stand, and the keys
//! that open and act on it) and the alert history overlay (`H`). Reads the engine's alerts
//! through `&`; never mutates.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Span;
use ratatui::widgets::{Clear, Paragraph, Widget};

use gpumeter_core::engine::Engine;
use gpumeter_core::engine::rules::Alert;
use gpumeter_core::units;

use crate::ui::app::App;
use crate::ui::keys::KeyAction;
use crate::ui::layout::centered;
use crate::ui::theme::Theme;
use crate::ui::widgets::alerts::history::AlertHistory;
use crate::ui::widgets::fmt;

/// The strip for `visible` (most severe first), showing alert `selected`.
pub struct AlertStrip<'a> {
    pub visible: &'a [Alert],
    pub selected: usize,
    pub app: &'a App,
}

impl Widget for AlertStrip<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let Self {
            visible,
            selected,
            app,
        } = self;
        let Some(shown) = visible.get(selected).or_else(|| visible.first()) else {
            return;
        };
        let theme = &app.theme;
        let style = theme.severity(shown.severity);
        let badge = format!(" {} ", shown.severity.name().to_uppercase());
        let count = (visible.len() > 1).then(|| {
            let pos = selected.min(visible.len() - 1) + 1;
            format!("  ({pos}/{})", visible.len())
        });
        // The title takes the room the badge and the count leave, cut at a word with `…`:
        // the count says there is more, so it is never the part that is lost.
        let room = usize::from(area.width)
            .saturating_sub(units::width(&badge) + 1)
            .saturating_sub(count.as_deref().map_or(0, units::width));
        let mut fixed = vec![
            Span::styled(badge, style),
            Span::raw(" "),
            Span::styled(units::truncate_words(&shown.title, room), style),
        ];
        if let Some(count) = count {
            fixed.push(Span::raw(count));
        }
        // The keys, as many as fit after the title; the detail view's first.
        let k = |a: KeyAction, what: &str| {
            vec![
                Span::raw("  "),
                Span::styled(app.keymap.first_label(a), theme.key),
                Span::styled(format!(" {what}"), theme.dim),
            ]
        };
        // Enter is the process's while the table was selected last: `n` gives it back.
        let mut hints = if app.enter_opens_process() {
            vec![k(KeyAction::NextAlert, "select")]
        } else {
            vec![k(KeyAction::AlertDetail, "details")]
        };
        if visible.len() > 1 && !app.enter_opens_process() {
            hints.push(k(KeyAction::NextAlert, "next"));
        }
        hints.extend([
            k(KeyAction::Acknowledge, "ack"),
            k(KeyAction::Snooze, "snooze 1h"),
            k(KeyAction::History, "history"),
        ]);
        let line = fmt::fit(fixed, hints, usize::from(area.width));
        Paragraph::new(line).render(area, buf);
    }
}

/// The history overlay (`H`) of `engine`'s alerts, centred over its area, entry `cursor`
/// highlighted.
pub struct HistoryOverlay<'a> {
    pub engine: &'a Engine,
    pub now: i64,
    pub theme: &'a Theme,
    pub cursor: usize,
}

impl Widget for HistoryOverlay<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let Self {
            engine,
            now,
            theme,
            cursor,
        } = self;
        let width = area.width.saturating_sub(4).min(110);
        let height = area.height.saturating_sub(2).min(30);
        let rect = centered(area, width, height);
        if rect.width < 12 || rect.height < 3 {
            return;
        }
        Clear.render(rect, buf);
        AlertHistory {
            history: engine.rules().history(),
            now_unix_ms: now,
            theme,
            cursor,
        }
        .render(rect, buf);
    }
}
