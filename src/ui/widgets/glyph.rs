//! One character into a cell without building its string each time. ratatui's `Cell::set_char`
//! makes a new `CompactString` per call (a length check and a `memcpy` call for one to four
//! bytes) and a frame sets thousands of cells; the characters the dashboard draws most —
//! printable ASCII, box drawing, braille — are made once here, and a cell takes a copy of one
//! (a short string copies as plain bytes). The cell ends exactly as `set_char` leaves it.
//! Touches only the cell it is given.

use std::sync::LazyLock;

use ratatui::buffer::Cell;

/// The characters made ahead, as inclusive ranges of code points.
const RANGES: [(u32, u32); 3] = [(0x20, 0x7E), (0x2500, 0x257F), (0x2800, 0x28FF)];

/// One cell per character of [`RANGES`], in order, each with that character and no style.
static MADE: LazyLock<Vec<Cell>> = LazyLock::new(|| {
    RANGES
        .iter()
        .flat_map(|&(lo, hi)| lo..=hi)
        .filter_map(char::from_u32)
        .map(|c| {
            let mut cell = Cell::EMPTY;
            cell.set_char(c);
            cell
        })
        .collect()
});

/// The made cell for `c`, if it is one of [`RANGES`] (their offsets in [`MADE`] spelled out:
/// this runs for most cells of a frame). Every one of them is one cell wide and its own
/// grapheme (`text::one_cell`).
#[inline(always)]
pub fn made(c: char) -> Option<&'static Cell> {
    made_in(table(), c)
}

/// The made cells, for a loop to look up with [`made_in`] (the lazy table checked once).
pub fn table() -> &'static [Cell] {
    &MADE
}

/// [`made`], in the [`table`].
#[inline(always)]
pub fn made_in(table: &[Cell], c: char) -> Option<&Cell> {
    let i = match c as u32 {
        u @ 0x20..=0x7E => u - 0x20,
        u @ 0x2500..=0x257F => u - 0x2500 + 95,
        u @ 0x2800..=0x28FF => u - 0x2800 + 95 + 128,
        _ => return None,
    };
    table.get(i as usize)
}

/// `cell.set_char(c)`: the cell shows `c` and keeps its style and diff options.
#[inline(always)]
pub fn set_char(cell: &mut Cell, c: char) -> &mut Cell {
    match made(c) {
        Some(template) => set_made(cell, template),
        None => cell.set_char(c),
    }
}

/// The cell shows `template`'s symbol (a [`made`] one) and keeps its style and diff options.
#[inline(always)]
#[allow(deprecated)] // `skip` is still a cell's field: kept as `set_char` keeps it.
pub fn set_made<'c>(cell: &'c mut Cell, template: &Cell) -> &'c mut Cell {
    let (fg, bg, underline, modifier) = (cell.fg, cell.bg, cell.underline_color, cell.modifier);
    let (diff_option, skip) = (cell.diff_option, cell.skip);
    *cell = template.clone();
    cell.fg = fg;
    cell.bg = bg;
    cell.underline_color = underline;
    cell.modifier = modifier;
    cell.diff_option = diff_option;
    cell.skip = skip;
    cell
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::buffer::CellDiffOption;
    use ratatui::style::{Color, Modifier};

    /// Cells as a frame holds them: blank, styled, wide-symbolled, skipped, forced-width.
    #[allow(deprecated)]
    fn starts() -> Vec<Cell> {
        let mut styled = Cell::new("x");
        styled.fg = Color::Rgb(1, 2, 3);
        styled.bg = Color::Indexed(7);
        styled.underline_color = Color::Red;
        styled.modifier = Modifier::BOLD | Modifier::UNDERLINED;
        let mut long = Cell::EMPTY;
        long.set_symbol("a grapheme longer than any inline buffer");
        let mut skipped = Cell::new("s");
        skipped.skip = true;
        let mut forced = Cell::new("f");
        forced.diff_option = CellDiffOption::ForcedWidth(std::num::NonZeroU16::MIN);
        let mut skip_option = Cell::new("k");
        skip_option.diff_option = CellDiffOption::Skip;
        vec![
            Cell::EMPTY,
            styled,
            long,
            skipped,
            forced,
            skip_option,
            Cell::new("漢"),
        ]
    }

    #[test]
    fn every_char_leaves_the_cell_as_set_char_does() {
        let chars =
            (0..0x3000u32)
                .filter_map(char::from_u32)
                .chain(['🚀', '\u{301}', '\u{10FFFF}']);
        let mut made_ones = 0;
        for c in chars {
            made_ones += usize::from(made(c).is_some());
            assert!(
                made(c).is_none() || crate::ui::widgets::text::one_cell(c),
                "{c:?}"
            );
            for start in starts() {
                let mut want = start.clone();
                want.set_char(c);
                let mut got = start.clone();
                set_char(&mut got, c);
                assert_eq!(got, want, "{c:?} on {start:?}");
                assert_eq!(got.symbol(), want.symbol());
                assert_eq!(got.style(), want.style());
                // Field for field, the symbol's representation included.
                assert_eq!(format!("{got:?}"), format!("{want:?}"));
            }
        }
        assert_eq!(made_ones, 95 + 128 + 256);
        let made_from_ranges: usize = RANGES.iter().map(|(lo, hi)| (hi - lo + 1) as usize).sum();
        assert_eq!(MADE.len(), made_from_ranges);
    }
}
