//! `gpumeter record` and `--replay` end to end: a recording killed with -9 mid-run still plays
//! (at most the last reading lost), a replayed `cpu-starved` run gives `watch` the same verdicts
//! as the demo itself, `snapshot --replay --at` reads the recorded time, zstd works the same,
//! and bad files and paths are clear errors.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::serve::{Served, command};

fn run(home: &std::path::Path, args: &[&str]) -> std::process::Output {
    command(home).args(args).output().unwrap()
}

fn ok(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_recording_killed_mid_run_still_replays_losing_at_most_the_last_reading() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("run.ndjson");
    let mut child = command(home.path())
        .args([
            "record",
            file.to_str().unwrap(),
            "--demo",
            "training",
            "--interval",
            "100ms",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::fs::read_to_string(&file).map_or(0, |t| t.lines().count()) < 6 {
        assert!(Instant::now() < deadline, "record wrote nothing");
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    let whole = text.lines().count() - 1 - usize::from(!text.ends_with('\n'));
    let mut r = gpumeter_core::recording::Reader::open(&file).unwrap();
    let mut n = 0;
    while r.next_reading().is_some() {
        n += 1;
    }
    assert_eq!(n, whole, "{:?}", r.tail());
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&file).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);
    let json = ok(&run(
        home.path(),
        &[
            "snapshot",
            "--json",
            "--replay",
            file.to_str().unwrap(),
            "--at",
            "1h",
        ],
    ));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["source"], "replay:run.ndjson");
    assert_eq!(v["gpus"].as_array().unwrap().len(), 8);
}

/// The alert lines of a `watch` run, without their timestamps.
fn alert_lines(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter(|l| l.contains("alert fired") || l.trim_start().starts_with("verdict:"))
        .map(|l| {
            l.split_once("  ")
                .map_or(l, |(_, rest)| rest)
                .trim()
                .to_string()
        })
        .collect()
}

#[test]
fn watch_on_a_replayed_cpu_starved_run_gives_the_demos_verdicts() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("starved.ndjson.zst");
    let f = file.to_str().unwrap();
    ok(&run(
        home.path(),
        &[
            "record",
            f,
            "--demo",
            "cpu-starved",
            "--fast",
            "--for",
            "5m",
        ],
    ));
    let live = ok(&run(
        home.path(),
        &[
            "watch",
            "--demo",
            "cpu-starved",
            "--fast",
            "--for",
            "5m",
            "--no-ledger",
        ],
    ));
    let replayed = ok(&run(
        home.path(),
        &["watch", "--replay", f, "--fast", "--no-ledger"],
    ));
    let (a, b) = (alert_lines(&live), alert_lines(&replayed));
    assert!(
        a.iter().any(|l| l.contains("CPU-bound")),
        "the demo is CPU-bound: {live}"
    );
    assert_eq!(a, b, "live:\n{live}\nreplayed:\n{replayed}");
    // Priced as the demo was: the same spend at the end, to the cent. (The two runs start at
    // different wall-clock instants, so the unwatched time since the box's boot that the first
    // reading credits differs by a fraction of a second: a cent at most.)
    let spent = |s: &str| -> f64 {
        let total = s.lines().find(|l| l.starts_with("total: spent $")).unwrap();
        total["total: spent $".len()..]
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let (a, b) = (spent(&live), spent(&replayed));
    assert!((a - b).abs() <= 0.0101, "{a} vs {b}");
}

#[test]
fn snapshot_at_reads_the_recorded_time_and_carries_the_bill() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("idle.ndjson");
    let f = file.to_str().unwrap();
    ok(&run(
        home.path(),
        &["record", f, "--demo", "idle", "--fast", "--for", "3m"],
    ));
    let header: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(&file)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let start = header["start_unix_ms"].as_i64().unwrap();
    assert_eq!(header["source"], "demo:idle");
    let v: serde_json::Value = serde_json::from_str(&ok(&run(
        home.path(),
        &[
            "snapshot",
            "--json",
            "--replay",
            f,
            "--at",
            "90s",
            "--no-ledger",
        ],
    )))
    .unwrap();
    assert_eq!(v["taken_at_unix_ms"].as_i64().unwrap(), start + 90_000);
    assert_eq!(v["billing"]["burn_per_hour_micros"], 31_000_000);
    assert!(v["billing"]["idle_spend_micros"].as_i64().unwrap() > 0);
}

#[test]
fn serve_plays_a_recording_and_keeps_serving_its_last_reading() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("short.ndjson");
    let f = file.to_str().unwrap();
    ok(&run(
        home.path(),
        &["record", f, "--demo", "gpu-lost", "--fast", "--for", "5s"],
    ));
    let s = Served::start(&["--replay", f, "--no-ledger", "--interval", "100ms"], &[]);
    s.wait_ready();
    // Six readings at 100 ms: the end comes within a second; a loaded machine gets 30.
    let deadline = Instant::now() + Duration::from_secs(30);
    let ended = || {
        let lines = s.stderr.lock().unwrap();
        lines.iter().any(|l| l.contains("end of the recording"))
    };
    while !ended() {
        assert!(Instant::now() < deadline, "{:?}", s.stderr.lock().unwrap());
        std::thread::sleep(Duration::from_millis(50));
    }
    let m = s.get("/metrics");
    assert_eq!(m.status, 200);
    assert!(
        m.body.contains("source=\"replay:short.ndjson\""),
        "{}",
        m.body
    );
    assert_eq!(
        s.get("/-/ready").status,
        200,
        "the last reading stays served"
    );
}

#[test]
fn bad_recordings_and_paths_are_clear_errors() {
    let home = tempfile::tempdir().unwrap();
    let junk = home.path().join("junk.txt");
    std::fs::write(&junk, "not a recording\n").unwrap();
    let out = run(
        home.path(),
        &["snapshot", "--replay", junk.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("junk.txt") && err.contains("not a gpumeter recording"),
        "{err}"
    );

    let out = run(
        home.path(),
        &[
            "record",
            junk.to_str().unwrap(),
            "--demo",
            "--fast",
            "--for",
            "2s",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("already exists"));
    assert_eq!(std::fs::read_to_string(&junk).unwrap(), "not a recording\n");

    let out = run(
        home.path(),
        &["snapshot", "--demo", "--replay", junk.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(2), "--demo and --replay conflict");

    let out = run(
        home.path(),
        &[
            "watch",
            "--replay",
            home.path().join("nope").to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope"));
    // `record --max-size` refuses nonsense.
    let out = run(
        home.path(),
        &["record", "x.ndjson", "--demo", "--max-size", "12Q"],
    );
    assert_eq!(out.status.code(), Some(2));
}

/// A recording whose header is all there is, or whose first reading is damaged, holds nothing
/// to play: every front-end says so and exits 1 rather than "replaying" nothing with success.
#[test]
fn a_recording_with_no_readable_reading_is_an_error_everywhere() {
    let home = tempfile::tempdir().unwrap();
    let good = home.path().join("good.ndjson");
    ok(&run(
        home.path(),
        &[
            "record",
            good.to_str().unwrap(),
            "--demo",
            "idle",
            "--fast",
            "--for",
            "2s",
        ],
    ));
    let text = std::fs::read_to_string(&good).unwrap();
    let header = text.lines().next().unwrap();
    let only_header = home.path().join("header.ndjson");
    std::fs::write(&only_header, format!("{header}\n")).unwrap();
    let damaged = home.path().join("damaged.ndjson");
    std::fs::write(&damaged, format!("{header}\n{{\"junk\":1}}\n")).unwrap();
    for (file, why) in [
        (&only_header, "only its header"),
        (&damaged, "stopped at line 2"),
    ] {
        let path = file.to_str().unwrap();
        for args in [
            vec!["watch", "--replay", path],
            vec!["snapshot", "--replay", path],
            vec!["serve", "--replay", path, "--listen", "127.0.0.1:0"],
        ] {
            let out = run(home.path(), &args);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
            assert!(
                err.contains("holds no reading to play") && err.contains(why),
                "{args:?}: {err}"
            );
        }
    }
}
