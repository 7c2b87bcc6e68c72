//! The same scrape in the classic Prometheus text format (0.0.4), for clients that do not ask
//! for OpenMetrics (curl, `promtool check metrics`, older scrapers). `prometheus-client` writes
//! OpenMetrics only; the two differ, for what gpumeter emits, in three places: a counter's
//! HELP/TYPE name carries `_total` in the classic format, `# UNIT` and `# EOF` lines do not
//! exist there, and `info`/`unknown` types are a gauge/`untyped`. Samples are the same lines.

/// The classic text of an OpenMetrics text from `prometheus-client`.
pub fn to_classic(openmetrics: &str) -> String {
    let mut out = String::with_capacity(openmetrics.len());
    let mut help: Option<(&str, &str)> = None;
    for line in openmetrics.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        if let Some(rest) = line.strip_prefix("# HELP ") {
            // Held until its TYPE line says whether the name changes.
            let (name, text) = rest.split_once(' ').unwrap_or((rest, ""));
            help = Some((name, text));
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (old, kind) = rest.split_once(' ').unwrap_or((rest, "untyped"));
            let (name, kind) = match kind {
                "counter" if !old.ends_with("_total") => (format!("{old}_total"), "counter"),
                "info" => (format!("{old}_info"), "gauge"),
                "unknown" => (old.to_string(), "untyped"),
                other => (old.to_string(), other),
            };
            match help.take() {
                Some((h, text)) if h == old => out.push_str(&format!("# HELP {name} {text}\n")),
                Some((h, text)) => out.push_str(&format!("# HELP {h} {text}\n")),
                None => {}
            }
            out.push_str(&format!("# TYPE {name} {kind}\n"));
            continue;
        }
        if let Some((h, text)) = help.take() {
            // A HELP without a TYPE: keep it as it was.
            out.push_str(&format!("# HELP {h} {text}\n"));
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_gain_total_on_their_metadata_and_openmetrics_only_lines_go() {
        let om = "# HELP a_spend Spent.\n# TYPE a_spend counter\na_spend_total{currency=\"USD\"} 1.5\n\
                  # HELP a_up Up.\n# TYPE a_up gauge\n# UNIT a_up ratio\na_up 1\n\
                  # HELP a_build Build.\n# TYPE a_build info\na_build_info{v=\"1\"} 1\n# EOF\n";
        let text = to_classic(om);
        assert_eq!(
            text,
            "# HELP a_spend_total Spent.\n# TYPE a_spend_total counter\na_spend_total{currency=\"USD\"} 1.5\n\
             # HELP a_up Up.\n# TYPE a_up gauge\na_up 1\n\
             # HELP a_build_info Build.\n# TYPE a_build_info gauge\na_build_info{v=\"1\"} 1\n"
        );
    }
}
