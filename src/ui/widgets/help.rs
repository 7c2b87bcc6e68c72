//! The help overlay: every key and mouse action, and how to read `N/A` and `-`.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Clear, Paragraph};

use crate::ui::layout::centered;
use crate::ui::theme::Theme;
use crate::ui::widgets::fmt::{pad_right, styled};

/// (keys, what they do), in the order shown.
pub const KEYS: [(&str, &str); 19] = [
    ("q  Ctrl-C", "quit"),
    ("↑ ↓  j k", "move the selection"),
    ("PgUp PgDn", "move a page"),
    ("Home End  g G", "first / last process"),
    ("Tab  Shift-Tab", "one GPU's processes: All → GPU0 → …"),
    ("/", "filter (type, Enter keeps, Esc clears)"),
    ("s", "next sort column"),
    ("S", "reverse the sort"),
    ("t", "tree view: workers under their trainer"),
    ("T I K  n", "TERM / INT / KILL / renice the process (asks)"),
    ("a", "acknowledge the top alert (it stays in the history)"),
    ("z", "snooze the top alert for 1 h"),
    ("[  ]", "scroll the alerts panel up / down"),
    ("H", "alert history (any key closes)"),
    ("any key", "cancels a running autostop countdown"),
    ("?  F1", "this help (any key closes)"),
    ("Esc", "close help / clear the filter"),
    ("click", "select a process; on a GPU: show its processes"),
    ("wheel", "scroll the process table"),
];

const KEY_W: usize = 16;

/// Draws the overlay centred in `area`.
pub fn render(frame: &mut Frame, area: Rect, theme: &Theme) {
    let mut lines: Vec<Line<'static>> = KEYS
        .iter()
        .map(|(k, d)| {
            Line::from(vec![
                styled(format!(" {}", pad_right(k, KEY_W)), theme.key),
                styled(*d, theme.text),
            ])
        })
        .collect();
    lines.push(Line::default());
    lines.push(Line::from(styled(
        " N/A  the driver cannot tell (unsupported or unavailable)",
        theme.dim,
    )));
    lines.push(Line::from(styled(
        " -    does not apply (a worker holds no VRAM)",
        theme.dim,
    )));
    let width = lines.iter().map(Line::width).max().unwrap_or(0) as u16 + 3;
    let height = lines.len() as u16 + 2;
    let rect = centered(area, width, height);
    if rect.width < 3 || rect.height < 3 {
        return;
    }
    let block = Block::bordered()
        .border_style(theme.border_selected)
        .title(Line::from(styled(" gpumeter keys ", theme.title)));
    frame.render_widget(Clear, rect);
    frame.render_widget(Paragraph::new(lines).block(block), rect);
}
