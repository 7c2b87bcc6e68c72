//! A scripted spot interruption notice: from `from_s` on, the reading carries the provider's
//! notice that it takes the machine back `lead_s` later (what the live metadata poller attaches
//! on a real spot box).

use gpumeter_model::Interruption;
use serde::Deserialize;

/// `[interruption]`: who posts the notice, when, and how much warning it gives.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InterruptionSpec {
    /// `AWS`, `GCP`, `Azure`.
    pub provider: String,
    /// `terminate` (AWS), `preempted` (GCP), `Preempt` (Azure).
    pub action: String,
    /// The notice appears at this elapsed time.
    pub from_s: f64,
    /// The machine goes this long after the notice; absent: the provider gives no time (GCP).
    pub lead_s: Option<f64>,
}

impl InterruptionSpec {
    /// The notice standing `elapsed_ms` into the run, if it has been posted.
    pub(crate) fn reading(&self, elapsed_ms: u64, taken_at_unix_ms: i64) -> Option<Interruption> {
        let from_ms = (self.from_s.max(0.0) * 1000.0).round() as i64;
        let elapsed = i64::try_from(elapsed_ms).unwrap_or(i64::MAX);
        if elapsed < from_ms {
            return None;
        }
        let posted_at = taken_at_unix_ms - (elapsed - from_ms);
        Some(Interruption {
            provider: self.provider.clone(),
            action: self.action.clone(),
            at_unix_ms: self
                .lead_s
                .map(|s| posted_at + (s.max(0.0) * 1000.0).round() as i64),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_notice_appears_at_its_time_and_names_a_fixed_moment() {
        let spec = InterruptionSpec {
            provider: "AWS".into(),
            action: "terminate".into(),
            from_s: 180.0,
            lead_s: Some(120.0),
        };
        let start = 1_000_000_000;
        assert_eq!(spec.reading(179_999, start + 179_999), None);
        let at_notice = spec.reading(180_000, start + 180_000).unwrap();
        let later = spec.reading(190_000, start + 190_000).unwrap();
        assert_eq!(at_notice.at_unix_ms, Some(start + 300_000));
        assert_eq!(later, at_notice);
    }
}
