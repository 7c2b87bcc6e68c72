//! Config errors that say where: the file, line and column, and the field (`pricing.rate`), or
//! the command-line flag the value came from.

use std::fmt;
use std::path::PathBuf;

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A config file (or the embedded defaults, named `<built-in defaults>`), 1-based position.
    File {
        /// The file's path, or `<built-in defaults>`.
        name: String,
        /// 1-based line number.
        line: usize,
        /// 1-based column, in characters.
        col: usize,
    },
    /// A command-line flag such as `--rate`.
    Flag(&'static str),
    /// A demo scenario's `[pricing]` table.
    Scenario(String),
}

impl Origin {
    /// The position of byte `offset` in `text`.
    pub fn at(name: &str, text: &str, offset: usize) -> Origin {
        let before = text.get(..offset.min(text.len())).unwrap_or(text);
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        Origin::File {
            name: name.to_string(),
            line,
            col,
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::File { name, line, col } => write!(f, "{name}:{line}:{col}"),
            Origin::Flag(flag) => f.write_str(flag),
            Origin::Scenario(name) => write!(f, "demo scenario {name} [pricing]"),
        }
    }
}

/// Why the configuration could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The config file exists (or was named with `--config`) but could not be read.
    #[error("cannot read config file {path}: {message}")]
    Read {
        /// The file that could not be read.
        path: PathBuf,
        /// The I/O error, for the user.
        message: String,
    },
    /// A bad value or a file that is not valid TOML for gpumeter.
    #[error("{origin}: {field}: {message}")]
    Invalid {
        /// Where the bad value was written (file position, flag or scenario).
        origin: Origin,
        /// `pricing.rate`, or the key the TOML error points at.
        field: String,
        /// What is wrong with it, for the user.
        message: String,
    },
}

/// The dotted name of the key on the line containing `offset` (`pricing.rate`), for TOML
/// errors that do not say which field they are about.
pub fn field_at(text: &str, offset: usize) -> String {
    let offset = offset.min(text.len());
    let line_start = text
        .get(..offset)
        .and_then(|b| b.rfind('\n'))
        .map_or(0, |i| i + 1);
    let line = text
        .get(line_start..)
        .and_then(|rest| rest.lines().next())
        .unwrap_or("")
        .trim();
    let header = |l: &str| {
        l.strip_prefix('[')
            .and_then(|l| l.split(']').next())
            .map(|s| s.trim().to_string())
    };
    if let Some(table) = header(line) {
        return table;
    }
    let key = line
        .split('=')
        .next()
        .unwrap_or("")
        .trim()
        .trim_matches('"');
    let table = text
        .get(..line_start)
        .unwrap_or("")
        .lines()
        .rev()
        .find_map(|l| header(l.trim()));
    match table {
        Some(t) if !key.is_empty() => format!("{t}.{key}"),
        _ => key.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_and_fields_come_from_the_text() {
        let text = "[pricing]\nrate = 5\n\n[ledger]\nenabled = 1\n";
        let at = text.find('5').unwrap_or(0);
        assert_eq!(Origin::at("c.toml", text, at).to_string(), "c.toml:2:8");
        assert_eq!(field_at(text, at), "pricing.rate");
        let at = text.find("1\n").unwrap_or(0);
        assert_eq!(field_at(text, at), "ledger.enabled");
        assert_eq!(field_at(text, 1), "pricing");
    }
}
