//! The frame as the event loop draws it — the process rows handed over by `sync_rows`, drawn
//! by the screen writer into the buffer it keeps from frame to frame — against a from-scratch
//! frame (`sync`, then `draw` into a new terminal), every second of played scenarios while keys
//! change the view (tree, sort, filter, GPU filter, selection, scrolling, full commands, chart
//! window, help, alert detail), the terminal resizes, and the theme, colour depth and ASCII mode
//! change: the same cells, and the emulated terminal shows them.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::widgets::Widget;

use crate::ui::fallback::ColourDepth;
use crate::ui::frame_writer::tests::assert_screen_shows;
use crate::ui::screen_writer::ScreenWriter;
use crate::ui::tests::{demo, fixtures};
use crate::ui::theme::{Theme, file};
use crate::ui::{App, Dashboard, sync_rows};

/// What happens before the frame of `second`.
fn step(app: &mut App, second: i64) {
    let key = |c: KeyCode| KeyEvent::new(c, KeyModifiers::NONE);
    let keys: &[KeyCode] = match second % 40 {
        3 => &[KeyCode::Char('t')],
        5 => &[KeyCode::Down, KeyCode::Down, KeyCode::Down],
        7 => &[KeyCode::Char('s')],
        9 => &[KeyCode::Char('S'), KeyCode::PageDown],
        11 => &[KeyCode::Char('/'), KeyCode::Char('p'), KeyCode::Char('y')],
        13 => &[KeyCode::Esc, KeyCode::Esc],
        15 => &[KeyCode::Tab],
        17 => &[KeyCode::Tab, KeyCode::Down],
        19 => &[KeyCode::BackTab, KeyCode::BackTab],
        21 => &[KeyCode::Char('e'), KeyCode::End],
        23 => &[
            KeyCode::Char('e'),
            KeyCode::Home,
            KeyCode::Char('('),
            KeyCode::Char('-'),
        ],
        25 => &[KeyCode::Char(')'), KeyCode::Char(')'), KeyCode::Char('+')],
        27 => &[KeyCode::Char('?')],
        28 => &[KeyCode::Char('?'), KeyCode::Enter],
        30 => &[KeyCode::Esc, KeyCode::Char('t')],
        _ => &[],
    };
    for &k in keys {
        app.handle_key(key(k));
    }
    match second % 37 {
        8 => app.colour_depth = ColourDepth::Ansi256,
        16 => app.colour_depth = ColourDepth::Ansi16,
        20 => app.theme = Theme::monochrome(),
        24 => app.colour_depth = ColourDepth::TrueColour,
        26 => app.theme = file::builtin("solarized-dark").unwrap().unwrap(),
        31 => app.ascii = true,
        35 => {
            app.ascii = false;
            app.theme = Theme::colour();
        }
        _ => {}
    }
}

/// The terminal's size at `second`: mostly the full 200×60, with resizes among the layouts.
fn size(second: i64) -> (u16, u16) {
    match second % 23 {
        4..=6 => (120, 40),
        10 => (80, 24),
        14 => (60, 15),
        18 => (201, 61),
        _ => (200, 60),
    }
}

fn loop_frames_match_fresh_frames(scenario: &str, seconds: i64) {
    let mut writer = ScreenWriter::with_size(Vec::new(), 200, 60);
    let mut screen = vt100::Parser::new(60, 200, 0);
    let mut app = App::new(&fixtures::options());
    let mut drawn = 0;
    demo::played_with(scenario, seconds, |second, session| {
        let engine = session.engine();
        let now = demo::START + second * 1_000 + 400;
        step(&mut app, second);
        let (w, h) = size(second);
        let mut fresh = app.clone();
        let want = fixtures::render_at(&mut fresh, engine, w, h, now);

        writer.set_size(w, h);
        if screen.screen().size() != (h, w) {
            screen.screen_mut().set_size(h, w);
        }
        let area = Rect::new(0, 0, w, h);
        let rows = sync_rows(&mut app, engine, area, now);
        writer
            .draw(|buf| {
                Dashboard::new(&app, engine, now)
                    .with_rows(&rows)
                    .render(buf.area, buf)
            })
            .unwrap();
        assert_eq!(writer.buffer(), &want, "{scenario} at {second} s, {w}×{h}");
        screen.process(&std::mem::take(writer.writer_mut()));
        assert_screen_shows(screen.screen(), &want);
        drawn += 1;
    });
    assert_eq!(drawn, seconds + 1);
}

#[test]
fn the_loop_draws_what_a_fresh_render_draws_frame_after_frame() {
    loop_frames_match_fresh_frames("training", 130);
}

#[test]
fn and_with_alerts_and_a_lost_gpu() {
    loop_frames_match_fresh_frames("cpu-starved", 80);
    loop_frames_match_fresh_frames("gpu-lost", 45);
}
