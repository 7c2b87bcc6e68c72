//! gpumeter inside a real PID namespace (`unshare --pid --fork --mount-proc`), as in a
//! container without `--pid=host`: the fake NVML library reports the *outer* PID of a process
//! that holds a file named like a GPU device node open, and gpumeter, which cannot see that
//! PID, must tie it to the process by its local PID. Needs `unshare` and `nsenter` and the
//! right to make namespaces (root, or unprivileged user namespaces); skipped with the reason
//! elsewhere, and a failure when `GPUMETER_REQUIRE_UNSHARE=1` (set by `.ci/run`).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::fake_nvml::{library, scenario_file};

const BIN: &str = env!("CARGO_BIN_EXE_gpumeter");

/// Whether namespaces can be made here; panics when required and impossible.
fn can_unshare() -> bool {
    let required = std::env::var("GPUMETER_REQUIRE_UNSHARE").is_ok_and(|v| v == "1");
    let tried = Command::new("unshare")
        .args(["--pid", "--fork", "--mount-proc", "true"])
        .stderr(Stdio::null())
        .status();
    let nsenter = Command::new("nsenter").arg("--version").output();
    let why = match (&tried, &nsenter) {
        (Err(e), _) => Some(format!("no unshare ({e})")),
        (Ok(s), _) if !s.success() => Some(format!("unshare --pid refused ({s})")),
        (_, Err(e)) => Some(format!("no nsenter ({e})")),
        _ => None,
    };
    match why {
        None => true,
        Some(why) => {
            assert!(!required, "GPUMETER_REQUIRE_UNSHARE=1 but {why}");
            eprintln!("skipping the PID-namespace test: {why}");
            false
        }
    }
}

/// The namespace's init (seen from outside), killed with everything in it on drop.
struct Namespace(Child);

impl Drop for Namespace {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The outer pid of the process holding `node` open, and its parent, once it shows up.
fn holder_of(node: &Path) -> Option<(u32, u32)> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        for pid in std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        {
            let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
                continue;
            };
            let holds = fds
                .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
                .any(|t| t == node);
            let ppid = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| {
                    let (_, rest) = s.rsplit_once(')')?;
                    rest.split_whitespace().nth(1)?.parse::<u32>().ok()
                });
            if let (true, Some(ppid)) = (holds, ppid) {
                return Some((pid, ppid));
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

#[test]
fn inside_a_pid_namespace_the_host_pid_is_tied_to_the_local_holder() {
    if !can_unshare() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let dev = dir.path().canonicalize().unwrap().join("dev");
    std::fs::create_dir_all(&dev).unwrap();
    for n in ["nvidia0", "nvidiactl"] {
        std::fs::write(dev.join(n), "").unwrap();
    }
    let node = dev.join("nvidia0");
    // Init (pid 1 inside) starts the holder (pid 2 inside) and waits.
    let script = format!("(exec 3<'{}'; exec sleep 120) & wait", node.display());
    let ns = Namespace(
        Command::new("unshare")
            .args(["--pid", "--fork", "--mount-proc", "sh", "-c", &script])
            .spawn()
            .unwrap(),
    );
    let (outer, init) = holder_of(&node).expect("the holder shows up outside");
    assert_ne!(outer, 2, "the outer pid differs from the inner one");
    let scenario = format!(
        "name = \"ns\"\ndescription = \"a GPU process in another PID namespace\"\n\
         [[gpu]]\nname = \"Fake GPU\"\nmemory_total_gib = 80\nutil_gpu_pct = {{ const = 40 }}\n\
         [[process]]\npid = {outer}\nname = \"sleep\"\n\
         gpus = [{{ gpu = 0, memory_gib = {{ const = 8 }} }}]\n"
    );
    let file = scenario_file(&scenario);
    let out = Command::new("nsenter")
        .args(["--target", &init.to_string(), "--pid", "--mount", "--"])
        .arg(BIN)
        .args(["--no-ledger", "snapshot", "--json", "--nvml-lib"])
        .arg(library())
        .env_remove("GPUMETER_NVML_LIB")
        .env("GPUMETER_FAKE_NVML_SCENARIO", &file.path)
        .env("GPUMETER_FAKE_NVML_ELAPSED_MS", "1000")
        .env("GPUMETER_DEV_DIR", &dev)
        .env("XDG_STATE_HOME", dir.path().join("state"))
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .output()
        .unwrap();
    drop(ns);
    assert!(
        out.status.success(),
        "gpumeter in the namespace failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let snap: Value = serde_json::from_slice(&out.stdout).unwrap();
    let procs = snap["processes"].as_array().unwrap();
    let gpu: Vec<&Value> = procs
        .iter()
        .filter(|p| !p["gpu"].as_array().unwrap().is_empty())
        .collect();
    assert_eq!(gpu.len(), 1, "{procs:#?}");
    let p = gpu[0];
    assert_eq!(p["pid"], 2, "listed by its pid inside: {p:#}");
    assert_eq!(p["host_pid"], outer, "{p:#}");
    assert_eq!(p["pid_match"], "device", "{p:#}");
    assert_eq!(p["visible"], true);
    assert_eq!(p["name"], "sleep");
    assert_eq!(snap["schema"], gpumeter_model::SCHEMA_VERSION);
}
