//! The real binary, headless: each demo scenario gives its verdict under `watch --fast`, and
//! autostop runs a harmless command, or never does when it is off.

use std::path::Path;
use std::process::Command;

/// `gpumeter` with a config home and state dir of the test's own (no ledger).
fn gpumeter(dir: &Path, config: &str) -> Command {
    let config_home = dir.join("config");
    std::fs::create_dir_all(config_home.join("gpumeter")).unwrap();
    std::fs::write(config_home.join("gpumeter/config.toml"), config).unwrap();
    let mut cmd = crate::support::gpumeter(dir);
    cmd.arg("--no-ledger");
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
            "gpu-lost",
            "1m",
            "alert fired [high] lost: GPU 2 lost (GPU_IS_LOST) — the box still bills $3.10/h for \
             it; a reboot or a new instance",
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
    let (ok, out, err) = watch(dir.path(), "training", "5m", &[]);
    assert!(ok, "training: {err}");
    assert!(!out.contains("alert fired"), "training: {out}");
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
    assert!(err.contains("autostop needs a command"), "{err}");
    let (ok, _, err) = watch(
        dir.path(),
        "idle",
        "1m",
        &["--autostop", "30m", "--stop-cmd", "'oops"],
    );
    assert!(!ok);
    assert!(err.contains("unclosed quote"), "{err}");
}

/// Kills a burner group, children first (each by pid), even when an assertion fails.
struct Burners(std::process::Child);

impl Burners {
    /// `n` busy-looping `sh` children under one `sh` parent, pinned to CPU 0 when `taskset`
    /// exists and a little favoured by `nice` where allowed, so a loaded machine cannot dilute them.
    fn start(n: usize) -> Burners {
        let script = format!("for i in $(seq {n}); do sh -c 'while :; do :; done' & done; wait");
        let pinned = Command::new("taskset")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success());
        let mut cmd = Command::new("nice");
        cmd.args(["-n", "-5"]);
        if pinned {
            cmd.args(["taskset", "-c", "0"]);
        }
        cmd.args(["sh", "-c", &script])
            .stderr(std::process::Stdio::null());
        Burners(cmd.spawn().unwrap())
    }

    fn children(&self) -> Vec<u32> {
        let parent = self.0.id();
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                    s.rsplit_once(')')
                        .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok())
                        == Some(parent)
                })
            })
            .collect()
    }
}

impl Drop for Burners {
    fn drop(&mut self) {
        for pid in self.children() {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn fake_nvml_gpu_process_with_real_cpu_burners_is_named_cpu_bound() {
    use crate::support::fake_nvml::gpumeter as with_fake_nvml;
    let burners = Burners::start(24);
    // Wait until the spawning loop is done (all 24 up), then a little more: on a loaded
    // machine its short-lived helpers would otherwise still be in the tree when gpumeter, which
    // can decide early from CPU pressure, names the busiest processes.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while burners.children().len() < 24 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    let children = burners.children();
    assert_eq!(children.len(), 24);
    let parent = burners.0.id();
    // The fake driver reports the burners' parent as the process on GPU 0, at 30 % util.
    let scenario = format!(
        "name = \"live-starved\"\ndescription = \"real CPU burners feed a fake GPU\"\n\
         [[gpu]]\nname = \"Fake GPU\"\nmemory_total_gib = 80\n\
         util_gpu_pct = {{ const = 30 }}\nutil_memory_pct = {{ const = 10 }}\n\
         pcie_rx_mb_per_s = {{ const = 50 }}\npcie_tx_mb_per_s = {{ const = 5 }}\n\
         [[process]]\npid = {parent}\n\
         gpus = [{{ gpu = 0, memory_gib = {{ const = 8 }}, sm_util_pct = {{ const = 30 }} }}]\n"
    );
    let dir = tempfile::tempdir().unwrap();
    let config_home = dir.path().join("config");
    std::fs::create_dir_all(config_home.join("gpumeter")).unwrap();
    // A short starved window so the test takes seconds, not minutes.
    std::fs::write(
        config_home.join("gpumeter/config.toml"),
        // The burners are seconds old: no warm-up hold either.
        "[alerts.starved]\nwindow = \"5s\"\nwarmup = \"0s\"\n",
    )
    .unwrap();
    let out = with_fake_nvml(
        &[
            "--no-ledger",
            "--interval",
            "500ms",
            "watch",
            "--for",
            "20s",
        ],
        &scenario,
        0,
        &[
            ("XDG_CONFIG_HOME", config_home.to_str().unwrap()),
            ("XDG_STATE_HOME", dir.path().join("state").to_str().unwrap()),
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains(
            "starved: GPU 0 starved (30 % util) — consistent with a CPU-bound input pipeline"
        ),
        "{text}"
    );
    let named = text
        .lines()
        .find(|l| l.trim_start().starts_with("processes (pid name CPU):"))
        .unwrap_or_else(|| panic!("no process list in {text}"));
    let pids: Vec<u32> = named
        .split(':')
        .nth(1)
        .unwrap()
        .split(", ")
        .filter_map(|e| e.split_whitespace().next()?.parse().ok())
        .collect();
    assert!(pids.len() >= 10, "{named}");
    // On a loaded machine a burner may not have been readable yet when first listed: take
    // the burners as they are now too (they run until the end). The GPU process itself (the
    // burners' parent) is part of the job: when the verdict fires on CPU pressure before the
    // first CPU deltas, every process reads 0 % and the parent can sort among the first 16.
    let mut children = children;
    children.extend(burners.children());
    children.push(burners.0.id());
    assert!(
        pids.iter().all(|p| children.contains(p)),
        "{named} vs {children:?}"
    );
}
