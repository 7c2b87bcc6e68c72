//! The escape-sequence encoder every screen's bytes go through ([`Encoder`], used by
//! [`super::screen_writer::ScreenWriter`], the one renderer of the dashboard and the fleet), and
//! [`FrameWriter`], a ratatui backend over it that the screen writer's tests keep as their
//! oracle. As a backend: ratatui's `Terminal` still renders into its buffers and picks the
//! changed cells (its diff knows wide characters and skipped cells), and this writer
//! turns them into bytes itself instead of through crossterm's per-cell commands. A cursor move
//! only where the changed cells are not contiguous, one SGR sequence only where the style
//! changes (modifiers and both colours in one), symbols copied as bytes, all into one reused
//! buffer that goes out in one write per frame. The sequences mean what crossterm's mean (the
//! same colour numbers, the same attribute codes, in the same order), so the screen a frame
//! leaves is the one `CrosstermBackend` would leave; the tests feed both to a terminal emulator
//! and compare. It writes to any [`Write`]; the terminal's size comes from the tty, or is fixed
//! (tests).

use std::io::{self, Write};

use ratatui::backend::{Backend, ClearType, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};
use ratatui::style::{Color, Modifier};

/// A whole 200×60 redraw is ~40 KiB; the buffer keeps its size between frames.
const INITIAL_CAPACITY: usize = 64 * 1024;

/// A ratatui [`Backend`] writing batched escape sequences to `W`.
#[derive(Debug)]
pub struct FrameWriter<W: Write> {
    out: W,
    bytes: Vec<u8>,
    /// `None` asks the terminal (an ioctl), as crossterm does.
    fixed_size: Option<Size>,
    /// What the last cursor command left (`None` until one was sent).
    cursor_hidden: Option<bool>,
}

impl<W: Write> FrameWriter<W> {
    /// Writes to `out`, sized by the terminal it is attached to.
    pub fn new(out: W) -> Self {
        Self {
            out,
            bytes: Vec::with_capacity(INITIAL_CAPACITY),
            fixed_size: None,
            cursor_hidden: None,
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

    /// What the writer writes to.
    pub fn writer(&self) -> &W {
        &self.out
    }

    /// What the writer writes to, mutably (a test takes the bytes).
    pub fn writer_mut(&mut self) -> &mut W {
        &mut self.out
    }

    fn send(&mut self) -> io::Result<()> {
        if !self.bytes.is_empty() {
            self.out.write_all(&self.bytes)?;
            self.bytes.clear();
        }
        self.out.flush()
    }
}

impl<W: Write> Backend for FrameWriter<W> {
    type Error = io::Error;

    fn draw<'a, I>(&mut self, content: I) -> io::Result<()>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        let mut encoder = Encoder::default();
        for (x, y, cell) in content {
            encoder.cell(&mut self.bytes, x, y, cell);
        }
        encoder.finish(&mut self.bytes);
        Ok(())
    }

    fn hide_cursor(&mut self) -> io::Result<()> {
        // ratatui asks every frame; once is enough until something shows it.
        if self.cursor_hidden != Some(true) {
            self.bytes.extend_from_slice(b"\x1b[?25l");
            self.cursor_hidden = Some(true);
        }
        Ok(())
    }

    fn show_cursor(&mut self) -> io::Result<()> {
        self.bytes.extend_from_slice(b"\x1b[?25h");
        self.cursor_hidden = Some(false);
        self.send()
    }

    fn get_cursor_position(&mut self) -> io::Result<Position> {
        self.send()?;
        crossterm::cursor::position()
            .map(|(x, y)| Position { x, y })
            .map_err(io::Error::other)
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> io::Result<()> {
        let Position { x, y } = position.into();
        move_to(&mut self.bytes, x, y);
        Ok(())
    }

    fn clear(&mut self) -> io::Result<()> {
        self.clear_region(ClearType::All)
    }

    fn clear_region(&mut self, clear_type: ClearType) -> io::Result<()> {
        let seq: &[u8] = match clear_type {
            ClearType::All => b"\x1b[2J",
            ClearType::AfterCursor => b"\x1b[J",
            ClearType::BeforeCursor => b"\x1b[1J",
            ClearType::CurrentLine => b"\x1b[2K",
            ClearType::UntilNewLine => b"\x1b[K",
        };
        self.bytes.extend_from_slice(seq);
        // A clear is rare (start, resize) and goes out at once, as crossterm's does.
        self.send()
    }

    fn append_lines(&mut self, n: u16) -> io::Result<()> {
        for _ in 0..n {
            self.bytes.push(b'\n');
        }
        self.send()
    }

    fn size(&self) -> io::Result<Size> {
        terminal_size(self.fixed_size)
    }

    fn window_size(&mut self) -> io::Result<WindowSize> {
        let size = self.size()?;
        let pixels = match self.fixed_size {
            Some(_) => Size::default(),
            None => {
                let w = crossterm::terminal::window_size()?;
                Size {
                    width: w.width,
                    height: w.height,
                }
            }
        };
        Ok(WindowSize {
            columns_rows: size,
            pixels,
        })
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send()
    }
}

/// Changed cells into bytes, in the order given: a cursor move where a cell does not follow the
/// last one, the style's changes, the symbol. The terminal's style is the default one between
/// frames ([`Encoder::finish`] resets it).
#[derive(Debug, Default)]
pub(super) struct Encoder {
    pen: Pen,
    last: Option<(u16, u16)>,
}

impl Encoder {
    /// Appends `cell` at (x, y).
    pub(super) fn cell(&mut self, out: &mut Vec<u8>, x: u16, y: u16, cell: &Cell) {
        if !matches!(self.last, Some((lx, ly)) if x == lx.wrapping_add(1) && y == ly) {
            move_to(out, x, y);
        }
        self.last = Some((x, y));
        self.pen.apply(out, cell);
        out.extend_from_slice(cell.symbol().as_bytes());
    }

    /// Ends the frame with the terminal's style back to the default.
    pub(super) fn finish(self, out: &mut Vec<u8>) {
        if self.pen != Pen::default() {
            out.extend_from_slice(b"\x1b[0m");
        }
    }
}

/// The style the terminal is drawing with, as the writer last set it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pen {
    fg: Color,
    bg: Color,
    underline: Color,
    modifier: Modifier,
}

impl Default for Pen {
    fn default() -> Self {
        Self {
            fg: Color::Reset,
            bg: Color::Reset,
            underline: Color::Reset,
            modifier: Modifier::empty(),
        }
    }
}

impl Pen {
    /// Brings the terminal to `cell`'s style in at most one SGR sequence.
    fn apply(&mut self, out: &mut Vec<u8>, cell: &Cell) {
        let modifier_changed = cell.modifier != self.modifier;
        let colours_changed = cell.fg != self.fg || cell.bg != self.bg;
        let underline_changed = cell.underline_color != self.underline;
        if !(modifier_changed || colours_changed || underline_changed) {
            return;
        }
        let mut sgr = Sgr::start(out);
        if modifier_changed {
            modifier_params(&mut sgr, self.modifier, cell.modifier);
            self.modifier = cell.modifier;
        }
        if colours_changed {
            // Both, as crossterm's SetColors sends them.
            colour_param(&mut sgr, 38, 39, cell.fg);
            colour_param(&mut sgr, 48, 49, cell.bg);
            self.fg = cell.fg;
            self.bg = cell.bg;
        }
        if underline_changed {
            colour_param(&mut sgr, 58, 59, cell.underline_color);
            self.underline = cell.underline_color;
        }
        sgr.finish();
    }
}

/// One `CSI … m` sequence being written: parameters separated by `;`. An empty one (no
/// parameter) is taken back: `CSI m` would reset everything.
struct Sgr<'a> {
    out: &'a mut Vec<u8>,
    start: usize,
    params: usize,
}

impl<'a> Sgr<'a> {
    fn start(out: &'a mut Vec<u8>) -> Self {
        let start = out.len();
        out.extend_from_slice(b"\x1b[");
        Self {
            out,
            start,
            params: 0,
        }
    }

    /// Starts the next parameter (its separator).
    fn next(&mut self) -> &mut Vec<u8> {
        if self.params > 0 {
            self.out.push(b';');
        }
        self.params += 1;
        self.out
    }

    fn code(&mut self, n: u8) {
        push_decimal(self.next(), u16::from(n));
    }

    fn finish(self) {
        if self.params == 0 {
            self.out.truncate(self.start);
        } else {
            self.out.push(b'm');
        }
    }
}

/// The SGR codes from `from` to `to`, in the order crossterm's backend sends them: removals
/// first (normal intensity restoring the bold or dim that stays), then additions.
fn modifier_params(sgr: &mut Sgr<'_>, from: Modifier, to: Modifier) {
    let removed = from - to;
    if removed.contains(Modifier::REVERSED) {
        sgr.code(27);
    }
    let reset_intensity = removed.intersects(Modifier::BOLD | Modifier::DIM);
    if reset_intensity {
        sgr.code(22);
        if to.contains(Modifier::DIM) {
            sgr.code(2);
        }
        if to.contains(Modifier::BOLD) {
            sgr.code(1);
        }
    }
    if removed.contains(Modifier::ITALIC) {
        sgr.code(23);
    }
    if removed.contains(Modifier::UNDERLINED) {
        sgr.code(24);
    }
    if removed.contains(Modifier::CROSSED_OUT) {
        sgr.code(29);
    }
    if removed.contains(Modifier::HIDDEN) {
        sgr.code(28);
    }
    if removed.intersects(Modifier::SLOW_BLINK | Modifier::RAPID_BLINK) {
        sgr.code(25);
    }
    let added = to - from;
    let adds = [
        (Modifier::REVERSED, 7, true),
        (Modifier::BOLD, 1, !reset_intensity),
        (Modifier::ITALIC, 3, true),
        (Modifier::UNDERLINED, 4, true),
        (Modifier::DIM, 2, !reset_intensity),
        (Modifier::CROSSED_OUT, 9, true),
        (Modifier::HIDDEN, 8, true),
        (Modifier::SLOW_BLINK, 5, true),
        (Modifier::RAPID_BLINK, 6, true),
    ];
    for (m, code, when) in adds {
        if when && added.contains(m) {
            sgr.code(code);
        }
    }
}

/// One colour as SGR parameters: `reset` for the default, `base;5;n` for the 16 named colours
/// and the palette (crossterm's numbering), `base;2;r;g;b` for RGB.
fn colour_param(sgr: &mut Sgr<'_>, base: u8, reset: u8, colour: Color) {
    let index = match colour {
        Color::Reset => return sgr.code(reset),
        Color::Rgb(r, g, b) => {
            sgr.code(base);
            sgr.code(2);
            sgr.code(r);
            sgr.code(g);
            sgr.code(b);
            return;
        }
        Color::Indexed(i) => i,
        Color::Black => 0,
        Color::Red => 1,
        Color::Green => 2,
        Color::Yellow => 3,
        Color::Blue => 4,
        Color::Magenta => 5,
        Color::Cyan => 6,
        Color::Gray => 7,
        Color::DarkGray => 8,
        Color::LightRed => 9,
        Color::LightGreen => 10,
        Color::LightYellow => 11,
        Color::LightBlue => 12,
        Color::LightMagenta => 13,
        Color::LightCyan => 14,
        Color::White => 15,
    };
    sgr.code(base);
    sgr.code(5);
    sgr.code(index);
}

/// `CSI row;col H` (1-based), as crossterm's `MoveTo`.
/// The fixed size where there is one (tests, benches), else the attached terminal's.
pub(super) fn terminal_size(fixed: Option<Size>) -> io::Result<Size> {
    match fixed {
        Some(s) => Ok(s),
        None => {
            // One ioctl on the terminal drawn to: crossterm's `size` opens, asks and closes
            // /dev/tty each call (twice a frame). It is the fallback where stdout is not
            // a terminal.
            if let Ok(ws) = rustix::termios::tcgetwinsize(io::stdout())
                && ws.ws_col > 0
                && ws.ws_row > 0
            {
                return Ok(Size {
                    width: ws.ws_col,
                    height: ws.ws_row,
                });
            }
            let (width, height) = crossterm::terminal::size()?;
            Ok(Size { width, height })
        }
    }
}

fn move_to(out: &mut Vec<u8>, x: u16, y: u16) {
    out.extend_from_slice(b"\x1b[");
    push_decimal(out, y.saturating_add(1));
    out.push(b';');
    push_decimal(out, x.saturating_add(1));
    out.push(b'H');
}

fn push_decimal(out: &mut Vec<u8>, n: u16) {
    let mut digits = [0u8; 5];
    let mut i = digits.len();
    let mut n = n;
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

#[cfg(test)]
pub(super) mod tests;
