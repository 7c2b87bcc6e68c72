//! The bottom line: the filter input while it is open, else a status message (ledger notes,
//! channel warnings, a stopped collector; budget crossings are the alert panel's), else key
//! hints (as many as fit).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Span;

use crate::ui::app::App;
use crate::ui::widgets::fmt::{self, styled};

/// (key, action) hints, most useful first.
const HINTS: [(&str, &str); 9] = [
    ("q", "quit"),
    ("?", "help"),
    ("/", "filter"),
    ("s", "sort"),
    ("S", "reverse"),
    ("t", "tree"),
    ("Tab", "GPU"),
    ("↑↓", "select"),
    ("H", "alert history"),
];

/// Draws the line; a running autostop `countdown` takes it over (only the filter input wins).
pub fn render(frame: &mut Frame, area: Rect, app: &App, countdown: Option<&str>) {
    if area.width == 0 || area.height == 0 {
        return;
    }
    let theme = &app.theme;
    let width = usize::from(area.width);
    let line = if app.filter_active {
        // A long filter shows its end, where the typing happens.
        let room = width.saturating_sub(9);
        let count = app.filter.chars().count();
        let shown: String = app
            .filter
            .chars()
            .skip(count.saturating_sub(room))
            .collect();
        let fixed = vec![
            styled("filter: ", theme.label),
            styled(format!("{shown}█"), theme.input),
        ];
        let hints = vec![vec![styled("   Enter keeps · Esc clears", theme.dim)]];
        fmt::fit(fixed, hints, width)
    } else if let Some(c) = countdown {
        fmt::fit(
            vec![styled(fmt::truncate(c, width), theme.hot)],
            Vec::new(),
            width,
        )
    } else if let Some(msg) = &app.status {
        fmt::fit(
            vec![styled(fmt::truncate(msg, width), theme.warm)],
            Vec::new(),
            width,
        )
    } else {
        let segments = HINTS
            .iter()
            .enumerate()
            .map(|(i, (k, a))| {
                let lead = if i == 0 { "" } else { "  " };
                vec![
                    Span::raw(lead),
                    styled(*k, theme.key),
                    styled(format!(" {a}"), theme.dim),
                ]
            })
            .collect();
        fmt::fit(Vec::new(), segments, width)
    };
    super::text::render(frame, area, vec![line]);
}
