//! Acting on the host's processes: sending TERM / INT / KILL and renicing, each guarded against
//! a reused PID. A [`Target`] is a PID together with the start time its `/proc/<pid>/stat` held
//! when the user chose it (field 22, clock ticks since boot); every act re-reads that start time
//! just before the system call and refuses when it changed, so a PID the kernel handed to a new
//! process is never hit. Errors say which PID and why (gone, reused, not permitted), for the
//! status line. No UI, no engine: the dashboard asks, this room acts (rustix for the calls,
//! procfs for the reading).

use std::fmt;
use std::io;

use rustix::process::{Pid, Signal as RawSignal, kill_process, setpriority_process};

/// The signals the dashboard offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGTERM: ask the process to exit (a trainer can checkpoint first).
    Term,
    /// SIGINT: what Ctrl-C in its terminal would send (Python raises KeyboardInterrupt).
    Int,
    /// SIGKILL: the kernel ends it; nothing runs after.
    Kill,
}

impl Signal {
    /// `TERM`, `INT`, `KILL`.
    pub fn name(self) -> &'static str {
        match self {
            Signal::Term => "TERM",
            Signal::Int => "INT",
            Signal::Kill => "KILL",
        }
    }

    fn raw(self) -> RawSignal {
        match self {
            Signal::Term => RawSignal::TERM,
            Signal::Int => RawSignal::INT,
            Signal::Kill => RawSignal::KILL,
        }
    }
}

impl fmt::Display for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why an act was not done.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ActError {
    /// The process is no longer there.
    #[error("pid {pid} has exited")]
    Gone { pid: u32 },
    /// The PID now belongs to another process (its start time changed): refused.
    #[error("pid {pid} is now another process (its start time changed): nothing sent")]
    Reused { pid: u32 },
    /// The PID is not the process the reading showed (started at another time): refused.
    #[error("pid {pid} is not the process shown (it started at another time): nothing sent")]
    NotAsShown { pid: u32 },
    /// The kernel said no (another user's process, or a lower nice without privilege).
    #[error("{what} pid {pid}: not permitted (another user's process, or needs root)")]
    NotPermitted { pid: u32, what: String },
    /// Any other failure, with the system's words.
    #[error("{what} pid {pid}: {message}")]
    Os {
        pid: u32,
        what: String,
        message: String,
    },
}

impl ActError {
    /// The PID the error is about.
    pub fn pid(&self) -> u32 {
        match self {
            ActError::Gone { pid }
            | ActError::Reused { pid }
            | ActError::NotAsShown { pid }
            | ActError::NotPermitted { pid, .. }
            | ActError::Os { pid, .. } => *pid,
        }
    }

    /// An error of a system call, named for what was tried (`TERM to`, `renice`).
    fn from_io(pid: u32, what: &str, err: &io::Error) -> ActError {
        if err.kind() == io::ErrorKind::PermissionDenied {
            return ActError::NotPermitted {
                pid,
                what: what.to_string(),
            };
        }
        if err.raw_os_error() == Some(rustix::io::Errno::SRCH.raw_os_error()) {
            return ActError::Gone { pid };
        }
        ActError::Os {
            pid,
            what: what.to_string(),
            message: err.to_string(),
        }
    }
}

/// A process to act on: its PID and the start time that identifies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    pub pid: u32,
    /// `/proc/<pid>/stat` field 22 when the target was taken.
    pub start_ticks: u64,
}

/// What identifies a process to the kernel: its start time in ticks since boot, or `Gone`.
pub fn start_ticks(pid: u32) -> Result<u64, ActError> {
    let pid_i32 = i32::try_from(pid).map_err(|_| ActError::Gone { pid })?;
    procfs::process::Process::new(pid_i32)
        .and_then(|p| p.stat())
        .map(|s| s.starttime)
        .map_err(|_| ActError::Gone { pid })
}

impl Target {
    /// The process now at `pid`. When the reading said when that process started
    /// (`shown_start_unix_s`, computed as `boot + ticks / ticks_per_s` like the host source
    /// does), the process there now must have started then too.
    pub fn take(
        pid: u32,
        shown_start_unix_s: Option<i64>,
        boot_time_unix_s: Option<i64>,
    ) -> Result<Target, ActError> {
        let start_ticks = start_ticks(pid)?;
        if let (Some(shown), Some(boot)) = (shown_start_unix_s, boot_time_unix_s) {
            let tps = procfs::ticks_per_second().max(1);
            let now = boot.saturating_add((start_ticks / tps) as i64);
            if now != shown {
                return Err(ActError::NotAsShown { pid });
            }
        }
        Ok(Target { pid, start_ticks })
    }

    /// Fails unless the PID still holds the process this target was taken from.
    pub fn check(&self) -> Result<Pid, ActError> {
        let pid = self.pid;
        if start_ticks(pid)? != self.start_ticks {
            return Err(ActError::Reused { pid });
        }
        i32::try_from(pid)
            .ok()
            .and_then(Pid::from_raw)
            .ok_or(ActError::Gone { pid })
    }

    /// Sends `signal`, after checking the PID still holds this process.
    pub fn signal(&self, signal: Signal) -> Result<(), ActError> {
        let pid = self.check()?;
        kill_process(pid, signal.raw())
            .map_err(|e| ActError::from_io(self.pid, &format!("{signal} to"), &e.into()))
    }

    /// The process's nice value (its main thread's).
    pub fn nice(&self) -> Result<i32, ActError> {
        let pid = self.check()?;
        rustix::process::getpriority_process(Some(pid))
            .map_err(|e| ActError::from_io(self.pid, "reading the nice of", &e.into()))
    }

    /// Sets the nice value of every thread of the process (Linux keeps one per thread, and a
    /// trainer's work runs in many), after checking the PID still holds this process.
    pub fn renice(&self, nice: i32) -> Result<(), ActError> {
        let pid = self.check()?;
        let what = format!("renice to {nice}");
        let tids = thread_ids(self.pid);
        // The main thread first: if that is refused, no thread is changed.
        setpriority_process(Some(pid), nice)
            .map_err(|e| ActError::from_io(self.pid, &what, &e.into()))?;
        for tid in tids.into_iter().filter(|t| *t != self.pid) {
            let Some(t) = i32::try_from(tid).ok().and_then(Pid::from_raw) else {
                continue;
            };
            match setpriority_process(Some(t), nice) {
                // A thread that ended meanwhile needs nothing.
                Err(e) if e == rustix::io::Errno::SRCH => {}
                Err(e) => return Err(ActError::from_io(self.pid, &what, &e.into())),
                Ok(()) => {}
            }
        }
        Ok(())
    }
}

/// The thread ids of `pid` (empty when /proc cannot list them).
fn thread_ids(pid: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// Sends `signal` to every target, each checked on its own; one refusal does not stop the rest.
/// Returns how many got it and the errors.
pub fn signal_all(targets: &[Target], signal: Signal) -> (usize, Vec<ActError>) {
    let mut sent = 0;
    let mut errors = Vec::new();
    for t in targets {
        match t.signal(signal) {
            Ok(()) => sent += 1,
            Err(e) => errors.push(e),
        }
    }
    (sent, errors)
}

/// Renices every target, each checked on its own.
pub fn renice_all(targets: &[Target], nice: i32) -> (usize, Vec<ActError>) {
    let mut done = 0;
    let mut errors = Vec::new();
    for t in targets {
        match t.renice(nice) {
            Ok(()) => done += 1,
            Err(e) => errors.push(e),
        }
    }
    (done, errors)
}

#[cfg(test)]
mod tests;
