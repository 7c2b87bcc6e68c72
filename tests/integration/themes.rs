//! `--theme` and `[ui] theme` on the real binary: a built-in name or a file is accepted, and a bad
//! one stops the dashboard with the file, line and field before the terminal is touched — even
//! under NO_COLOR, never a quiet fallback to the default colours.

use std::path::Path;
use std::process::Output;

use crate::support::gpumeter;

/// The demo dashboard with `args`, with no user config or state of this machine. Standard
/// output is a pipe, so a run that gets past the theme ends at "not a terminal".
fn dashboard(dir: &Path, args: &[&str]) -> Output {
    gpumeter(dir)
        .env_remove("NO_COLOR")
        .args(["--demo", "idle", "--no-ledger"])
        .args(args)
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/themes")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn good_themes_get_past_loading() {
    let dir = tempfile::tempdir().unwrap();
    // A theme of the user's, by name, from $XDG_CONFIG_HOME/gpumeter/themes/.
    let themes = dir.path().join("config/gpumeter/themes");
    std::fs::create_dir_all(&themes).unwrap();
    std::fs::write(themes.join("night.toml"), "title = { fg = \"#ff8700\" }\n").unwrap();
    for theme in [
        "night".to_string(),
        "light".to_string(),
        "colour-blind".to_string(),
        "high-contrast".to_string(),
        "mono".to_string(),
        fixture("valid/partial.toml"),
    ] {
        let out = dashboard(dir.path(), &["--theme", &theme]);
        assert_eq!(out.status.code(), Some(1), "{theme}");
        assert!(
            stderr(&out).contains("not a terminal"),
            "{theme}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn a_bad_theme_is_an_error_naming_where() {
    let dir = tempfile::tempdir().unwrap();
    let out = dashboard(dir.path(), &["--theme", "solarised"]);
    assert_eq!(out.status.code(), Some(1));
    let expected = format!(
        "gpumeter: --theme: unknown theme 'solarised' (built-in: default, light, high-contrast, \
         solarized-dark, colour-blind, mono; yours: {}/NAME.toml; or give a path to a .toml file)",
        dir.path().join("config/gpumeter/themes").display()
    );
    assert!(stderr(&out).starts_with(&expected), "{}", stderr(&out));

    let bad = fixture("invalid/unknown_colour.toml");
    let out = dashboard(dir.path(), &["--theme", &bad]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(&format!("{bad}:2:14: hot.fg: unknown colour 'mauve'")),
        "{}",
        stderr(&out)
    );

    // From the config file: the error points at the key; NO_COLOR does not hide it.
    let cfg = dir.path().join("gpumeter.toml");
    std::fs::write(&cfg, "[ui]\ntheme = \"nope\"\n").unwrap();
    let cfg = cfg.display().to_string();
    let out = gpumeter(dir.path())
        .env("NO_COLOR", "1")
        .args(["--demo", "idle", "--no-ledger", "--config", &cfg])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(&format!("{cfg}:2:9: ui.theme: unknown theme 'nope'")),
        "{}",
        stderr(&out)
    );
    // The flag wins over the file.
    let out = dashboard(dir.path(), &["--config", &cfg, "--theme", "default"]);
    assert!(stderr(&out).contains("not a terminal"), "{}", stderr(&out));
}
