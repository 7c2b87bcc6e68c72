//! What `gpumeter config` prints: the files a run reads ([`files_read`], for `config path`)
//! and a checked configuration resolved and written back as TOML, each key with the layer it
//! came from ([`check_text`], for `config check`). The text of `config default` is the
//! embedded [`super::DEFAULT_CONFIG`] itself. Reads only the files [`super::load`] reads.

use std::fmt::Write as _;
use std::path::PathBuf;

use super::{ConfigError, LoadOptions, Settings};

/// One file a run may read, and whether it is there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRead {
    /// A path, or `<built-in defaults>`.
    pub name: String,
    /// What it is for, and whether it exists.
    pub note: String,
}

/// The files read, in layering order: the defaults, then `--config` or the user's file, then
/// the folder user themes come from.
pub fn files_read(opts: &LoadOptions) -> Vec<FileRead> {
    let state = |p: &PathBuf| if p.exists() { "found" } else { "not found" };
    let mut out = vec![FileRead {
        name: super::DEFAULT_CONFIG_NAME.into(),
        note: "built in (print it: gpumeter config default)".into(),
    }];
    match (&opts.config_path, opts.env.user_config_path()) {
        (Some(p), _) => out.push(FileRead {
            name: p.display().to_string(),
            note: format!("--config, {}", state(p)),
        }),
        (None, Some(p)) => out.push(FileRead {
            name: p.display().to_string(),
            note: format!("your config, {}", state(&p)),
        }),
        (None, None) => out.push(FileRead {
            name: "$XDG_CONFIG_HOME/gpumeter/config.toml".into(),
            note: "not looked for: neither XDG_CONFIG_HOME nor HOME is set".into(),
        }),
    }
    if let Some(dir) = opts.env.user_themes_dir() {
        let note = if dir.is_dir() { "found" } else { "not found" };
        out.push(FileRead {
            name: format!("{}/*.toml", dir.display()),
            note: format!("your themes (--theme NAME), {note}"),
        });
    }
    out
}

/// `files_read` as lines.
pub fn files_text(opts: &LoadOptions) -> String {
    let files = files_read(opts);
    let w = files
        .iter()
        .map(|f| f.name.chars().count())
        .max()
        .unwrap_or(0);
    files
        .iter()
        .map(|f| format!("{:<w$}  {}\n", f.name, f.note))
        .collect()
}

/// Loads as a run would and, when every layer is valid, writes the result back as TOML: each
/// key with the layer it came from, then what it resolves to. The text parses as a config
/// file that means the same.
pub fn check_text(opts: &LoadOptions) -> Result<String, ConfigError> {
    let layers = super::layers(opts)?;
    let settings = super::resolve::resolve(&layers, opts.demo.as_ref(), &opts.cli, &opts.env)?;
    let mut out = String::new();
    let names: Vec<&str> = layers.iter().map(|l| l.name.as_str()).collect();
    let _ = writeln!(out, "# valid: {}", names.join(" + "));
    if layers.len() == 1 {
        let mine = opts.env.user_config_path();
        let at = mine.map_or_else(|| "(no HOME)".to_string(), |p| p.display().to_string());
        let _ = writeln!(
            out,
            "# no config file of yours at {at}: these are the defaults"
        );
    }
    let tables: Vec<(String, toml::Table)> = layers
        .iter()
        .filter_map(|l| Some((l.name.clone(), toml::from_str(&l.text).ok()?)))
        .collect();
    let mut merged = toml::Table::new();
    for (_, t) in &tables {
        super::alerts::merge(&mut merged, t);
    }
    write_table(&mut out, &[], &merged, &tables);
    out.push('\n');
    for line in resolved_lines(&settings) {
        let _ = writeln!(out, "# {line}");
    }
    Ok(out)
}

/// `[path]` and its keys, then its sub-tables; each key marked with its layer.
fn write_table(
    out: &mut String,
    path: &[&str],
    table: &toml::Table,
    layers: &[(String, toml::Table)],
) {
    let leaves: Vec<(&String, &toml::Value)> = table.iter().filter(|(_, v)| !is_table(v)).collect();
    if !path.is_empty() && !leaves.is_empty() {
        let _ = writeln!(out, "\n[{}]", path.join("."));
    }
    for (key, value) in leaves {
        let mut at = path.to_vec();
        at.push(key);
        let from = layers
            .iter()
            .rev()
            .find(|(_, t)| lookup(t, &at).is_some())
            .map_or("", |(n, _)| n.as_str());
        let _ = writeln!(out, "{} = {value}  # {from}", toml_key(key));
    }
    for (key, value) in table {
        if let toml::Value::Table(sub) = value {
            let mut at = path.to_vec();
            at.push(key);
            write_table(out, &at, sub, layers);
        }
    }
}

fn is_table(v: &toml::Value) -> bool {
    matches!(v, toml::Value::Table(_))
}

/// A key as TOML writes it (quoted when it is not a bare key).
fn toml_key(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        key.to_string()
    } else {
        toml::Value::String(key.to_string()).to_string()
    }
}

fn lookup<'a>(table: &'a toml::Table, path: &[&str]) -> Option<&'a toml::Value> {
    let (first, rest) = path.split_first()?;
    let v = table.get(*first)?;
    match (rest.is_empty(), v) {
        (true, v) => Some(v),
        (false, toml::Value::Table(t)) => lookup(t, rest),
        _ => None,
    }
}

/// What the settings come to, beyond the keys: the meter, the ledger, the theme, notes.
fn resolved_lines(s: &Settings) -> Vec<String> {
    let mut lines = vec![match &s.pricing {
        Some(_) => "meter: on (a rate is set)".to_string(),
        None => {
            "meter: off (no pricing.rate; a machine in the price catalog runs on its list price)"
                .to_string()
        }
    }];
    lines.push(match (&s.ledger.enabled, &s.ledger.path) {
        (false, _) => "ledger: off".to_string(),
        (true, Some(p)) => format!("ledger: {}", p.display()),
        (true, None) => "ledger: on, but no location (set HOME or --ledger)".to_string(),
    });
    lines.push(format!("theme: {} (from {})", s.theme.name, s.theme.origin));
    if s.readonly {
        lines.push("read-only: no signals, autostop or command hooks".into());
    }
    lines.extend(s.notes.iter().cloned());
    lines
}
