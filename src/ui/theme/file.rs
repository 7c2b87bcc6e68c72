//! Theme files: TOML naming a style for each role of [`Theme`], patched over the built-in
//! colours (a role left out keeps its default; a role given is replaced whole). The shipped
//! themes in `themes/` are built in by name; anything else is read from a path. Bad input is an
//! error naming the file, line, column and field, never a quiet fallback to the default.
//! Reads the one file it is pointed at; draws nothing.

use std::path::{Path, PathBuf};

use ratatui::style::Style;
use serde::Deserialize;
use toml::Spanned;

use crate::ui::theme::Theme;
use crate::ui::theme::style::{parse_colour, parse_modifier};
use gpumeter_core::config::error::{Origin, field_at};

/// The shipped themes, by name: `default` first (today's colours, also [`Theme::default`]).
pub const BUILTIN_THEMES: [(&str, &str); 6] = [
    ("default", include_str!("../../../themes/default.toml")),
    ("light", include_str!("../../../themes/light.toml")),
    (
        "high-contrast",
        include_str!("../../../themes/high-contrast.toml"),
    ),
    (
        "solarized-dark",
        include_str!("../../../themes/solarized-dark.toml"),
    ),
    (
        "colour-blind",
        include_str!("../../../themes/colour-blind.toml"),
    ),
    ("mono", include_str!("../../../themes/mono.toml")),
];

/// The most chart colours a theme may list (GPUs past it reuse them in order).
pub const MAX_SERIES: usize = 8;

/// Why a theme could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ThemeError {
    /// Neither a built-in name nor something that looks like a path.
    #[error("{named_by}: unknown theme '{name}'{hint} (built-in: {}; yours: {user_dir}/NAME.toml; or give a path to a .toml file)", builtin_names().join(", "))]
    Unknown {
        name: String,
        named_by: String,
        /// `; did you mean 'light'?`, or nothing.
        hint: String,
        /// Where user themes are looked for.
        user_dir: String,
    },
    #[error("{named_by}: cannot read theme file {path}: {message}")]
    Read {
        path: PathBuf,
        named_by: String,
        message: String,
    },
    /// Not TOML, an unknown role or key, a bad colour or modifier.
    #[error("{origin}: {field}: {message}")]
    Invalid {
        origin: Origin,
        /// `title.fg`, `series[2]`, or the key the TOML error points at.
        field: String,
        message: String,
    },
}

/// The names of the shipped themes, `default` first.
pub fn builtin_names() -> Vec<&'static str> {
    BUILTIN_THEMES.iter().map(|(n, _)| *n).collect()
}

/// How a theme file writes one style.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a style such as { fg = \"red\", bg = \"#002b36\", modifiers = [\"bold\"] }"
)]
struct RawStyle {
    fg: Option<Spanned<String>>,
    bg: Option<Spanned<String>>,
    modifiers: Option<Vec<Spanned<String>>>,
}

/// A theme file: every role optional (a partial theme patches the default).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTheme {
    monochrome: Option<bool>,
    text: Option<RawStyle>,
    dim: Option<RawStyle>,
    label: Option<RawStyle>,
    title: Option<RawStyle>,
    border: Option<RawStyle>,
    border_selected: Option<RawStyle>,
    cool: Option<RawStyle>,
    warm: Option<RawStyle>,
    hot: Option<RawStyle>,
    bar_empty: Option<RawStyle>,
    na: Option<RawStyle>,
    alarm: Option<RawStyle>,
    table_header: Option<RawStyle>,
    sort_column: Option<RawStyle>,
    selected_row: Option<RawStyle>,
    key: Option<RawStyle>,
    input: Option<RawStyle>,
    alert_high: Option<RawStyle>,
    alert_moderate: Option<RawStyle>,
    alert_info: Option<RawStyle>,
    series: Option<Spanned<Vec<Spanned<String>>>>,
}

/// The text being parsed and its name, for errors that point into it.
struct Source<'a> {
    name: &'a str,
    text: &'a str,
}

impl Source<'_> {
    fn invalid(&self, offset: usize, field: String, message: impl ToString) -> ThemeError {
        ThemeError::Invalid {
            origin: Origin::at(self.name, self.text, offset),
            field,
            message: message.to_string(),
        }
    }

    fn colour(
        &self,
        value: &Spanned<String>,
        field: String,
    ) -> Result<Option<ratatui::style::Color>, ThemeError> {
        parse_colour(value.get_ref()).map_err(|e| self.invalid(value.span().start, field, e))
    }

    fn style(&self, role: &str, raw: &RawStyle) -> Result<Style, ThemeError> {
        let mut style = Style::new();
        if let Some(fg) = &raw.fg {
            style.fg = self.colour(fg, format!("{role}.fg"))?;
        }
        if let Some(bg) = &raw.bg {
            style.bg = self.colour(bg, format!("{role}.bg"))?;
        }
        for (i, m) in raw.modifiers.iter().flatten().enumerate() {
            let modifier = parse_modifier(m.get_ref())
                .map_err(|e| self.invalid(m.span().start, format!("{role}.modifiers[{i}]"), e))?;
            style = style.add_modifier(modifier);
        }
        Ok(style)
    }
}

/// serde's "unknown field `x`" said the theme's way, with the nearest valid name: an unknown
/// top-level key is an unknown role; an unknown key inside a style is named with its role
/// (`title.colour`).
fn unknown_key(line_key: String, message: &str) -> (String, String) {
    let Some(unknown) = gpumeter_hint::Unknown::parse(message) else {
        return (line_key, message.to_string());
    };
    let name = unknown.name.clone();
    if name == line_key {
        (line_key, unknown.explain("role", None))
    } else if let Some(role) = line_key.strip_suffix(&format!(".{name}")) {
        // `[title]` then `colour = …` on its own line: the line already names it.
        let role = role.to_string();
        (line_key, unknown.explain("key", Some(&role)))
    } else {
        let message = unknown.explain("key", Some(&line_key));
        (format!("{line_key}.{name}"), message)
    }
}

/// Parses theme text over the built-in colours; `name` is how errors refer to it.
pub fn parse(name: &str, text: &str) -> Result<Theme, ThemeError> {
    let src = Source { name, text };
    let raw: RawTheme = toml::from_str(text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        let (field, message) = unknown_key(field_at(text, offset), e.message().trim());
        src.invalid(offset, field, message)
    })?;
    let mut theme = Theme::colour();
    if let Some(m) = raw.monochrome {
        theme.monochrome = m;
    }
    let roles: [(&str, &Option<RawStyle>, &mut Style); 20] = [
        ("text", &raw.text, &mut theme.text),
        ("dim", &raw.dim, &mut theme.dim),
        ("label", &raw.label, &mut theme.label),
        ("title", &raw.title, &mut theme.title),
        ("border", &raw.border, &mut theme.border),
        (
            "border_selected",
            &raw.border_selected,
            &mut theme.border_selected,
        ),
        ("cool", &raw.cool, &mut theme.cool),
        ("warm", &raw.warm, &mut theme.warm),
        ("hot", &raw.hot, &mut theme.hot),
        ("bar_empty", &raw.bar_empty, &mut theme.bar_empty),
        ("na", &raw.na, &mut theme.na),
        ("alarm", &raw.alarm, &mut theme.alarm),
        ("table_header", &raw.table_header, &mut theme.table_header),
        ("sort_column", &raw.sort_column, &mut theme.sort_column),
        ("selected_row", &raw.selected_row, &mut theme.selected_row),
        ("key", &raw.key, &mut theme.key),
        ("input", &raw.input, &mut theme.input),
        ("alert_high", &raw.alert_high, &mut theme.alert_high),
        (
            "alert_moderate",
            &raw.alert_moderate,
            &mut theme.alert_moderate,
        ),
        ("alert_info", &raw.alert_info, &mut theme.alert_info),
    ];
    for (role, raw_style, slot) in roles {
        if let Some(r) = raw_style {
            *slot = src.style(role, r)?;
        }
    }
    if let Some(series) = &raw.series {
        let n = series.get_ref().len();
        if n == 0 || n > MAX_SERIES {
            return Err(src.invalid(
                series.span().start,
                "series".into(),
                format!(
                    "list 1 to {MAX_SERIES} colours (one per GPU, reused past the last); got {n}"
                ),
            ));
        }
        theme.series = series
            .get_ref()
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let colour = src.colour(c, format!("series[{i}]"))?;
                Ok(Style {
                    fg: colour,
                    ..Style::new()
                })
            })
            .collect::<Result<_, ThemeError>>()?;
    }
    Ok(theme)
}

/// The shipped theme `name`, if there is one.
pub fn builtin(name: &str) -> Option<Result<Theme, ThemeError>> {
    let (_, text) = BUILTIN_THEMES.iter().find(|(n, _)| *n == name)?;
    Some(parse(&format!("<built-in theme {name}>"), text))
}

/// How an error says where the theme was chosen: `--theme`, or the config file and key.
fn named_by(origin: &Origin) -> String {
    match origin {
        Origin::Flag(flag) => (*flag).to_string(),
        other => format!("{other}: ui.theme"),
    }
}

/// The theme `name_or_path` chosen at `origin`: a built-in name, else a theme of yours
/// (`user_dir/NAME.toml`, from `$XDG_CONFIG_HOME/gpumeter/themes/`), or a file (a path ending
/// in `.toml` or containing `/`).
pub fn load(
    name_or_path: &str,
    origin: &Origin,
    user_dir: Option<&Path>,
) -> Result<Theme, ThemeError> {
    let looks_like_path = name_or_path.ends_with(".toml") || name_or_path.contains('/');
    if !looks_like_path {
        if let Some(theme) = builtin(name_or_path) {
            return theme;
        }
        let mine = user_dir.map(|d| d.join(format!("{name_or_path}.toml")));
        let Some(path) = mine.filter(|p| p.is_file()) else {
            return Err(unknown(name_or_path, origin, user_dir));
        };
        return read(&path, origin);
    }
    read(&PathBuf::from(name_or_path), origin)
}

/// The names of the themes in `user_dir` (file stems of `*.toml`), sorted.
pub fn user_names(user_dir: Option<&Path>) -> Vec<String> {
    let Some(entries) = user_dir.and_then(|d| std::fs::read_dir(d).ok()) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| {
            let p = e.ok()?.path();
            (p.extension()? == "toml").then(|| p.file_stem()?.to_str().map(str::to_string))?
        })
        .collect();
    names.sort();
    names
}

fn unknown(name: &str, origin: &Origin, user_dir: Option<&Path>) -> ThemeError {
    let mine = user_names(user_dir);
    let mut all: Vec<&str> = builtin_names();
    all.extend(mine.iter().map(String::as_str));
    let hint = gpumeter_hint::closest(name, &all)
        .map(|n| format!("; did you mean '{n}'?"))
        .unwrap_or_default();
    ThemeError::Unknown {
        name: name.to_string(),
        named_by: named_by(origin),
        hint,
        user_dir: user_dir.map_or_else(
            || "$XDG_CONFIG_HOME/gpumeter/themes".to_string(),
            |d| d.display().to_string(),
        ),
    }
}

fn read(path: &Path, origin: &Origin) -> Result<Theme, ThemeError> {
    let text = gpumeter_core::textfile::read_text(path, gpumeter_core::textfile::MAX_TEXT_FILE)
        .map_err(|e| ThemeError::Read {
            path: path.to_path_buf(),
            named_by: named_by(origin),
            message: e.to_string(),
        })?;
    parse(&path.display().to_string(), &text)
}
