//! What does not change while a process lives: command line, container, user and PID-namespace
//! ids (and its CPU affinity, which can change but rarely does: a later `taskset -p` shows only
//! once the process restarts). Read only for processes in the result, once per process lifetime, and cached by
//! (pid, start time, comm): a reused pid starts later, and an `exec` renames comm, so either
//! change drops the cached entry. A read that fails is retried on the next tick.
//!
//! A GPU process's facts are read on its first tick; a descendant's from its second tick in
//! the tree on ([`StaticsCache::shown`] reads nothing until then), so the first reading costs the GPU
//! processes' files only and shows at once (a worker's command and user follow a tick later),
//! and a burst of short-lived workers is not read at all.

use std::io;
use std::path::{Path, PathBuf};

use foldhash::{HashMap, HashMapExt};
use gpumeter_model::{PodRef, SharedStr};
use procfs::ProcessCGroups;
use procfs::prelude::*;

use super::containers::{container_of, pod_uid_of};
use super::nspid::{StatusInfo, parse_status};
use super::system::read_capped;
use super::users::UserNames;
use crate::sanitize::{MAX_COMMAND_CHARS, MAX_NAME_CHARS, sanitize, sanitize_bytes};

/// Bytes of a command line read: far more than is kept after sanitizing, far less than the
/// megabytes a hostile or generated command line can hold.
const MAX_CMDLINE_BYTES: u64 = 32 << 10;
/// Bytes of `status` or `cgroup` read (real ones are a few kilobytes).
const MAX_SMALL_FILE_BYTES: u64 = 64 << 10;

/// Which process an entry belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Key<'a> {
    pub(super) pid: u32,
    pub(super) start_ticks: u64,
    pub(super) comm: &'a str,
}

/// The cached facts; `None` until read successfully.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Statics {
    pub(super) status: Option<StatusInfo>,
    pub(super) command: Option<SharedStr>,
    /// `Some(None)`: read, and the process is on the host.
    pub(super) container: Option<Option<SharedStr>>,
    /// The Kubernetes pod's UID, read with `container` from the same cgroup file.
    pub(super) pod_uid: Option<SharedStr>,
    pub(super) user: Option<SharedStr>,
}

#[derive(Debug)]
struct Entry {
    start_ticks: u64,
    comm: String,
    /// `comm` made safe to show (sanitized once per process, not every tick; shared with
    /// every reading of it).
    name: SharedStr,
    statics: Statics,
}

impl Entry {
    fn new(key: Key<'_>) -> Entry {
        Entry {
            start_ticks: key.start_ticks,
            comm: key.comm.to_string(),
            name: sanitize(key.comm, MAX_NAME_CHARS).into(),
            statics: Statics::default(),
        }
    }
}

/// What a reading shows of a process's cached facts: shared strings, cloned as pointers.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Shown {
    /// Its comm, sanitized.
    pub(super) name: SharedStr,
    pub(super) user: Option<SharedStr>,
    pub(super) container: Option<SharedStr>,
    /// Its Kubernetes pod (UID and container id) when its cgroup names one.
    pub(super) pod: Option<PodRef>,
    pub(super) command: Option<SharedStr>,
    pub(super) ns_pid: Option<u32>,
    pub(super) cpus_allowed: Option<u32>,
    pub(super) cpus_allowed_list: Option<SharedStr>,
}

impl Statics {
    /// Whether every fact is in (every tick after a process's first, usually).
    fn complete(&self) -> bool {
        self.status.is_some()
            && self.command.is_some()
            && self.container.is_some()
            && (self.user.is_some() || self.status.as_ref().is_some_and(|s| s.euid.is_none()))
    }
}

impl Entry {
    fn shown(&self, pid: u32) -> Shown {
        let s = &self.statics;
        let status = s.status.as_ref();
        Shown {
            name: self.name.clone(),
            user: s.user.clone(),
            container: s.container.clone().flatten(),
            pod: s.pod_uid.as_ref().map(|uid| PodRef {
                pod_uid: Some(uid.clone()),
                container: s.container.clone().flatten(),
                ..PodRef::default()
            }),
            command: s.command.clone(),
            ns_pid: status.and_then(|st| st.ns_pid(pid)),
            cpus_allowed: status.and_then(|st| st.cpus_allowed),
            cpus_allowed_list: status.and_then(|st| st.cpus_allowed_list.clone()),
        }
    }
}

/// The per-process cache.
#[derive(Debug)]
pub(super) struct StaticsCache {
    proc: PathBuf,
    entries: HashMap<u32, Entry>,
    users: UserNames,
    /// Reads refused this tick (permissions), for one summary warning.
    denied: usize,
}

impl StaticsCache {
    pub(super) fn new(proc: PathBuf, passwd: PathBuf) -> Self {
        Self {
            proc,
            entries: HashMap::new(),
            users: UserNames::new(passwd),
            denied: 0,
        }
    }

    fn entry(&mut self, key: Key<'_>) -> &mut Entry {
        let entry = self
            .entries
            .entry(key.pid)
            .or_insert_with(|| Entry::new(key));
        if entry.start_ticks != key.start_ticks || entry.comm != key.comm {
            *entry = Entry::new(key);
        }
        entry
    }

    fn dir(&self, pid: u32) -> PathBuf {
        self.proc.join(pid.to_string())
    }

    /// `status` facts (uid, NSpid), read if not cached.
    pub(super) fn status(&mut self, key: Key<'_>) -> Option<StatusInfo> {
        if let Some(status) = &self.entry(key).statics.status {
            return Some(status.clone());
        }
        let read = self.read(&self.dir(key.pid).join("status"), MAX_SMALL_FILE_BYTES);
        let status = parse_status(&read?);
        self.entry(key).statics.status = Some(status.clone());
        Some(status)
    }

    /// What a reading of `key` shows: what is cached, and with `read` what is not yet read
    /// (one look-up once a process's facts are all in).
    pub(super) fn shown(&mut self, key: Key<'_>, now_ms: i64, read: bool) -> Shown {
        let entry = self.entry(key);
        if !read || entry.statics.complete() {
            return entry.shown(key.pid);
        }
        self.read_missing(key, now_ms);
        self.entry(key).shown(key.pid)
    }

    /// Reads what is not cached yet of `key`'s facts.
    fn read_missing(&mut self, key: Key<'_>, now_ms: i64) {
        let status = self.status(key);
        let dir = self.dir(key.pid);
        if self.entry(key).statics.command.is_none()
            && let Some(raw) = self.read(&dir.join("cmdline"), MAX_CMDLINE_BYTES)
        {
            self.entry(key).statics.command = Some(command_line(&raw, key.comm).into());
        }
        if self.entry(key).statics.container.is_none()
            && let Some(raw) = self.read(&dir.join("cgroup"), MAX_SMALL_FILE_BYTES)
        {
            let groups = ProcessCGroups::from_read(raw.as_slice()).ok();
            let container = groups.as_ref().and_then(container_of).map(SharedStr::from);
            let pod_uid = groups.as_ref().and_then(pod_uid_of).map(SharedStr::from);
            let statics = &mut self.entry(key).statics;
            statics.container = Some(container);
            statics.pod_uid = pod_uid;
        }
        if self.entry(key).statics.user.is_none()
            && let Some(uid) = status.and_then(|s| s.euid)
        {
            let name = self.users.name(uid, now_ms);
            self.entry(key).statics.user = Some(name);
        }
    }

    /// Reads a file of a process; a refusal is counted, a vanished process is not.
    fn read(&mut self, path: &Path, limit: u64) -> Option<Vec<u8>> {
        match read_capped(path, limit) {
            Ok(raw) => Some(raw),
            Err(e) => {
                if e.kind() == io::ErrorKind::PermissionDenied {
                    self.denied += 1;
                }
                None
            }
        }
    }

    /// Drops entries of processes that are gone (or whose pid was reused) and returns how
    /// many reads were refused since the last call.
    pub(super) fn end_tick(&mut self, alive: impl Fn(u32, u64) -> bool) -> usize {
        self.entries
            .retain(|&pid, entry| alive(pid, entry.start_ticks));
        std::mem::take(&mut self.denied)
    }
}

impl StaticsCache {
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }
}

/// The command line, NUL-separated and possibly invalid UTF-8, made safe to show. Kernel
/// threads and zombies have none: they show as `[comm]`, as `ps` does.
pub(super) fn command_line(raw: &[u8], comm: &str) -> String {
    let command = sanitize_bytes(raw, MAX_COMMAND_CHARS);
    if command.is_empty() {
        format!("[{}]", sanitize(comm, MAX_NAME_CHARS))
    } else {
        command
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_cmdline_falls_back_to_bracketed_comm() {
        assert_eq!(command_line(b"", "kworker/0:1"), "[kworker/0:1]");
        assert_eq!(command_line(b"\0\0", "evil\x1b[2J"), "[evil]");
        assert_eq!(
            command_line(b"python\0train.py\0", "python"),
            "python train.py"
        );
    }
}
