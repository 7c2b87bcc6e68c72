//! The shipped default parses; invalid fixtures fail with the asserted message; layers stack.

use std::path::{Path, PathBuf};

use super::*;
use crate::billing::{BudgetPeriod, ClockStart, Granularity, Rate, RateUnit};
use crate::money::{Currency, Money};

fn fixtures(kind: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/config")
        .join(kind)
}

fn load_file(path: &Path) -> Result<Settings, ConfigError> {
    let text = std::fs::read_to_string(path).unwrap();
    let name = path.file_name().unwrap().to_string_lossy();
    let layers = [Layer::defaults()?, Layer::parse(&name, &text)?];
    let s = resolve::resolve(&layers, None, &CliPricing::default(), &Env::default())?;
    // As `load` does with no machine to price.
    if s.pricing.is_none() {
        s.beside.refuse_unpriced_budget()?;
    }
    Ok(s)
}

#[test]
fn check_default_config() {
    let layer = Layer::defaults().unwrap();
    let pricing = layer.raw.pricing.as_ref().unwrap();
    assert!(pricing.rate.is_none(), "the defaults set no rate");
    let s = resolve::resolve(&[layer], None, &CliPricing::default(), &Env::default()).unwrap();
    assert_eq!(s.pricing, None);
    assert!(s.ledger.enabled);
}

/// What serde says about a table at `path` holding one key nobody defines.
enum Probe {
    /// A struct: the keys it accepts (from `deny_unknown_fields`' "expected one of …").
    Table(Vec<String>),
    /// A map with keys of the user's choosing (`[alerts.hooks]`).
    Map,
    /// A value, not a table.
    Leaf,
}

fn probe(path: &[String]) -> Probe {
    let header = if path.is_empty() {
        String::new()
    } else {
        format!("[{}]\n", path.join("."))
    };
    match toml::from_str::<RawConfig>(&format!("{header}zz_probe = 0\n")) {
        Err(e) if e.message().contains("unknown field `zz_probe`") => Probe::Table(
            e.message()
                .split('`')
                .skip(1)
                .step_by(2)
                .filter(|k| *k != "zz_probe")
                .map(str::to_string)
                .collect(),
        ),
        // Not a struct: an empty table there is fine for a map, a type error for a value.
        _ if toml::from_str::<RawConfig>(&header).is_ok() => Probe::Map,
        _ => Probe::Leaf,
    }
}

/// Every key path the raw structs accept, found by walking them through serde (no list kept by
/// hand): `(path, is_free_map)`.
fn accepted_keys(path: Vec<String>, out: &mut Vec<(Vec<String>, bool)>) {
    match probe(&path) {
        Probe::Table(keys) => {
            assert!(!keys.is_empty(), "{path:?}: a table with no keys");
            for k in keys {
                let mut p = path.clone();
                p.push(k);
                accepted_keys(p, out);
            }
        }
        Probe::Map => out.push((path, true)),
        Probe::Leaf => out.push((path, false)),
    }
}

/// The default file with its commented-out examples (`# rate = "31.00/h"`, `# [alerts.webhook]`)
/// switched on.
fn default_config_with_examples() -> String {
    let example = |rest: &str| {
        let t = rest.trim();
        (t.starts_with('[') && t.ends_with(']'))
            || t.split_once(" = ").is_some_and(|(k, _)| {
                !k.is_empty() && k.chars().all(|c| c.is_ascii_lowercase() || c == '_')
            })
    };
    DEFAULT_CONFIG
        .lines()
        .map(|l| match l.strip_prefix("# ") {
            Some(rest) if example(rest) => rest,
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_accepted_key_is_documented_in_the_default_config_and_every_documented_key_parses() {
    let mut keys = Vec::new();
    accepted_keys(Vec::new(), &mut keys);
    // The walk must find the tables: a broken probe would make this test pass vacuously.
    for known in [
        "pricing.rate",
        "alerts.idle.remind_every",
        "alerts.webhook.url",
        "ui.theme",
    ] {
        assert!(
            keys.iter().any(|(k, _)| k.join(".") == known),
            "the walk missed {known}: {keys:?}"
        );
    }
    assert!(
        keys.iter()
            .any(|(k, map)| *map && k.join(".") == "alerts.hooks")
    );

    let text = default_config_with_examples();
    let doc: toml::Table = toml::from_str(&text).unwrap();
    for (path, is_map) in &keys {
        let mut at = toml::Value::Table(doc.clone());
        for part in path {
            at = at
                .get(part)
                .unwrap_or_else(|| {
                    panic!(
                        "{} is accepted but not in config/default.toml (set or as a commented example)",
                        path.join(".")
                    )
                })
                .clone();
        }
        if *is_map {
            assert!(
                at.as_table().is_some_and(|t| !t.is_empty()),
                "{}: show an example entry",
                path.join(".")
            );
        }
    }
    // Every key written there, examples included, is one the structs accept (deny_unknown_fields)
    // and holds a value that resolves.
    let layer = Layer::parse("default.toml with examples", &text).unwrap();
    let s = resolve::resolve(&[layer], None, &CliPricing::default(), &Env::default()).unwrap();
    assert!(s.pricing.is_some(), "the example rate resolves");
    assert!(
        s.alerts.notify.webhook.is_some(),
        "the example webhook resolves"
    );
}

#[test]
fn invalid_fixtures_fail_with_their_message() {
    let mut seen = 0;
    for entry in std::fs::read_dir(fixtures("invalid")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let expected = std::fs::read_to_string(path.with_extension("expected")).unwrap();
        let err = load_file(&path)
            .expect_err(&path.display().to_string())
            .to_string();
        assert!(
            err.contains(expected.trim()),
            "{}:\n  got      {err}\n  expected {}",
            path.display(),
            expected.trim()
        );
        seen += 1;
    }
    assert!(seen >= 10, "only {seen} invalid fixtures");
}

#[test]
fn valid_fixtures_resolve() {
    let s = load_file(&fixtures("valid").join("hourly_cloud.toml")).unwrap();
    let p = s.pricing.unwrap();
    assert_eq!(p.rate, Rate::parse("31/h").unwrap());
    assert_eq!(p.granularity, Granularity::PerSecondMin60);
    assert_eq!(p.extras_per_hour, Money::parse("0.12").unwrap());
    assert_eq!(p.budget.unwrap().period, BudgetPeriod::Day);
    assert_eq!(p.clock_start, ClockStart::Boot);

    let p = load_file(&fixtures("valid").join("per_gpu_eur.toml"))
        .unwrap()
        .pricing
        .unwrap();
    assert_eq!((p.rate.unit, p.currency.code()), (RateUnit::GpuHour, "EUR"));
    assert_eq!(p.clock_start, ClockStart::At(1_777_622_400_000));

    let s = load_file(&fixtures("valid").join("onprem_monthly.toml")).unwrap();
    let p = s.pricing.unwrap();
    assert_eq!(p.granularity, Granularity::Monthly);
    assert_eq!(p.electricity_per_kwh, Some(Money::parse("0.3").unwrap()));
    // `~` needs HOME; without one the path stays as written.
    assert_eq!(
        s.ledger.path,
        Some(PathBuf::from("~/gpumeter-ledger.sqlite"))
    );

    assert_eq!(
        load_file(&fixtures("valid").join("empty.toml"))
            .unwrap()
            .pricing,
        None
    );
}

#[test]
fn flags_beat_the_demo_which_beats_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("gpumeter").join("config.toml");
    std::fs::create_dir_all(cfg.parent().unwrap()).unwrap();
    std::fs::write(
        &cfg,
        "[pricing]\nrate = \"1/h\"\ncurrency = \"GBP\"\nbudget = \"9/day\"\n",
    )
    .unwrap();
    let env = Env {
        home: None,
        xdg_config_home: Some(dir.path().to_path_buf()),
        xdg_state_home: Some(dir.path().join("state")),
    };
    let mut opts = LoadOptions {
        env: env.clone(),
        ..LoadOptions::default()
    };
    let s = load(&opts).unwrap();
    let p = s.pricing.clone().unwrap();
    assert_eq!(
        (p.rate.to_string(), p.currency.code()),
        ("1/h".into(), "GBP")
    );
    assert_eq!(
        s.ledger.path,
        Some(dir.path().join("state/gpumeter/ledger.sqlite"))
    );

    opts.demo = Some(DemoPricing {
        scenario: "idle".into(),
        rate: "31.00/h".into(),
        currency: None,
        budget_micros: Some(50_000_000),
    });
    let p = load(&opts).unwrap().pricing.unwrap();
    assert_eq!(
        (p.rate.to_string(), p.currency.code()),
        ("31/h".into(), "GBP")
    );
    assert_eq!(p.budget.unwrap().period, BudgetPeriod::Run);

    opts.cli = CliPricing {
        rate: Some(Rate::parse("2.49/h").unwrap()),
        currency: Some(Currency::from_code("EUR").unwrap()),
        no_ledger: true,
        ..CliPricing::default()
    };
    let s = load(&opts).unwrap();
    let p = s.pricing.unwrap();
    assert_eq!(
        (p.rate.to_string(), p.currency.code()),
        ("2.49/h".into(), "EUR")
    );
    assert!(!s.ledger.enabled);

    opts.demo.as_mut().unwrap().rate = "1/parsec".into();
    opts.cli.rate = None;
    let err = load(&opts).unwrap_err().to_string();
    assert!(
        err.starts_with("demo scenario idle [pricing]: rate: unknown rate unit"),
        "{err}"
    );
}

#[test]
fn an_explicit_config_file_must_exist() {
    let opts = LoadOptions {
        config_path: Some(PathBuf::from("/nonexistent/gpumeter.toml")),
        ..LoadOptions::default()
    };
    let err = load(&opts).unwrap_err().to_string();
    assert!(
        err.contains("cannot read config file /nonexistent/gpumeter.toml"),
        "{err}"
    );
}

#[test]
fn xdg_paths_fall_back_to_home() {
    let env = Env {
        home: Some(PathBuf::from("/home/u")),
        ..Env::default()
    };
    assert_eq!(
        env.user_config_path(),
        Some(PathBuf::from("/home/u/.config/gpumeter/config.toml"))
    );
    assert_eq!(
        env.default_ledger_path(),
        Some(PathBuf::from("/home/u/.local/state/gpumeter/ledger.sqlite"))
    );
    assert_eq!(Env::default().default_ledger_path(), None);
}

#[test]
fn the_theme_comes_from_the_flag_else_the_last_file_else_the_default() {
    let defaults = Layer::defaults().unwrap();
    let env = Env {
        home: Some(PathBuf::from("/home/u")),
        ..Env::default()
    };
    let cli = CliPricing::default();
    let s = resolve::resolve(std::slice::from_ref(&defaults), None, &cli, &env).unwrap();
    assert_eq!(s.theme.name, "default");
    let user = Layer::parse("c.toml", "[ui]\ntheme = \"~/themes/mine.toml\"\n").unwrap();
    let layers = [defaults, user];
    let s = resolve::resolve(&layers, None, &cli, &env).unwrap();
    assert_eq!(s.theme.name, "/home/u/themes/mine.toml");
    assert_eq!(s.theme.origin.to_string(), "c.toml:2:9");
    let cli = CliPricing {
        theme: Some("mono".into()),
        ..CliPricing::default()
    };
    let s = resolve::resolve(&layers, None, &cli, &env).unwrap();
    assert_eq!(
        (s.theme.name.as_str(), s.theme.origin),
        ("mono", Origin::Flag("--theme"))
    );
}

#[test]
fn read_only_comes_from_the_file_or_the_flag_and_is_off_by_default() {
    let defaults = Layer::defaults().unwrap();
    let env = Env::default();
    let cli = CliPricing::default();
    let s = resolve::resolve(std::slice::from_ref(&defaults), None, &cli, &env).unwrap();
    assert!(!s.readonly);
    let user = Layer::parse("c.toml", "[ui]\nreadonly = true\n").unwrap();
    let s = resolve::resolve(&[defaults.clone(), user], None, &cli, &env).unwrap();
    assert!(s.readonly);
    let flag = CliPricing {
        readonly: true,
        ..CliPricing::default()
    };
    let s = resolve::resolve(&[defaults], None, &flag, &env).unwrap();
    assert!(s.readonly);
}

/// The settings that matter, for comparing two loads (origins name different files).
fn meaning(s: &Settings) -> impl PartialEq + std::fmt::Debug {
    // The same rate from another file is the same meaning (only the file's name differs).
    let pricing = s.pricing.clone().map(|mut p| {
        p.source = Default::default();
        p
    });
    (
        pricing,
        s.cloud.clone(),
        s.ledger.clone(),
        s.alerts.rules.clone(),
        s.alerts.notify.clone(),
        s.alerts.autostop.clone(),
        s.theme.name.clone(),
        s.readonly,
    )
}

#[test]
fn the_printed_default_config_parses_back_to_the_defaults() {
    // `gpumeter config default` prints DEFAULT_CONFIG: on its own, and as a user file over
    // the defaults, it means the defaults.
    let env = Env::default();
    let cli = CliPricing::default();
    let defaults = resolve::resolve(&[Layer::defaults().unwrap()], None, &cli, &env).unwrap();
    let printed = Layer::parse("printed.toml", DEFAULT_CONFIG).unwrap();
    let alone = resolve::resolve(std::slice::from_ref(&printed), None, &cli, &env).unwrap();
    assert_eq!(meaning(&alone), meaning(&defaults));
    let over = resolve::resolve(&[Layer::defaults().unwrap(), printed], None, &cli, &env).unwrap();
    assert_eq!(meaning(&over), meaning(&defaults));
}

#[test]
fn config_check_writes_back_a_config_that_means_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mine.toml");
    std::fs::write(
        &file,
        "[pricing]\nrate = \"3.10/gpu-h\"\nbudget = \"2000/month\"\n\n[alerts.idle]\nremind_after = \"20m\"\n\n[ui]\nreadonly = true\n",
    )
    .unwrap();
    let opts = LoadOptions {
        config_path: Some(file.clone()),
        ..LoadOptions::default()
    };
    let text = show::check_text(&opts).unwrap();
    let name = file.display().to_string();
    assert!(
        text.contains(&format!("remind_after = \"20m\"  # {name}")),
        "{text}"
    );
    assert!(
        text.contains("remind_every = \"30m\"  # <built-in defaults>"),
        "{text}"
    );
    assert!(text.contains("# meter: on"), "{text}");
    assert!(text.contains("# read-only"), "{text}");
    // What it printed is itself a config file with the same meaning.
    let again = dir.path().join("again.toml");
    std::fs::write(&again, &text).unwrap();
    let first = load(&opts).unwrap();
    let second = load(&LoadOptions {
        config_path: Some(again),
        ..LoadOptions::default()
    })
    .unwrap();
    assert_eq!(meaning(&second), meaning(&first));
}

#[test]
fn config_check_fails_with_the_files_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.toml");
    std::fs::write(&file, "[alerts.starved]\nutil_below = 50\n").unwrap();
    let opts = LoadOptions {
        config_path: Some(file),
        ..LoadOptions::default()
    };
    let err = show::check_text(&opts).unwrap_err().to_string();
    assert!(
        err.contains("alerts.starved.util_below: unknown key `util_below` in [alerts.starved]; did you mean `util_below_pct`?"),
        "{err}"
    );
}

#[test]
fn config_path_names_the_users_file_and_themes() {
    let opts = LoadOptions {
        env: Env {
            xdg_config_home: Some(PathBuf::from("/nonexistent/cfg")),
            ..Env::default()
        },
        ..LoadOptions::default()
    };
    let files = show::files_read(&opts);
    let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            DEFAULT_CONFIG_NAME,
            "/nonexistent/cfg/gpumeter/config.toml",
            "/nonexistent/cfg/gpumeter/themes/*.toml"
        ]
    );
    assert!(files[1].note.ends_with("not found"));
    // Checking with no file of the user's says so.
    let text = show::check_text(&opts).unwrap();
    assert!(
        text.contains("# no config file of yours at /nonexistent/cfg/gpumeter/config.toml"),
        "{text}"
    );
}

#[test]
fn cloud_lifecycle_is_declared_spot_or_on_demand_and_a_typo_names_the_key() {
    let resolve_text = |text: &str| {
        let layers = [
            Layer::defaults().unwrap(),
            Layer::parse("c.toml", text).unwrap(),
        ];
        resolve::resolve(&layers, None, &CliPricing::default(), &Env::default())
    };
    let s = resolve_text("[cloud]\nlifecycle = \"spot\"\n").unwrap();
    assert_eq!(s.cloud.lifecycle, Some(crate::cloud::Lifecycle::Spot));
    let s = resolve_text("[cloud]\nlifecycle = \"on-demand\"\n").unwrap();
    assert_eq!(s.cloud.lifecycle, Some(crate::cloud::Lifecycle::OnDemand));
    assert_eq!(resolve_text("").unwrap().cloud.lifecycle, None);
    let e = resolve_text("[cloud]\nlifecycle = \"preemptable\"\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("cloud.lifecycle") && e.contains("\"spot\" or \"on-demand\""),
        "{e}"
    );
}
