//! Lines of text into the frame buffer, the same cells `Paragraph::new(lines)` would give (no
//! wrap, no scroll, no block) at a fraction of the cost: a frame is mostly short ASCII and
//! box-drawing spans, and a `Paragraph` walks every one grapheme by grapheme and restyles its
//! whole area twice. Spans of characters that are known to be one cell wide and one grapheme
//! each are written a character a cell; any other span goes through ratatui's own
//! `Buffer::set_stringn`. Reads only what it is given.

use crate::ui::widgets::glyph;
use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Rect};
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget};

/// `lines` drawn top-down into the area, cut at its right and bottom edges; like
/// `Paragraph::new(lines).render(area, buf)`.
pub struct Lines<'a> {
    pub lines: Vec<Line<'a>>,
}

impl<'a> Lines<'a> {
    pub fn new(lines: Vec<Line<'a>>) -> Self {
        Self { lines }
    }
}

impl Widget for Lines<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let lines = self.lines;
        let aligned = lines
            .iter()
            .any(|l| l.alignment.is_some_and(|a| a != Alignment::Left));
        if aligned {
            // Centred and right-aligned lines are rare here: leave them to the widget.
            Paragraph::new(lines).render(area, buf);
            return;
        }
        let area = buf.area.intersection(area);
        for (line, y) in lines.iter().zip(area.top()..area.bottom()) {
            put_line(buf, area.x, y, line, area.width);
        }
    }
}

/// Whether `line` is drawn by [`put_plain_line`] as ratatui's `Line` widget draws it: no line
/// style, left-aligned, every character one cell.
pub(super) fn plain_left(line: &Line<'_>) -> bool {
    line.alignment.is_none_or(|a| a == Alignment::Left) && plain(line)
}

/// No line style, every character one cell (whatever the alignment).
pub(super) fn plain(line: &Line<'_>) -> bool {
    line.style == Style::default() && line.spans.iter().all(|s| s.content.chars().all(one_cell))
}

/// A [`plain_left`] line at (x, y), at most `max_width` cells: the cells
/// `line.render(Rect::new(x, y, max_width, 1), buf)` gives.
pub(super) fn put_plain_line(buf: &mut Buffer, x: u16, y: u16, line: &Line<'_>, max_width: u16) {
    put_line(buf, x, y, line, max_width);
}

/// Writes one line at (x, y), at most `max_width` cells; returns the cells used.
fn put_line(buf: &mut Buffer, x: u16, y: u16, line: &Line<'_>, max_width: u16) -> u16 {
    let mut used = 0u16;
    for span in &line.spans {
        if used >= max_width {
            break;
        }
        let style = line.style.patch(span.style);
        used += put_str(buf, x + used, y, &span.content, max_width - used, style);
    }
    used
}

fn put_str(buf: &mut Buffer, x: u16, y: u16, text: &str, max_width: u16, style: Style) -> u16 {
    let area = buf.area;
    if !(area.left() <= x && x < area.right() && area.top() <= y && y < area.bottom()) {
        // Outside the buffer (never, from `Lines`): cell by cell, as before.
        return put_cells(buf, x, y, text, max_width, style);
    }
    // The row's cells from x to the buffer's edge, walked beside the characters.
    let start = usize::from(y - area.y) * usize::from(area.width) + usize::from(x - area.x);
    let room = usize::from(area.right() - x);
    let mut cells = buf
        .content
        .get_mut(start..start + room)
        .unwrap_or_default()
        .iter_mut();
    let glyphs = glyph::table();
    let mut used = 0u16;
    for c in text.chars() {
        // Most characters are made glyphs (each one cell); the rest are looked at.
        let made = glyph::made_in(glyphs, c);
        // A character that is not one cell, even the first past the width (a combining mark
        // would join the last cell's grapheme), leaves the span to ratatui's own writing: it
        // rewrites every cell written so far (each of those characters is one grapheme of one
        // cell, or begins the grapheme that takes its cell) with the same style.
        if made.is_none() && !one_cell(c) {
            let (end, _) = buf.set_stringn(x, y, text, usize::from(max_width), style);
            return end.saturating_sub(x);
        }
        if used >= max_width {
            break;
        }
        if let Some(cell) = cells.next() {
            match made {
                Some(template) => glyph::set_made(cell, template),
                None => cell.set_char(c),
            }
            .set_style(style);
        }
        used += 1;
    }
    used
}

/// [`put_str`]'s one-cell characters, each cell looked up by position.
fn put_cells(buf: &mut Buffer, x: u16, y: u16, text: &str, max_width: u16, style: Style) -> u16 {
    if !text.chars().all(one_cell) {
        let (end, _) = buf.set_stringn(x, y, text, usize::from(max_width), style);
        return end.saturating_sub(x);
    }
    let mut used = 0u16;
    for c in text.chars() {
        if used >= max_width {
            break;
        }
        if let Some(cell) = buf.cell_mut((x.saturating_add(used), y)) {
            glyph::set_char(cell, c).set_style(style);
        }
        used += 1;
    }
    used
}

/// Characters that are one cell wide and never join a neighbour into one grapheme: printable
/// ASCII, Latin-1 letters and signs, general punctuation, arrows, box drawing, block elements,
/// the sort arrows ▲ ▼ and braille (what the dashboard draws with). Combining marks, controls,
/// wide and emoji characters are not among them.
pub(super) fn one_cell(c: char) -> bool {
    matches!(c as u32,
        0x20..=0x7E
        | 0xA1..=0xAC
        | 0xAE..=0xFF
        | 0x2010..=0x2027
        | 0x2030..=0x205E
        | 0x2190..=0x21FF
        | 0x2500..=0x259F
        | 0x25B2
        | 0x25BC
        | 0x2800..=0x28FF)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::style::{Color, Modifier};
    use ratatui::text::Span;
    use unicode_width::UnicodeWidthChar;

    fn both(lines: Vec<Line<'static>>, w: u16, h: u16) -> (Buffer, Buffer) {
        let draw = |fast: bool| {
            let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
            let area = Rect::new(1, 1, w - 2, h - 2);
            t.draw(|f| {
                if fast {
                    Lines::new(lines.clone()).render(area, f.buffer_mut());
                } else {
                    f.render_widget(Paragraph::new(lines.clone()), area);
                }
            })
            .unwrap();
            t.backend().buffer().clone()
        };
        (draw(true), draw(false))
    }

    #[test]
    fn same_cells_as_a_paragraph_for_mixed_text_cut_at_the_edges() {
        let red = Style::new().fg(Color::Red);
        let lines = vec![
            Line::from(vec![
                Span::styled("util ", red),
                Span::raw("███▊── 84% │ ⣿⡀ ↑1.2MB/s · 71°C"),
            ]),
            Line::from("wide 漢字 and e\u{301} combining, then cut here at the edge ........"),
            Line::from(vec![Span::raw("tab\tand ctrl\u{7}"), Span::raw("x")])
                .style(Style::new().add_modifier(Modifier::BOLD)),
            Line::from("emoji 🚀 ok"),
            Line::from("one line too many"),
        ];
        let (fast, slow) = both(lines, 30, 6);
        assert_eq!(fast, slow);
    }

    #[test]
    fn same_cells_as_a_paragraph_cut_at_every_width() {
        let dim = Style::new()
            .fg(Color::Indexed(8))
            .add_modifier(Modifier::DIM);
        let lines = || {
            vec![
                // A combining mark right after each possible cut, and a wide one far past it.
                Line::from("cut e\u{301} here e\u{301}e\u{301} and far on: 漢字 🚀"),
                Line::from(vec![
                    Span::styled("ab", dim),
                    Span::raw("c\u{301}d"),
                    Span::styled("──┤ 42% ⣿", dim),
                ]),
                Line::from(vec![
                    Span::raw("plain ascii only "),
                    Span::styled("and more", dim),
                ]),
            ]
        };
        for w in 3..48 {
            let (fast, slow) = both(lines(), w, 5);
            assert_eq!(fast, slow, "width {w}");
        }
    }

    #[test]
    fn aligned_lines_are_left_to_the_paragraph() {
        let lines = vec![Line::from("centred").centered(), Line::from("left")];
        let (fast, slow) = both(lines, 20, 4);
        assert_eq!(fast, slow);
    }

    #[test]
    fn every_one_cell_character_is_one_cell_and_its_own_grapheme() {
        let all: Vec<char> = (0..0x3000u32)
            .filter_map(char::from_u32)
            .filter(|&c| one_cell(c))
            .collect();
        assert!(all.len() > 700);
        for c in &all {
            assert_eq!(c.width(), Some(1), "{c:?} U+{:04X}", *c as u32);
        }
        // Side by side, in every pairing with its neighbours, each stays its own grapheme.
        let text: String = all.iter().collect();
        assert_eq!(
            Span::raw(text).styled_graphemes(Style::new()).count(),
            all.len()
        );
    }
}
