//! What the process detail view reads of one process, once, when it opens: its working
//! directory (`/proc/<pid>/cwd`) and the part of its environment (`/proc/<pid>/environ`) that
//! says how it uses the GPUs — which devices it sees, its rank in a distributed job, NCCL and
//! allocator settings, its virtual environment. The rest of the environment is counted, never
//! shown: it is where tokens and passwords live, and a variable whose name looks like one is
//! hidden even when its prefix is a GPU one. Everything is sanitized (a hostile process names
//! its own directory and variables). Reads only under the proc root it is given; never fails
//! as a whole: each part says why it is missing.

use std::io::Read;
use std::path::Path;

use crate::sanitize::sanitize;

/// Longest environment read: a process's whole environment is rarely over a few KiB.
const MAX_ENVIRON_BYTES: u64 = 256 << 10;
/// Longest value (and directory) shown.
const MAX_VALUE_CHARS: usize = 200;
/// Longest variable name kept.
const MAX_NAME_CHARS: usize = 64;

/// Variables shown by their whole name.
const NAMES: &[&str] = &[
    "RANK",
    "LOCAL_RANK",
    "GROUP_RANK",
    "NODE_RANK",
    "WORLD_SIZE",
    "LOCAL_WORLD_SIZE",
    "MASTER_ADDR",
    "MASTER_PORT",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "PYTORCH_CUDA_ALLOC_CONF",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "CONDA_DEFAULT_ENV",
    "VIRTUAL_ENV",
    "SLURM_JOB_ID",
    "SLURM_PROCID",
    "TORCHELASTIC_RUN_ID",
];
/// Prefixes of the variables shown.
const PREFIXES: &[&str] = &["CUDA_", "NCCL_", "NVIDIA_", "TORCH_", "XLA_", "TF_GPU_"];
/// Words that mark a secret, whatever the prefix (`NCCL_..._TOKEN` is not shown).
const SECRET_WORDS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "PASS",
    "PWD",
    "KEY",
    "CRED",
    "AUTH",
    "COOKIE",
    "PRIVATE",
    "CERT",
    "SESSION",
    "SIGNATURE",
];

/// Why a part could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unread {
    /// Another user's process (reading it needs its owner or root).
    Denied,
    /// The process has exited.
    Gone,
    /// Anything else, in the system's words.
    Failed(String),
}

impl std::fmt::Display for Unread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unread::Denied => {
                f.write_str("not readable: another user's process (needs its owner or root)")
            }
            Unread::Gone => f.write_str("the process has exited"),
            Unread::Failed(why) => write!(f, "not readable: {why}"),
        }
    }
}

impl From<std::io::Error> for Unread {
    fn from(e: std::io::Error) -> Self {
        match e.kind() {
            std::io::ErrorKind::PermissionDenied => Unread::Denied,
            std::io::ErrorKind::NotFound => Unread::Gone,
            _ => Unread::Failed(e.to_string()),
        }
    }
}

/// The GPU-related part of an environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GpuEnvironment {
    /// (name, value), sorted by name.
    pub shown: Vec<(String, String)>,
    /// How many other variables it has.
    pub hidden: usize,
}

/// One process's directory and environment, as read when its detail opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inspection {
    /// Where it runs (`/proc/<pid>/cwd`'s target).
    pub cwd: Result<String, Unread>,
    /// Its GPU-related variables.
    pub environment: Result<GpuEnvironment, Unread>,
}

/// Reads `pid` under `proc` (`/proc`, or a fixture tree).
pub fn inspect(proc: &Path, pid: u32) -> Inspection {
    let dir = proc.join(pid.to_string());
    let cwd = std::fs::read_link(dir.join("cwd"))
        .map(|p| sanitize(&p.to_string_lossy(), MAX_VALUE_CHARS))
        .map_err(Unread::from);
    let environment = read_environ(&dir.join("environ")).map(|raw| gpu_environment(&raw));
    Inspection { cwd, environment }
}

fn read_environ(path: &Path) -> Result<Vec<u8>, Unread> {
    let mut raw = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_ENVIRON_BYTES)
        .read_to_end(&mut raw)?;
    Ok(raw)
}

/// The GPU-related variables of a NUL-separated environment, and a count of the rest.
pub fn gpu_environment(raw: &[u8]) -> GpuEnvironment {
    let mut out = GpuEnvironment::default();
    for entry in raw.split(|b| *b == 0).filter(|e| !e.is_empty()) {
        let text = String::from_utf8_lossy(entry);
        let (name, value) = text.split_once('=').unwrap_or((&text, ""));
        if shown(name) {
            out.shown.push((
                sanitize(name, MAX_NAME_CHARS),
                sanitize(&without_userinfo(value), MAX_VALUE_CHARS),
            ));
        } else {
            out.hidden += 1;
        }
    }
    out.shown.sort();
    out
}

/// `value` with the `user:password@` of a URL in it blanked (`https://***@host/…`): a
/// shown variable may still carry a store's address with its login.
fn without_userinfo(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        let authority_end = tail
            .find(['/', '?', '#', ' ', ',', ';'])
            .unwrap_or(tail.len());
        match tail[..authority_end].rfind('@') {
            Some(user_end) => {
                out.push_str("***");
                rest = &tail[user_end..];
            }
            None => rest = tail,
        }
    }
    out.push_str(rest);
    out
}

/// Whether a variable named `name` is shown: a GPU name or prefix, and no secret's word.
fn shown(name: &str) -> bool {
    let gpu = NAMES.contains(&name) || PREFIXES.iter().any(|p| name.starts_with(p));
    let upper = name.to_ascii_uppercase();
    gpu && !SECRET_WORDS.iter().any(|w| upper.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_gpu_variables_are_shown_and_secrets_never_are() {
        let raw = b"HOME=/root\0CUDA_VISIBLE_DEVICES=0,1\0AWS_SECRET_ACCESS_KEY=abc\0\
NCCL_DEBUG=INFO\0LOCAL_RANK=1\0HF_TOKEN=hf_x\0NCCL_IB_AUTH_TOKEN=zzz\0\
TORCH_NCCL_ASYNC_ERROR_HANDLING=1\0PATH=/usr/bin\0RANKING=no\0";
        let env = gpu_environment(raw);
        let names: Vec<&str> = env.shown.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "CUDA_VISIBLE_DEVICES",
                "LOCAL_RANK",
                "NCCL_DEBUG",
                "TORCH_NCCL_ASYNC_ERROR_HANDLING"
            ]
        );
        assert_eq!(env.shown[0].1, "0,1");
        assert_eq!(env.hidden, 6);
        let all = format!("{env:?}");
        assert!(!all.contains("abc") && !all.contains("hf_x") && !all.contains("zzz"));
    }

    #[test]
    fn a_login_inside_a_shown_url_is_blanked() {
        let raw = b"TORCH_HOME=s3://alice:hunter2@bucket.example/models\0\
NCCL_SOCKET_IFNAME=eth0\0TORCH_X=a://u@h,b://v:w@i/x\0TORCH_KEYLESS_PWD_FILE=x\0";
        let env = gpu_environment(raw);
        let all = format!("{env:?}");
        assert!(!all.contains("hunter2") && !all.contains("alice"), "{all}");
        let value = |n: &str| {
            env.shown
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(
            value("TORCH_HOME").as_deref(),
            Some("s3://***@bucket.example/models")
        );
        assert_eq!(value("TORCH_X").as_deref(), Some("a://***@h,b://***@i/x"));
        assert_eq!(value("NCCL_SOCKET_IFNAME").as_deref(), Some("eth0"));
        assert_eq!(
            value("TORCH_KEYLESS_PWD_FILE"),
            None,
            "a secret's word hides it"
        );
    }

    #[test]
    fn hostile_names_and_values_are_sanitized_and_capped() {
        let long = "x".repeat(5000);
        let raw = format!(
            "CUDA_\u{1b}[2JEVIL=\u{1b}]0;pwned\u{7}v\0NCCL_SOCKET_IFNAME={long}\0novalue\0"
        );
        let env = gpu_environment(raw.as_bytes());
        for (n, v) in &env.shown {
            assert!(!n.contains('\u{1b}') && !v.contains('\u{1b}') && !v.contains('\u{7}'));
            // A cut value ends with `…` after at most the cap.
            assert!(v.chars().count() <= MAX_VALUE_CHARS + 1, "{v}");
        }
        assert_eq!(env.shown.len(), 2);
        assert_eq!(
            env.hidden, 1,
            "an entry with no `=` counts, as a name alone"
        );
    }

    #[test]
    fn this_process_reads_itself_and_a_missing_one_is_gone() {
        let me = inspect(Path::new("/proc"), std::process::id());
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(me.cwd, Ok(cwd.to_string_lossy().into_owned()));
        assert!(me.environment.is_ok());
        let none = inspect(Path::new("/proc"), u32::MAX);
        assert_eq!(none.cwd, Err(Unread::Gone));
        assert_eq!(none.environment, Err(Unread::Gone));
    }

    #[test]
    fn a_fixture_tree_with_a_link_and_an_unreadable_environ() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("77");
        std::fs::create_dir(&p).unwrap();
        std::os::unix::fs::symlink("/workspace/llama", p.join("cwd")).unwrap();
        // A directory where the file should be: read fails with the system's words.
        std::fs::create_dir(p.join("environ")).unwrap();
        let got = inspect(dir.path(), 77);
        assert_eq!(got.cwd, Ok("/workspace/llama".to_string()));
        assert!(
            matches!(&got.environment, Err(Unread::Failed(why)) if !why.is_empty()),
            "{got:?}"
        );
    }
}
