//! Command hooks: a program run for each fired or reminded alert of a kind (say, a script that
//! pages someone), as an argv list without a shell, with a timeout, the alert's fields in
//! `GPUMETER_ALERT_*` environment variables. Hooks run on a worker thread so a slow script
//! never blocks the dashboard.
//!
//! Hooks only come from a config file that nobody else can change: a file (or its directory)
//! writable by group or others, or owned by another user than us or root, is refused, and the
//! refusal says why. Otherwise anyone who can edit it could run commands as us.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::sync::mpsc::{SyncSender, TrySendError, sync_channel};
use std::time::Duration;

use super::run::{RunSpec, run};
use crate::engine::rules::Transition;

/// Hook runs waiting at most.
const QUEUE: usize = 16;

/// Why hooks from a config file are refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("command hooks disabled: {path} {reason} (fix: chmod go-w {path})")]
pub struct Refused {
    /// The config file (or its folder, when that could not be checked).
    pub path: String,
    /// What is wrong with it (`is group-writable (mode 664)`).
    pub reason: String,
}

/// Checks that `path` and its directory cannot be changed by anyone but us (or root).
pub fn check_config_file(path: &Path) -> Result<(), Refused> {
    let refuse = |p: &Path, reason: String| Refused {
        path: p.display().to_string(),
        reason,
    };
    let me = std::fs::metadata("/proc/self").map(|m| m.uid()).ok();
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    for (p, what) in [(path, "is"), (dir, "is in a directory that is")] {
        let meta =
            std::fs::metadata(p).map_err(|e| refuse(p, format!("cannot be checked: {e}")))?;
        let mode = meta.permissions().mode();
        if mode & 0o022 != 0 {
            let who = if mode & 0o002 != 0 { "world" } else { "group" };
            return Err(refuse(
                path,
                format!("{what} {who}-writable (mode {:o})", mode & 0o7777),
            ));
        }
        if let Some(me) = me
            && meta.uid() != me
            && meta.uid() != 0
        {
            return Err(refuse(
                path,
                format!(
                    "{what} owned by uid {}, not by us ({me}) or root",
                    meta.uid()
                ),
            ));
        }
    }
    Ok(())
}

/// The environment a hook sees for one transition.
pub fn hook_env(t: &Transition) -> Vec<(String, String)> {
    let a = t.alert();
    let evidence = a
        .evidence
        .iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect::<Vec<_>>()
        .join("\n");
    [
        ("ID", a.id.clone()),
        ("KIND", a.kind.name().to_string()),
        ("TRANSITION", t.name().to_string()),
        ("SEVERITY", a.severity.name().to_string()),
        ("GPU", a.gpu.map(|g| g.to_string()).unwrap_or_default()),
        ("TITLE", a.title.clone()),
        ("DETAIL", a.detail.clone()),
        ("EVIDENCE", evidence),
        (
            "COST",
            a.cost_micros.map(|_| a.cost_text()).unwrap_or_default(),
        ),
        (
            "COST_MICROS",
            a.cost_micros.map(|c| c.to_string()).unwrap_or_default(),
        ),
        ("NEXT_STEP", a.next_step.clone().unwrap_or_default()),
        ("SINCE_UNIX_MS", a.since_unix_ms.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (format!("GPUMETER_ALERT_{k}"), v))
    .collect()
}

/// A job for the hook worker.
struct Job {
    argv: Vec<String>,
    env: Vec<(String, String)>,
    timeout: Duration,
}

/// Runs hooks one after another on a worker thread.
#[derive(Debug)]
pub struct HookRunner {
    tx: SyncSender<Job>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job").field("argv", &self.argv).finish()
    }
}

impl HookRunner {
    /// Starts the worker; `report` receives each failure as a line (for the status line or stderr).
    pub fn start(report: impl Fn(String) + Send + 'static) -> HookRunner {
        let (tx, rx) = sync_channel::<Job>(QUEUE);
        let _ = std::thread::Builder::new()
            .name("gpumeter-hooks".into())
            .spawn(move || {
                while let Ok(job) = rx.recv() {
                    let spec = RunSpec {
                        argv: &job.argv,
                        env: job.env,
                        timeout: job.timeout,
                        stdin: None,
                        inherit_output: false,
                    };
                    if let Err(e) = run(&spec) {
                        report(format!("alert hook: {e}"));
                    }
                }
            });
        HookRunner { tx }
    }

    /// Queues a run; false when the queue is full (the run is dropped, not delayed).
    pub fn queue(&self, argv: Vec<String>, env: Vec<(String, String)>, timeout: Duration) -> bool {
        !matches!(
            self.tx.try_send(Job { argv, env, timeout }),
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_))
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rules::Alert;
    use std::sync::mpsc;

    #[test]
    fn group_or_world_writable_config_is_refused_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[alerts.hooks]\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        check_config_file(&path).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        let e = check_config_file(&path).unwrap_err().to_string();
        assert!(e.contains("is world-writable (mode 666)"), "{e}");
        assert!(e.contains("chmod go-w"), "{e}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o620)).unwrap();
        let e = check_config_file(&path).unwrap_err().to_string();
        assert!(e.contains("group-writable"), "{e}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = check_config_file(&path).unwrap_err().to_string();
        assert!(e.contains("directory that is world-writable"), "{e}");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    }

    #[test]
    fn a_hook_script_gets_the_alert_in_its_environment() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let script = dir.path().join("page.sh");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\nprintf '%s|%s|%s|%s' \"$GPUMETER_ALERT_KIND\" \"$GPUMETER_ALERT_TRANSITION\" \"$GPUMETER_ALERT_COST\" \"$1\" > '{}'\n",
                out.display()
            ),
        )
        .unwrap();
        let a = Alert::from_budget(
            100,
            false,
            512_340_000,
            500_000_000,
            crate::money::Currency::USD,
            "run",
            "run",
            0,
        );
        let env = hook_env(&Transition::Fired(a));
        let (tx, rx) = mpsc::channel();
        let runner = HookRunner::start(move |e| tx.send(e).unwrap());
        // Through sh rather than exec'ing the fresh file: no "text file busy" race with other tests.
        let argv = vec![
            "sh".to_string(),
            script.display().to_string(),
            "--urgent".to_string(),
        ];
        assert!(runner.queue(argv, env, Duration::from_secs(10)));
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while !out.exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            "budget|fired|$512.34|--urgent"
        );
        // A failing hook is reported, not retried.
        assert!(runner.queue(vec!["false".into()], Vec::new(), Duration::from_secs(5)));
        let e = rx.recv_timeout(Duration::from_secs(20)).unwrap();
        assert!(e.starts_with("alert hook: false failed"), "{e}");
    }
}
