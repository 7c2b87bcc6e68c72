//! A bordered box with a title on its top edge, the cells ratatui's
//! `Block::bordered().border_style(s).title(t)` gives, drawn as four thin blocks (the top row
//! with the title, the bottom row, the two side columns) so that only the border cells are
//! styled: the whole `Block` first restyles every cell of its area with its (empty) style,
//! ~40 instructions a cell, for the GPU panels and charts most of a frame's cells. Boxes too
//! small to split are left to the `Block` itself. Writes only into the given area.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Widget};

/// Draws a box around `area` in `border`, with `title` at the top left; returns its inside.
pub fn render(buf: &mut Buffer, area: Rect, border: Style, title: Line<'_>) -> Rect {
    let whole = Block::bordered().border_style(border).title(title);
    let inner = whole.inner(area);
    let area = area.intersection(buf.area);
    if area.width < 2 || area.height < 3 {
        whole.render(area, buf);
        return inner;
    }
    let row = |y| Rect {
        y,
        height: 1,
        ..area
    };
    let side = |x| Rect::new(x, area.y + 1, 1, area.height - 2);
    whole
        .borders(Borders::TOP | Borders::LEFT | Borders::RIGHT)
        .render(row(area.y), buf);
    let edge = |b| Block::new().borders(b).border_style(border);
    edge(Borders::BOTTOM | Borders::LEFT | Borders::RIGHT).render(row(area.bottom() - 1), buf);
    edge(Borders::LEFT).render(side(area.x), buf);
    edge(Borders::RIGHT).render(side(area.right() - 1), buf);
    inner
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::{Color, Modifier};
    use ratatui::text::Span;

    #[test]
    fn the_same_cells_as_a_bordered_block_at_every_size() {
        let border = Style::default().fg(Color::Red).add_modifier(Modifier::BOLD);
        let title = || {
            Line::from(vec![
                Span::styled(" GPU3 ", Style::default().fg(Color::Blue)),
                Span::raw("H100 · activity "),
            ])
        };
        for w in 0..26 {
            for h in 0..6 {
                // Drawn over text, as a panel is over what the frame held before.
                let base = || {
                    let mut b = Buffer::empty(Rect::new(0, 0, 30, 8));
                    for y in 0..8 {
                        b.set_string(0, y, "x".repeat(30), Style::default().bg(Color::Green));
                    }
                    b
                };
                let area = Rect::new(2, 1, w, h);
                let mut want = base();
                let block = Block::bordered().border_style(border).title(title());
                let want_inner = block.inner(area);
                block.render(area, &mut want);
                let mut got = base();
                let inner = render(&mut got, area, border, title());
                assert_eq!(got, want, "{w}×{h}");
                assert_eq!(inner, want_inner, "{w}×{h}");
            }
        }
    }
}
