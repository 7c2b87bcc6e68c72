//! The README's screenshots: demo scenarios played on a fake clock ([`crate::ui::tests::demo`]),
//! drawn with the default theme into a `TestBackend` and written as SVG ([`crate::ui::tests::svg`]) to
//! `screenshots/`. Checked to be current on every test run;
//! `GPUMETER_UPDATE_SCREENSHOTS=1 cargo test screenshots` rewrites them.

use std::path::{Path, PathBuf};

use crate::ui::App;
use crate::ui::tests::demo::{START, played_for};
use crate::ui::tests::fixtures::{self, render_at};
use crate::ui::tests::svg::to_svg;

/// What is shot: scenario, width, height, simulated seconds played (long enough for the
/// scenario's alert to fire). The file is `screenshots/<scenario>.svg`.
const SHOTS: [(&str, u16, u16, i64); 10] = [
    ("cpu-starved", 120, 40, 120),
    ("training", 200, 60, 120),
    ("gpu-lost", 120, 40, 120),
    ("idle", 120, 40, 900),
    ("hung", 120, 40, 300),
    ("xid", 120, 40, 120),
    ("oom-soon", 120, 40, 360),
    ("job-done", 120, 40, 240),
    ("shared", 120, 40, 120),
    (FLEET_SHOT, 140, 9, 900),
];

/// The same screens for other terminals: (file stem, scenario, width, height, seconds, look).
const VARIANTS: [(&str, &str, u16, u16, i64, Look); 2] = [
    (
        "cpu-starved-light",
        "cpu-starved",
        120,
        40,
        120,
        Look::Light,
    ),
    (
        "cpu-starved-ascii",
        "cpu-starved",
        120,
        40,
        120,
        Look::Ascii,
    ),
];

/// How a shot is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Look {
    /// The default theme on a dark terminal.
    Default,
    /// The `light` theme on a light terminal.
    Light,
    /// `--ascii`.
    Ascii,
}

/// Views that need more than a scenario: the replay header (a recorded `cpu-starved` run
/// paused 4 minutes in, at 4×) and an alert's detail view at 80×24. Files `<name>.svg`.
const VIEWS: [&str; 2] = ["replay", "alert-detail"];

/// Draws one of [`VIEWS`].
fn view(name: &str) -> String {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let seconds = 240;
    let engine = played_for("cpu-starved", seconds);
    let now = START + seconds * 1_000 + 400;
    let mut app = App::new(&fixtures::options());
    let (w, h, title) = match name {
        "replay" => {
            app.replay = Some(crate::ui::replay::ReplayStatus {
                speed: 4,
                paused: true,
                at_end: false,
                at_ms: now,
                first_ms: START,
            });
            (
                120,
                40,
                "gpumeter --replay run.ndjson.zst (120×40), paused".to_string(),
            )
        }
        _ => {
            render_at(&mut app, &engine, 80, 24, now);
            app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
            (
                80,
                24,
                "gpumeter --demo cpu-starved (80×24), Enter on the alert".to_string(),
            )
        }
    };
    let buf = render_at(&mut app, &engine, w, h, now);
    to_svg(&buf, &title)
}

const UPDATE_VAR: &str = "GPUMETER_UPDATE_SCREENSHOTS";
const REGENERATE: &str = "GPUMETER_UPDATE_SCREENSHOTS=1 cargo test screenshots";

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("screenshots")
}

/// The fleet screen's picture, `screenshots/fleet.svg`: four demo hosts (idle, training,
/// cpu-starved, a dead one) 15 minutes in, drawn by `ui::fleet`.
const FLEET_SHOT: &str = "fleet";

fn shot(name: &str, w: u16, h: u16, seconds: i64) -> String {
    if name == FLEET_SHOT {
        let mut ui = crate::ui::fleet::tests::demo_fleet(seconds);
        let buf = crate::ui::fleet::tests::draw(&mut ui, w, h, START + seconds * 1_000 + 400);
        return to_svg(&buf, &format!("gpumeter fleet --hosts hosts.txt ({w}×{h})"));
    }
    shot_as(name, w, h, seconds, Look::Default)
}

fn shot_as(name: &str, w: u16, h: u16, seconds: i64, look: Look) -> String {
    let engine = played_for(name, seconds);
    let mut options = fixtures::options();
    let mut flags = String::new();
    match look {
        Look::Default => {}
        Look::Light => {
            options.theme = crate::ui::theme::file::builtin("light")
                .and_then(Result::ok)
                .unwrap_or_default();
            flags.push_str(" --theme light");
        }
        Look::Ascii => {
            options.ascii = true;
            flags.push_str(" --ascii");
        }
    }
    let mut app = App::new(&options);
    let mut buf = render_at(&mut app, &engine, w, h, START + seconds * 1_000 + 400);
    if look == Look::Light {
        on_light_terminal(&mut buf);
    }
    to_svg(&buf, &format!("gpumeter --demo {name}{flags} ({w}×{h})"))
}

/// The terminal's own colours made those of a light terminal: dark text on off-white.
fn on_light_terminal(buf: &mut ratatui::buffer::Buffer) {
    use ratatui::style::Color;
    for cell in &mut buf.content {
        if cell.fg == Color::Reset {
            cell.fg = Color::Rgb(0x1e, 0x1e, 0x1e);
        }
        if cell.bg == Color::Reset {
            cell.bg = Color::Rgb(0xfa, 0xfa, 0xf5);
        }
    }
}

/// Every picture: the scenario shots, then the variants.
fn all_shots() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = SHOTS
        .iter()
        .map(|(n, w, h, s)| (n.to_string(), shot(n, *w, *h, *s)))
        .collect();
    out.extend(VIEWS.iter().map(|n| (n.to_string(), view(n))));
    out.extend(
        VARIANTS
            .iter()
            .map(|(file, n, w, h, s, look)| (file.to_string(), shot_as(n, *w, *h, *s, *look))),
    );
    out
}

#[test]
fn screenshots_are_current() {
    let update = std::env::var_os(UPDATE_VAR).is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    let shots = all_shots();
    // The same input draws the same picture (no clock, no machine, no hash order).
    assert_eq!(shots, all_shots(), "the screenshots are not deterministic");
    for (name, svg) in &shots {
        let path = dir().join(format!("{name}.svg"));
        if update {
            std::fs::create_dir_all(dir()).unwrap();
            std::fs::write(&path, svg).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(svg.as_str()) {
            stale.push(format!("screenshots/{name}.svg"));
        }
    }
    // No picture left over from a shot that was dropped.
    let mut extra: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.ends_with(".svg"))
        .filter(|f| !shots.iter().any(|(n, _)| *f == format!("{n}.svg")))
        .collect();
    extra.sort();
    assert!(
        stale.is_empty() && extra.is_empty(),
        "screenshots out of date: {stale:?}; regenerate them with: {REGENERATE}\n\
         not drawn by any shot (delete them, or add them to SHOTS): {extra:?}"
    );
}

#[test]
fn the_replay_and_alert_detail_pictures_show_what_they_are_named_for() {
    let replay = view("replay");
    assert!(
        replay.contains("REPLAY") && replay.contains("PAUSED"),
        "no replay header"
    );
    let detail = view("alert-detail");
    assert!(detail.contains("Alert details") && detail.contains("Next step"));
}

#[test]
fn screenshots_carry_the_themes_colours() {
    let svg = shot("gpu-lost", 120, 40, 120);
    // The lost GPU's alarm (white on red, bold) and the process table header (black on green).
    assert!(svg.contains("LOST"), "no LOST in the picture");
    assert!(
        svg.contains("<rect fill=\"#cd3131\""),
        "no red alarm background"
    );
    assert!(
        svg.contains("<rect fill=\"#0dbc79\""),
        "no green table header"
    );
    assert!(svg.contains("font-weight=\"bold\""));
}

#[test]
fn the_light_and_ascii_shots_are_what_they_say() {
    let light = shot_as("cpu-starved", 120, 40, 120, Look::Light);
    // Off-white behind the text, and the light theme's dark blue title.
    assert!(
        light.contains("<rect fill=\"#fafaf5\""),
        "no light background"
    );
    assert!(
        light.contains("fill=\"#005f87\""),
        "no light-theme title colour"
    );
    let ascii = shot_as("cpu-starved", 120, 40, 120, Look::Ascii);
    // Only the title's × is not ASCII: no box-drawing, block or braille glyph is drawn.
    let odd: Vec<char> = ascii
        .chars()
        .filter(|c| !c.is_ascii() && *c != '×')
        .collect();
    assert!(odd.is_empty(), "{odd:?}");
    let glyphs = shot("cpu-starved", 100, 30, 120);
    assert!(
        glyphs
            .chars()
            .any(|c| ('\u{2500}'..='\u{28ff}').contains(&c))
    );
}
