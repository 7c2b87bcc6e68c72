//! The text report: one verdict a line (`ok`, `warn`, `FAIL`, `skip`), what to do under each
//! warning and failure, failures first in the closing summary so the first thing to fix is
//! the first thing read.

use super::verdict::{Level, Report};

pub fn text(report: &Report) -> String {
    let mut out = format!("gpumeter check ({})\n", report.source);
    for v in &report.verdicts {
        out.push_str(&format!("{:<4}  {}\n", v.level.word(), v.summary));
        for d in &v.detail {
            out.push_str(&format!("        {d}\n"));
        }
        if let Some(fix) = v.fix.as_ref().filter(|_| v.level >= Level::Warn) {
            out.push_str(&format!("      → {fix}\n"));
        }
    }
    let t = report.tally();
    out.push_str(&format!(
        "\n{} failed, {} warnings, {} ok, {} skipped",
        t.fail, t.warn, t.ok, t.skip
    ));
    let first = report
        .verdicts
        .iter()
        .filter(|v| v.level == Level::Fail)
        .chain(report.verdicts.iter().filter(|v| v.level == Level::Warn))
        .next();
    if let Some(v) = first {
        out.push_str(&format!("; fix first: {}", v.summary));
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::verdict::{Family, Verdict};

    #[test]
    fn one_line_per_verdict_with_fixes_and_the_first_failure_named() {
        let r = Report::new(
            "demo:x".into(),
            vec![
                Verdict::new(Family::Gpus, "gpu.count", Level::Ok, "8 GPUs")
                    .fix("never shown for ok"),
                Verdict::new(
                    Family::Interconnect,
                    "pcie.link",
                    Level::Warn,
                    "GPU 3: degraded",
                )
                .fix("reseat it"),
                Verdict::new(Family::Driver, "driver.torch", Level::Fail, "torch too new"),
            ],
        );
        let t = text(&r);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[1], "ok    8 GPUs");
        assert_eq!(lines[2], "FAIL  torch too new");
        assert_eq!(lines[3], "warn  GPU 3: degraded");
        assert_eq!(lines[4], "      → reseat it");
        assert!(!t.contains("never shown"));
        assert!(
            t.ends_with("1 failed, 1 warnings, 1 ok, 0 skipped; fix first: torch too new\n"),
            "{t}"
        );
    }
}
