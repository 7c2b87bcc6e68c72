//! A bordered box with a title on its top edge, the cells ratatui's
//! `Block::bordered().border_style(s).title(t)` gives, drawn straight into the buffer's rows:
//! the border characters, the title's spans as [`text`](super::text) writes a line. The whole
//! `Block` restyles every cell of its area with its (empty) style and writes each border cell
//! through its merge logic, and its title through grapheme segmentation; the GPU panels and
//! charts are most of a frame's cells. Boxes too small to split, and titles that are not plain
//! left-aligned one-cell text, are left to ratatui's blocks. Writes only into the given area.

use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Widget};

use super::glyph;

/// A box around its area in `border`, with `title` at the top left (its inside:
/// [`FrameBox::inner`]).
pub struct FrameBox<'a> {
    pub border: Style,
    pub title: Line<'a>,
}

impl<'a> FrameBox<'a> {
    pub fn new(border: Style, title: Line<'a>) -> Self {
        Self { border, title }
    }

    /// The inside of the box drawn around `area`.
    pub fn inner(area: Rect) -> Rect {
        Block::bordered().inner(area)
    }
}

impl Widget for FrameBox<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let Self { border, title } = self;
        let area = area.intersection(buf.area);
        if area.width < 2 || area.height < 3 {
            Block::bordered()
                .border_style(border)
                .title(title)
                .render(area, buf);
            return;
        }
        if !super::text::plain_left(&title) {
            by_blocks(buf, area, border, title);
            return;
        }
        let (left, right) = (area.left(), area.right() - 1);
        let (top, bottom) = (area.top(), area.bottom() - 1);
        edge(buf, area, top, ('┌', '─', '┐'), border);
        edge(buf, area, bottom, ('└', '─', '┘'), border);
        for y in top + 1..bottom {
            for x in [left, right] {
                if let Some(cell) = buf.cell_mut((x, y)) {
                    glyph::set_char(cell, '│').set_style(border);
                }
            }
        }
        super::text::put_plain_line(buf, left + 1, top, &title, area.width - 2);
    }
}

/// A rule along its area's top line with `left` at its start and `right` (right-aligned) at
/// its end: the cells `Block::new().borders(Borders::TOP).border_style(border).title(left)
/// .title_top(right)` gives on that line (the process table's title bar). Titles that are not
/// plain one-cell text, or a right one longer than the row, are left to the block.
pub struct TopRule<'a> {
    pub border: Style,
    pub left: Line<'a>,
    pub right: Option<Line<'a>>,
}

impl Widget for TopRule<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let Self {
            border,
            left,
            right,
        } = self;
        let row = Rect { height: 1, ..area }.intersection(buf.area);
        if row.is_empty() {
            return;
        }
        let fits = |r: &Line<'_>| {
            r.alignment == Some(ratatui::layout::Alignment::Right)
                && super::text::plain(r)
                && r.width() <= usize::from(row.width)
        };
        if !super::text::plain_left(&left) || right.as_ref().is_some_and(|r| !fits(r)) {
            let mut block = Block::new()
                .borders(Borders::TOP)
                .border_style(border)
                .title(left);
            if let Some(r) = right {
                block = block.title_top(r);
            }
            block.render(row, buf);
            return;
        }
        edge(buf, row, row.y, ('─', '─', '─'), border);
        super::text::put_plain_line(buf, row.x, row.y, &left, row.width);
        if let Some(r) = right {
            // It fits (checked above): its width is its character count.
            let w = u16::try_from(r.width()).unwrap_or(row.width).min(row.width);
            super::text::put_plain_line(buf, row.right() - w, row.y, &r, w);
        }
    }
}

/// A top or bottom edge: its corners and the line between.
fn edge(buf: &mut Buffer, area: Rect, y: u16, (first, mid, last): (char, char, char), s: Style) {
    let start = usize::from(y - buf.area.y) * usize::from(buf.area.width)
        + usize::from(area.x - buf.area.x);
    let Some(row) = buf.content.get_mut(start..start + usize::from(area.width)) else {
        return;
    };
    let n = row.len();
    for (i, cell) in row.iter_mut().enumerate() {
        let c = match i {
            0 => first,
            _ if i + 1 == n => last,
            _ => mid,
        };
        set(cell, c, s);
    }
}

fn set(cell: &mut Cell, c: char, style: Style) {
    glyph::set_char(cell, c).set_style(style);
}

/// The box as four thin ratatui blocks (the top row with the title, the bottom row, the two
/// side columns), so that only the border cells are styled.
fn by_blocks(buf: &mut Buffer, area: Rect, border: Style, title: Line<'_>) {
    let row = |y| Rect {
        y,
        height: 1,
        ..area
    };
    let side = |x| Rect::new(x, area.y + 1, 1, area.height - 2);
    Block::bordered()
        .border_style(border)
        .title(title)
        .borders(Borders::TOP | Borders::LEFT | Borders::RIGHT)
        .render(row(area.y), buf);
    let edge = |b| Block::new().borders(b).border_style(border);
    edge(Borders::BOTTOM | Borders::LEFT | Borders::RIGHT).render(row(area.bottom() - 1), buf);
    edge(Borders::LEFT).render(side(area.x), buf);
    edge(Borders::RIGHT).render(side(area.right() - 1), buf);
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::{Color, Modifier};
    use ratatui::text::Span;

    /// Titles the fast path draws (plain, several styles, longer than the box) and ones it
    /// leaves to the blocks (a line style, centred, wide and combining characters).
    fn titles() -> Vec<Line<'static>> {
        let bold = Style::default().add_modifier(Modifier::BOLD);
        vec![
            Line::from(vec![
                Span::styled(" GPU3 ", Style::default().fg(Color::Blue)),
                Span::raw("H100 · activity "),
            ]),
            Line::from(vec![
                Span::styled(" util ", bold.fg(Color::Rgb(9, 8, 7))),
                Span::raw(""),
                Span::styled(
                    "mean 42% ",
                    Style::default().remove_modifier(Modifier::BOLD),
                ),
                Span::styled("· 1m ", Style::default().bg(Color::Indexed(3))),
            ]),
            Line::default(),
            Line::from(" GPU1 ").style(bold),
            Line::from(" centred ").centered(),
            Line::from(" 漢字 e\u{301} "),
        ]
    }

    #[test]
    fn the_same_cells_as_a_bordered_block_at_every_size() {
        let border = Style::default().fg(Color::Red).add_modifier(Modifier::BOLD);
        for title in titles() {
            for w in 0..26 {
                for h in 0..6 {
                    // Drawn over text, as a panel is over what the frame held before.
                    let base = || {
                        let mut b = Buffer::empty(Rect::new(0, 0, 30, 8));
                        for y in 0..8 {
                            let s = Style::default()
                                .bg(Color::Green)
                                .add_modifier(Modifier::DIM);
                            b.set_string(0, y, "x".repeat(30), s);
                        }
                        b
                    };
                    for area in [
                        Rect::new(2, 1, w, h),
                        Rect::new(28 - w.min(28), 8 - h, w, h),
                    ] {
                        let mut want = base();
                        let block = Block::bordered().border_style(border).title(title.clone());
                        let want_inner = block.inner(area);
                        block.render(area, &mut want);
                        let mut got = base();
                        FrameBox::new(border, title.clone()).render(area, &mut got);
                        let inner = FrameBox::inner(area);
                        assert_eq!(got, want, "{w}×{h} at {area:?}, {title:?}");
                        assert_eq!(inner, want_inner, "{w}×{h} at {area:?}, {title:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_box_past_the_buffer_edge_is_cut_as_the_block_cuts_it() {
        let border = Style::default().fg(Color::Yellow);
        for title in titles() {
            for area in [Rect::new(20, 5, 20, 6), Rect::new(0, 6, 12, 9)] {
                let mut want = Buffer::empty(Rect::new(0, 0, 30, 8));
                Block::bordered()
                    .border_style(border)
                    .title(title.clone())
                    .render(area, &mut want);
                let mut got = Buffer::empty(Rect::new(0, 0, 30, 8));
                FrameBox::new(border, title.clone()).render(area, &mut got);
                assert_eq!(got, want, "{area:?}, {title:?}");
            }
        }
    }

    #[test]
    fn a_top_rule_is_the_cells_of_a_top_bordered_block_with_two_titles() {
        let border = Style::default().fg(Color::Red);
        let dim = Style::default().add_modifier(Modifier::DIM);
        let rights = [
            None,
            Some(Line::from(Span::styled(" 1–20 of 127 ", dim)).right_aligned()),
            Some(Line::from(" 漢字 ").right_aligned()),
            Some(Line::from(" left, not right ")),
            Some(Line::from(" styled ").style(dim).right_aligned()),
        ];
        for left in titles() {
            for right in &rights {
                for w in 0..40 {
                    for x in [0, 3] {
                        let row = Rect::new(x, 1, w, 1);
                        let base = || {
                            let mut b = Buffer::empty(Rect::new(0, 0, 36, 3));
                            b.set_string(0, 1, "y".repeat(36), Style::default().bg(Color::Blue));
                            b
                        };
                        let mut want = base();
                        let mut block = Block::new()
                            .borders(Borders::TOP)
                            .border_style(border)
                            .title(left.clone());
                        if let Some(r) = right {
                            block = block.title_top(r.clone());
                        }
                        block.render(row, &mut want);
                        let mut got = base();
                        TopRule {
                            border,
                            left: left.clone(),
                            right: right.clone(),
                        }
                        .render(row, &mut got);
                        assert_eq!(got, want, "{row:?} {left:?} {right:?}");
                    }
                }
            }
        }
    }
}
