//! `gpumeter config default | check | path`, and did-you-mean for typos in every kind of file
//! gpumeter reads (config, theme, scenario), through the real binary.

use std::path::Path;

use assert_cmd::Command;

/// gpumeter with a private HOME and XDG config folder (no real file of the user's is read).
fn gpumeter(home: &Path) -> Command {
    Command::from_std(crate::support::gpumeter(home))
}

fn run(home: &Path, args: &[&str]) -> (bool, String, String) {
    let out = gpumeter(home).args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn config_default_prints_every_key_and_checks_clean() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, text, _) = run(dir.path(), &["config", "default"]);
    assert!(ok);
    for key in [
        "rate",
        "budget",
        "granularity",
        "remind_after",
        "readonly",
        "theme",
    ] {
        assert!(text.contains(&format!("{key} = ")), "{key} missing");
    }
    let file = dir.path().join("printed.toml");
    std::fs::write(&file, &text).unwrap();
    let (ok, checked, err) = run(dir.path(), &["config", "check", file.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(
        checked.starts_with("# valid: <built-in defaults> + "),
        "{checked}"
    );
    assert!(checked.contains("meter: off"), "{checked}");
}

#[test]
fn config_check_shows_each_key_with_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("box.toml");
    std::fs::write(
        &file,
        "[pricing]\nrate = \"31.00/h\"\nbudget = \"500/day\"\n",
    )
    .unwrap();
    let (ok, text, err) = run(dir.path(), &["config", "check", file.to_str().unwrap()]);
    assert!(ok, "{err}");
    let name = file.display().to_string();
    assert!(
        text.contains(&format!("rate = \"31.00/h\"  # {name}")),
        "{text}"
    );
    assert!(
        text.contains("currency = \"USD\"  # <built-in defaults>"),
        "{text}"
    );
    assert!(text.contains("meter: on"), "{text}");
}

#[test]
fn a_typo_is_an_error_with_the_line_and_a_suggestion() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("typo.toml");
    std::fs::write(
        &file,
        "[pricing]\nrate = \"31.00/h\"\nbudjet = \"500/day\"\n",
    )
    .unwrap();
    let (ok, text, err) = run(dir.path(), &["config", "check", file.to_str().unwrap()]);
    assert!(!ok);
    assert!(text.is_empty(), "{text}");
    assert!(
        err.contains(&format!(
            "{}:3:1: pricing.budjet: unknown key `budjet` in [pricing]; did you mean `budget`?",
            file.display()
        )),
        "{err}"
    );
    // The same file refuses the dashboard, and a run reads it the same way.
    let (ok, _, err) = run(
        dir.path(),
        &[
            "snapshot",
            "--json",
            "--demo",
            "idle",
            "--config",
            file.to_str().unwrap(),
        ],
    );
    assert!(!ok);
    assert!(err.contains("did you mean `budget`?"), "{err}");
}

#[test]
fn config_path_lists_the_files_and_whether_they_exist() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("config/gpumeter/config.toml");
    let (ok, text, _) = run(dir.path(), &["config", "path"]);
    assert!(ok);
    assert!(text.contains("<built-in defaults>"), "{text}");
    let line = |text: &str, what: &str| {
        text.lines()
            .find(|l| l.contains(what))
            .map(str::to_string)
            .unwrap_or_default()
    };
    let mine = line(&text, &user.display().to_string());
    assert!(mine.ends_with("your config, not found"), "{text}");
    assert!(text.contains("config/gpumeter/themes/*.toml"), "{text}");
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    std::fs::write(&user, "[ui]\nreadonly = true\n").unwrap();
    let (_, text, _) = run(dir.path(), &["config", "path"]);
    let mine = line(&text, &user.display().to_string());
    assert!(mine.ends_with("your config, found"), "{text}");
    // With no PATH, check reads that file.
    let (ok, text, err) = run(dir.path(), &["config", "check"]);
    assert!(ok, "{err}");
    assert!(
        text.contains(&format!("readonly = true  # {}", user.display())),
        "{text}"
    );
}

#[test]
fn typos_in_theme_and_scenario_files_get_a_suggestion_too() {
    let dir = tempfile::tempdir().unwrap();
    let theme = dir.path().join("t.toml");
    std::fs::write(&theme, "titel = { fg = \"red\" }\n").unwrap();
    let out = gpumeter(dir.path())
        .args(["--demo", "idle", "--theme", theme.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("unknown role `titel`; did you mean `title`?"),
        "{err}"
    );

    let scenario = dir.path().join("s.toml");
    let idle =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/gpumeter-sim/scenarios/idle.toml");
    let text =
        std::fs::read_to_string(idle)
            .unwrap()
            .replacen("[[gpu]]", "[[gpu]]\nnmae = \"x\"", 1);
    std::fs::write(&scenario, text).unwrap();
    let (ok, _, err) = run(
        dir.path(),
        &["snapshot", "--demo", scenario.to_str().unwrap()],
    );
    assert!(!ok);
    assert!(
        err.contains("unknown key `nmae` in [gpu]; did you mean `name`?"),
        "{err}"
    );
}

/// `config check` refuses what the dashboard refuses on start: a file it calls valid must
/// never stop the next run.
#[test]
fn config_check_refuses_what_the_dashboard_refuses() {
    let dir = tempfile::tempdir().unwrap();
    for (name, body, says) in [
        (
            "action.toml",
            "[keys]\nquitt = \"Q\"\n",
            "unknown action `quitt`",
        ),
        (
            "twice.toml",
            "[keys]\nquit = \"j\"\n",
            "`j` is bound to both `quit` and `down`",
        ),
        (
            "theme.toml",
            "[ui]\ntheme = \"nosuch\"\n",
            "unknown theme 'nosuch'",
        ),
    ] {
        let file = dir.path().join(name);
        std::fs::write(&file, body).unwrap();
        let path = file.to_str().unwrap();
        let (ok, text, err) = run(dir.path(), &["config", "check", path]);
        assert!(!ok, "{name}: config check passed it: {text}");
        assert!(!text.contains("# valid"), "{name}: {text}");
        assert!(err.contains(says) && err.contains(name), "{name}: {err}");
        // The dashboard says the same on start (before touching the terminal).
        let (ok, _, dash) = run(dir.path(), &["--config", path, "--demo", "idle"]);
        assert!(!ok && dash.contains(says), "{name}: {dash}");
    }
}
