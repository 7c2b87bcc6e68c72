//! The help overlay: every key (as the key map binds it) and mouse action, and how to read
//! `N/A` and `-`. The replay's keys are listed only while a recording plays. Taller than the
//! terminal (80×24 is), it scrolls: the arrows and pages move it, any other key closes it.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Clear, Paragraph, Widget};

use crate::ui::app::App;
use crate::ui::keys::{BINDINGS, Group, KeyAction};
use crate::ui::layout::centered;
use crate::ui::widgets::fmt::{self, pad_right, styled};

/// Actions shown on one line, their keys joined by " / ", with the words for all of them.
const GROUPS: &[(&[KeyAction], &str)] = &[
    (
        &[KeyAction::Up, KeyAction::Down],
        "move the process selection",
    ),
    (
        &[KeyAction::PageUp, KeyAction::PageDown],
        "a page up / down",
    ),
    (&[KeyAction::First, KeyAction::Last], "first / last process"),
    (
        &[KeyAction::NextGpu, KeyAction::PrevGpu],
        "one GPU's processes: All → GPU0 → … / back",
    ),
    (
        &[
            KeyAction::SortCpu,
            KeyAction::SortMemory,
            KeyAction::SortTime,
            KeyAction::SortPid,
        ],
        "sort by CPU% / VRAM / run time / PID (again: reverse)",
    ),
    (
        &[
            KeyAction::SignalTerm,
            KeyAction::SignalInt,
            KeyAction::SignalKill,
        ],
        "TERM / INT / KILL the process (asks)",
    ),
    (
        &[KeyAction::Tag, KeyAction::UntagAll],
        "tag / untag all (signals and renice then reach the tagged)",
    ),
    (
        &[KeyAction::Expand, KeyAction::Collapse],
        "tree: unfold / fold the selected subtree",
    ),
    (
        &[KeyAction::NextAlert, KeyAction::PrevAlert],
        "select the next / previous alert",
    ),
    (
        &[KeyAction::WiderWindow, KeyAction::NarrowerWindow],
        "charts: longer / shorter window (1 m … 24 h)",
    ),
    (
        &[KeyAction::Faster, KeyAction::Slower],
        "replay: faster / slower (1× … 60×)",
    ),
    (
        &[KeyAction::StepForward, KeyAction::StepBack],
        "replay: pause, one reading on / back",
    ),
    (
        &[KeyAction::SeekBack, KeyAction::SeekForward],
        "replay: 1 minute back / on",
    ),
    (
        &[KeyAction::ReplayStart, KeyAction::ReplayEnd],
        "replay: the start / the end",
    ),
];

/// Lines after the keys.
const MORE: [(&str, &str); 3] = [
    ("Esc", "close an overlay / clear the filter"),
    ("any key", "cancels a running autostop countdown"),
    (
        "click  wheel",
        "select; a header: sort; a GPU: its processes / scroll",
    ),
];

const KEY_W: usize = 16;

/// The (keys, words) rows, in the table's order.
pub fn rows(app: &App) -> Vec<(String, &'static str)> {
    let mut out = Vec::new();
    for b in BINDINGS {
        if b.group == Group::Replay && app.replay.is_none() {
            continue;
        }
        if let Some((group, words)) = GROUPS.iter().find(|g| g.0.first() == Some(&b.action)) {
            let keys: Vec<String> = group.iter().map(|a| app.keymap.label(*a)).collect();
            out.push((keys.join(" / "), *words));
        } else if !GROUPS.iter().any(|g| g.0.contains(&b.action)) {
            out.push((app.keymap.label(b.action), b.help));
        }
    }
    out
}

/// The overlay, drawn centred in its area.
pub struct Help<'a> {
    pub app: &'a App,
}

/// Every line of the help, and the box it takes in a screen of `area`.
fn layout(app: &App, area: Rect) -> (Vec<Line<'static>>, Rect) {
    let theme = &app.theme;
    // A description wider than the box wraps at words under its own column, never cut.
    let room = usize::from(area.width).saturating_sub(3 + 1 + KEY_W).max(8);
    let row = |k: &str, d: &str| -> Vec<Line<'static>> {
        fmt::wrap_words(d, room)
            .into_iter()
            .enumerate()
            .map(|(i, piece)| {
                let key = if i == 0 { k } else { "" };
                Line::from(vec![
                    styled(format!(" {}", pad_right(key, KEY_W)), theme.key),
                    styled(piece, theme.text),
                ])
            })
            .collect()
    };
    let mut lines: Vec<Line<'static>> = rows(app).iter().flat_map(|(k, d)| row(k, d)).collect();
    lines.extend(MORE.iter().flat_map(|(k, d)| row(k, d)));
    let legend = "N/A  the driver cannot tell · -  does not apply (a worker holds no VRAM)";
    let legend_room = usize::from(area.width).saturating_sub(4).max(8);
    lines.extend(
        fmt::wrap_words(legend, legend_room)
            .into_iter()
            .map(|piece| Line::from(styled(format!(" {piece}"), theme.dim))),
    );
    let width = lines.iter().map(Line::width).max().unwrap_or(0) as u16 + 3;
    let height = lines.len() as u16 + 2;
    (lines, centered(area, width, height))
}

/// How far the help scrolls in a screen of `area` (0: it all fits). The last row of a
/// scrolled help says where it is, so one row fewer shows the keys.
pub fn max_scroll(app: &App, area: Rect) -> usize {
    let (lines, rect) = layout(app, area);
    let inner_rows = usize::from(rect.height.saturating_sub(2));
    if lines.len() <= inner_rows {
        return 0;
    }
    lines.len() - inner_rows.saturating_sub(1).max(1)
}

impl Widget for Help<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let theme = &app.theme;
        let (mut lines, rect) = layout(app, area);
        if rect.width < 3 || rect.height < 3 {
            return;
        }
        let inner_rows = usize::from(rect.height - 2);
        if lines.len() > inner_rows && inner_rows > 1 {
            // Too tall for the terminal: a window on it, the arrows move it.
            let total = lines.len();
            let shown = inner_rows - 1;
            let from = app.help_scroll.min(total - shown);
            lines = lines.into_iter().skip(from).take(shown).collect();
            lines.push(Line::from(styled(
                format!(
                    " ↑ ↓ more: {}–{} of {total} · any other key closes",
                    from + 1,
                    from + shown
                ),
                theme.dim,
            )));
        }
        let block = Block::bordered()
            .border_style(theme.border_selected)
            .title(Line::from(styled(" gpumeter keys ", theme.title)));
        Clear.render(rect, buf);
        Paragraph::new(lines).block(block).render(rect, buf);
    }
}
