//! The sharper signals through the real binary. `watch --demo <scenario> --fast` prints each
//! notice (hung GPU, XID, VRAM trend, job finished, shared card) with its evidence and cost, and
//! `training` prints none; the `spot` demo's interruption notice raises its alert the moment it
//! is posted and reaches a command hook; the XID alert reaches the ledger's alert log; on the fake NVML
//! library, the scenario's scripted XIDs and GPM readings reach the same alerts through the real
//! NVML path.

use std::path::Path;

use crate::support::{fake_nvml, gpumeter};

/// `gpumeter --demo NAME watch --fast --for FOR` without a ledger or a user config.
fn watch_demo(name: &str, for_: &str, home: &Path) -> String {
    let out = gpumeter(home)
        .args([
            "--demo",
            name,
            "--no-ledger",
            "watch",
            "--fast",
            "--for",
            for_,
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{name}: exit {:?}\n{text}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// The fired lines of `text` (`… alert fired [severity] kind: title`).
fn fired(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|l| l.split_once("  alert fired ").map(|(_, rest)| rest))
        .collect()
}

#[test]
fn each_new_scenario_gives_its_notice_with_evidence_and_cost_and_training_none() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str, &str, &[&str])] = &[
        (
            "hung",
            "6m",
            "[high] hung: GPUs 0–7 report busy but do no work (hung collective? deadlock?)",
            &[
                "SM activity, mean over the last 30 s (GPM): 0: 0.",
                "idle paid time, stuck: $",
            ],
        ),
        (
            // XID 79 and the card lost are one event: the lost alert, naming the XID and job.
            "xid",
            "3m",
            "[high] lost: GPU 3 lost (XID 79 / GPU_IS_LOST) — the box still bills $3.10/h",
            &[
                "was running: python pretrain.py (pid 77310)",
                "paid for lost GPUs since: $",
            ],
        ),
        (
            "oom-soon",
            "10m",
            "[moderate] vram: GPU 2 at 7",
            &[
                "growing: python train.py (pid 4242): +",
                "full in: ~",
                "job paid for so far: $",
            ],
        ),
        (
            "job-done",
            "4m",
            "[moderate] job_done: python train.py (pid 4242) ended just now after 6h12m; 8 GPUs \
             now idle at $31.00/h",
            &["exit: status unknown", "idle since it ended: $"],
        ),
        (
            "shared",
            "3m",
            "[info] shared: GPUs 1, 3: 24.0 GiB held by processes this container can't see; GPU \
             2 shared with maria",
            &["GPU 2, other users: maria (pid 41800, 6.5 GiB)"],
        ),
    ];
    for (name, for_, title, evidence) in cases {
        let text = watch_demo(name, for_, dir.path());
        let f = fired(&text);
        assert_eq!(f.len(), 1, "{name}: one notice:\n{text}");
        assert!(f[0].starts_with(title), "{name}: {}\n{text}", f[0]);
        for e in *evidence {
            assert!(
                text.contains(&format!("    {e}")),
                "{name}: no `{e}`:\n{text}"
            );
        }
        assert!(text.contains("    next step: "), "{name}:\n{text}");
    }
    let text = watch_demo("training", "30m", dir.path());
    assert!(!text.contains(" alert "), "training stays quiet:\n{text}");
}

/// Three H100s with GPM at util 100 % and SM activity 3 % (no power reading), an A100
/// without; XID 79 on GPU 1 and two XID 48 on GPU 2 before the frozen time.
const STUCK: &str = r#"
name = "stuck"
description = "hung GPM cards and XIDs"
driver_version = "550.90.07"
[[gpu]]
count = 3
name = "NVIDIA H100 80GB HBM3"
util_gpu_pct = { const = 100 }
util_memory_pct = { const = 0 }
gpm = { sm_active_pct = { const = 3 }, sm_occupancy_pct = { const = 1 }, tensor_active_pct = { const = 0 }, dram_active_pct = { const = 1 } }
[[gpu]]
name = "NVIDIA A100 80GB PCIe"
util_gpu_pct = { const = 100 }
util_memory_pct = { const = 0 }
[[xid]]
gpu = 1
xid = 79
at_s = 30
[[xid]]
gpu = 2
xid = 48
at_s = 10
[[xid]]
gpu = 2
xid = 48
at_s = 20
"#;

#[test]
fn on_the_fake_library_scripted_xids_and_gpm_reach_the_alerts() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    // A short hung window so a few real seconds decide it.
    std::fs::write(&config, "[alerts.hung]\nwindow = \"5s\"\n").unwrap();
    let out = fake_nvml::gpumeter(
        &[
            "--config",
            config.to_str().unwrap(),
            "--no-ledger",
            "watch",
            "--for",
            "12s",
            "--interval",
            "500ms",
        ],
        STUCK,
        40_000,
        &[("XDG_STATE_HOME", dir.path().join("state").to_str().unwrap())],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let f = fired(&text);
    for want in [
        "[high] xid: GPU 1: XID 79 — GPU fell off the bus",
        "[high] xid: GPU 2: XID 48 (2×) — double-bit ECC error",
        "[high] hung: GPUs 0–2 report busy but do no work (hung collective? deadlock?)",
    ] {
        assert!(
            f.iter().any(|l| l.starts_with(want)),
            "no `{want}`:\n{text}"
        );
    }
    // The A100 (no GPM) is no evidence: util alone cannot tell busy from stuck.
    assert!(!text.contains("GPUs 0–3"), "{text}");
}

#[test]
fn the_lost_alert_of_an_xid_79_goes_to_the_ledgers_alert_log() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.sqlite");
    let out = gpumeter(dir.path())
        .args(["--demo", "xid", "--ledger", ledger.to_str().unwrap()])
        .args(["watch", "--fast", "--for", "3m"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (l, _) = gpumeter_core::ledger::Ledger::open(&ledger, 0).unwrap();
    let log = l.alert_log_since(0).unwrap();
    let lost: Vec<_> = log.iter().filter(|(_, k, _)| k == "lost").collect();
    assert_eq!(lost.len(), 1, "{log:?}");
    assert!(
        lost[0].2.starts_with("GPU 3 lost (XID 79 / GPU_IS_LOST)"),
        "{log:?}"
    );
    assert!(
        log.iter().all(|(_, k, _)| k != "xid"),
        "one event, one alert: {log:?}"
    );
}

#[test]
#[cfg(unix)]
fn the_spot_notice_raises_its_alert_at_once_and_a_hook_receives_it() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let got = dir.path().join("hook.out");
    let script = dir.path().join("checkpoint.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nprintf '%s|%s|%s' \"$GPUMETER_ALERT_KIND\" \"$GPUMETER_ALERT_SEVERITY\" \"$GPUMETER_ALERT_TITLE\" > '{}'\n",
            got.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o700)).unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!("[alerts.hooks]\nspot = [\"{}\"]\n", script.display()),
    )
    .unwrap();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = gpumeter(dir.path())
        .arg("--config")
        .arg(&config)
        .args([
            "--demo",
            "spot",
            "--rate",
            "31/h",
            "--no-ledger",
            "watch",
            "--for",
            "5m",
            "--fast",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let f = fired(&text);
    assert_eq!(f.len(), 1, "{text}");
    assert!(
        f[0].starts_with("[high] spot: spot interruption at ")
            && f[0].contains("(in 2 min) — checkpoint now; this run has cost $"),
        "{}",
        f[0]
    );
    for e in ["provider: AWS", "action: terminate", "reclaimed at: "] {
        assert!(text.contains(&format!("    {e}")), "no `{e}`:\n{text}");
    }
    // The notice is posted 3 min in: the alert line comes after the third minute's line.
    let minutes_before = text
        .lines()
        .take_while(|l| !l.contains(" alert fired "))
        .filter(|l| l.contains(" spent $"))
        .count();
    assert_eq!(minutes_before, 3, "{text}");
    let hook = std::fs::read_to_string(&got).unwrap();
    assert!(
        hook.starts_with("spot|high|spot interruption at "),
        "{hook}"
    );
}
