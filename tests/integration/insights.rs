//! The real binary, headless: each demo scenario gives its verdict under `watch --fast`, and
//! autostop runs a harmless command, or never does when it is off.

use std::path::Path;
use std::process::Command;

use assert_cmd::cargo::CommandCargoExt;

/// `gpumeter` with a config home and state dir of the test's own (no ledger).
fn gpumeter(dir: &Path, config: &str) -> Command {
    let config_home = dir.join("config");
    std::fs::create_dir_all(config_home.join("gpumeter")).unwrap();
    std::fs::write(config_home.join("gpumeter/config.toml"), config).unwrap();
    let mut cmd = Command::cargo_bin("gpumeter").unwrap();
    cmd.env("XDG_CONFIG_HOME", &config_home)
        .env("XDG_STATE_HOME", dir.join("state"))
        .env_remove("GPUMETER_NVML_LIB")
        .arg("--no-ledger");
    cmd
}

fn watch(dir: &Path, scenario: &str, span: &str, extra: &[&str]) -> (bool, String, String) {
    let out = gpumeter(dir, "")
        .args(["--demo", scenario, "watch", "--for", span, "--fast"])
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn each_demo_scenario_gives_its_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "cpu-starved",
            "5m",
            "consistent with a CPU-bound input pipeline",
        ),
        (
            "io-starved",
            "5m",
            "consistent with an I/O-bound input pipeline",
        ),
        (
            "idle",
            "12m",
            "alert fired [moderate] idle: GPUs idle 10 min",
        ),
        (
            "forgotten",
            "17m",
            "Forgotten allocation: python (pid 22817, maria) holds 30.0GiB on GPU 0",
        ),
    ];
    for (scenario, span, expected) in cases {
        let (ok, out, err) = watch(dir.path(), scenario, span, &[]);
        assert!(ok, "{scenario}: {err}");
        assert!(out.contains(expected), "{scenario}: {out}");
    }
    for quiet in ["training", "gpu-lost"] {
        let (ok, out, err) = watch(dir.path(), quiet, "5m", &[]);
        assert!(ok, "{quiet}: {err}");
        assert!(!out.contains("alert fired"), "{quiet}: {out}");
    }
}

#[test]
fn autostop_runs_the_stop_command_after_the_idle_time() {
    let dir = tempfile::tempdir().unwrap();
    let flag = dir.path().join("stopped");
    let cmd = format!("touch '{}'", flag.display());
    let (ok, out, err) = watch(
        dir.path(),
        "idle",
        "40m",
        &["--autostop", "30m", "--stop-cmd", &cmd],
    );
    assert!(ok, "{err}");
    assert!(flag.exists(), "{out}\n{err}");
    let warn5 = out
        .find("autostop: idle for 25 min, running")
        .unwrap_or_else(|| panic!("{out}"));
    let warn1 = out
        .find("autostop: idle for 29 min, running")
        .unwrap_or_else(|| panic!("{out}"));
    let stop = out
        .find("autostop: idle for 30 min: running `touch")
        .unwrap_or_else(|| panic!("{out}"));
    assert!(warn5 < warn1 && warn1 < stop, "{out}");
    assert_eq!(
        out.matches("autostop: idle for 30 min: running").count(),
        1,
        "runs once: {out}"
    );
}

#[test]
fn autostop_never_fires_when_off_or_while_the_gpus_work() {
    let dir = tempfile::tempdir().unwrap();
    let flag = dir.path().join("stopped");
    let (ok, out, err) = watch(dir.path(), "idle", "40m", &[]);
    assert!(ok, "{err}");
    assert!(!out.contains("autostop:"), "{out}");
    let cmd = format!("touch '{}'", flag.display());
    let (ok, out, err) = watch(
        dir.path(),
        "training",
        "40m",
        &["--autostop", "30m", "--stop-cmd", &cmd],
    );
    assert!(ok, "{err}");
    assert!(!flag.exists(), "{out}");
}

#[test]
fn autostop_without_a_command_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, _, err) = watch(dir.path(), "idle", "1m", &["--autostop", "30m"]);
    assert!(!ok);
    assert!(err.contains("--autostop needs a command"), "{err}");
    let (ok, _, err) = watch(
        dir.path(),
        "idle",
        "1m",
        &["--autostop", "30m", "--stop-cmd", "'oops"],
    );
    assert!(!ok);
    assert!(err.contains("unclosed quote"), "{err}");
}
