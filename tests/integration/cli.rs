//! The binary as a user meets it: arguments, the demo, one-shot snapshots, exit codes.

use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

/// [`crate::support::gpumeter`] under `home`, with assert_cmd's assertions.
fn gpumeter(home: &Path) -> Command {
    Command::from_std(crate::support::gpumeter(home))
}

fn snapshot_json(home: &Path, scenario: &str, at: &str) -> Value {
    let out = gpumeter(home)
        .args(["snapshot", "--json", "--demo", scenario, "--at", at])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn demo_list_names_every_scenario_with_a_description() {
    let home = tempfile::tempdir().unwrap();
    let out = gpumeter(home.path())
        .args(["--demo", "--list"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for name in [
        "training",
        "cpu-starved",
        "io-starved",
        "idle",
        "forgotten",
        "gpu-lost",
        "mixed",
    ] {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name} missing from:\n{text}"));
        assert!(line.len() > name.len() + 10, "no description: {line}");
    }
}

#[test]
fn snapshot_json_has_the_schema_fields() {
    let home = tempfile::tempdir().unwrap();
    let v = snapshot_json(home.path(), "training", "60s");
    assert_eq!(v["schema"], gpumeter_model::SCHEMA_VERSION);
    // The demo carries its own price: the document has the bill.
    assert_eq!(v["billing"]["currency"], "USD");
    assert!(v["taken_at_unix_ms"].as_i64().unwrap() > 1_600_000_000_000);
    assert_eq!(v["source"], "demo:training");
    let gpus = v["gpus"].as_array().unwrap();
    assert_eq!(gpus.len(), 8);
    for (i, g) in gpus.iter().enumerate() {
        assert_eq!(g["index"], i as u64);
        for field in [
            "util_gpu_pct",
            "util_memory_pct",
            "memory_total_bytes",
            "memory_used_bytes",
            "power_watts",
            "power_limit_watts",
            "energy_millijoules",
            "temperature_celsius",
            "clock_sm_mhz",
            "pcie_rx_bytes_per_s",
        ] {
            assert!(g[field].is_number(), "gpu {i} {field} = {}", g[field]);
        }
        let used = num(&g["memory_used_bytes"]);
        assert!(used <= num(&g["memory_total_bytes"]));
        assert!(num(&g["power_watts"]) <= num(&g["power_limit_watts"]) * 1.1);
    }
    assert!(num(&v["host"]["cpu_count"]) >= 1.0);
    assert!(!v["processes"].as_array().unwrap().is_empty());
}

#[test]
fn training_is_busy_and_cpu_starved_shows_the_starved_pattern() {
    let home = tempfile::tempdir().unwrap();
    let mean_util = |v: &Value| {
        let gpus = v["gpus"].as_array().unwrap();
        gpus.iter().map(|g| num(&g["util_gpu_pct"])).sum::<f64>() / gpus.len() as f64
    };
    let training = snapshot_json(home.path(), "training", "60s");
    assert!(mean_util(&training) >= 85.0, "{}", mean_util(&training));

    // Average over several instants: a sawtooth read once could land anywhere.
    let readings: Vec<Value> = ["30s", "37s", "44s", "51s", "58s", "65s"]
        .iter()
        .map(|at| snapshot_json(home.path(), "cpu-starved", at))
        .collect();
    let util = readings.iter().map(mean_util).sum::<f64>() / readings.len() as f64;
    assert!(util < 60.0, "cpu-starved mean util {util}");
    let starved = &readings[0];
    assert!(num(&starved["host"]["cpu_util_pct"]) >= 85.0);
    assert!(num(&starved["host"]["iowait_pct"]) < 10.0);
    // The dataloader workers are there, each near a full core.
    let workers: Vec<&Value> = starved["processes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["gpu"].as_array().unwrap().is_empty())
        .collect();
    assert!(workers.len() >= 8);
    let busy = workers
        .iter()
        .filter(|p| num(&p["cpu_pct"]) >= 80.0)
        .count();
    assert!(
        busy * 2 >= workers.len(),
        "{busy} of {} workers busy",
        workers.len()
    );
}

#[test]
fn io_starved_shows_iowait_and_idle_shows_idle_gpus() {
    let home = tempfile::tempdir().unwrap();
    let io = snapshot_json(home.path(), "io-starved", "60s");
    assert!(num(&io["host"]["iowait_pct"]) >= 15.0);
    let idle = snapshot_json(home.path(), "idle", "60s");
    for g in idle["gpus"].as_array().unwrap() {
        assert!(num(&g["util_gpu_pct"]) <= 5.0);
    }
}

#[test]
fn gpu_lost_marks_one_gpu_and_keeps_the_others() {
    let home = tempfile::tempdir().unwrap();
    let v = snapshot_json(home.path(), "gpu-lost", "60s");
    let gpus = v["gpus"].as_array().unwrap();
    let lost: Vec<&Value> = gpus.iter().filter(|g| g["state"] == "lost").collect();
    assert_eq!(lost.len(), 1);
    assert!(
        lost[0]["util_gpu_pct"].is_null(),
        "lost readings are null, not 0"
    );
    assert!(gpus.iter().filter(|g| g["state"] == "ok").count() >= 1);
    for g in gpus.iter().filter(|g| g["state"] == "ok") {
        assert!(g["util_gpu_pct"].is_number());
    }
}

#[test]
fn mixed_keeps_invisible_pids_and_sanitizes_hostile_names() {
    let home = tempfile::tempdir().unwrap();
    let out = gpumeter(home.path())
        .args(["snapshot", "--json", "--demo", "mixed"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!out.stdout.contains(&0x1b), "raw ESC byte in JSON output");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains("\\u001b"), "escaped ESC survived sanitising");
    let v: Value = serde_json::from_str(&text).unwrap();
    let procs = v["processes"].as_array().unwrap();
    assert!(procs.iter().any(|p| p["visible"] == false));
    for p in procs {
        if let Some(cmd) = p["command"].as_str() {
            assert!(cmd.chars().count() <= 513, "command not capped");
        }
    }
}

#[test]
fn snapshot_table_is_readable() {
    let home = tempfile::tempdir().unwrap();
    gpumeter(home.path())
        .args(["snapshot", "--demo", "gpu-lost", "--at", "60s"])
        .assert()
        .success()
        .stdout(predicate::str::contains("LOST"))
        .stdout(predicate::str::contains("GPU"));
}

/// The `kubernetes` demo names its pods in the table (each GPU's, each process's), in the JSON
/// and in the alerts, as a node beside a kubelet would: pods without a cluster.
#[test]
fn the_kubernetes_demo_names_pods_in_the_table_the_json_and_the_alerts() {
    let home = tempfile::tempdir().unwrap();
    let table = crate::support::stdout_ok(crate::support::gpumeter(home.path()).args([
        "snapshot",
        "--demo",
        "kubernetes",
        "--at",
        "20m",
    ]));
    assert!(
        table.contains("pods: GPU 3 pod jupyter-maria, namespace research (container notebook)"),
        "{table}"
    );
    let header = table
        .lines()
        .find(|l| l.trim_start().starts_with("PID "))
        .unwrap();
    let pod_at = header.find(" pod ").unwrap() + 1;
    let row = table
        .lines()
        .find(|l| l.split_whitespace().next() == Some("60410"))
        .unwrap();
    assert!(row[pod_at..].starts_with("llm-api-5d8b "), "{table}");
    // The idle notebook's GPU: the alert says whose it is and what it costs.
    assert!(
        table.contains("GPU 3 (pod jupyter-maria, namespace research) idle"),
        "{table}"
    );
    let json = snapshot_json(home.path(), "kubernetes", "30s");
    assert_eq!(json["gpus"][0]["pods"][0]["pod"], "trainer-7f9c");
    assert_eq!(json["gpus"][0]["pods"][0]["namespace"], "ml");
    let notebook = json["processes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["pid"] == 70220)
        .unwrap();
    assert_eq!(notebook["pod"]["pod"], "jupyter-maria");
    assert_eq!(notebook["pod"]["container"], "notebook");
}

/// The table carries what makes the tool different: the bill, the standing alerts (worst
/// first) and SM activity beside utilization, so a hung job's 99 % reads as the lie it is.
#[test]
fn snapshot_table_has_the_bill_the_alerts_and_sm_activity() {
    let home = tempfile::tempdir().unwrap();
    let out = gpumeter(home.path())
        .args(["--rate", "31/h", "--budget", "1000/run"])
        .args(["snapshot", "--demo", "hung", "--at", "6m"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let bill = text
        .lines()
        .find(|l| l.starts_with("bill: spent $"))
        .unwrap();
    assert!(bill.contains("burn $31.00/h"), "{bill}");
    assert!(bill.contains("% of $1,000.00/run"), "{bill}");
    assert!(
        text.contains("rate: your rate (--rate): $31.00/h"),
        "{text}"
    );
    let alerts = text.lines().position(|l| l == "alerts: 1").unwrap();
    let first = text.lines().nth(alerts + 1).unwrap();
    assert!(
        first.trim_start().starts_with("HIGH") && first.contains("busy but do no work"),
        "{first}"
    );
    let head = text.lines().find(|l| l.starts_with("GPU ")).unwrap();
    assert!(head.contains("SM act"), "{head}");
    let gpu0 = text.lines().find(|l| l.starts_with("0   ")).unwrap();
    assert!(gpu0.contains("99%") && gpu0.contains(" / "), "{gpu0}");
}

#[test]
fn no_driver_gives_a_clear_message_and_exit_code_3() {
    let home = tempfile::tempdir().unwrap();
    gpumeter(home.path())
        .args(["snapshot", "--nvml-lib", "/nonexistent/libnvidia-ml.so.1"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("/nonexistent/libnvidia-ml.so.1"))
        .stderr(predicate::str::contains("--demo"));
}

#[test]
fn dashboard_without_driver_fails_before_touching_the_terminal() {
    let home = tempfile::tempdir().unwrap();
    let out = gpumeter(home.path())
        .args(["--nvml-lib", "/nonexistent/libnvidia-ml.so.1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(
        !out.stdout.contains(&0x1b),
        "escape sequences written before failing"
    );
}

#[test]
fn bad_arguments_exit_2_and_say_what_is_wrong() {
    let home = tempfile::tempdir().unwrap();
    gpumeter(home.path())
        .args(["--interval", "5ms", "snapshot", "--demo"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("at least 100ms"));
    gpumeter(home.path())
        .args(["--frobnicate"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--frobnicate"));
    gpumeter(home.path())
        .args(["snapshot", "--demo", "no-such-scenario"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "unknown demo scenario 'no-such-scenario'",
        ));
    gpumeter(home.path())
        .args(["snapshot", "--demo", "idel"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("did you mean 'idle'?"));
    // Out-of-range and negative values are usage errors naming the option and its bound.
    for (args, says) in [
        (
            vec!["watch", "--demo", "idle", "--autostop", "0s"],
            "--autostop must be at least 1m",
        ),
        (
            vec!["watch", "--demo", "idle", "--interval", "-1s"],
            "'-1s' is negative",
        ),
        (
            vec!["watch", "--demo", "idle", "--interval", "99999999h"],
            "the interval must be at most 1h",
        ),
        (
            vec!["fleet", "--once", "--timeout", "0s", "http://127.0.0.1:1"],
            "the timeout must be at least 100ms",
        ),
        (
            vec!["snapshot", "--demo", "idle", "--at", "99999h"],
            "--at must be at most 7d",
        ),
        (
            vec!["check", "--demo", "idle", "--expect", "banana"],
            "'banana' does not name a GPU model",
        ),
    ] {
        gpumeter(home.path())
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(says));
    }
    // A 10 000-character name is quoted cut short.
    let long = "x".repeat(10_000);
    let out = gpumeter(home.path())
        .args(["snapshot", "--demo", &long])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stderr.len() < 1_000, "{} bytes", out.stderr.len());
    // Every message cuts what it quotes: a value clap refuses (quoted twice), a path that
    // cannot be read, a fleet address; a bad address is a usage error (exit 2).
    let path = format!("/tmp/{long}");
    let fleet_url = format!("http://{long}");
    for (args, code) in [
        (
            vec!["watch", "--demo", "idle", "--interval", long.as_str()],
            2,
        ),
        (
            vec!["--rate", long.as_str(), "snapshot", "--demo", "idle"],
            2,
        ),
        (
            vec!["--config", path.as_str(), "snapshot", "--demo", "idle"],
            1,
        ),
        (vec!["fleet", "--once", fleet_url.as_str()], 2),
        (vec!["fleet", "--once", "ftp://10.0.0.5:9958"], 2),
    ] {
        let out = gpumeter(home.path()).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{:?}: {err}", &args[..2]);
        assert!(err.len() < 600, "{:?}: {} bytes", &args[..2], err.len());
    }
}

/// A reader that stops reading (`| head -1`) ends `watch` quietly, as it ends `cat`: exit 0, not
/// a write error (and never a panic on the closed stderr).
#[test]
fn watch_into_a_closed_pipe_ends_quietly() {
    let home = tempfile::tempdir().unwrap();
    let mut child = crate::support::gpumeter(home.path())
        .args(["watch", "--demo", "idle", "--fast", "--for", "2h"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Read one line, then close both ends as `2>&1 | head -1` does.
    {
        use std::io::BufRead;
        let stdout = child.stdout.take().unwrap();
        let mut line = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .unwrap();
        assert!(line.contains("spent"), "{line}");
    }
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{status:?}");
}

#[test]
fn bad_scenario_file_names_file_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.toml");
    std::fs::write(
        &path,
        "name = \"x\"\ndescription = \"y\"\nbogus_field = 3\n",
    )
    .unwrap();
    gpumeter(dir.path())
        .args(["snapshot", "--demo", path.to_str().unwrap()])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("broken.toml"))
        .stderr(predicate::str::contains("bogus_field"));
}

#[test]
fn completions_and_man_page_are_generated() {
    let home = tempfile::tempdir().unwrap();
    gpumeter(home.path())
        .args(["completions", "bash"])
        .assert()
        .success()
        .stdout(predicate::str::contains("gpumeter"));
    gpumeter(home.path())
        .arg("man")
        .assert()
        .success()
        .stdout(predicate::str::contains(".TH gpumeter"));
}

#[test]
fn a_fifo_or_directory_where_a_file_belongs_is_refused_at_once() {
    let home = tempfile::tempdir().unwrap();
    let fifo = home.path().join("fifo");
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .unwrap();
    let f = fifo.to_str().unwrap();
    let dir = home.path().to_str().unwrap();
    for args in [
        vec!["--config", f, "snapshot", "--demo"],
        vec!["config", "check", f],
        vec!["--replay", f, "snapshot"],
        vec!["--config", dir, "snapshot", "--demo"],
    ] {
        let out = gpumeter(home.path())
            .args(&args)
            .timeout(std::time::Duration::from_secs(20))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("not a regular file"), "{args:?}: {err}");
        // The reason once, not repeated by the error chain.
        assert_eq!(
            err.matches("not a regular file").count(),
            1,
            "{args:?}: {err}"
        );
    }
    // The table form of snapshot loads --config too.
    let missing = home.path().join("missing.toml");
    gpumeter(home.path())
        .args(["--config", missing.to_str().unwrap(), "snapshot", "--demo"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("missing.toml"));
}
