//! The frame writer against ratatui's own crossterm backend: the same frames through both, each
//! byte stream fed to a terminal emulator (vt100), and the screens compared cell by cell
//! (symbol, colours, attributes), frame after frame: first frames, partial updates, wide
//! characters, colour and attribute changes, a resize, whole dashboards.

use std::cell::RefCell;
use std::io::{self, Write};
use std::rc::Rc;

use ratatui::backend::CrosstermBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::{Terminal, TerminalOptions, Viewport};

use super::FrameWriter;
use crate::ui::tests::fixtures;
use crate::ui::{App, fallback::ColourDepth};

/// Two terminals fed the same frames: ours (a full-screen terminal of a fixed size) and
/// ratatui's crossterm backend (a fixed viewport: it cannot ask a test for the size), each with
/// an emulated screen behind it.
struct Pair {
    ours: Terminal<FrameWriter<Vec<u8>>>,
    theirs: Terminal<CrosstermBackend<Shared>>,
    their_out: Shared,
    our_screen: vt100::Parser,
    their_screen: vt100::Parser,
    /// Bytes of each of our frames, and of crossterm's.
    our_bytes: Vec<usize>,
    their_bytes: Vec<usize>,
}

impl Pair {
    fn new(width: u16, height: u16) -> Self {
        let ours = Terminal::new(FrameWriter::with_size(Vec::new(), width, height)).unwrap();
        let their_out = Shared::default();
        let theirs = Terminal::with_options(
            CrosstermBackend::new(their_out.clone()),
            TerminalOptions {
                viewport: Viewport::Fixed(Rect::new(0, 0, width, height)),
            },
        )
        .unwrap();
        Self {
            ours,
            theirs,
            their_out,
            our_screen: vt100::Parser::new(height, width, 0),
            their_screen: vt100::Parser::new(height, width, 0),
            our_bytes: Vec::new(),
            their_bytes: Vec::new(),
        }
    }

    /// Both terminals (and screens) take a new size.
    fn resize(&mut self, width: u16, height: u16) {
        self.ours.backend_mut().set_size(width, height);
        self.theirs.resize(Rect::new(0, 0, width, height)).unwrap();
        self.our_screen.screen_mut().set_size(height, width);
        self.their_screen.screen_mut().set_size(height, width);
        let theirs = self.their_out.take();
        self.their_screen.process(&theirs);
    }

    /// [`Pair::draw`], and the screen shows `frame`.
    fn show(&mut self, frame: &Buffer) {
        self.draw(frame);
        assert_screen_shows(self.our_screen.screen(), frame);
    }

    /// Draws `frame` on both and checks the two screens are alike.
    fn draw(&mut self, frame: &Buffer) {
        self.ours
            .draw(|f| f.buffer_mut().clone_from(frame))
            .unwrap();
        self.theirs
            .draw(|f| f.buffer_mut().clone_from(frame))
            .unwrap();
        let ours = std::mem::take(self.ours.backend_mut().writer_mut());
        let theirs = self.their_out.take();
        self.our_bytes.push(ours.len());
        self.their_bytes.push(theirs.len());
        self.our_screen.process(&ours);
        self.their_screen.process(&theirs);
        assert_same_screens(self.our_screen.screen(), self.their_screen.screen());
    }
}

pub(crate) fn assert_same_screens(ours: &vt100::Screen, theirs: &vt100::Screen) {
    let (rows, cols) = ours.size();
    assert_eq!((rows, cols), theirs.size());
    for row in 0..rows {
        for col in 0..cols {
            let (a, b) = (ours.cell(row, col), theirs.cell(row, col));
            let describe = |c: Option<&vt100::Cell>| {
                c.map(|c| {
                    (
                        // A blank written and a blank never written (or cleared) are alike.
                        c.contents().trim().to_string(),
                        c.fgcolor(),
                        c.bgcolor(),
                        (c.bold(), c.dim(), c.italic(), c.underline(), c.inverse()),
                        c.is_wide(),
                    )
                })
            };
            assert_eq!(describe(a), describe(b), "cell at row {row}, col {col}");
        }
    }
}

/// The emulated screen holds the buffer's symbols and colours.
pub(crate) fn assert_screen_shows(screen: &vt100::Screen, frame: &Buffer) {
    let area = frame.area;
    for y in area.top()..area.bottom() {
        let mut x = area.left();
        while x < area.right() {
            let cell = &frame[(x, y)];
            let shown = screen.cell(y, x).unwrap();
            // A blank written and a blank never written are alike.
            let blank = |s: &str| if s == " " { "" } else { s }.to_string();
            assert_eq!(
                blank(shown.contents()),
                blank(cell.symbol()),
                "symbol at ({x}, {y})"
            );
            assert_eq!(shown.bgcolor(), vt_colour(cell.bg), "bg at ({x}, {y})");
            assert_eq!(shown.inverse(), cell.modifier.contains(Modifier::REVERSED));
            x += if shown.is_wide() { 2 } else { 1 };
            // What colours a blank's text is never seen (ratatui's diff leaves it stale where
            // a wide character stood, whichever backend writes).
            if cell.symbol() == " " {
                continue;
            }
            assert_eq!(shown.fgcolor(), vt_colour(cell.fg), "fg at ({x}, {y})");
            // The emulator keeps one intensity: dim after bold replaces it.
            if !cell.modifier.contains(Modifier::DIM) {
                assert_eq!(shown.bold(), cell.modifier.contains(Modifier::BOLD));
            }
        }
    }
}

pub(crate) fn vt_colour(c: Color) -> vt100::Color {
    let idx = |i| vt100::Color::Idx(i);
    match c {
        Color::Reset => vt100::Color::Default,
        Color::Rgb(r, g, b) => vt100::Color::Rgb(r, g, b),
        Color::Indexed(i) => idx(i),
        Color::Black => idx(0),
        Color::Red => idx(1),
        Color::Green => idx(2),
        Color::Yellow => idx(3),
        Color::Blue => idx(4),
        Color::Magenta => idx(5),
        Color::Cyan => idx(6),
        Color::Gray => idx(7),
        Color::DarkGray => idx(8),
        Color::LightRed => idx(9),
        Color::LightGreen => idx(10),
        Color::LightYellow => idx(11),
        Color::LightBlue => idx(12),
        Color::LightMagenta => idx(13),
        Color::LightCyan => idx(14),
        Color::White => idx(15),
    }
}

/// A frame of pseudo-random styled text (`seed` picks it), wide characters included.
pub(crate) fn noise(width: u16, height: u16, seed: u64) -> Buffer {
    noise_of(width, height, seed, true)
}

/// [`noise`], with or without wide characters.
pub(crate) fn noise_of(width: u16, height: u16, seed: u64, wide: bool) -> Buffer {
    let mut buf = Buffer::empty(Rect::new(0, 0, width, height));
    let mut state = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as u32
    };
    let colours = [
        Color::Reset,
        Color::Red,
        Color::LightBlue,
        Color::DarkGray,
        Color::Indexed(208),
        Color::Rgb(0x26, 0x8b, 0xd2),
        Color::Rgb(0xfd, 0xf6, 0xe3),
    ];
    let modifiers = [
        Modifier::empty(),
        Modifier::BOLD,
        Modifier::DIM,
        Modifier::BOLD | Modifier::DIM,
        Modifier::REVERSED,
        Modifier::ITALIC | Modifier::UNDERLINED,
        Modifier::BOLD | Modifier::REVERSED,
    ];
    let symbols: &[&str] = if wide {
        &["a", "Z", " ", "─", "⣿", "·", "日", "█", "%"]
    } else {
        &["a", "Z", " ", "─", "⣿", "·", "█", "%"]
    };
    for y in 0..height {
        let mut x = 0;
        while x < width {
            let r = next();
            // Long runs of one style, as a dashboard has.
            if r % 4 == 0 {
                x += 1;
                continue;
            }
            let sym = symbols[(r as usize / 4) % symbols.len()];
            let wide = sym == "日";
            if wide && x + 1 >= width {
                break;
            }
            let style = Style::default()
                .fg(colours[(next() as usize) % colours.len()])
                .bg(colours[(next() as usize) % colours.len()])
                .add_modifier(modifiers[(next() as usize) % modifiers.len()]);
            buf.set_string(x, y, sym, style);
            x += if wide { 2 } else { 1 };
        }
    }
    buf
}

#[test]
fn random_frames_leave_the_screen_crossterm_leaves() {
    let mut pair = Pair::new(40, 12);
    for seed in 0..30 {
        pair.show(&noise_of(40, 12, seed, false));
    }
    // Where a wide character stood, ratatui's diff may leave a blank's old colour (both
    // backends alike): the screens are compared with each other only.
    for seed in 30..60 {
        pair.draw(&noise(40, 12, seed));
    }
}

#[test]
fn a_partial_update_writes_only_what_changed() {
    let mut pair = Pair::new(30, 5);
    let mut frame = noise(30, 5, 7);
    pair.show(&frame);
    // One cell changes colour, a run changes text.
    frame[(3, 1)].set_fg(Color::Indexed(33));
    frame.set_string(10, 3, "12.5", Style::default().fg(Color::Green));
    pair.show(&frame);
    let (ours, theirs) = (pair.our_bytes[1], pair.their_bytes[1]);
    assert!(
        0 < ours && ours < theirs && ours < 200,
        "{ours} bytes for two changes (crossterm {theirs})"
    );
    // Nothing changed: nothing but the cursor state, which was sent with the first frame.
    pair.show(&frame);
    assert_eq!(pair.our_bytes[2], 0);
}

#[test]
fn wide_characters_replaced_by_narrow_ones_and_back() {
    let mut pair = Pair::new(12, 2);
    let mut a = Buffer::empty(Rect::new(0, 0, 12, 2));
    a.set_string(0, 0, "日本語", Style::default().bg(Color::Blue));
    a.set_string(
        0,
        1,
        "ab日c",
        Style::default().add_modifier(Modifier::REVERSED),
    );
    pair.show(&a);
    let mut b = Buffer::empty(Rect::new(0, 0, 12, 2));
    b.set_string(0, 0, "abcdef", Style::default());
    b.set_string(0, 1, "abxyc", Style::default());
    pair.show(&b);
    pair.show(&a);
}

#[test]
fn a_resize_redraws_the_whole_screen() {
    let mut pair = Pair::new(30, 8);
    pair.show(&noise(30, 8, 1));
    pair.resize(24, 10);
    pair.show(&noise(24, 10, 2));
    pair.show(&noise(24, 10, 3));
    pair.resize(30, 8);
    pair.show(&noise(30, 8, 1));
}

#[test]
fn dashboards_at_each_colour_depth_match_crossterm() {
    for depth in [
        ColourDepth::TrueColour,
        ColourDepth::Ansi256,
        ColourDepth::Ansi16,
    ] {
        let mut pair = Pair::new(200, 60);
        let engine = fixtures::engine(8);
        let mut app = App::new(&fixtures::options());
        app.colour_depth = depth;
        for step in 0..3 {
            let now = fixtures::NOW + step * 1_000;
            let frame = fixtures::render_at(&mut app, &engine, 200, 60, now);
            pair.show(&frame);
        }
        // The first frame draws everything; each in fewer bytes than crossterm's.
        assert!(pair.our_bytes[0] > 5_000, "{depth:?}: {:?}", pair.our_bytes);
        for (ours, theirs) in pair.our_bytes.iter().zip(&pair.their_bytes) {
            assert!(ours < theirs, "{depth:?}: {ours} ≥ {theirs}");
        }
    }
}

/// A writer whose bytes the test can take while the backend owns it.
#[derive(Clone, Default)]
pub(crate) struct Shared(Rc<RefCell<Vec<u8>>>);

impl Shared {
    pub(crate) fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.0.borrow_mut())
    }
}

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Counts the writes that reach it.
#[derive(Default)]
struct Writes {
    calls: usize,
    bytes: Vec<u8>,
}

impl Write for Writes {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.calls += 1;
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn one_write_per_frame() {
    let mut terminal = Terminal::new(FrameWriter::with_size(Writes::default(), 40, 12)).unwrap();
    for seed in 0..3 {
        let frame = noise(40, 12, seed);
        terminal
            .draw(|f| f.buffer_mut().clone_from(&frame))
            .unwrap();
        assert_eq!(
            terminal.backend().writer().calls,
            usize::try_from(seed + 1).unwrap()
        );
    }
}

#[test]
fn moves_only_between_runs_and_styles_only_when_they_change() {
    let mut terminal = Terminal::new(FrameWriter::with_size(Vec::new(), 20, 2)).unwrap();
    let mut frame = Buffer::empty(Rect::new(0, 0, 20, 2));
    let red = Style::default().fg(Color::Red);
    frame.set_string(2, 0, "abc", red);
    frame.set_string(5, 0, "de", red.add_modifier(Modifier::BOLD));
    frame.set_string(10, 1, "f", Style::default().bg(Color::Rgb(1, 2, 3)));
    terminal
        .draw(|f| f.buffer_mut().clone_from(&frame))
        .unwrap();
    let bytes = String::from_utf8(terminal.backend().writer().clone()).unwrap();
    assert_eq!(
        bytes,
        "\x1b[1;3H\x1b[38;5;1;49mabc\x1b[1mde\x1b[2;11H\x1b[22;39;48;2;1;2;3mf\x1b[0m\x1b[?25l"
    );
}
