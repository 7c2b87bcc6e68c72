//! Why a scenario could not be loaded, always naming the file (origin) and, where known, the
//! line and field.

/// A scenario that does not parse or does not make sense.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScenarioError {
    /// The TOML is malformed or does not match the schema (unknown field, wrong type, bad value).
    /// The message carries the line, column and the offending source line.
    #[error("{origin}:{line}:{column}: {message}")]
    Parse {
        origin: String,
        line: usize,
        column: usize,
        message: String,
    },
    /// The TOML parsed but a value contradicts another (a process on a GPU that does not exist…).
    #[error("{origin}: {field}: {message}")]
    Invalid {
        origin: String,
        field: String,
        message: String,
    },
}

impl ScenarioError {
    /// Converts a toml error, locating its span in `text` (line and column are 1-based).
    pub(crate) fn from_toml(origin: &str, text: &str, err: &toml::de::Error) -> Self {
        let start = err.span().map_or(0, |s| s.start).min(text.len());
        let before = text.get(..start).unwrap_or("");
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
        let source_line = text.lines().nth(line - 1).unwrap_or("").trim_end();
        let table = gpumeter_hint::table_at(text, start);
        let said = gpumeter_hint::explain(err.message().trim_end(), "key", table.as_deref());
        let message = if source_line.is_empty() {
            said
        } else {
            format!("{said}\n    {line} | {source_line}")
        };
        ScenarioError::Parse {
            origin: origin.to_string(),
            line,
            column,
            message,
        }
    }

    pub(crate) fn invalid(
        origin: &str,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        ScenarioError::Invalid {
            origin: origin.to_string(),
            field: field.into(),
            message: message.into(),
        }
    }
}
