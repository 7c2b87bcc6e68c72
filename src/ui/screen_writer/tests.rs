//! The screen writer against ratatui's `Terminal`: the same frames through both, the bytes fed
//! to a terminal emulator and the screens compared cell by cell; and, frame after frame, the very
//! bytes ratatui's diff gives through the frame writer.

use std::cell::RefCell;
use std::io::{self, Write};
use std::rc::Rc;

use ratatui::backend::CrosstermBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::{Terminal, TerminalOptions, Viewport};

use super::{ScreenWriter, Surface};
use crate::ui::frame_writer::FrameWriter;
use crate::ui::frame_writer::tests::{
    Shared, assert_same_screens, assert_screen_shows, noise, noise_of,
};
use crate::ui::tests::fixtures;
use crate::ui::{App, fallback::ColourDepth};

/// Ours, ratatui's `Terminal` over crossterm (a fixed viewport: it cannot ask a test for the
/// size), and ratatui's `Terminal` over the frame writer (full screen, a fixed size).
struct Trio {
    ours: ScreenWriter<Vec<u8>>,
    crossterm: Terminal<CrosstermBackend<Shared>>,
    crossterm_out: Shared,
    ratatui: Terminal<FrameWriter<Vec<u8>>>,
    our_screen: vt100::Parser,
    their_screen: vt100::Parser,
    frames: usize,
}

impl Trio {
    fn new(width: u16, height: u16) -> Self {
        let crossterm_out = Shared::default();
        let crossterm = Terminal::with_options(
            CrosstermBackend::new(crossterm_out.clone()),
            TerminalOptions {
                viewport: Viewport::Fixed(Rect::new(0, 0, width, height)),
            },
        )
        .unwrap();
        Self {
            ours: ScreenWriter::with_size(Vec::new(), width, height),
            crossterm,
            crossterm_out,
            ratatui: Terminal::new(FrameWriter::with_size(Vec::new(), width, height)).unwrap(),
            our_screen: vt100::Parser::new(height, width, 0),
            their_screen: vt100::Parser::new(height, width, 0),
            frames: 0,
        }
    }

    fn resize(&mut self, width: u16, height: u16) {
        self.ours.set_size(width, height);
        self.ratatui.backend_mut().set_size(width, height);
        self.crossterm
            .resize(Rect::new(0, 0, width, height))
            .unwrap();
        self.our_screen.screen_mut().set_size(height, width);
        self.their_screen.screen_mut().set_size(height, width);
        self.their_screen.process(&self.crossterm_out.take());
    }

    /// Draws `frame` everywhere: the screens alike, and after the first frame of a size, the
    /// bytes ratatui's diff gives. Returns our bytes.
    fn draw(&mut self, frame: &Buffer, same_bytes: bool) -> Vec<u8> {
        self.ours.show(&mut |buf| buf.clone_from(frame)).unwrap();
        self.crossterm
            .draw(|f| f.buffer_mut().clone_from(frame))
            .unwrap();
        self.ratatui
            .draw(|f| f.buffer_mut().clone_from(frame))
            .unwrap();
        let ours = std::mem::take(self.ours.writer_mut());
        let ratatui = std::mem::take(self.ratatui.backend_mut().writer_mut());
        self.our_screen.process(&ours);
        self.their_screen.process(&self.crossterm_out.take());
        assert_same_screens(self.our_screen.screen(), self.their_screen.screen());
        assert_eq!(self.ours.buffer(), frame);
        if same_bytes {
            assert_eq!(
                String::from_utf8_lossy(&ours),
                String::from_utf8_lossy(&ratatui),
                "frame {}",
                self.frames
            );
        }
        self.frames += 1;
        ours
    }

    fn show(&mut self, frame: &Buffer, same_bytes: bool) -> Vec<u8> {
        let bytes = self.draw(frame, same_bytes);
        assert_screen_shows(self.our_screen.screen(), frame);
        bytes
    }
}

#[test]
fn random_frames_write_what_ratatui_writes() {
    let mut trio = Trio::new(40, 12);
    trio.show(&noise_of(40, 12, 0, false), false);
    for seed in 1..30 {
        trio.show(&noise_of(40, 12, seed, false), true);
    }
    for seed in 30..60 {
        trio.draw(&noise(40, 12, seed), true);
    }
}

#[test]
fn the_first_frame_clears_and_draws_everything() {
    let mut trio = Trio::new(20, 3);
    let mut frame = Buffer::empty(Rect::new(0, 0, 20, 3));
    frame.set_string(1, 1, "hi", Style::default().fg(Color::Red));
    let bytes = trio.show(&frame, false);
    assert_eq!(
        String::from_utf8(bytes).unwrap(),
        "\x1b[2J\x1b[?25l\x1b[2;2H\x1b[38;5;1;49mhi\x1b[0m"
    );
    // The same frame again: nothing to write.
    assert!(trio.show(&frame, true).is_empty());
    // A clear asked for: the whole frame again.
    trio.ours.clear();
    let again = trio.draw(&frame, false);
    assert!(String::from_utf8(again).unwrap().starts_with("\x1b[2J"));
}

#[test]
fn wide_characters_come_and_go_as_ratatui_writes_them() {
    let mut trio = Trio::new(12, 3);
    let mut a = Buffer::empty(Rect::new(0, 0, 12, 3));
    a.set_string(0, 0, "日本語", Style::default().bg(Color::Blue));
    a.set_string(
        0,
        1,
        "ab日c",
        Style::default().add_modifier(Modifier::REVERSED),
    );
    a.set_string(0, 2, "x👍\u{fe0f}y", Style::default());
    let mut b = Buffer::empty(Rect::new(0, 0, 12, 3));
    b.set_string(0, 0, "abcdef", Style::default());
    b.set_string(0, 1, "abxyc", Style::default());
    b.set_string(0, 2, "x✓✓y", Style::default());
    trio.draw(&a, false);
    trio.draw(&b, true);
    trio.draw(&a, true);
    // Unchanged, ratatui writes nothing; a symbol of more than one character (the emoji and
    // its variation selector) is not kept in the record, so it is written again: the same
    // screen, a few bytes more.
    let again = trio.draw(&a, false);
    assert_eq!(String::from_utf8(again).unwrap(), "\x1b[3;2H👍\u{fe0f}");
}

#[test]
fn a_resize_clears_and_redraws() {
    let mut trio = Trio::new(30, 8);
    trio.show(&noise(30, 8, 1), false);
    trio.resize(24, 10);
    let bytes = trio.show(&noise(24, 10, 2), false);
    assert!(bytes.starts_with(b"\x1b[2J"));
    trio.show(&noise(24, 10, 3), true);
    trio.resize(30, 8);
    trio.show(&noise(30, 8, 1), false);
    trio.show(&noise(30, 8, 4), true);
}

#[test]
fn dashboards_at_each_colour_depth_write_what_ratatui_writes() {
    for depth in [
        ColourDepth::TrueColour,
        ColourDepth::Ansi256,
        ColourDepth::Ansi16,
    ] {
        let mut trio = Trio::new(200, 60);
        let engine = fixtures::engine(8);
        let mut app = App::new(&fixtures::options());
        app.colour_depth = depth;
        for step in 0..4 {
            let now = fixtures::NOW + step * 1_000;
            let frame = fixtures::render_at(&mut app, &engine, 200, 60, now);
            trio.show(&frame, step > 0);
        }
    }
}

/// Counts the writes that reach it.
#[derive(Clone, Default)]
struct Writes(Rc<RefCell<usize>>);

impl Write for Writes {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        *self.0.borrow_mut() += 1;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn one_write_per_frame_and_the_area_is_the_screen() {
    let writes = Writes::default();
    let mut ours = ScreenWriter::with_size(writes.clone(), 40, 12);
    assert_eq!(ours.area().unwrap(), Rect::new(0, 0, 40, 12));
    for seed in 0..3u64 {
        let frame = noise(40, 12, seed);
        ours.show(&mut |buf| {
            assert_eq!(buf.area, Rect::new(0, 0, 40, 12));
            // Every frame starts from a blank buffer, as ratatui's do.
            assert!(buf.content.iter().all(|c| c.symbol() == " "));
            buf.clone_from(&frame);
        })
        .unwrap();
        assert_eq!(*writes.0.borrow(), usize::try_from(seed + 1).unwrap());
    }
}

#[test]
fn short_grapheme_clusters_are_kept_and_not_rewritten() {
    // "e" and a combining acute: one cell, three bytes, kept in the record.
    let mut trio = Trio::new(10, 1);
    let mut frame = Buffer::empty(Rect::new(0, 0, 10, 1));
    frame.set_string(2, 0, "e\u{301}x", Style::default().fg(Color::Green));
    assert_eq!(frame[(2, 0)].symbol(), "e\u{301}");
    trio.show(&frame, false);
    assert!(trio.draw(&frame, true).is_empty());
    frame.set_string(2, 0, "a", Style::default().fg(Color::Green));
    trio.draw(&frame, true);
}
