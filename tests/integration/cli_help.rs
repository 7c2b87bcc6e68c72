//! Each command's `--help` lists the options it uses and none it ignores.

use crate::support::gpumeter;

fn help(args: &[&str]) -> String {
    let home = tempfile::tempdir().unwrap();
    let out = gpumeter(home.path())
        .args(args)
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?} --help failed");
    String::from_utf8(out.stdout).unwrap()
}

/// The long option names a help text lists (`--demo [<SCENARIO>]` → `demo`).
fn options(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let t = l.trim_start();
            let t = t
                .strip_prefix("-h, ")
                .or(t.strip_prefix("-V, "))
                .unwrap_or(t);
            let name = t.strip_prefix("--")?;
            Some(name.split([' ', '=', '[']).next()?.to_string())
        })
        .collect()
}

const SOURCE: &[&str] = &["demo", "list", "nvml-lib", "interval", "replay"];
const RECORDING: &[&str] = &["record", "max-size", "max-files"];
const FILES: &[&str] = &["config", "ledger", "no-ledger"];
const PRICING: &[&str] = &["rate", "budget", "currency", "cloud-metadata"];
/// How a screen looks (the dashboard and the fleet).
const LOOK: &[&str] = &["theme", "no-color", "ascii"];
/// Naming Kubernetes pods (the dashboard, snapshot, watch, serve).
const KUBE: &[&str] = &["kubernetes", "pod-resources"];
/// The dashboard's own: a replay's start, look-don't-touch.
const DASHBOARD: &[&str] = &["readonly", "start"];

fn check(args: &[&str], groups: &[&[&str]], own: &[&str]) {
    let text = help(args);
    let listed = options(&text);
    let mut expected: Vec<&str> = groups.iter().flat_map(|g| g.iter().copied()).collect();
    expected.extend_from_slice(own);
    expected.push("help");
    if args.is_empty() {
        expected.push("version");
    }
    for e in &expected {
        assert!(
            listed.iter().any(|l| l == e),
            "{args:?} --help lacks --{e}:\n{text}"
        );
    }
    for l in &listed {
        assert!(
            expected.contains(&l.as_str()),
            "{args:?} --help lists --{l}, which it does not use:\n{text}"
        );
    }
}

#[test]
fn each_command_lists_only_the_options_it_uses() {
    check(
        &[],
        &[SOURCE, FILES, PRICING, LOOK, DASHBOARD, RECORDING, KUBE],
        &[],
    );
    check(
        &["snapshot"],
        &[SOURCE, FILES, PRICING, KUBE],
        &["json", "at"],
    );
    check(
        &["watch"],
        &[SOURCE, FILES, PRICING, RECORDING, KUBE],
        &["for", "fast", "autostop", "stop-cmd"],
    );
    check(&["report"], &[FILES], &["since", "json", "csv"]);
    check(
        &["check"],
        &[PRICING],
        &[
            "expect", "python", "data", "json", "demo", "nvml-lib", "config",
        ],
    );
    check(
        &["serve"],
        &[SOURCE, FILES, PRICING, RECORDING, KUBE],
        &[
            "listen",
            "token-file",
            "process-metrics",
            "process-limit",
            "compat",
            "autostop",
            "stop-cmd",
        ],
    );
    check(
        &["record"],
        &[SOURCE],
        &["for", "fast", "max-size", "max-files"],
    );
    check(&["eval"], &[], &["json", "config"]);
    check(
        &["fleet"],
        &[LOOK],
        &[
            "hosts",
            "token-file",
            "once",
            "json",
            "interval",
            "timeout",
            "concurrency",
        ],
    );
    check(&["config"], &[], &[]);
    check(&["config", "check"], &[], &[]);
    check(&["completions"], &[], &[]);
    check(&["man"], &[], &[]);
}

#[test]
fn the_report_help_the_issue_quoted_is_clean() {
    // `gpumeter report --help` once listed --theme, --interval, --nvml-lib and --demo.
    let text = help(&["report"]);
    for gone in ["--theme", "--interval", "--nvml-lib", "--demo"] {
        assert!(!text.contains(gone), "{gone}:\n{text}");
    }
}

#[test]
fn an_option_before_a_subcommand_that_ignores_it_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let out = gpumeter(home.path())
        .args(["--theme", "mono", "report"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--theme does not apply to `gpumeter report`"),
        "{err}"
    );
}

#[test]
fn check_refuses_the_ledger_and_interval_before_it_and_takes_demo() {
    let home = tempfile::tempdir().unwrap();
    for flags in [
        &["--ledger", "/tmp/x.sqlite"][..],
        &["--interval", "2s"][..],
    ] {
        let out = gpumeter(home.path())
            .args(flags)
            .arg("check")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{flags:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("does not apply to `gpumeter check`"), "{err}");
    }
    let out = gpumeter(home.path())
        .args(["--demo", "idle", "check", "--json"])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["source"], "demo:idle");
}
