//! Acting on the selected process from the table: `F9` / `i` / `K` send TERM / INT / KILL, `r`
//! (`F8`) renices, each through a confirmation that names the process (pid, user, command, GPUs, the
//! VRAM it will free) and, with `w`, its whole job (the trainer and its workers); while any
//! process is tagged (Space), the act reaches the tagged ones instead. What is shown
//! in the dialog is taken when it opens ([`Pending`]: each process with its start time, see
//! [`crate::act`]); Enter sends, and every outcome, a refusal included, goes to the status line.
//! Refused up front: `--readonly`, and readings not of this machine (a demo, a replay), whose
//! PIDs mean nothing here.

use gpumeter_model::{ProcessReading, Snapshot};

use super::app::{Action, App};
use super::rows::job::job_of;
use super::tags::Tags;
use crate::act::{self, ActError, Signal, Target};
use gpumeter_core::sanitize::sanitize;
use gpumeter_core::units;

/// Longest command shown in the dialog.
const MAX_COMMAND_CHARS: usize = 200;

/// What a key asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ask {
    Signal(Signal),
    /// Renice; `nicer`: the dialog starts one step nicer (`r`, htop's F8), else one step less
    /// nice (htop's F7; only root may go below the value a process has).
    Renice {
        nicer: bool,
    },
}

impl Ask {
    /// The nice value the dialog starts at, for a process at `now`.
    fn first_nice(self, now: i32) -> i32 {
        match self {
            Ask::Renice { nicer: false } => (now - 1).max(-20),
            _ => (now + 1).min(19),
        }
    }
}

/// Why processes cannot be acted on in this dashboard, if they cannot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Acting {
    /// The readings are this machine's.
    Allowed,
    /// `--readonly` or `[ui] readonly`.
    ReadOnly,
    /// A demo or a replay: its PIDs are not processes here.
    #[default]
    NotLocal,
}

impl Acting {
    /// The status-line words when a key is refused.
    pub fn refusal(self) -> Option<&'static str> {
        match self {
            Acting::Allowed => None,
            Acting::ReadOnly => Some("read-only: signals and renice are off (--readonly)"),
            Acting::NotLocal => {
                Some("these processes are a demo's or a recording's: nothing to signal here")
            }
        }
    }
}

/// One process the dialog names.
#[derive(Debug, Clone, PartialEq)]
pub struct Subject {
    pub target: Target,
    pub user: String,
    pub command: String,
    pub gpus: Vec<u32>,
    /// VRAM it holds, summed over its GPUs; `None` when the driver does not say.
    pub vram_bytes: Option<u64>,
}

/// An open confirmation dialog.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    pub ask: Ask,
    /// The selected process.
    pub one: Subject,
    /// Its job: the topmost ancestor shown, then every descendant of it (the selected one
    /// included); just the selected process when it has none.
    pub job: Vec<Subject>,
    /// `w`: act on the whole job.
    pub whole_job: bool,
    /// The tagged processes still as tagged, when any are: then the act reaches these and
    /// `w` does nothing.
    pub tagged: Vec<Subject>,
    /// Renice: its nice value now, and the one to set.
    pub nice_now: i32,
    pub nice: i32,
}

impl Pending {
    /// The processes the act will reach.
    pub fn subjects(&self) -> &[Subject] {
        if !self.tagged.is_empty() {
            &self.tagged
        } else if self.whole_job {
            &self.job
        } else {
            std::slice::from_ref(&self.one)
        }
    }

    /// The GPUs the act will touch, in order, once each.
    pub fn gpus(&self) -> Vec<u32> {
        let mut g: Vec<u32> = self
            .subjects()
            .iter()
            .flat_map(|s| s.gpus.iter().copied())
            .collect();
        g.sort_unstable();
        g.dedup();
        g
    }

    /// VRAM freed when they exit: the sum of what is known; `None` when none is.
    pub fn vram_bytes(&self) -> Option<u64> {
        self.subjects()
            .iter()
            .filter_map(|s| s.vram_bytes)
            .reduce(u64::saturating_add)
    }

    /// Who the act reaches when it is more than one process: `3 tagged processes`, `4
    /// processes of the job of pid 42`.
    pub fn many(&self) -> Option<String> {
        match self.subjects() {
            [_] => None,
            all if !self.tagged.is_empty() => Some(format!("{} tagged processes", all.len())),
            all => Some(format!(
                "{} processes of the job of pid {}",
                all.len(),
                self.one.target.pid
            )),
        }
    }

    /// The dialog's question.
    pub fn question(&self) -> String {
        let who = self
            .many()
            .unwrap_or_else(|| format!("pid {}", self.one.target.pid));
        match self.ask {
            Ask::Signal(s) => format!("Send {s} to {who}?"),
            // Tagged processes may each have their own nice value: only the one to set.
            Ask::Renice { .. } if self.tagged.len() > 1 => {
                format!("Renice {who} to {}?", self.nice)
            }
            Ask::Renice { .. } => format!("Renice {who} from {} to {}?", self.nice_now, self.nice),
        }
    }

    /// Moves the nice value to set by `delta`, within −20…19.
    pub fn step_nice(&mut self, delta: i32) {
        self.nice = (self.nice + delta).clamp(-20, 19);
    }

    /// Does it; the status line's words.
    pub fn confirm(&self) -> String {
        let targets: Vec<Target> = self.subjects().iter().map(|s| s.target).collect();
        let (done, errors, what) = match self.ask {
            Ask::Signal(s) => {
                let (n, e) = act::signal_all(&targets, s);
                (n, e, format!("sent {s} to"))
            }
            Ask::Renice { .. } => {
                let (n, e) = act::renice_all(&targets, self.nice);
                (n, e, format!("reniced to {}", self.nice))
            }
        };
        outcome(&what, &targets, done, &errors)
    }
}

/// "sent TERM to pid 42", or what went wrong (the first error, and how many more).
fn outcome(what: &str, targets: &[Target], done: usize, errors: &[ActError]) -> String {
    let Some(first) = errors.first() else {
        return match targets {
            [one] => format!("{what} pid {}", one.pid),
            _ => format!("{what} {done} processes"),
        };
    };
    let more = match errors.len() - 1 {
        0 => String::new(),
        n => format!(" (and {n} more refused)"),
    };
    if done == 0 {
        format!("refused: {first}{more}")
    } else {
        format!(
            "{what} {done} of {} processes; {first}{more}",
            targets.len()
        )
    }
}

/// Opens the dialog for the process at `pid` in `snap`, or says why not.
pub fn open(
    ask: Ask,
    acting: Acting,
    pid: Option<u32>,
    snap: Option<&Snapshot>,
) -> Result<Pending, String> {
    if let Some(why) = acting.refusal() {
        return Err(why.to_string());
    }
    let (Some(pid), Some(snap)) = (pid, snap) else {
        return Err("no process selected".into());
    };
    let Some(p) = snap.processes.iter().find(|p| p.pid == pid) else {
        return Err(format!("pid {pid} is no longer listed"));
    };
    if !p.visible {
        return Err(format!(
            "pid {pid} is not visible in /proc here (another PID namespace): nothing to signal"
        ));
    }
    let boot = snap.system.boot_time_unix_s;
    let subject = |p: &ProcessReading| subject(p, boot);
    let one = subject(p)?;
    // The job's other processes that are gone or reused since the reading are left out:
    // only what is still as shown can be reached.
    let job = job_of(snap, pid, true)
        .into_iter()
        .filter_map(|q| {
            if q.pid == pid {
                Some(Ok(one.clone()))
            } else {
                subject(q).ok().map(Ok)
            }
        })
        .collect::<Result<Vec<_>, String>>()?;
    pending(ask, one, job, Vec::new())
}

/// Opens the dialog for the tagged processes in `snap`, or says why not. A tag whose
/// process has gone, started again under its PID, or is not visible here is left out (the
/// dialog lists only what the act reaches).
pub fn open_tagged(
    ask: Ask,
    acting: Acting,
    tags: &Tags,
    snap: Option<&Snapshot>,
) -> Result<Pending, String> {
    if let Some(why) = acting.refusal() {
        return Err(why.to_string());
    }
    let Some(snap) = snap else {
        return Err("no reading yet".into());
    };
    let boot = snap.system.boot_time_unix_s;
    let tagged: Vec<Subject> = tags
        .pids()
        .filter_map(|pid| snap.processes.iter().find(|p| p.pid == pid))
        .filter(|p| p.visible && tags.names(p.pid, p.start_time_unix_s))
        .filter_map(|p| subject(p, boot).ok())
        // The kernel's own identity, read when tagged: a PID reused since is left out even
        // when the readings carry no start time.
        .filter(|s| {
            tags.ticks(s.target.pid)
                .is_none_or(|t| t == s.target.start_ticks)
        })
        .collect();
    let Some(one) = tagged.first().cloned() else {
        return Err(format!(
            "none of the {} tagged processes can be reached now (gone, or not visible here)",
            tags.len()
        ));
    };
    pending(ask, one.clone(), vec![one], tagged)
}

/// The dialog for `one` (its `job`, or the `tagged` processes when there are any); a renice
/// reads `one`'s nice value now.
fn pending(
    ask: Ask,
    one: Subject,
    job: Vec<Subject>,
    tagged: Vec<Subject>,
) -> Result<Pending, String> {
    let nice_now = match ask {
        Ask::Renice { .. } => one.target.nice().map_err(|e| e.to_string())?,
        Ask::Signal(_) => 0,
    };
    Ok(Pending {
        ask,
        one,
        job,
        whole_job: false,
        tagged,
        nice_now,
        // Renicing is almost always to yield: `r` starts one step nicer.
        nice: ask.first_nice(nice_now),
    })
}

/// `p` as the dialog names it, pinned to its start time (`boot`: the machine's boot, to
/// read it against /proc).
fn subject(p: &ProcessReading, boot: Option<i64>) -> Result<Subject, String> {
    let target = Target::take(p.pid, p.start_time_unix_s, boot).map_err(|e| e.to_string())?;
    let gpus = p.gpu.iter().map(|g| g.gpu_index).collect();
    let vram_bytes = p
        .gpu
        .iter()
        .filter_map(|g| g.memory_bytes)
        .reduce(u64::saturating_add);
    Ok(Subject {
        target,
        user: p.user.as_deref().unwrap_or(units::NA).to_string(),
        command: sanitize(
            p.command.as_deref().or(p.name.as_deref()).unwrap_or(""),
            MAX_COMMAND_CHARS,
        ),
        gpus,
        vram_bytes,
    })
}

/// Applies a process action from a key to `app`: opens the dialog (or says why not) or does
/// the confirmed act. Returns whether it was one.
pub fn apply(action: Action, app: &mut App, snap: Option<&Snapshot>) -> bool {
    match action {
        Action::Act(ask) => match if app.tags.is_empty() {
            open(ask, app.acting, app.selected_pid(), snap)
        } else {
            open_tagged(ask, app.acting, &app.tags, snap)
        } {
            Ok(pending) => app.open_confirm(pending),
            Err(why) => app.set_status(why),
        },
        Action::ConfirmAct => {
            if let Some(pending) = app.confirm.take() {
                app.set_status(pending.confirm());
            }
        }
        _ => return false,
    }
    true
}

/// One VRAM figure for the dialog.
pub fn vram_text(bytes: Option<u64>) -> String {
    bytes.map_or_else(|| units::NA.to_string(), units::bytes)
}

#[cfg(test)]
mod tests;
