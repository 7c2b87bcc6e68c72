//! The real binary: kill -9 in the middle of `watch` never corrupts the ledger and loses at most
//! a minute; two instances do not double count; `report` and bad pricing fail clearly.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use gpumeter_core::ledger::Ledger;
use gpumeter_core::money::{Currency, Money};

fn gpumeter(ledger: &Path) -> Command {
    // A user config of our own (the clock starts at the first reading, whatever boot time a
    // demo machine reports) and no real state dir: only what the test passes.
    let home = ledger.parent().unwrap();
    std::fs::create_dir_all(home.join("config/gpumeter")).unwrap();
    std::fs::write(
        home.join("config/gpumeter/config.toml"),
        "[pricing]\nclock_start = \"first-sample\"\n",
    )
    .unwrap();
    let mut cmd = crate::support::gpumeter(home);
    cmd.arg("--ledger").arg(ledger);
    cmd
}

fn spent_in(line: &str) -> Option<Money> {
    let rest = line.split("spent ").nth(1)?;
    Currency::USD
        .parse_amount(rest.split_whitespace().next()?)
        .ok()
}

fn ledger_spend(path: &Path) -> Money {
    let (l, _) = Ledger::open(path, 0).unwrap();
    assert_eq!(l.integrity_check().unwrap(), "ok");
    Money::from_micros(l.total_usage().unwrap().spend_micros)
}

#[test]
fn kill_9_loses_at_most_a_minute_and_never_corrupts() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.sqlite");
    // $36/h: one minute costs $0.60.
    let minute = Money::parse("0.60").unwrap();
    let cent = Money::parse("0.01").unwrap();
    let mut before = Money::ZERO;
    for (round, mut lines_before_kill) in [37_usize, 5, 211, 90].into_iter().enumerate() {
        let mut child = gpumeter(&ledger)
            .args(["--demo", "training", "--rate", "36/h", "--currency", "USD"])
            .args(["watch", "--for", "30d", "--fast"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut last_printed = None;
        for line in stdout.by_ref() {
            if let Some(m) = spent_in(&line.unwrap()) {
                last_printed = Some(m);
                lines_before_kill -= 1;
                if lines_before_kill == 0 {
                    break;
                }
            }
        }
        child.kill().unwrap(); // SIGKILL, while it keeps writing minutes
        child.wait().unwrap();
        // The child ran on while we read: the truth is the last line it got out before dying.
        for line in stdout {
            let Ok(line) = line else { break };
            if let Some(m) = spent_in(&line) {
                last_printed = Some(m);
            }
        }
        let printed = last_printed.expect("minute lines before the kill");
        let now = ledger_spend(&ledger);
        let this_run = now.saturating_sub(before);
        // Printed lines are written after their minute committed: the ledger holds at least
        // that, and at most the one minute that committed before its line was printed.
        assert!(
            this_run.saturating_add(cent) >= printed,
            "round {round}: ledger {this_run:?} < printed {printed:?}"
        );
        assert!(
            this_run <= printed.saturating_add(minute).saturating_add(cent),
            "round {round}: ledger {this_run:?} > printed {printed:?} + a minute"
        );
        before = now;
    }
}

#[test]
fn a_second_instance_reads_only_and_the_ledger_counts_once() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.sqlite");
    let mut first = gpumeter(&ledger)
        .args(["--demo", "training", "--rate", "36/h", "--currency", "USD"])
        .args(["watch", "--for", "30d", "--fast"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(first.stdout.take().unwrap()).lines();
    // Once it printed a minute, it holds the writer lock.
    assert!(
        lines
            .by_ref()
            .map(|l| l.unwrap())
            .any(|l| l.contains("spent $"))
    );
    let second = gpumeter(&ledger)
        .args(["--demo", "training", "--rate", "36/h", "--currency", "USD"])
        .args(["watch", "--for", "2h", "--fast"])
        .output()
        .unwrap();
    assert!(second.status.success());
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(
        err.contains("another gpumeter is writing the ledger"),
        "{err}"
    );
    let out = String::from_utf8_lossy(&second.stdout);
    assert!(
        out.contains("total: spent $72.00"),
        "still shows live data: {out}"
    );
    first.kill().unwrap();
    first.wait().unwrap();
    drop(lines);
    // Only the first instance's session was written.
    let (l, _) = Ledger::open(&ledger, 0).unwrap();
    assert_eq!(l.sessions_since(0).unwrap().len(), 1);
}

#[test]
fn watch_fast_runs_hours_of_demo_and_report_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.sqlite");
    let out = gpumeter(&ledger)
        .args([
            "--demo",
            "idle",
            "--rate",
            "31/h",
            "--currency",
            "USD",
            "--budget",
            "50/run",
        ])
        .args(["watch", "--for", "2h", "--fast"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    // Each crossing says the share spent then (the alert's figure), and the mark it passed.
    let crossings: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("% of the $50.00 run budget spent ("))
        .collect();
    assert_eq!(crossings.len(), 3, "50, 80 and 100 %: {text}");
    assert!(
        crossings[0].contains("budget: 50 % of") || crossings[0].contains("past the 50 % mark"),
        "{crossings:?}"
    );
    assert!(
        crossings[2].contains("budget: 100 % of") || crossings[2].contains("past the 100 % mark"),
        "{crossings:?}"
    );
    assert!(
        text.lines().filter(|l| l.contains("spent $")).count() >= 120,
        "{text}"
    );
    assert!(
        text.contains("total: spent $62.00 over 2.00 paid hours"),
        "{text}"
    );

    let report = gpumeter(&ledger)
        .args(["report", "--csv"])
        .output()
        .unwrap();
    assert!(report.status.success());
    let csv = String::from_utf8_lossy(&report.stdout);
    assert!(csv.starts_with("scope,key,currency,paid_hours,"), "{csv}");
    let spend: f64 = csv
        .lines()
        .filter(|l| l.starts_with("day,"))
        .map(|l| l.split(',').nth(8).unwrap().parse::<f64>().unwrap())
        .sum();
    assert!((spend - 62.0).abs() < 1e-9, "{csv}");
}

#[test]
fn report_on_a_fresh_machine_is_empty_and_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.sqlite");
    // Missing, then present but empty (zero bytes): both are "never recorded".
    for _ in 0..2 {
        let out = gpumeter(&ledger).arg("report").output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("No priced sessions recorded yet."), "{text}");

        let out = gpumeter(&ledger)
            .args(["report", "--json"])
            .output()
            .unwrap();
        assert!(out.status.success());
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["days"], serde_json::json!([]), "{v}");
        assert_eq!(v["sessions"], serde_json::json!([]), "{v}");

        let out = gpumeter(&ledger)
            .args(["report", "--csv"])
            .output()
            .unwrap();
        assert!(out.status.success());
        let csv = String::from_utf8_lossy(&out.stdout);
        assert_eq!(csv, format!("{}\n", gpumeter::report::render::CSV_HEADER));
        std::fs::write(&ledger, "").unwrap();
    }
    // report never creates or changes the file.
    assert_eq!(std::fs::metadata(&ledger).unwrap().len(), 0);
}

#[test]
fn report_fails_clearly_on_a_file_that_is_not_a_ledger() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.sqlite");
    std::fs::write(&ledger, "these are not the bytes you are looking for").unwrap();
    let out = gpumeter(&ledger)
        .args(["report", "--json"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is not a usable gpumeter ledger"), "{err}");
    // report never moves or changes the file.
    assert_eq!(
        std::fs::read_to_string(&ledger).unwrap(),
        "these are not the bytes you are looking for"
    );
}

#[test]
fn bad_pricing_names_the_field_or_flag() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.sqlite");
    let cfg = dir.path().join("gpumeter.toml");
    std::fs::write(
        &cfg,
        "[pricing]\nrate = \"31/h\"\negress_per_gb = \"-0.09\"\n",
    )
    .unwrap();
    let out = gpumeter(&ledger)
        .args(["--demo", "idle", "--config"])
        .arg(&cfg)
        .args(["watch", "--for", "1m", "--fast"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("gpumeter.toml:3:17: pricing.egress_per_gb: must not be negative"),
        "{err}"
    );
    let out = gpumeter(&ledger)
        .args(["--demo", "idle", "--rate", "31/fortnight", "watch"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--rate") && err.contains("unknown rate unit 'fortnight'"),
        "{err}"
    );
    let out = gpumeter(&ledger)
        .args(["watch", "--fast"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--fast needs --demo"));
}

#[test]
fn the_idle_alert_and_the_minute_lines_write_yen_alike() {
    let dir = tempfile::tempdir().unwrap();
    let out = gpumeter(&dir.path().join("ledger.sqlite"))
        .args(["--demo", "idle", "--currency", "JPY", "--rate", "480000/h"])
        .args(["watch", "--fast", "--for", "40m", "--no-ledger"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    // 10 idle minutes at ¥480,000/h: one formatter, no decimals for yen, thousands grouped.
    assert!(
        text.contains("GPUs idle 10 min — ¥80,000 so far, ¥480,000/h"),
        "{text}"
    );
    assert!(text.contains("burn ¥480,000/h"), "{text}");
    assert!(
        !text.contains("¥80000") && !text.contains("¥480000"),
        "{text}"
    );
}

/// The ledger is the user's bill: a demo or a replay never writes it, neither at the default
/// place nor where the user's config points, unless `--ledger PATH` names one for the run.
#[test]
fn a_demo_or_a_replay_leaves_the_users_ledger_untouched() {
    use crate::support::{default_ledger, gpumeter};
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let watch = |extra: &[&str]| {
        let out = gpumeter(home)
            .args(["--demo", "training", "--rate", "36/h"])
            .args(extra)
            .args(["watch", "--for", "5m", "--fast"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let text = watch(&[]);
    assert!(
        text.contains("spent $"),
        "the demo still shows its bill: {text}"
    );
    assert!(
        !default_ledger(home).exists(),
        "a demo wrote the default ledger"
    );

    let mine = home.join("mine.sqlite");
    std::fs::create_dir_all(home.join("config/gpumeter")).unwrap();
    std::fs::write(
        home.join("config/gpumeter/config.toml"),
        format!("[ledger]\npath = \"{}\"\n", mine.display()),
    )
    .unwrap();
    watch(&[]);
    assert!(!mine.exists(), "a demo wrote the ledger the config names");

    let recording = home.join("run.ndjson");
    let out = gpumeter(home)
        .args(["--demo", "training", "record"])
        .arg(&recording)
        .args(["--for", "3m", "--fast"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = gpumeter(home)
        .args(["--rate", "36/h", "--replay"])
        .arg(&recording)
        .args(["watch", "--fast"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !mine.exists() && !default_ledger(home).exists(),
        "a replay wrote a ledger"
    );

    let asked = home.join("demo.sqlite");
    watch(&["--ledger", asked.to_str().unwrap()]);
    assert!(
        ledger_spend(&asked) > Money::ZERO,
        "--ledger names the demo's own ledger"
    );
}

/// One derivation of the cost per busy GPU-hour: `watch`'s total and `report`'s session print
/// the same figure for the same run, and where the clock ran before gpumeter looked (a boot a
/// day ago), the total says how much was watched, so its figures add up.
#[test]
fn watch_and_report_agree_on_the_cost_per_busy_gpu_hour() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.sqlite");
    let config = dir.path().join("boot.toml");
    std::fs::write(&config, "[pricing]\nclock_start = \"boot\"\n").unwrap();
    let out = gpumeter(&ledger)
        .args(["--demo", "training", "--rate", "31/h", "--currency", "USD"])
        .arg("--config")
        .arg(&config)
        .args(["watch", "--for", "30m", "--fast"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let total = text.lines().find(|l| l.starts_with("total: ")).unwrap();
    assert!(total.contains("(0.50 watched)"), "{total}");
    let watch_cost = total
        .split(", ")
        .find(|p| p.contains("per busy GPU-hour"))
        .and_then(|p| p.split_whitespace().next())
        .and_then(|m| m.trim_start_matches('$').parse::<f64>().ok())
        .unwrap();
    let report = gpumeter(&ledger)
        .args(["report", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    let session = &v["sessions"][0];
    let report_cost = session["cost_per_busy_gpu_hour"].as_f64().unwrap();
    assert!(
        (report_cost - watch_cost).abs() < 0.01,
        "{total} vs {session}"
    );
    // And it is the watched time's spend per busy GPU-hour, not all the spend's.
    let all = session["spend"].as_f64().unwrap() / session["busy_gpu_hours"].as_f64().unwrap();
    assert!(report_cost < all / 10.0, "{report_cost} vs {all}");
}
