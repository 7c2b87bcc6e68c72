//! Running a configured command safely: an argv list (never a shell), extra environment
//! variables, a timeout after which the child is killed, output discarded or inherited. Shared
//! by the alert hooks, the autostop stop command and `wall`.

use std::io::Write;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// The argv list is empty: nothing to run.
    #[error("empty command")]
    Empty,
    /// The program could not be started (not found, not executable).
    #[error("cannot start {program}: {message}")]
    Spawn {
        /// The program (`argv[0]`).
        program: String,
        /// The operating system's error, as text.
        message: String,
    },
    /// The child outlived the timeout and was killed.
    #[error("{program} did not finish within {timeout_ms} ms and was killed")]
    TimedOut {
        /// The program (`argv[0]`).
        program: String,
        /// The timeout it ran past, ms.
        timeout_ms: u64,
    },
    /// The child exited unsuccessfully (non-zero status or a signal).
    #[error("{program} failed: {status}")]
    Failed {
        /// The program (`argv[0]`).
        program: String,
        /// The exit status as the standard library prints it (`exit status: 1`).
        status: String,
    },
}

/// What to run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunSpec<'a> {
    /// The program and its arguments; run directly, never through a shell.
    pub argv: &'a [String],
    /// Extra environment variables (name, value), on top of the inherited environment.
    pub env: Vec<(String, String)>,
    /// How long the child may run before it is killed.
    pub timeout: Duration,
    /// Written to the child's standard input, then closed.
    pub stdin: Option<String>,
    /// Let the child write to our stdout/stderr (headless mode) instead of discarding it
    /// (the dashboard owns the terminal).
    pub inherit_output: bool,
}

/// Runs the command and waits for it (at most `timeout`). A non-zero exit is an error.
pub fn run(spec: &RunSpec<'_>) -> Result<(), RunError> {
    let (program, args) = spec.argv.split_first().ok_or(RunError::Empty)?;
    let out = || {
        if spec.inherit_output {
            Stdio::inherit()
        } else {
            Stdio::null()
        }
    };
    let mut child = Command::new(program)
        .args(args)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(if spec.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(out())
        .stderr(out())
        .spawn()
        .map_err(|e| RunError::Spawn {
            program: program.clone(),
            message: e.to_string(),
        })?;
    if let (Some(text), Some(mut stdin)) = (&spec.stdin, child.stdin.take()) {
        // A child that exits without reading closes the pipe: that is its business.
        let _ = stdin.write_all(text.as_bytes());
    }
    let deadline = Instant::now() + spec.timeout;
    let status: ExitStatus = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(RunError::TimedOut {
                    program: program.clone(),
                    timeout_ms: u64::try_from(spec.timeout.as_millis()).unwrap_or(u64::MAX),
                });
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => {
                return Err(RunError::Spawn {
                    program: program.clone(),
                    message: e.to_string(),
                });
            }
        }
    };
    if status.success() {
        Ok(())
    } else {
        Err(RunError::Failed {
            program: program.clone(),
            status: status.to_string(),
        })
    }
}

/// Splits a command line the way a POSIX shell splits words (quotes, backslashes), without
/// running a shell: `sudo shutdown -h now`, `'/opt/my tool' --flag "a b"`.
pub fn split_command(line: &str) -> Option<Vec<String>> {
    shlex::split(line).filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn runs_without_a_shell_with_env_and_stdin() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let script = format!(
            "printf '%s|' \"$GPUMETER_X\" \"$(cat)\" > '{}'",
            out.display()
        );
        let a = argv(&["sh", "-c", &script]);
        run(&RunSpec {
            argv: &a,
            env: vec![("GPUMETER_X".into(), "a;b $(x)".into())],
            timeout: Duration::from_secs(10),
            stdin: Some("hello".into()),
            inherit_output: false,
        })
        .unwrap();
        // The value reached the child verbatim: nothing expanded it.
        assert_eq!(std::fs::read_to_string(out).unwrap(), "a;b $(x)|hello|");
    }

    #[test]
    fn timeout_kills_and_failures_are_errors() {
        let a = argv(&["sleep", "30"]);
        let e = run(&RunSpec {
            argv: &a,
            timeout: Duration::from_millis(200),
            ..RunSpec::default()
        })
        .unwrap_err();
        assert!(matches!(e, RunError::TimedOut { .. }), "{e}");
        let a = argv(&["false"]);
        let e = run(&RunSpec {
            argv: &a,
            timeout: Duration::from_secs(10),
            ..RunSpec::default()
        })
        .unwrap_err();
        assert!(e.to_string().starts_with("false failed"), "{e}");
        let a = argv(&["/nonexistent/tool"]);
        let e = run(&RunSpec {
            argv: &a,
            timeout: Duration::from_secs(1),
            ..RunSpec::default()
        })
        .unwrap_err();
        assert!(
            e.to_string().contains("cannot start /nonexistent/tool"),
            "{e}"
        );
        assert_eq!(run(&RunSpec::default()), Err(RunError::Empty));
    }

    #[test]
    fn command_lines_split_like_a_shell_without_one() {
        assert_eq!(
            split_command("sudo shutdown -h now").unwrap(),
            argv(&["sudo", "shutdown", "-h", "now"])
        );
        assert_eq!(
            split_command("'/opt/my tool' --m \"a b\" c\\ d").unwrap(),
            argv(&["/opt/my tool", "--m", "a b", "c d"])
        );
        assert_eq!(
            split_command("echo $(rm -rf /); x").unwrap(),
            argv(&["echo", "$(rm", "-rf", "/);", "x"])
        );
        assert_eq!(split_command("'unclosed"), None);
        assert_eq!(split_command("   "), None);
    }
}
