//! Asking a Python which torch it has, without importing torch (so no CUDA initialisation, and
//! no seconds spent loading it): the probe finds the package and reads `torch/version.py`,
//! where the wheel records `__version__` and `cuda`. Bounded by a timeout; the child is killed
//! when it overruns.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::facts::{Torch, TorchBuild};
use gpumeter_core::sanitize::sanitize;

/// How long the Python may take.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(5);
/// Longest answer read.
const MAX_ANSWER_BYTES: u64 = 4096;

const SCRIPT: &str = r#"
import importlib.util, json, os, re
out = {"torch": None, "cuda": None}
spec = importlib.util.find_spec("torch")
for d in (spec.submodule_search_locations or []) if spec else []:
    p = os.path.join(d, "version.py")
    if os.path.exists(p):
        t = open(p).read()
        v = re.search(r"^__version__\s*(?::[^=]*)?=\s*['\"]([^'\"]+)", t, re.M)
        c = re.search(r"^cuda\s*(?::[^=]*)?=\s*['\"]([^'\"]+)['\"]", t, re.M)
        out["torch"] = v.group(1) if v else "unknown"
        out["cuda"] = c.group(1) if c else None
        break
print(json.dumps(out))
"#;

#[derive(Deserialize)]
struct Answer {
    torch: Option<String>,
    cuda: Option<String>,
}

/// `python3`, else `python`, on `path` (a `PATH` value).
pub fn find_on_path(path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    let path = path?;
    for name in ["python3", "python"] {
        for dir in std::env::split_paths(path) {
            let candidate = dir.join(name);
            if is_executable(&candidate) {
                return Some(candidate);
            }
        }
    }
    None
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Runs the probe on `python`.
pub fn probe(python: &Path, timeout: Duration) -> Torch {
    let failed = |why: String| Torch::ProbeFailed {
        python: python.to_path_buf(),
        why: sanitize(&why, 200),
    };
    let mut child = match Command::new(python)
        .args(["-I", "-c", SCRIPT])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => return failed(format!("did not start ({e})")),
    };
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return failed(format!("no answer within {} s", timeout.as_secs()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return failed(e.to_string()),
        }
    };
    let mut text = String::new();
    if let Some(out) = child.stdout.take() {
        let _ = out.take(MAX_ANSWER_BYTES).read_to_string(&mut text);
    }
    if !status.success() {
        return failed(format!("exited with {status}"));
    }
    let Some(answer) = text
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str::<Answer>(l.trim()).ok())
    else {
        return failed(format!("unexpected answer '{}'", text.trim()));
    };
    let clean = |s: String| sanitize(&s, 64);
    Torch::Found {
        python: python.to_path_buf(),
        build: answer.torch.map(|version| TorchBuild {
            version: clean(version),
            cuda: answer.cuda.map(clean),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn stub(dir: &Path, body: &str) -> PathBuf {
        let p = dir.join("python3");
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    #[test]
    fn a_stub_python_is_found_on_path_and_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = stub(
            dir.path(),
            r#"echo '{"torch": "2.8.0+cu129", "cuda": "12.9"}'"#,
        );
        assert_eq!(find_on_path(Some(dir.path().as_os_str())), Some(p.clone()));
        match probe(&p, PROBE_TIMEOUT) {
            Torch::Found { build: Some(b), .. } => {
                assert_eq!(b.version, "2.8.0+cu129");
                assert_eq!(b.cuda.as_deref(), Some("12.9"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn no_torch_garbage_failure_and_timeout_are_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        let p = stub(dir.path(), r#"echo '{"torch": null, "cuda": null}'"#);
        assert!(matches!(
            probe(&p, PROBE_TIMEOUT),
            Torch::Found { build: None, .. }
        ));
        let p = stub(dir.path(), "echo hello");
        assert!(
            matches!(probe(&p, PROBE_TIMEOUT), Torch::ProbeFailed { why, .. } if why.contains("unexpected"))
        );
        let p = stub(dir.path(), "exit 3");
        assert!(
            matches!(probe(&p, PROBE_TIMEOUT), Torch::ProbeFailed { why, .. } if why.contains("exited"))
        );
        let p = stub(dir.path(), "exec sleep 30");
        assert!(
            matches!(probe(&p, Duration::from_millis(200)), Torch::ProbeFailed { why, .. } if why.contains("no answer"))
        );
        assert!(matches!(
            probe(&dir.path().join("nope"), PROBE_TIMEOUT),
            Torch::ProbeFailed { .. }
        ));
    }

    #[test]
    fn the_real_script_runs_where_a_python_exists() {
        let Some(py) = find_on_path(std::env::var_os("PATH").as_deref()) else {
            eprintln!("skipped: no python3 on PATH");
            return;
        };
        // Whatever is installed, the answer must parse (torch or not).
        assert!(
            matches!(probe(&py, PROBE_TIMEOUT), Torch::Found { .. }),
            "{py:?}"
        );
    }
}
