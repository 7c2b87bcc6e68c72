//! Checking single values of the `[alerts]` and `[autostop]` tables: [`ValueError`] names the
//! dotted key; [`duration_ms`] and [`number`] read a key with its default and its range.

use crate::units::parse_duration;

/// A config value that cannot be used; `field` is the dotted key (`alerts.idle.remind_after`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct ValueError {
    /// The dotted key, e.g. `alerts.idle.remind_after`.
    pub field: String,
    /// What is wrong with the value, for the user.
    pub message: String,
}

impl ValueError {
    /// An error about `field`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// A duration key: `"10m"`, at least `min_ms`.
pub fn duration_ms(
    field: &str,
    text: &Option<String>,
    default: i64,
    min_ms: i64,
) -> Result<i64, ValueError> {
    let Some(text) = text else { return Ok(default) };
    let d = parse_duration(text).map_err(|e| ValueError::new(field, e))?;
    let ms = i64::try_from(d.as_millis()).map_err(|_| ValueError::new(field, "too long"))?;
    if ms < min_ms {
        return Err(ValueError::new(
            field,
            format!("'{text}' is too short (at least {} s)", min_ms / 1000),
        ));
    }
    Ok(ms)
}

/// A number key within `lo..=hi`.
pub fn number(
    field: &str,
    v: Option<f64>,
    default: f64,
    lo: f64,
    hi: f64,
) -> Result<f64, ValueError> {
    match v {
        None => Ok(default),
        Some(x) if x.is_finite() && (lo..=hi).contains(&x) => Ok(x),
        Some(x) => Err(ValueError::new(
            field,
            format!("{x} is out of range ({lo}–{hi})"),
        )),
    }
}
