//! Verdicts and the report: one line per finding (ok / warn / fail, or skip when a check could
//! not run), the exit code a script reads, and the versioned JSON schema.

use serde::Serialize;

/// Version of the `gpumeter check --json` schema; bumped when a field changes meaning or goes.
pub const CHECK_SCHEMA_VERSION: u32 = 1;

/// Exit code: every verdict ok (or skipped).
pub const EXIT_OK: u8 = 0;
/// Exit code: at least one warning, no failure. (1, 2, 3 already mean error, bad arguments
/// and NVML unavailable for every gpumeter command.)
pub const EXIT_WARNINGS: u8 = 4;
/// Exit code: at least one failure.
pub const EXIT_FAILURES: u8 = 5;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Could not be checked here (not supported, not asked for); says why.
    Skip,
    Ok,
    Warn,
    Fail,
}

impl Level {
    pub fn word(self) -> &'static str {
        match self {
            Level::Skip => "skip",
            Level::Ok => "ok",
            Level::Warn => "warn",
            Level::Fail => "FAIL",
        }
    }
}

/// The family a check belongs to (the order of the report).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    Gpus,
    Driver,
    Interconnect,
    Host,
    Storage,
    Software,
    Billing,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    pub family: Family,
    /// Stable id for scripts, e.g. `gpu.ecc`, `pcie.link`.
    pub id: &'static str,
    /// The GPU it is about, if any.
    pub gpu: Option<u32>,
    pub level: Level,
    /// What was found, with the numbers.
    pub summary: String,
    /// What to do about it (warn / fail), when there is something to do.
    pub fix: Option<String>,
    /// Further lines shown under the verdict (the topology matrix); empty for most.
    pub detail: Vec<String>,
}

impl Verdict {
    pub fn new(family: Family, id: &'static str, level: Level, summary: impl Into<String>) -> Self {
        Verdict {
            family,
            id,
            gpu: None,
            level,
            summary: summary.into(),
            fix: None,
            detail: Vec::new(),
        }
    }

    pub fn gpu(mut self, index: u32) -> Self {
        self.gpu = Some(index);
        self
    }

    pub fn fix(mut self, what: impl Into<String>) -> Self {
        self.fix = Some(what.into());
        self
    }
}

/// Everything `gpumeter check` found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub schema: u32,
    /// `nvml`, or `demo:<scenario>`.
    pub source: String,
    pub verdicts: Vec<Verdict>,
}

/// Counts per level, for the last line and the JSON.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    pub ok: usize,
    pub warn: usize,
    pub fail: usize,
    pub skip: usize,
}

impl Report {
    pub fn new(source: String, mut verdicts: Vec<Verdict>) -> Report {
        // Stable: families in order, each family's findings as the checks produced them.
        verdicts.sort_by_key(|v| v.family);
        Report {
            schema: CHECK_SCHEMA_VERSION,
            source,
            verdicts,
        }
    }

    pub fn tally(&self) -> Tally {
        let mut t = Tally::default();
        for v in &self.verdicts {
            match v.level {
                Level::Ok => t.ok += 1,
                Level::Warn => t.warn += 1,
                Level::Fail => t.fail += 1,
                Level::Skip => t.skip += 1,
            }
        }
        t
    }

    /// The worst level found.
    pub fn worst(&self) -> Level {
        self.verdicts
            .iter()
            .map(|v| v.level)
            .max()
            .unwrap_or(Level::Ok)
    }

    /// The documented exit code: 0 ok, 4 warnings, 5 failures.
    pub fn exit_code(&self) -> u8 {
        match self.worst() {
            Level::Fail => EXIT_FAILURES,
            Level::Warn => EXIT_WARNINGS,
            Level::Ok | Level::Skip => EXIT_OK,
        }
    }

    /// The versioned JSON document.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        #[derive(Serialize)]
        struct Doc<'a> {
            #[serde(flatten)]
            report: &'a Report,
            tally: Tally,
            exit_code: u8,
        }
        let mut s = serde_json::to_string_pretty(&Doc {
            report: self,
            tally: self.tally(),
            exit_code: self.exit_code(),
        })?;
        s.push('\n');
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(level: Level) -> Verdict {
        Verdict::new(Family::Gpus, "gpu.test", level, "x")
    }

    #[test]
    fn exit_codes_follow_the_worst_verdict() {
        let r = |levels: &[Level]| Report::new("t".into(), levels.iter().map(|l| v(*l)).collect());
        assert_eq!(r(&[]).exit_code(), EXIT_OK);
        assert_eq!(r(&[Level::Ok, Level::Skip]).exit_code(), EXIT_OK);
        assert_eq!(r(&[Level::Ok, Level::Warn]).exit_code(), EXIT_WARNINGS);
        assert_eq!(
            r(&[Level::Warn, Level::Fail, Level::Ok]).exit_code(),
            EXIT_FAILURES
        );
        // None of them clashes with the codes every command uses.
        for code in [EXIT_WARNINGS, EXIT_FAILURES] {
            assert!(![1, 2, 3].contains(&code));
        }
    }

    #[test]
    fn families_keep_their_order() {
        let r = Report::new(
            "t".into(),
            vec![
                Verdict::new(Family::Billing, "billing.rate", Level::Ok, "b"),
                Verdict::new(Family::Gpus, "gpu.count", Level::Ok, "g1"),
                Verdict::new(Family::Gpus, "gpu.ecc", Level::Warn, "g2"),
            ],
        );
        let ids: Vec<&str> = r.verdicts.iter().map(|v| v.id).collect();
        assert_eq!(ids, ["gpu.count", "gpu.ecc", "billing.rate"]);
    }

    #[test]
    fn json_is_versioned_with_tally_and_exit_code() {
        let r = Report::new("demo:x".into(), vec![v(Level::Warn).gpu(2).fix("do")]);
        let j: serde_json::Value = serde_json::from_str(&r.to_json().unwrap()).unwrap();
        assert_eq!(j["schema"], CHECK_SCHEMA_VERSION);
        assert_eq!(j["exit_code"], 4);
        assert_eq!(j["tally"]["warn"], 1);
        assert_eq!(j["verdicts"][0]["level"], "warn");
        assert_eq!(j["verdicts"][0]["gpu"], 2);
        assert_eq!(j["verdicts"][0]["family"], "gpus");
        assert_eq!(j["verdicts"][0]["fix"], "do");
    }
}
