//! Every terminal gets a frame it can show: each built-in theme draws a whole screen that reads
//! (no text in its own background colour), the colour-blind theme tells good from bad without
//! red against green, 16- and 256-colour terminals get only their colours, and `--ascii`
//! frames hold nothing but ASCII, at every size, overlays and alerts included.

use ratatui::buffer::Buffer;
use ratatui::style::{Color, Style};

use crate::ui::fallback::ColourDepth;
use crate::ui::tests::demo::{START, played_for};
use crate::ui::tests::fixtures::{self, buffer_to_string, render, render_at};
use crate::ui::theme::Theme;
use crate::ui::theme::file::{BUILTIN_THEMES, builtin};
use crate::ui::{App, UiOptions};

fn app(theme: Theme, depth: ColourDepth, ascii: bool) -> App {
    App::new(&UiOptions {
        theme,
        colour_depth: depth,
        ascii,
        ..fixtures::options()
    })
}

fn theme(name: &str) -> Theme {
    builtin(name).unwrap().unwrap()
}

/// Cells whose glyph is drawn in the colour of its own background.
fn unreadable(buf: &Buffer) -> usize {
    buf.content
        .iter()
        .filter(|c| c.symbol().trim() != "" && c.fg != Color::Reset && c.fg == c.bg)
        .count()
}

#[test]
fn every_built_in_theme_draws_a_readable_frame() {
    let engine = fixtures::billed_engine_with(fixtures::snapshot(4));
    for (name, _) in BUILTIN_THEMES {
        let t = theme(name);
        let buf = render(
            &mut app(t.clone(), ColourDepth::TrueColour, false),
            &engine,
            120,
            40,
        );
        let text = buffer_to_string(&buf);
        assert!(text.contains("gpumeter"), "{name}:\n{text}");
        assert!(text.contains("COMMAND"), "{name}: no process table");
        assert_eq!(unreadable(&buf), 0, "{name}");
        // The frame is drawn in this theme: the title's colour is on screen.
        if let Some(fg) = t.title.fg {
            assert!(
                buf.content.iter().any(|c| c.fg == fg),
                "{name}: title colour unused"
            );
        }
    }
}

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
enum Hue {
    Red,
    Green,
    Other,
}

/// Red or green as a reader with red-green colour blindness would confuse them.
fn hue(style: Style) -> Hue {
    match style.fg.or(style.bg) {
        Some(Color::Red | Color::LightRed) => Hue::Red,
        Some(Color::Green | Color::LightGreen) => Hue::Green,
        Some(Color::Rgb(r, g, b)) => {
            let (r, g, b) = (f64::from(r), f64::from(g), f64::from(b));
            let (max, min) = (r.max(g).max(b), r.min(g).min(b));
            if max - min < 40.0 {
                return Hue::Other;
            }
            let h = if max == r {
                60.0 * ((g - b) / (max - min)).rem_euclid(6.0)
            } else if max == g {
                60.0 * ((b - r) / (max - min) + 2.0)
            } else {
                60.0 * ((r - g) / (max - min) + 4.0)
            };
            if !(20.0..340.0).contains(&h) {
                Hue::Red
            } else if (75.0..165.0).contains(&h) {
                Hue::Green
            } else {
                Hue::Other
            }
        }
        _ => Hue::Other,
    }
}

/// The (good, bad) pairs a theme shows side by side that are red against green.
fn red_green_pairs(t: &Theme) -> Vec<&'static str> {
    let pairs = [
        ("cool/hot", t.cool, t.hot),
        ("cool/warm", t.cool, t.warm),
        ("cool/alarm", t.cool, t.alarm),
        ("alert_info/alert_high", t.alert_info, t.alert_high),
        ("alert_moderate/alert_high", t.alert_moderate, t.alert_high),
    ];
    pairs
        .into_iter()
        .filter(|(_, a, b)| {
            let (a, b) = (hue(*a), hue(*b));
            matches!((a, b), (Hue::Red, Hue::Green) | (Hue::Green, Hue::Red))
        })
        .map(|(n, ..)| n)
        .collect()
}

#[test]
fn the_colour_blind_theme_has_no_red_green_pair_for_good_and_bad() {
    // The check sees the default theme's green-for-good, red-for-bad.
    assert!(red_green_pairs(&Theme::default()).contains(&"cool/hot"));
    let cb = theme("colour-blind");
    assert_eq!(red_green_pairs(&cb), Vec::<&str>::new());
    // Good and bad still differ, and the chart series avoid red next to green too.
    assert_ne!(cb.cool.fg, cb.hot.fg);
    for pair in cb.series.windows(2) {
        let (a, b) = (hue(pair[0]), hue(pair[1]));
        assert!(!matches!(
            (a, b),
            (Hue::Red, Hue::Green) | (Hue::Green, Hue::Red)
        ));
    }
}

const NAMED_16: [Color; 17] = [
    Color::Reset,
    Color::Black,
    Color::Red,
    Color::Green,
    Color::Yellow,
    Color::Blue,
    Color::Magenta,
    Color::Cyan,
    Color::Gray,
    Color::DarkGray,
    Color::LightRed,
    Color::LightGreen,
    Color::LightYellow,
    Color::LightBlue,
    Color::LightMagenta,
    Color::LightCyan,
    Color::White,
];

#[test]
fn sixteen_colour_terminals_get_only_the_sixteen_and_it_still_reads() {
    let engine = played_for("cpu-starved", 120);
    for (name, _) in BUILTIN_THEMES {
        let mut a = app(theme(name), ColourDepth::Ansi16, false);
        let buf = render_at(&mut a, &engine, 120, 40, START + 120_400);
        let odd: Vec<Color> = buf
            .content
            .iter()
            .flat_map(|c| [c.fg, c.bg])
            .filter(|c| !NAMED_16.contains(c))
            .collect();
        assert!(odd.is_empty(), "{name}: {:?}", &odd[..odd.len().min(5)]);
        assert_eq!(unreadable(&buf), 0, "{name}");
    }
    // The 24-bit theme's hues survive: good is still not drawn like bad.
    let t = theme("solarized-dark");
    let d = ColourDepth::Ansi16;
    assert_ne!(d.reduce(t.cool.fg.unwrap()), d.reduce(t.hot.fg.unwrap()));
    assert_ne!(d.reduce(t.warm.fg.unwrap()), d.reduce(t.hot.fg.unwrap()));
}

#[test]
fn two_hundred_fifty_six_colour_terminals_get_no_24_bit_colour() {
    let engine = played_for("cpu-starved", 120);
    let mut a = app(theme("solarized-dark"), ColourDepth::Ansi256, false);
    let buf = render_at(&mut a, &engine, 120, 40, START + 120_400);
    assert!(
        buf.content
            .iter()
            .flat_map(|c| [c.fg, c.bg])
            .all(|c| !matches!(c, Color::Rgb(..)))
    );
    assert!(
        buf.content
            .iter()
            .any(|c| matches!(c.fg, Color::Indexed(_)))
    );
}

/// Every cell's glyph is ASCII.
fn non_ascii(buf: &Buffer) -> Vec<String> {
    buf.content
        .iter()
        .map(|c| c.symbol().to_string())
        .filter(|s| !s.is_ascii())
        .collect()
}

#[test]
fn ascii_frames_contain_only_ascii() {
    for (scenario, seconds) in [
        ("cpu-starved", 120),
        ("idle", 900),
        ("mixed", 120),
        ("gpu-lost", 120),
    ] {
        let engine = played_for(scenario, seconds);
        for (w, h) in [(80, 24), (120, 40), (200, 60)] {
            let mut a = app(Theme::default(), ColourDepth::TrueColour, true);
            let buf = render_at(&mut a, &engine, w, h, START + seconds * 1000 + 400);
            assert_eq!(non_ascii(&buf), Vec::<String>::new(), "{scenario} {w}×{h}");
            let text = buffer_to_string(&buf);
            assert!(text.contains("gpumeter"), "{scenario} {w}×{h}:\n{text}");
            // Boxes keep their shape in ASCII.
            if (w, h) != (80, 24) {
                assert!(text.contains("-+"), "{scenario} {w}×{h}:\n{text}");
            }
        }
    }
    // The same screen with glyphs draws braille charts and box-drawing, so there was
    // something to replace.
    let engine = played_for("cpu-starved", 120);
    let mut a = app(Theme::default(), ColourDepth::TrueColour, false);
    let buf = render_at(&mut a, &engine, 120, 40, START + 120_400);
    let glyphs = non_ascii(&buf);
    let braille = |g: &String| {
        g.chars()
            .next()
            .is_some_and(|c| ('\u{2800}'..='\u{28ff}').contains(&c))
    };
    assert!(glyphs.iter().any(braille), "no braille");
    assert!(glyphs.iter().any(|g| g == "─"), "no box-drawing");
}

#[test]
fn ascii_overlays_contain_only_ascii() {
    let engine = played_for("cpu-starved", 120);
    for key in ['?', 'H'] {
        let mut a = app(Theme::default(), ColourDepth::TrueColour, true);
        a.handle_key(crossterm::event::KeyEvent::new(
            crossterm::event::KeyCode::Char(key),
            crossterm::event::KeyModifiers::NONE,
        ));
        let buf = render_at(&mut a, &engine, 80, 24, START + 120_400);
        assert_eq!(non_ascii(&buf), Vec::<String>::new(), "overlay {key}");
    }
}
