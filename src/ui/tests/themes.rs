//! Theme files: every shipped theme parses, `default.toml` is the code's default and `mono.toml`
//! is `--no-color`; partial themes patch the default; invalid fixtures fail with their asserted
//! message; a theme reaches the screen, and `--no-color` still wins over it.

use std::path::{Path, PathBuf};

use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier, Style};

use crate::ui::tests::fixtures::{self, render};
use crate::ui::theme::Theme;
use crate::ui::theme::file::{BUILTIN_THEMES, ThemeError, builtin, builtin_names, load, parse};
use crate::ui::{App, UiOptions};
use gpumeter_core::config::Origin;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fixtures(kind: &str) -> PathBuf {
    root().join("tests/fixtures/themes").join(kind)
}

fn toml_files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    out.sort();
    out
}

#[test]
fn every_shipped_theme_parses_and_is_built_in() {
    for (name, _) in BUILTIN_THEMES {
        builtin(name)
            .unwrap()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    // Every file in themes/ is built in (and the built-in text is that file).
    let files = toml_files(&root().join("themes"));
    assert_eq!(files.len(), BUILTIN_THEMES.len(), "{files:?}");
    for path in files {
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        let (_, text) = BUILTIN_THEMES
            .iter()
            .find(|(n, _)| *n == stem)
            .unwrap_or_else(|| panic!("themes/{stem}.toml is not built in"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), *text);
    }
}

#[test]
fn default_toml_is_the_default_theme_and_mono_is_no_color() {
    assert_eq!(builtin("default").unwrap().unwrap(), Theme::default());
    assert_eq!(builtin("mono").unwrap().unwrap(), Theme::monochrome());
    // The others really differ, and high contrast has no dark gray anywhere.
    let hc = builtin("high-contrast").unwrap().unwrap();
    let sol = builtin("solarized-dark").unwrap().unwrap();
    assert_ne!(hc, Theme::default());
    assert_ne!(sol, Theme::default());
    let styles = [
        hc.text,
        hc.dim,
        hc.label,
        hc.title,
        hc.border,
        hc.bar_empty,
        hc.na,
        hc.alarm,
    ];
    assert!(
        styles
            .iter()
            .chain(&hc.series)
            .all(|s| s.fg != Some(Color::DarkGray) && s.bg != Some(Color::DarkGray))
    );
    assert_eq!(sol.hot.fg, Some(Color::Rgb(0xdc, 0x32, 0x2f)));
}

#[test]
fn a_partial_theme_patches_the_default_role_by_role() {
    let path = fixtures("valid").join("partial.toml");
    let t = load(&path.display().to_string(), &Origin::Flag("--theme"), None).unwrap();
    let d = Theme::default();
    // A role given is replaced whole.
    assert_eq!(
        t.title,
        Style::new()
            .fg(Color::Rgb(0xff, 0x87, 0))
            .add_modifier(Modifier::BOLD | Modifier::ITALIC)
    );
    assert_eq!(
        t.selected_row,
        Style::new().fg(Color::Black).bg(Color::LightYellow)
    );
    assert_eq!(t.series.len(), 2);
    assert_eq!(t.series_style(2).fg, Some(Color::LightCyan));
    // The rest is the default.
    assert_eq!(
        (t.hot, t.cool, t.key, t.monochrome),
        (d.hot, d.cool, d.key, false)
    );
    // An empty file is the default theme.
    assert_eq!(parse("empty.toml", "").unwrap(), d);
}

#[test]
fn invalid_fixtures_fail_with_their_message() {
    let files = toml_files(&fixtures("invalid"));
    assert!(files.len() >= 10, "only {} invalid fixtures", files.len());
    let mut wrong = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let expected = std::fs::read_to_string(path.with_extension("expected")).unwrap();
        let name = path.file_name().unwrap().to_string_lossy();
        let err = parse(&name, &text).expect_err(&name).to_string();
        if !err.starts_with(expected.trim()) {
            wrong.push(format!(
                "{name}:\n  got      {err}\n  expected {}",
                expected.trim()
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn names_and_paths_resolve_or_say_what_was_wrong() {
    let flag = Origin::Flag("--theme");
    assert_eq!(load("mono", &flag, None).unwrap(), Theme::monochrome());
    let err = load("solarised", &flag, None).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "--theme: unknown theme 'solarised' (built-in: {}; yours: $XDG_CONFIG_HOME/gpumeter/themes/NAME.toml; or give a path to a .toml file)",
            builtin_names().join(", ")
        )
    );
    // Named in a config file: the error points at the key.
    let in_file = Origin::at("config.toml", "[ui]\ntheme = \"nope\"\n", 13);
    let err = load("nope", &in_file, None).unwrap_err().to_string();
    assert!(
        err.starts_with("config.toml:2:9: ui.theme: unknown theme 'nope'"),
        "{err}"
    );
    let err = load("/nonexistent/mine.toml", &flag, None).unwrap_err();
    assert!(matches!(err, ThemeError::Read { .. }));
    assert!(
        err.to_string()
            .starts_with("--theme: cannot read theme file /nonexistent/mine.toml: "),
        "{err}"
    );
    // A path's errors name the path as given.
    let bad = fixtures("invalid").join("unknown_colour.toml");
    let err = load(&bad.display().to_string(), &flag, None)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(&format!(
            "{}:2:14: hot.fg: unknown colour 'mauve'",
            bad.display()
        )),
        "{err}"
    );
}

fn screen_with(theme: Theme, no_color: bool) -> Buffer {
    // Metered, so the spend panel is drawn too (from 120 columns).
    let engine = fixtures::billed_engine_with(fixtures::snapshot(2));
    let mut app = App::new(&UiOptions {
        no_color,
        theme,
        ..fixtures::options()
    });
    render(&mut app, &engine, 120, 40)
}

#[test]
fn a_high_contrast_theme_changes_the_screen_and_no_color_still_wins() {
    let hc = builtin("high-contrast").unwrap().unwrap();
    let default = screen_with(Theme::default(), false);
    let contrast = screen_with(hc.clone(), false);
    // Same text, other colours.
    assert!(fixtures::buffer_to_string(&default).contains("Spend"));
    assert_eq!(
        fixtures::buffer_to_string(&default),
        fixtures::buffer_to_string(&contrast)
    );
    // The process table's header: black on green by default, black on white here.
    let header: Vec<usize> = default
        .content()
        .iter()
        .enumerate()
        .filter(|(_, c)| c.bg == Color::Green)
        .map(|(i, _)| i)
        .collect();
    assert!(header.len() > 20, "no table header found");
    for i in header {
        assert_eq!(contrast.content()[i].bg, Color::White);
    }
    // Dark gray (borders, dim text, the spend panel's labels) is gone.
    assert!(default.content().iter().any(|c| c.fg == Color::DarkGray));
    // The alert widgets take only the no-colour flag, not the theme (yet): their area is
    // left out of this check.
    let engine = fixtures::billed_engine_with(fixtures::snapshot(2));
    let area = ratatui::layout::Rect::new(0, 0, 120, 40);
    let alerts = match crate::ui::screen_for(area, &engine, fixtures::NOW) {
        crate::ui::Screen::Dashboard(l) => l.alerts.map(|a| match a {
            crate::ui::layout::AlertArea::Panel(r) | crate::ui::layout::AlertArea::Strip(r) => r,
        }),
        crate::ui::Screen::TooSmall(_) => None,
    };
    let outside = |i: usize| {
        let pos = ratatui::layout::Position::new((i % 120) as u16, (i / 120) as u16);
        alerts.is_none_or(|r| !r.contains(pos))
    };
    assert!(
        !contrast
            .content()
            .iter()
            .enumerate()
            .any(|(i, c)| c.fg == Color::DarkGray && c.symbol() != " " && outside(i))
    );
    // NO_COLOR / --no-color: no colour at all, whatever the theme.
    let mono = screen_with(hc, true);
    assert!(
        mono.content()
            .iter()
            .all(|c| c.fg == Color::Reset && c.bg == Color::Reset)
    );
}

#[test]
fn user_themes_come_from_their_folder_by_name_with_a_suggestion_for_a_typo() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("night.toml"),
        "title = { fg = \"#ff8700\" }\n",
    )
    .unwrap();
    let flag = Origin::Flag("--theme");
    let night = load("night", &flag, Some(dir.path())).unwrap();
    assert_eq!(night.title.fg, Some(Color::Rgb(0xff, 0x87, 0x00)));
    assert_eq!(
        crate::ui::theme::file::user_names(Some(dir.path())),
        vec!["night".to_string()]
    );
    // A built-in name is the built-in theme.
    assert_eq!(
        load("mono", &flag, Some(dir.path())).unwrap(),
        Theme::monochrome()
    );
    let err = load("nigth", &flag, Some(dir.path()))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("unknown theme 'nigth'; did you mean 'night'?"),
        "{err}"
    );
    assert!(
        err.contains(&format!("yours: {}/NAME.toml", dir.path().display())),
        "{err}"
    );
    let err = load("ligth", &flag, None).unwrap_err().to_string();
    assert!(err.contains("did you mean 'light'?"), "{err}");
}

/// The reference theme's comment names every built-in theme, so a reader choosing one from it
/// sees them all.
#[test]
fn the_reference_theme_names_every_built_in() {
    let text = include_str!("../../../themes/default.toml");
    let comment: String = text
        .lines()
        .take_while(|l| l.starts_with('#'))
        .collect::<Vec<_>>()
        .join(" ");
    for name in crate::ui::theme::file::builtin_names() {
        assert!(
            comment.contains(name),
            "default.toml's comment omits {name}"
        );
    }
}
