//! The one-shot JSON form: the [`Snapshot`] schema as is (`"schema": N`, units in field names,
//! `null` for unsupported readings).

use gpumeter_model::Snapshot;

/// Pretty-printed JSON of one snapshot, newline-terminated.
pub fn to_json(snap: &Snapshot) -> Result<String, serde_json::Error> {
    let mut s = serde_json::to_string_pretty(snap)?;
    s.push('\n');
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpumeter_model::{GpuReading, SCHEMA_VERSION};

    #[test]
    fn json_carries_schema_and_nulls() {
        let mut snap = Snapshot::empty("demo:x", 42);
        snap.gpus.push(GpuReading {
            index: 0,
            temperature_celsius: Some(61),
            ..GpuReading::default()
        });
        let v: serde_json::Value = serde_json::from_str(&to_json(&snap).unwrap()).unwrap();
        assert_eq!(v["schema"], SCHEMA_VERSION);
        assert_eq!(v["taken_at_unix_ms"], 42);
        assert_eq!(v["gpus"][0]["temperature_celsius"], 61);
        assert!(v["gpus"][0]["fan_speed_pct"].is_null());
    }
}
