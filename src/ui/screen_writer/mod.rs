//! The dashboard's terminal: one cell buffer the frame is rendered into, and a compact record of
//! what the screen shows (22 bytes a cell against a ratatui cell's 48), instead of ratatui's
//! `Terminal` and its two whole buffers. Each frame the buffer is cleared and rendered, each
//! cell is compared with its record — two small fixed-size values, where ratatui compares
//! strings and measures every symbol's width — and the changed cells go to the
//! [`frame_writer`](super::frame_writer)'s encoder, in one write. Which cells count as changed
//! follows ratatui's diff (wide characters and what they leave behind, skipped cells), so the
//! screen ends as ratatui's would leave it; the tests compare the two through a terminal
//! emulator. The first frame, and the first after a resize or [`ScreenWriter::clear`], clears
//! the screen and draws everything.
//!
//! [`Surface`] is what the event loop draws on: this writer, or ratatui's `Terminal` (tests).

use std::io::{self, Write};

use ratatui::Terminal;
use ratatui::backend::Backend;
use ratatui::buffer::{Buffer, Cell, CellDiffOption, CellWidth};
use ratatui::layout::{Rect, Size};
use ratatui::style::{Color, Modifier};

use super::frame_writer::{Encoder, terminal_size};

/// A whole 200×60 redraw is ~40 KiB; the buffer keeps its size between frames.
const INITIAL_CAPACITY: usize = 64 * 1024;

/// Modifiers that show on a blank cell (ratatui's list): where a wide character with one of
/// them stood, the columns it covered are rewritten.
const VISIBLE_ON_BLANK: Modifier = Modifier::REVERSED
    .union(Modifier::UNDERLINED)
    .union(Modifier::SLOW_BLINK)
    .union(Modifier::RAPID_BLINK)
    .union(Modifier::CROSSED_OUT);

/// What the event loop draws on.
pub trait Surface {
    /// The whole screen.
    fn area(&self) -> io::Result<Rect>;
    /// Renders a frame with `render` and shows it.
    fn show(&mut self, render: &mut dyn FnMut(&mut Buffer)) -> io::Result<()>;
}

impl<B: Backend> Surface for Terminal<B> {
    fn area(&self) -> io::Result<Rect> {
        let size = self.size().map_err(backend_error)?;
        Ok(Rect::new(0, 0, size.width, size.height))
    }

    fn show(&mut self, render: &mut dyn FnMut(&mut Buffer)) -> io::Result<()> {
        self.draw(|f| render(f.buffer_mut()))
            .map(|_| ())
            .map_err(backend_error)
    }
}

fn backend_error<E: std::error::Error>(e: E) -> io::Error {
    io::Error::other(e.to_string())
}

/// One buffer, a record of the screen, and the bytes between them.
#[derive(Debug)]
pub struct ScreenWriter<W: Write> {
    out: W,
    bytes: Vec<u8>,
    buf: Buffer,
    /// What each cell of the screen shows, row by row.
    shown: Vec<Shown>,
    /// `None` asks the terminal (an ioctl).
    fixed_size: Option<Size>,
    /// The next frame clears the screen and draws every cell.
    full: bool,
}

impl<W: Write> ScreenWriter<W> {
    /// Writes to `out`, sized by the terminal it is attached to.
    pub fn new(out: W) -> Self {
        Self {
            out,
            bytes: Vec::with_capacity(INITIAL_CAPACITY),
            buf: Buffer::empty(Rect::default()),
            shown: Vec::new(),
            fixed_size: None,
            full: true,
        }
    }

    /// Writes to `out` as a terminal of `width`×`height` (tests, benches).
    pub fn with_size(out: W, width: u16, height: u16) -> Self {
        Self {
            fixed_size: Some(Size { width, height }),
            ..Self::new(out)
        }
    }

    /// Changes the fixed size (a test's resize).
    pub fn set_size(&mut self, width: u16, height: u16) {
        self.fixed_size = Some(Size { width, height });
    }

    /// The next frame clears the screen and redraws it whole.
    pub fn clear(&mut self) {
        self.full = true;
    }

    /// The last frame rendered.
    pub fn buffer(&self) -> &Buffer {
        &self.buf
    }

    /// What the writer writes to, mutably (a test takes the bytes).
    pub fn writer_mut(&mut self) -> &mut W {
        &mut self.out
    }

    fn size(&self) -> io::Result<Size> {
        terminal_size(self.fixed_size)
    }

    /// Renders a frame with `render` and writes what changed on screen.
    pub fn draw(&mut self, render: impl FnOnce(&mut Buffer)) -> io::Result<()> {
        let size = self.size()?;
        let area = Rect::new(0, 0, size.width, size.height);
        if area != self.buf.area {
            self.buf.resize(area);
            self.full = true;
        }
        self.buf.reset();
        render(&mut self.buf);
        if self.full {
            self.full = false;
            self.shown.clear();
            self.shown
                .resize(self.buf.content.len(), Shown::of(&Cell::EMPTY));
            // As ratatui's resize: the screen cleared, the cursor hidden, everything drawn.
            self.bytes.extend_from_slice(b"\x1b[2J\x1b[?25l");
        }
        self.diff();
        self.out.write_all(&self.bytes)?;
        self.bytes.clear();
        self.out.flush()
    }

    /// Writes the cells that differ from the record, and records the frame. The cases are
    /// ratatui's `BufferDiff`'s, in its order.
    fn diff(&mut self) {
        let cells = &self.buf.content;
        let shown = &mut self.shown;
        let width = usize::from(self.buf.area.width).max(1);
        let len = cells.len().min(shown.len());
        let mut enc = Encoder::default();
        let out = &mut self.bytes;
        let mut emit = |i: usize, cell: &Cell| {
            // Both fit in u16: the buffer is at most u16::MAX wide and high.
            let x = u16::try_from(i % width).unwrap_or(u16::MAX);
            let y = u16::try_from(i / width).unwrap_or(u16::MAX);
            enc.cell(out, x, y, cell);
        };
        let (cells, shown) = (&cells[..len], &mut shown[..len]);
        let mut i = 0;
        while i < len {
            // The common case in a tight loop: a plain one-column cell as it was (most of a
            // frame), with nothing copied out of the record.
            while let (Some(cell), Some(old)) = (cells.get(i), shown.get(i)) {
                if !old.unchanged_narrow(cell) {
                    break;
                }
                i += 1;
            }
            let Some(cell) = cells.get(i) else {
                break;
            };
            if is_skip(cell) {
                shown[i] = Shown::of(cell);
                i += 1;
                continue;
            }
            let old = shown[i];
            // Most cells are as they were: compared without building their record (no width
            // measured); a wide one's columns follow it.
            if cell.diff_option == CellDiffOption::None && old.matches(cell) {
                let w = usize::from(old.width);
                if w > 1 {
                    record(cells, shown, i + 1, (i + w).min(len));
                }
                i += w.max(1);
                continue;
            }
            let new = Shown::of(cell);
            shown[i] = new;
            let w = usize::from(new.width);
            emit(i, cell);
            let old_w = usize::from(old.width);
            if w > 1 && cell.symbol().contains('\u{FE0F}') {
                // An emoji's trailing columns: rewritten where their symbol changed.
                i = trailing(cells, shown, i + 1, i + w, false, &mut emit);
            } else if w > 1 {
                record(cells, shown, i + 1, (i + w).min(len));
                i += w;
            } else if old_w > w
                && (old.bg != Color::Reset || old.modifier.intersects(VISIBLE_ON_BLANK))
            {
                // A wide character's style would stay on the columns it covered.
                i = trailing(cells, shown, i + 1, i + old_w, true, &mut emit);
            } else {
                i += 1;
            }
        }
        // Beyond the record (never: both are the buffer's size) nothing is compared.
        enc.finish(out);
    }
}

impl<W: Write> Surface for ScreenWriter<W> {
    fn area(&self) -> io::Result<Rect> {
        let size = self.size()?;
        Ok(Rect::new(0, 0, size.width, size.height))
    }

    fn show(&mut self, render: &mut dyn FnMut(&mut Buffer)) -> io::Result<()> {
        self.draw(render)
    }
}

/// Records cells `from..to` unexamined (the columns a wide character covers).
fn record(cells: &[Cell], shown: &mut [Shown], from: usize, to: usize) {
    for k in from..to {
        shown[k] = Shown::of(&cells[k]);
    }
}

/// The columns `from..end` after a changed wide character (or where one stood): each cell is
/// written when `force`, or when its symbol changed; a wide one among them stretches the range.
/// Returns where the scan goes on.
fn trailing(
    cells: &[Cell],
    shown: &mut [Shown],
    from: usize,
    end: usize,
    force: bool,
    emit: &mut impl FnMut(usize, &Cell),
) -> usize {
    let len = cells.len().min(shown.len());
    let mut end = end.min(len);
    let mut j = from;
    while j < end {
        let cell = &cells[j];
        let old = shown[j];
        let new = Shown::of(cell);
        shown[j] = new;
        let w = usize::from(new.width).max(1);
        record(cells, shown, j + 1, (j + w).min(len));
        if !is_skip(cell) && (force || !new.same_symbol(&old)) {
            emit(j, cell);
        }
        j += w;
        end = end.max(j).min(len);
    }
    end.max(from)
}

/// Whether ratatui's diff passes over `cell`.
#[allow(deprecated)] // `skip` still counts in ratatui's diff.
fn is_skip(cell: &Cell) -> bool {
    cell.diff_option == CellDiffOption::Skip
        || (cell.skip && cell.diff_option == CellDiffOption::None)
}

/// What one cell shows, small and fixed-size: its symbol's bytes when they are four or fewer
/// (a longer grapheme cluster is not kept: it never compares equal, so it is always
/// rewritten), its style, its width, and whether it was a plain cell (no diff option, not
/// skipped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shown {
    symbol: [u8; 4],
    /// The symbol's length in bytes, or [`LONG`].
    len: u8,
    width: u8,
    plain: bool,
    fg: Color,
    bg: Color,
    underline: Color,
    modifier: Modifier,
}

/// A symbol of more than four bytes: not kept.
const LONG: u8 = u8::MAX;

impl Shown {
    #[allow(deprecated)] // `skip` still counts in ratatui's diff.
    fn of(cell: &Cell) -> Self {
        let sym = cell.symbol();
        let bytes = sym.as_bytes();
        let mut symbol = [0u8; 4];
        let len = match symbol.get_mut(..bytes.len()) {
            Some(head) => {
                head.copy_from_slice(bytes);
                u8::try_from(bytes.len()).unwrap_or(LONG)
            }
            None => LONG,
        };
        let width = match cell.diff_option {
            CellDiffOption::ForcedWidth(w) => w.get(),
            _ => sym.cell_width(),
        };
        Self {
            symbol,
            len,
            width: u8::try_from(width).unwrap_or(u8::MAX),
            plain: cell.diff_option == CellDiffOption::None && !cell.skip,
            fg: cell.fg,
            bg: cell.bg,
            underline: cell.underline_color,
            modifier: cell.modifier,
        }
    }

    /// `cell` is plain, one column wide in this record, and what this record shows: the
    /// diff's fast path (`is_skip` false, no diff option, `matches`, width 1), in one test.
    #[inline]
    #[allow(deprecated)] // `skip` still counts in ratatui's diff.
    fn unchanged_narrow(&self, cell: &Cell) -> bool {
        self.width == 1
            && self.plain
            && cell.diff_option == CellDiffOption::None
            && !cell.skip
            && self.modifier == cell.modifier
            && self.fg == cell.fg
            && self.bg == cell.bg
            && self.underline == cell.underline_color
            && self.same_symbol_as(cell.symbol())
    }

    /// `cell` (a plain one) is what this record shows: ratatui's cell equality.
    #[inline]
    fn matches(&self, cell: &Cell) -> bool {
        self.plain
            && self.fg == cell.fg
            && self.bg == cell.bg
            && self.modifier == cell.modifier
            && self.underline == cell.underline_color
            && self.same_symbol_as(cell.symbol())
    }

    #[inline]
    fn same_symbol_as(&self, sym: &str) -> bool {
        // Byte by byte: no slice comparison call for one to four bytes.
        let s = &self.symbol;
        match *sym.as_bytes() {
            [a] => self.len == 1 && s[0] == a,
            [a, b, c] => self.len == 3 && s[0] == a && s[1] == b && s[2] == c,
            [a, b] => self.len == 2 && s[0] == a && s[1] == b,
            [a, b, c, d] => self.len == 4 && s[0] == a && s[1] == b && s[2] == c && s[3] == d,
            [] => self.len == 0,
            _ => false,
        }
    }

    fn same_symbol(&self, other: &Shown) -> bool {
        self.len != LONG && self.len == other.len && self.symbol == other.symbol
    }
}

#[cfg(test)]
mod tests;
