//! The registry one scrape is encoded from: families are filled whole, then registered with
//! `prometheus-client` and encoded as OpenMetrics text. A family with no samples is left out
//! (an empty HELP/TYPE block helps no one); a non-finite value is dropped, never exported.

use std::sync::atomic::AtomicU64;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// A label set: (name, escaped value) pairs, in a fixed order per family.
pub type Labels = Vec<(&'static str, String)>;

/// One family's samples before registration.
pub type Samples = Vec<(Labels, f64)>;

/// The families of one scrape.
#[derive(Default)]
pub struct Out {
    registry: Registry,
}

impl std::fmt::Debug for Out {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Out")
    }
}

impl Out {
    /// A gauge family (`name` carries its unit suffix).
    pub fn gauge(&mut self, name: &str, help: &str, samples: Samples) {
        let family = Family::<Labels, Gauge<f64, AtomicU64>>::default();
        if fill(samples, |labels, v| {
            family.get_or_create(labels).set(v);
        }) {
            self.registry.register(name, help_text(help), family);
        }
    }

    /// A counter family; `name` ends in `_total` (the encoder writes the suffix itself).
    pub fn counter(&mut self, name: &str, help: &str, samples: Samples) {
        let base = name.strip_suffix("_total").unwrap_or(name);
        let family = Family::<Labels, Counter<f64, AtomicU64>>::default();
        if fill(samples, |labels, v| {
            family.get_or_create(labels).inc_by(v.max(0.0));
        }) {
            self.registry.register(base, help_text(help), family);
        }
    }

    /// The OpenMetrics text of everything registered (ends with `# EOF`).
    pub fn encode(&self) -> String {
        let mut text = String::new();
        // Writing to a String cannot fail; an empty scrape is the only possible fallback.
        if encode(&mut text, &self.registry).is_err() {
            text = "# EOF\n".into();
        }
        text
    }
}

/// The encoder ends every help text with a full stop of its own.
fn help_text(help: &str) -> &str {
    help.strip_suffix('.').unwrap_or(help)
}

/// Calls `set` for each finite sample; whether any was set.
fn fill(samples: Samples, mut set: impl FnMut(&Labels, f64)) -> bool {
    let mut any = false;
    for (labels, v) in samples {
        if v.is_finite() {
            set(&labels, v);
            any = true;
        }
    }
    any
}

/// A label value from the system, escaped for the exposition formats (the encoder writes label
/// values as given) and capped at `max_chars` characters. Control characters are already gone
/// (sanitized at the source); what is left that could break a line is `\`, `"` and newlines.
pub fn label_value(s: &str, max_chars: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max_chars) + 2);
    for c in s.chars().take(max_chars) {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Longest label value taken from the system (host names, model names, commands).
pub const MAX_LABEL_CHARS: usize = 128;

/// A label value from an optional system string (`""` when unknown: Prometheus drops it).
pub fn opt_label(s: Option<&str>) -> String {
    s.map_or_else(String::new, |s| label_value(s, MAX_LABEL_CHARS))
}
