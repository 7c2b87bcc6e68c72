//! The corpus results as people and programs read them: the markdown tables of
//! `docs/accuracy.md` and `gpumeter eval` (per rule, then per timeline), the problems of the
//! timelines that failed, and the JSON of `gpumeter eval --json`. Pure: outcomes in, text out.

use serde_json::{Value, json};

use super::score::{Outcome, RuleStats, Totals};

/// `"96 %"`, or `–` when nothing was counted.
fn ratio(a: u32, b: u32) -> Option<f64> {
    (a + b > 0).then(|| f64::from(a) * 100.0 / f64::from(a + b))
}

/// A share as a table cell: `75 %`, or `–` when nothing was counted.
fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), |v| format!("{v:.0} %"))
}

/// Median and maximum time to detect, in seconds.
fn detect(s: &RuleStats) -> Option<(f64, f64)> {
    let mut d = s.detect_s.clone();
    d.sort_by(f64::total_cmp);
    Some((*d.get(d.len() / 2)?, *d.last()?))
}

/// The per-rule table.
pub fn rules_markdown(totals: &Totals) -> String {
    let mut out = String::from(
        "| rule | true pos. | false pos. | false neg. | true neg. | precision | recall | \
         time to detect (median, max) |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for (rule, s) in &totals.rules {
        let ttd = detect(s).map_or_else(|| "–".into(), |(m, x)| format!("{m:.0} s, {x:.0} s"));
        out.push_str(&format!(
            "| {rule} | {} | {} | {} | {} | {} | {} | {ttd} |\n",
            s.true_pos,
            s.false_pos,
            s.false_neg,
            s.true_neg,
            pct(ratio(s.true_pos, s.false_pos)),
            pct(ratio(s.true_pos, s.false_neg)),
        ));
    }
    out
}

/// The per-verdict table: how often each verdict was asked for, given rightly, given where
/// none or another was due, and missed.
pub fn verdicts_markdown(totals: &Totals) -> String {
    let mut out = String::from(
        "| verdict | labelled | true pos. | false pos. | false neg. | precision | recall |\n\
         | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for (verdict, s) in &totals.verdicts {
        out.push_str(&format!(
            "| {verdict} | {} | {} | {} | {} | {} | {} |\n",
            s.true_pos + s.false_neg,
            s.true_pos,
            s.false_pos,
            s.false_neg,
            pct(ratio(s.true_pos, s.false_pos)),
            pct(ratio(s.true_pos, s.false_neg)),
        ));
    }
    out
}

/// The group a timeline belongs to: `blind` for `blind/name`.
fn group(o: &Outcome) -> Option<&str> {
    o.name.split_once('/').map(|(g, _)| g)
}

/// The tables: per rule, per verdict, per rule again for each group of timelines (those
/// written blind), then what fired on each timeline.
pub fn markdown(outcomes: &[Outcome]) -> String {
    let mut table = rules_markdown(&Totals::of(outcomes));
    table.push('\n');
    table.push_str(&verdicts_markdown(&Totals::of(outcomes)));
    let mut groups: Vec<&str> = outcomes.iter().filter_map(group).collect();
    groups.sort_unstable();
    groups.dedup();
    for g in groups {
        let mine: Vec<Outcome> = outcomes
            .iter()
            .filter(|o| group(o) == Some(g))
            .cloned()
            .collect();
        let passed = mine.iter().filter(|o| o.passed()).count();
        table.push_str(&format!(
            "\nThe {} timelines in `{g}/` alone ({passed} pass):\n\n",
            mine.len()
        ));
        table.push_str(&rules_markdown(&Totals::of(&mine)));
    }
    table.push_str("\n| timeline | case | alerts fired |\n| --- | --- | --- |\n");
    for o in outcomes {
        let fired: Vec<String> = o
            .fired
            .iter()
            .map(|f| match &f.verdict {
                Some(v) if !v.is_empty() => format!("{} ({v}) at {:.0} s", f.rule, f.at_s),
                _ => format!("{} at {:.0} s", f.rule, f.at_s),
            })
            .collect();
        let fired = if fired.is_empty() {
            "none".to_string()
        } else {
            fired.join(", ")
        };
        table.push_str(&format!("| {} | {} | {fired} |\n", o.name, o.case));
    }
    table
}

/// What went wrong, a timeline a paragraph; `None` when every timeline passed.
pub fn problems(outcomes: &[Outcome]) -> Option<String> {
    let failed: Vec<String> = outcomes
        .iter()
        .filter(|o| !o.passed())
        .map(|o| format!("{}:\n  {}", o.name, o.problems.join("\n  ")))
        .collect();
    (!failed.is_empty()).then(|| failed.join("\n"))
}

/// `gpumeter eval --json`: `schema`, per-rule counts and detection times, each timeline with
/// what fired and its problems, and how many timelines failed.
pub fn json(outcomes: &[Outcome]) -> Value {
    let totals = Totals::of(outcomes);
    let rules: serde_json::Map<String, Value> = totals
        .rules
        .iter()
        .map(|(rule, s)| {
            let d = detect(s);
            (
                rule.clone(),
                json!({
                    "true_pos": s.true_pos,
                    "false_pos": s.false_pos,
                    "false_neg": s.false_neg,
                    "true_neg": s.true_neg,
                    "precision_pct": ratio(s.true_pos, s.false_pos),
                    "recall_pct": ratio(s.true_pos, s.false_neg),
                    "detect_median_s": d.map(|d| d.0),
                    "detect_max_s": d.map(|d| d.1),
                }),
            )
        })
        .collect();
    let timelines: Vec<Value> = outcomes
        .iter()
        .map(|o| {
            json!({
                "name": o.name,
                "case": o.case,
                "passed": o.passed(),
                "fired": o.fired.iter().map(|f| json!({
                    "at_s": f.at_s,
                    "rule": f.rule,
                    "id": f.id,
                    "verdict": f.verdict,
                    "gpus": f.gpus,
                    "job": f.job,
                    "title": f.title,
                    "detail": f.detail,
                    "evidence": f.evidence,
                })).collect::<Vec<_>>(),
                "problems": o.problems,
            })
        })
        .collect();
    let verdicts: serde_json::Map<String, Value> = totals
        .verdicts
        .iter()
        .map(|(verdict, s)| {
            (
                verdict.clone(),
                json!({
                    "true_pos": s.true_pos,
                    "false_pos": s.false_pos,
                    "false_neg": s.false_neg,
                    "precision_pct": ratio(s.true_pos, s.false_pos),
                    "recall_pct": ratio(s.true_pos, s.false_neg),
                }),
            )
        })
        .collect();
    json!({
        "schema": 1,
        "timelines_run": outcomes.len(),
        "verdicts": verdicts,
        "timelines_failed": outcomes.iter().filter(|o| !o.passed()).count(),
        "rules": rules,
        "timelines": timelines,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::Fired;

    fn outcome(name: &str, tp: u32, fp: u32, detect: &[f64], problems: &[&str]) -> Outcome {
        let mut o = Outcome {
            name: name.into(),
            case: "c".into(),
            problems: problems.iter().map(|p| p.to_string()).collect(),
            ..Outcome::default()
        };
        o.rules.insert(
            "starved".into(),
            RuleStats {
                true_pos: tp,
                false_pos: fp,
                detect_s: detect.to_vec(),
                ..RuleStats::default()
            },
        );
        o.fired.push(Fired {
            at_s: 60.0,
            rule: "starved".into(),
            id: "starved:1".into(),
            verdict: Some("CPU-bound input".into()),
            gpus: Some("0".into()),
            job: None,
            title: "t".into(),
            detail: String::new(),
            evidence: vec![("verdict".into(), "CPU-bound input".into())],
        });
        o
    }

    #[test]
    fn tables_json_and_problems_count_what_the_outcomes_hold() {
        let all = [
            outcome("a", 1, 0, &[10.0], &[]),
            outcome(
                "b",
                2,
                1,
                &[30.0, 50.0],
                &["false alarm at 9 s: starved — t"],
            ),
        ];
        let md = markdown(&all);
        assert!(
            md.contains("| starved | 3 | 1 | 0 | 0 | 75 % | 100 % | 30 s, 50 s |"),
            "{md}"
        );
        assert!(md.contains("| a | c | starved (CPU-bound input) at 60 s |"));
        let p = problems(&all).unwrap();
        assert!(p.starts_with("b:\n  false alarm at 9 s"), "{p}");
        assert!(problems(&all[..1]).is_none());
        let j = json(&all);
        assert_eq!(j["timelines_failed"], 1);
        assert_eq!(j["rules"]["starved"]["precision_pct"], 75.0);
        assert_eq!(j["rules"]["starved"]["detect_max_s"], 50.0);
        assert_eq!(j["timelines"][1]["passed"], false);
        assert_eq!(j["timelines"][0]["fired"][0]["verdict"], "CPU-bound input");
        assert_eq!(
            j["timelines"][0]["fired"][0]["evidence"][0],
            serde_json::json!(["verdict", "CPU-bound input"])
        );
    }

    #[test]
    fn verdicts_get_their_own_table_and_a_group_its_own_rule_table() {
        let mut a = outcome("a", 1, 0, &[10.0], &[]);
        a.verdicts.insert(
            "starved: CPU-bound input".into(),
            RuleStats {
                true_pos: 3,
                false_neg: 1,
                ..RuleStats::default()
            },
        );
        let b = outcome("blind/b", 0, 1, &[], &["false alarm at 9 s: starved — t"]);
        let md = markdown(&[a, b]);
        assert!(
            md.contains("| starved: CPU-bound input | 4 | 3 | 0 | 1 | 100 % | 75 % |"),
            "{md}"
        );
        assert!(
            md.contains("The 1 timelines in `blind/` alone (0 pass):"),
            "{md}"
        );
        assert!(
            md.contains("| starved | 0 | 1 | 0 | 0 | 0 % | – | – |"),
            "{md}"
        );
        let j = json(&[outcome("a", 1, 0, &[], &[])]);
        assert!(j["verdicts"].as_object().unwrap().is_empty());
    }
}
