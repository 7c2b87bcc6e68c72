//! Scoring one timeline's alert transitions against its labels, and the per-rule totals over
//! a corpus. Pure: transitions in, numbers and words out.

use std::collections::BTreeMap;

use gpumeter_sim::{FireLabel, Labels};

use gpumeter_core::engine::autostop::AutostopEvent;
use gpumeter_core::engine::rules::job::gpu_ranges;
use gpumeter_core::engine::rules::{Alert, Transition};

/// What a timeline said, as the scoring takes it: an alert transition, or an autostop event
/// with the line `watch` prints for it.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Alert(Transition),
    Autostop(AutostopEvent, String),
}

/// No rule may fire more often than this within any hour of any timeline, labelled or not: an
/// alert that comes and goes faster is noise a user switches off (checked corpus-wide).
pub const MAX_FIRES_PER_HOUR: usize = 3;

/// An alert that fired, as the scoring sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Fired {
    pub at_s: f64,
    pub rule: String,
    pub id: String,
    pub verdict: Option<String>,
    /// The GPUs its activity evidence names (`4–7`), if any.
    pub gpus: Option<String>,
    pub job: Option<String>,
    pub title: String,
    pub detail: String,
    pub evidence: Vec<(String, String)>,
}

impl Fired {
    fn of(at_s: f64, a: &Alert) -> Fired {
        let ev = |pred: &dyn Fn(&str) -> bool| {
            a.evidence
                .iter()
                .find(|(k, _)| pred(k))
                .map(|(_, v)| v.clone())
        };
        Fired {
            at_s,
            rule: a.kind.name().to_string(),
            id: a.id.clone(),
            verdict: ev(&|k| k == "verdict"),
            gpus: named_gpus(a),
            job: ev(&|k| k == "job"),
            title: a.title.clone(),
            detail: a.detail.clone(),
            evidence: a.evidence.clone(),
        }
    }
}

/// The GPUs an alert names, as `gpu_ranges` writes them (`0–2, 4–7`): a starved verdict's
/// activity evidence ("… on GPUs 4–7"), the `GPUs` / `GPU` / `its GPUs` evidence (hung, lost,
/// throttle, xid, job finished), every GPU for the machine-wide idle alert (`GPUs idle` n/n),
/// the title's "GPUs 0–7 …" leading or after " on " (checkpoint, forgotten), else the one GPU
/// it is about.
fn named_gpus(a: &Alert) -> Option<String> {
    let ev = |pred: &dyn Fn(&str) -> bool| {
        a.evidence
            .iter()
            .find(|(k, _)| pred(k))
            .map(|(_, v)| v.trim().to_string())
    };
    let strip = |v: &str| {
        v.trim_start_matches("GPUs ")
            .trim_start_matches("GPU ")
            .to_string()
    };
    if let Some(v) = ev(&|k| k.starts_with("GPU activity")) {
        return v.rsplit_once(" on ").map(|(_, after)| strip(after));
    }
    if let Some(v) = ev(&|k| matches!(k, "GPUs" | "GPU" | "its GPUs")) {
        return Some(v);
    }
    if let Some(v) = ev(&|k| k == "GPUs idle") {
        let (idle, of) = v.split_once('/')?;
        let (idle, of) = (
            idle.trim().parse::<u32>().ok()?,
            of.trim().parse::<u32>().ok()?,
        );
        return (idle == of && of > 0).then(|| gpu_ranges(&(0..of).collect::<Vec<_>>()));
    }
    let title = a.title.as_str();
    let after_on = title
        .split_once(" on GPUs ")
        .or(title.split_once(" on GPU "))
        .map(|(_, rest)| rest);
    if let Some(rest) = title
        .strip_prefix("GPUs ")
        .or(title.strip_prefix("GPU "))
        .or(after_on)
    {
        let list: String = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || matches!(c, '–' | ',' | ' '))
            .collect();
        let list = list.trim_end_matches([' ', ',']).to_string();
        if list.starts_with(|c: char| c.is_ascii_digit()) {
            return Some(list);
        }
    }
    a.gpu.map(|g| g.to_string())
}

impl Fired {
    /// An autostop stop, as a fire of the rule `autostop`: its line is its title, and the
    /// warnings before it are its evidence (what it said it tolerated).
    fn stop(at_s: f64, line: &str, warnings: &[String]) -> Fired {
        Fired {
            at_s,
            rule: "autostop".into(),
            id: "autostop".into(),
            verdict: None,
            gpus: None,
            job: None,
            title: line.trim().to_string(),
            detail: String::new(),
            evidence: warnings
                .iter()
                .map(|w| ("warning".to_string(), w.trim().to_string()))
                .collect(),
        }
    }
}

/// Counts for one rule.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RuleStats {
    pub true_pos: u32,
    pub false_pos: u32,
    pub false_neg: u32,
    pub true_neg: u32,
    /// Seconds from each met label's window start to the first fire.
    pub detect_s: Vec<f64>,
}

/// One timeline's result.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    pub name: String,
    pub case: String,
    pub fired: Vec<Fired>,
    pub rules: BTreeMap<String, RuleStats>,
    /// The same per verdict (`starved: CPU-bound input`): a label's verdict met is a true
    /// positive of it, missed or given another verdict a false negative of it; an alert whose
    /// verdict no label asked for (a false alarm, or the wrong verdict) a false positive of
    /// the verdict it gave.
    pub verdicts: BTreeMap<String, RuleStats>,
    /// What went wrong, in words (empty: the timeline passed).
    pub problems: Vec<String>,
}

impl Outcome {
    pub fn passed(&self) -> bool {
        self.problems.is_empty()
    }
}

fn stats<'a>(o: &'a mut Outcome, rule: &str) -> &'a mut RuleStats {
    o.rules.entry(rule.to_string()).or_default()
}

/// The counts of a rule's verdict (`starved: CPU-bound input`).
fn verdict_stats<'a>(o: &'a mut Outcome, rule: &str, verdict: &str) -> &'a mut RuleStats {
    o.verdicts.entry(format!("{rule}: {verdict}")).or_default()
}

/// Whether an alert is one the label speaks of (rule, GPUs, job).
fn covers(l: &FireLabel, f: &Fired) -> bool {
    f.rule == l.rule
        && l.gpus
            .as_ref()
            .is_none_or(|g| f.gpus.as_deref() == Some(gpu_ranges(g).as_str()))
        && l.job
            .as_ref()
            .is_none_or(|j| f.job.as_deref().is_some_and(|fj| fj.contains(j.as_str())))
}

/// Scores the transitions `(seconds since start, transition)` of one timeline.
pub fn score(name: &str, labels: Option<&Labels>, events: &[(f64, Event)]) -> Outcome {
    let mut o = Outcome {
        name: name.to_string(),
        case: labels.and_then(|l| l.case.clone()).unwrap_or_default(),
        ..Outcome::default()
    };
    let mut fired: Vec<Fired> = Vec::new();
    let mut updated: Vec<Fired> = Vec::new();
    let mut warnings: Vec<String> = Vec::new();
    for (t, e) in events {
        match e {
            Event::Alert(Transition::Fired(a)) => fired.push(Fired::of(*t, a)),
            Event::Alert(Transition::Updated(a)) => updated.push(Fired::of(*t, a)),
            Event::Alert(_) => {}
            Event::Autostop(AutostopEvent::Warning { .. }, line) => warnings.push(line.clone()),
            Event::Autostop(AutostopEvent::Cancelled { .. }, _) => warnings.clear(),
            Event::Autostop(AutostopEvent::Stop { .. }, line) => {
                fired.push(Fired::stop(*t, line, &warnings));
                warnings.clear();
            }
            Event::Autostop(AutostopEvent::Armed { .. }, _) => {}
        }
    }
    fired.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
    flapping(&fired, &mut o.problems);
    let Some(labels) = labels else {
        o.problems.push("no labels".into());
        o.fired = fired;
        return o;
    };
    let mut covered = vec![false; fired.len()];
    for l in &labels.fire {
        let mine: Vec<usize> = (0..fired.len()).filter(|&i| covers(l, &fired[i])).collect();
        for &i in &mine {
            covered[i] = true;
        }
        let what = match &l.verdict {
            Some(v) => format!("{} ({v})", l.rule),
            None => l.rule.clone(),
        };
        let Some(&first) = mine.first() else {
            if !l.optional {
                stats(&mut o, &l.rule).false_neg += 1;
                if let Some(v) = &l.verdict {
                    verdict_stats(&mut o, &l.rule, v).false_neg += 1;
                }
                o.problems.push(format!("missed: {what} never fired"));
            }
            continue;
        };
        let f = &fired[first];
        let [from, to] = l.within_s;
        let mut wrong = Vec::new();
        // A reading describes the interval before it (NVML's utilization is a mean over its
        // sample period): a change between two readings is dated to either end, so a bound is
        // judged to one reading's resolution.
        let slack = super::STEP_MS as f64 / 1000.0;
        if f.at_s < from - slack || f.at_s > to + slack {
            wrong.push(format!(
                "{what} fired at {:.0} s, outside {from:.0}–{to:.0} s",
                f.at_s
            ));
        }
        if mine.len() > l.max_fires as usize {
            wrong.push(format!(
                "{what} fired {} times (at most {}: flapping)",
                mine.len(),
                l.max_fires
            ));
        }
        let text = format!(
            "{}\n{}\n{}",
            f.title,
            f.detail,
            f.evidence
                .iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect::<Vec<_>>()
                .join("\n")
        );
        for w in l.says.iter().filter(|w| !text.contains(w.as_str())) {
            wrong.push(format!(
                "{what} at {:.0} s does not say {w:?}: {}",
                f.at_s, f.title
            ));
        }
        if let Some(v) = &l.verdict {
            let ids: Vec<&str> = mine.iter().map(|&i| fired[i].id.as_str()).collect();
            let seen = mine
                .iter()
                .map(|&i| &fired[i])
                .chain(updated.iter().filter(|u| ids.contains(&u.id.as_str())));
            for s in seen {
                if s.verdict.as_deref() != Some(v.as_str()) {
                    wrong.push(format!(
                        "{what}: verdict {:?} at {:.0} s",
                        s.verdict.as_deref().unwrap_or("none"),
                        s.at_s
                    ));
                    break;
                }
            }
        }
        let detect = (f.at_s - from).max(0.0);
        if let Some(v) = &l.verdict {
            let given = f.verdict.as_deref().filter(|g| g != v);
            let st = verdict_stats(&mut o, &l.rule, v);
            if wrong.is_empty() {
                st.true_pos += 1;
                st.detect_s.push(detect);
            } else {
                st.false_neg += 1;
            }
            if let Some(g) = given {
                verdict_stats(&mut o, &l.rule, g).false_pos += 1;
            }
        }
        if wrong.is_empty() {
            let st = stats(&mut o, &l.rule);
            st.true_pos += 1;
            st.detect_s.push(detect);
        } else {
            stats(&mut o, &l.rule).false_neg += 1;
            o.problems.extend(wrong);
        }
    }
    for (f, &c) in fired.iter().zip(&covered) {
        if !c {
            stats(&mut o, &f.rule).false_pos += 1;
            if let Some(v) = f.verdict.as_deref().filter(|v| !v.is_empty()) {
                verdict_stats(&mut o, &f.rule, v).false_pos += 1;
            }
            o.problems.push(format!(
                "false alarm at {:.0} s: {} — {}",
                f.at_s, f.rule, f.title
            ));
        }
    }
    for rule in &labels.quiet {
        if !fired.iter().any(|f| &f.rule == rule) {
            stats(&mut o, rule).true_neg += 1;
        }
    }
    o.fired = fired;
    o
}

/// Any rule that fired more than [`MAX_FIRES_PER_HOUR`] times within an hour.
fn flapping(fired: &[Fired], problems: &mut Vec<String>) {
    let mut rules: Vec<&str> = fired.iter().map(|f| f.rule.as_str()).collect();
    rules.sort_unstable();
    rules.dedup();
    for rule in rules {
        let times: Vec<f64> = fired
            .iter()
            .filter(|f| f.rule == rule)
            .map(|f| f.at_s)
            .collect();
        let worst = (0..times.len())
            .map(|i| {
                times[i..]
                    .iter()
                    .take_while(|&&t| t < times[i] + 3600.0)
                    .count()
            })
            .max()
            .unwrap_or(0);
        if worst > MAX_FIRES_PER_HOUR {
            problems.push(format!(
                "flapping: {rule} fired {worst} times within an hour (at most {MAX_FIRES_PER_HOUR})"
            ));
        }
    }
}

/// Per-rule sums over a corpus.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Totals {
    pub rules: BTreeMap<String, RuleStats>,
    pub verdicts: BTreeMap<String, RuleStats>,
}

impl Totals {
    pub fn of(outcomes: &[Outcome]) -> Totals {
        let add = |into: &mut BTreeMap<String, RuleStats>, from: &BTreeMap<String, RuleStats>| {
            for (key, s) in from {
                let e = into.entry(key.clone()).or_default();
                e.true_pos += s.true_pos;
                e.false_pos += s.false_pos;
                e.false_neg += s.false_neg;
                e.true_neg += s.true_neg;
                e.detect_s.extend(&s.detect_s);
            }
        };
        let mut t = Totals::default();
        for o in outcomes {
            add(&mut t.rules, &o.rules);
            add(&mut t.verdicts, &o.verdicts);
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpumeter_core::engine::rules::{AlertKind, Severity};

    fn alert(kind: AlertKind, id: &str, verdict: &str) -> Alert {
        Alert {
            id: id.into(),
            kind,
            severity: Severity::Moderate,
            gpu: None,
            title: format!("{id} title"),
            detail: String::new(),
            evidence: vec![
                ("verdict".into(), verdict.into()),
                (
                    "GPU activity (60 s mean)".into(),
                    "util 40 % (NVML utilization; no GPM on this card) on GPUs 4–7".into(),
                ),
            ],
            cost_micros: None,
            next_step: None,
            since_unix_ms: 0,
            currency: gpumeter_core::money::Currency::USD,
        }
    }

    fn labels(text: &str) -> Labels {
        let s = gpumeter_sim::Scenario::from_toml(
            "t.toml",
            &format!("name = \"t\"\ndescription = \"t\"\n{text}"),
        )
        .unwrap();
        s.labels.unwrap()
    }

    #[test]
    fn a_label_met_in_time_with_its_verdict_is_a_true_positive() {
        let l = labels(
            "[labels]\nduration_s = 600\nquiet = [\"idle\"]\n[[labels.fire]]\nrule = \"starved\"\n\
             verdict = \"CPU-bound input\"\ngpus = [4, 5, 6, 7]\nwithin_s = [60, 240]\n",
        );
        let a = alert(AlertKind::Starved, "starved:job-1", "CPU-bound input");
        let o = score(
            "t",
            Some(&l),
            &[(100.0, Event::Alert(Transition::Fired(a)))],
        );
        assert!(o.passed(), "{:?}", o.problems);
        assert_eq!(o.rules["starved"].true_pos, 1);
        assert_eq!(o.rules["starved"].detect_s, vec![40.0]);
        assert_eq!(o.rules["idle"].true_neg, 1);
    }

    /// A fire one reading outside a bound is within the readings' resolution; two are late.
    #[test]
    fn a_bound_is_judged_to_one_readings_resolution() {
        let l = labels(
            "[labels]\nduration_s = 900\n[[labels.fire]]\nrule = \"starved\"\n\
             verdict = \"CPU-bound input\"\ngpus = [4, 5, 6, 7]\nwithin_s = [600, 780]\n",
        );
        let at = |t: f64| {
            let a = alert(AlertKind::Starved, "starved:job-1", "CPU-bound input");
            score("t", Some(&l), &[(t, Event::Alert(Transition::Fired(a)))])
        };
        assert!(at(599.0).passed(), "{:?}", at(599.0).problems);
        assert!(at(781.0).passed(), "{:?}", at(781.0).problems);
        for t in [598.0, 782.0] {
            let o = at(t);
            assert!(
                o.problems.iter().any(|p| p.contains("outside 600–780 s")),
                "{t}: {:?}",
                o.problems
            );
        }
    }

    #[test]
    fn a_wrong_verdict_misses_the_labelled_one_and_is_a_false_positive_of_its_own() {
        let l = labels(
            "[labels]\nduration_s = 600\n[[labels.fire]]\nrule = \"starved\"\n\
             verdict = \"CPU-bound input\"\ngpus = [4, 5, 6, 7]\nwithin_s = [0, 240]\n",
        );
        let wrong = alert(AlertKind::Starved, "starved:job-1", "unclassified");
        let mut other = alert(AlertKind::Starved, "starved:job-2", "I/O-bound input");
        other.evidence[1].1 = "util 40 % on GPU 0".into();
        let o = score(
            "t",
            Some(&l),
            &[
                (100.0, Event::Alert(Transition::Fired(wrong))),
                (120.0, Event::Alert(Transition::Fired(other))),
            ],
        );
        assert!(!o.passed());
        let v = |k: &str| o.verdicts.get(k).cloned().unwrap_or_default();
        assert_eq!(v("starved: CPU-bound input").false_neg, 1);
        assert_eq!(v("starved: CPU-bound input").true_pos, 0);
        assert_eq!(
            v("starved: unclassified").false_pos,
            1,
            "the verdict given instead"
        );
        assert_eq!(
            v("starved: I/O-bound input").false_pos,
            1,
            "an unlabelled alert"
        );
        let t = Totals::of(&[o.clone(), o]);
        assert_eq!(t.verdicts["starved: unclassified"].false_pos, 2);
    }

    #[test]
    fn late_flapping_wrong_verdict_unlabelled_and_missing_alerts_fail() {
        let l = labels(
            "[labels]\nduration_s = 600\n[[labels.fire]]\nrule = \"starved\"\n\
             verdict = \"CPU-bound input\"\nwithin_s = [0, 60]\n\
             [[labels.fire]]\nrule = \"idle\"\nwithin_s = [0, 60]\n",
        );
        let cpu = alert(AlertKind::Starved, "starved:job-1", "CPU-bound input");
        let disk = alert(AlertKind::Starved, "starved:job-1", "disk-throughput bound");
        let ev = [
            (90.0, Event::Alert(Transition::Fired(cpu.clone()))),
            (120.0, Event::Alert(Transition::Updated(disk))),
            (200.0, Event::Alert(Transition::Fired(cpu))),
            (
                300.0,
                Event::Alert(Transition::Fired(alert(
                    AlertKind::Throttle,
                    "throttle:x",
                    "",
                ))),
            ),
        ];
        let o = score("t", Some(&l), &ev);
        let all = o.problems.join("\n");
        assert!(all.contains("outside 0–60 s"), "{all}");
        assert!(all.contains("fired 2 times"), "{all}");
        assert!(
            all.contains("verdict \"disk-throughput bound\" at 120 s"),
            "{all}"
        );
        assert!(all.contains("missed: idle never fired"), "{all}");
        assert!(all.contains("false alarm at 300 s: throttle"), "{all}");
        let t = Totals::of(&[o]);
        assert_eq!(t.rules["starved"].false_neg, 1);
        assert_eq!(t.rules["throttle"].false_pos, 1);
        assert!(
            crate::eval::report::rules_markdown(&t)
                .contains("| throttle | 0 | 1 | 0 | 0 | 0 % | – | – |")
        );
    }

    #[test]
    fn an_optional_label_may_stay_quiet_but_not_flap() {
        let l = labels(
            "[labels]\nduration_s = 600\n[[labels.fire]]\nrule = \"idle\"\noptional = true\n\
             within_s = [0, 600]\n",
        );
        assert!(score("t", Some(&l), &[]).passed());
        let a = alert(AlertKind::IdlePaid, "idle", "");
        let twice = [
            (10.0, Event::Alert(Transition::Fired(a.clone()))),
            (20.0, Event::Alert(Transition::Fired(a))),
        ];
        assert!(!score("t", Some(&l), &twice).passed());
    }

    #[test]
    fn a_rule_firing_four_times_in_an_hour_flaps_even_when_labelled() {
        let l = labels(
            "[labels]\nduration_s = 7200\n[[labels.fire]]\nrule = \"idle\"\nmax_fires = 9\n\
             within_s = [0, 7200]\n",
        );
        let a = alert(AlertKind::IdlePaid, "idle", "");
        let at = |ts: &[f64]| -> Vec<(f64, Event)> {
            ts.iter()
                .map(|&t| (t, Event::Alert(Transition::Fired(a.clone()))))
                .collect()
        };
        // Three in an hour, a fourth just past it: no flapping.
        assert!(score("t", Some(&l), &at(&[0.0, 1000.0, 2000.0, 3600.0])).passed());
        let o = score("t", Some(&l), &at(&[0.0, 1000.0, 2000.0, 3599.0]));
        assert!(
            o.problems
                .iter()
                .any(|p| p.contains("flapping: idle fired 4 times within an hour")),
            "{:?}",
            o.problems
        );
    }

    #[test]
    fn an_autostop_stop_is_a_fire_of_its_own_with_its_warnings_as_evidence() {
        let l = labels(
            "[labels]\nduration_s = 3600\nautostop = \"30m\"\n[[labels.fire]]\n\
             rule = \"autostop\"\nwithin_s = [1800, 1900]\nsays = [\"pid 812\"]\n",
        );
        let warn = AutostopEvent::Warning {
            at_unix_ms: 0,
            remaining_ms: 300_000,
            idle_ms: 1_500_000,
            tolerated: None,
        };
        let stop = AutostopEvent::Stop {
            at_unix_ms: 0,
            idle_ms: 1_800_000,
            tolerated: None,
        };
        let ev = [
            (
                1500.0,
                Event::Autostop(warn, "autostop: ignored 5 probes by pid 812".into()),
            ),
            (
                1800.0,
                Event::Autostop(stop.clone(), "autostop: running `true`".into()),
            ),
        ];
        let o = score("t", Some(&l), &ev);
        assert!(o.passed(), "{:?}", o.problems);
        assert_eq!(o.rules["autostop"].true_pos, 1);
        // A stop nobody asked for is a false alarm.
        let quiet = labels("[labels]\nduration_s = 3600\nquiet = [\"autostop\"]\n");
        let o = score(
            "t",
            Some(&quiet),
            &[(10.0, Event::Autostop(stop, "stop".into()))],
        );
        assert!(
            o.problems
                .iter()
                .any(|p| p.contains("false alarm at 10 s: autostop"))
        );
    }
}
