//! Job finished, meter running: when a job that worked (its GPUs busy for most of the time it
//! was seen, and at least `min_busy` in all) ends — its last GPU process exits (or releases its
//! memory), or its GPUs all go idle while it lives on — a notice rather than after the
//! 10-minute idle window: "python train.py (pid 4242) ended 2 min ago after 6h12m; 8 GPUs now
//! idle at $31.00/h".
//!
//! A job has a rhythm, and a pause it has made before is no end. A job is its launcher's family
//! (GPU processes with the same parent: torchrun's ranks, a sweep agent's trials), remembered
//! for [`FAMILY_MS`] after its processes exit, so the next trial or an elastic restart is the
//! same job coming back and its time counts together. An exit is an end once the family has
//! been gone longer than 1.5 × the longest absence it came back from (at once — `confirm` —
//! when it never came back before; a single process under a launcher — a sweep agent's trial,
//! not a run from a shell (its parent's name says which) — gets [`LAUNCHER_WAIT_MS`] for its
//! next trial to start); a live job's GPUs idle are an end after `went_idle`
//! (default 5 min) and twice its longest pause so far (checkpoints, evaluations, a sweep's
//! set-up between trials). The
//! exit status is not ours to read (gpumeter is not the job's parent); what is known is said —
//! a cgroup OOM kill at the time, an XID on its GPUs. The notice stands until its GPUs work
//! again or `stands` (default 1 h) has passed; the idle rule's reminders follow as usual.
//! A job whose GPU processes are all stopped (state `T`, Ctrl-Z or SIGSTOP; `t`, held by a
//! debugger) is paused, not finished: its idle GPUs are no end while it stays stopped; nor are
//! they while its processes work on the host (an evaluation on the CPU: [`HOST_BUSY_PCT`]), nor
//! while it is an inference server (its GPUs wait for requests; the idle rule says the money).
//! A job that ends while one of its GPUs is lost gets no notice: it lost its card rather than
//! finished, and the lost rule's alert is the one that says so.

use std::collections::BTreeMap;

use gpumeter_model::{GpuState, Snapshot};

use super::alert::{Alert, AlertKind, Severity};
use super::config::{IdleConfig, JobDoneConfig};
use super::idle::gpu_idle;
use super::job::{JobKey, gpu_ranges};
use super::label::process_label;
use super::{Ctx, RuleOutput};

/// A job's family is remembered this long after its processes exit (a sweep's next trial, a
/// restart, comes back within it).
pub const FAMILY_MS: i64 = 30 * 60_000;

/// A job being watched.
#[derive(Debug, Clone)]
struct Seen {
    label: String,
    gpus: Vec<u32>,
    /// When it started (its main process's start time, else first seen).
    start_ms: i64,
    observed_ms: i64,
    busy_ms: i64,
    last_seen_ms: i64,
    /// Since when all its GPUs are idle (it lives on).
    idle_since: Option<i64>,
    reported_idle: bool,
    /// Its GPU processes are all stopped (`T`: Ctrl-Z, SIGSTOP; `t`: a debugger): paused by
    /// someone, not finished, however long its GPUs idle.
    stopped: bool,
    /// Its processes burn CPU ([`HOST_BUSY_PCT`] or more of a core): working on the host (an
    /// evaluation on the CPU, preprocessing), not finished, while its GPUs idle.
    host_busy: bool,
    /// Its main process is an inference server: idle GPUs are a server waiting for requests,
    /// not a job that finished (its exit still is an end).
    serving: bool,
    /// The longest absence (its processes gone) or idle pause it came back from: its rhythm.
    longest_gap_ms: i64,
    /// A single process started by a launcher (its parent: not init, not a shell seen here):
    /// the shape of a sweep agent's trials, whose next one may follow.
    launched: bool,
    /// Its exit was reported (it stays remembered for [`FAMILY_MS`]).
    reported_exit: bool,
    oom_kills: Option<u64>,
    xids: u64,
}

/// How a job ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Exited,
    WentIdle,
}

/// A finished job's notice.
#[derive(Debug, Clone)]
struct Ended {
    label: String,
    gpus: Vec<u32>,
    ended_ms: i64,
    ran_ms: i64,
    how: End,
    exit: String,
}

/// The job-done rule's state across ticks: the jobs seen working and those that ended (see the
/// module docs).
#[derive(Debug, Clone)]
pub struct JobDoneRule {
    cfg: JobDoneConfig,
    idle: IdleConfig,
    last_t: Option<i64>,
    seen: BTreeMap<JobKey, Seen>,
    ended: BTreeMap<JobKey, Ended>,
}

/// How long a family whose launcher still runs may be gone before its exit is an end, when
/// it has no rhythm yet: a sweep agent starts the next trial within a minute or two.
pub const LAUNCHER_WAIT_MS: i64 = 180_000;

/// A job whose processes use this much of a core (in all) works on the host while its GPUs
/// idle: a Python loop waiting for nothing sits near 0 %, an evaluation on the CPU near 100 %.
pub const HOST_BUSY_PCT: f64 = 50.0;

/// Shells and terminal multiplexers: a run started by hand ends while they live on.
const SHELLS: [&str; 9] = [
    "bash", "sh", "zsh", "fish", "dash", "tmux", "screen", "sshd", "login",
];

/// Whether `name` (a comm) is a shell or multiplexer (`-bash` is a login shell; tmux's server
/// is `tmux: server`).
fn is_shell(name: &str) -> bool {
    let name = name.trim_start_matches('-');
    let name = name.split_once(':').map_or(name, |(head, _)| head);
    SHELLS.contains(&name)
}

/// The wait [`LAUNCHER_WAIT_MS`] for a launched single process with no rhythm yet, else none.
fn launcher_wait(s: &Seen) -> i64 {
    if s.launched && s.longest_gap_ms == 0 {
        LAUNCHER_WAIT_MS
    } else {
        0
    }
}

/// The family each job belongs to, in `jobs` order: a job of one process whose parent is a
/// launcher (not init) and the only one of that parent now is its parent's family — a sweep
/// agent's trials, run one at a time, come back as one job with a rhythm. Jobs that share a
/// parent at once (two runs from one shell) stay apart.
fn families(snap: &Snapshot, jobs: &[super::job::Job]) -> Vec<JobKey> {
    let parent = |job: &super::job::Job| match job.key {
        JobKey::Process(pid) => snap
            .processes
            .iter()
            .find(|p| p.pid == pid)
            .and_then(|p| p.ppid)
            .filter(|&pp| pp > 1),
        _ => None,
    };
    let parents: Vec<Option<u32>> = jobs.iter().map(parent).collect();
    jobs.iter()
        .zip(&parents)
        .map(|(job, pp)| match pp {
            Some(pp) if parents.iter().filter(|q| **q == Some(*pp)).count() == 1 => {
                JobKey::Parent(*pp)
            }
            _ => job.key,
        })
        .collect()
}

fn xid_total(snap: &Snapshot, gpus: &[u32]) -> u64 {
    gpus.iter()
        .filter_map(|g| snap.gpu(*g)?.xid_errors.as_ref())
        .flatten()
        .map(|x| x.count)
        .sum()
}

impl JobDoneRule {
    /// A rule with these settings; `idle` is the idle rule's (`[alerts.idle]`), which says when a
    /// GPU sample is idle.
    pub fn new(cfg: JobDoneConfig, idle: IdleConfig) -> Self {
        Self {
            cfg,
            idle,
            last_t: None,
            seen: BTreeMap::new(),
            ended: BTreeMap::new(),
        }
    }

    /// Whether `s` worked enough to be worth a notice when it ends.
    fn worked(&self, s: &Seen, now: i64) -> bool {
        now - s.start_ms >= self.cfg.min_busy_ms
            && s.observed_ms >= 30_000
            && s.busy_ms * 2 >= s.observed_ms
    }

    /// One tick: folds `ctx` in and returns the alerts that stand now (and any due a reminder).
    pub fn evaluate(&mut self, ctx: &Ctx<'_>) -> RuleOutput {
        let snap = ctx.snap;
        let now = ctx.now_ms;
        let dt = self.last_t.map_or(0, |l| (now - l).clamp(0, 60_000));
        self.last_t = Some(now);
        let oom_now = snap.host.cgroup.oom_kills;
        // A lost GPU is not busy (it does nothing), but neither is its silence an end: see below.
        let busy_gpu = |g: u32| {
            snap.gpu(g).is_some_and(|r| {
                r.state != GpuState::Lost && gpu_idle(r, &self.idle) == Some(false)
            })
        };
        let lost_gpu = |g: u32| snap.gpu(g).is_some_and(|r| r.state == GpuState::Lost);

        let families = families(snap, ctx.jobs());
        // Each process's CPU by pid, once a tick: the jobs' trees are summed from it.
        let cpu_of: foldhash::HashMap<u32, f64> = snap
            .processes
            .iter()
            .filter_map(|p| Some((p.pid, p.cpu_pct?)))
            .collect();
        for (job, family) in ctx.jobs().iter().zip(families) {
            let main = snap.processes.iter().find(|p| p.pid == job.main);
            let start = main
                .and_then(|p| p.start_time_unix_s)
                .map(|s| s.saturating_mul(1000));
            let s = self.seen.entry(family).or_insert_with(|| Seen {
                label: main.map_or_else(|| format!("pid {}", job.main), process_label),
                gpus: job.gpus.clone(),
                start_ms: start.unwrap_or(now).min(now),
                observed_ms: 0,
                busy_ms: 0,
                last_seen_ms: now,
                idle_since: None,
                reported_idle: false,
                stopped: false,
                host_busy: false,
                serving: false,
                launched: false,
                longest_gap_ms: 0,
                reported_exit: false,
                oom_kills: oom_now,
                xids: xid_total(snap, &job.gpus),
            });
            // Back after an absence: the family's next run, one pause of its rhythm.
            let away = now - s.last_seen_ms;
            if away > dt.max(1_000) {
                s.longest_gap_ms = s.longest_gap_ms.max(away);
                s.idle_since = None;
            }
            if s.reported_exit {
                s.reported_exit = false;
                self.ended.remove(&family);
            }
            s.last_seen_ms = now;
            s.gpus = job.gpus.clone();
            if let Some(m) = main {
                s.label = process_label(m);
            }
            s.observed_ms += dt;
            let states: Vec<char> = job
                .roots
                .iter()
                .filter_map(|pid| snap.processes.iter().find(|p| p.pid == *pid))
                .filter_map(|p| p.state)
                .collect();
            // The sampler names a GPU process's parent; a parent that is a shell is a run
            // started by hand, whose exit is its end. Unnamed (a recording, another source),
            // only a parent seen among the processes can tell.
            s.launched = match (job.key, family) {
                (JobKey::Process(_), JobKey::Parent(pp)) => {
                    match main.and_then(|m| m.parent_name.as_deref()) {
                        Some(parent) => !is_shell(parent),
                        None => !snap
                            .processes
                            .iter()
                            .any(|p| p.pid == pp && p.name.as_deref().is_some_and(is_shell)),
                    }
                }
                _ => false,
            };
            s.stopped = !states.is_empty() && states.iter().all(|c| matches!(c, 'T' | 't'));
            let cpu: f64 = job.tree.iter().filter_map(|pid| cpu_of.get(pid)).sum();
            s.host_busy = cpu >= HOST_BUSY_PCT;
            s.serving = main.is_some_and(super::workload::is_server);
            let busy = job.gpus.iter().any(|&g| busy_gpu(g));
            if busy {
                if let Some(since) = s.idle_since {
                    s.longest_gap_ms = s.longest_gap_ms.max(now - since);
                }
                s.busy_ms += dt;
                s.idle_since = None;
                s.reported_idle = false;
                self.ended.remove(&family);
            } else if s.idle_since.is_none() {
                s.idle_since = Some(now);
            }
        }

        // Gone longer than its rhythm allows, or idle far longer than its longest pause: ended.
        let mut finished: Vec<(JobKey, End, i64)> = Vec::new();
        let mut forgotten: Vec<JobKey> = Vec::new();
        for (key, s) in &self.seen {
            let away = now - s.last_seen_ms;
            let rhythm = s.longest_gap_ms.saturating_mul(3) / 2;
            if away >= FAMILY_MS.max(rhythm) {
                forgotten.push(*key);
            } else if !s.reported_exit
                && away >= self.cfg.confirm_ms.max(rhythm).max(launcher_wait(s))
            {
                finished.push((*key, End::Exited, s.last_seen_ms));
            } else if let Some(since) = s.idle_since.filter(|_| !s.reported_idle)
                && s.last_seen_ms == now
                && !s.stopped
                && !s.host_busy
                && !s.serving
                && now - since
                    >= self
                        .cfg
                        .went_idle_ms
                        .max(s.longest_gap_ms.saturating_mul(2))
            {
                finished.push((*key, End::WentIdle, since));
            }
        }
        for key in forgotten {
            self.seen.remove(&key);
        }
        for (key, how, at) in finished {
            let Some(s) = self.seen.get(&key).cloned() else {
                continue;
            };
            if let Some(live) = self.seen.get_mut(&key) {
                match how {
                    End::Exited => live.reported_exit = true,
                    End::WentIdle => live.reported_idle = true,
                }
            }
            // Its GPUs were lost: it did not finish, it lost its cards; the lost alert says so.
            if !self.worked(&s, at) || s.gpus.iter().any(|&g| lost_gpu(g)) {
                continue;
            }
            let exit = exit_note(&s, oom_now, xid_total(snap, &s.gpus), how);
            self.ended.insert(
                key,
                Ended {
                    label: s.label.clone(),
                    gpus: s.gpus.clone(),
                    ended_ms: at,
                    ran_ms: at - s.start_ms,
                    how,
                    exit,
                },
            );
        }
        // A notice ends when its GPUs work again or after `stands`.
        let stands = self.cfg.stands_ms;
        self.ended
            .retain(|_, e| now - e.ended_ms < stands && !e.gpus.iter().any(|&g| busy_gpu(g)));

        let mut out = RuleOutput::default();
        if !self.cfg.enabled {
            return out;
        }
        for (key, e) in &self.ended {
            out.alerts.push(self.alert(ctx, *key, e));
        }
        out
    }

    fn alert(&self, ctx: &Ctx<'_>, key: JobKey, e: &Ended) -> Alert {
        let snap = ctx.snap;
        let now = ctx.now_ms;
        let ago = now - e.ended_ms;
        let ago_text = if ago < 60_000 {
            "just now".to_string()
        } else {
            format!(
                "{} ago",
                crate::units::duration(ago, crate::units::DurationStyle::Words)
            )
        };
        let ran = crate::units::duration(e.ran_ms, crate::units::DurationStyle::Compact);
        let idle_now = snap
            .gpus
            .iter()
            .filter(|g| gpu_idle(g, &self.idle) == Some(true))
            .count();
        let n = snap.gpus.len().max(1);
        let idle_rate = ctx.rate_per_hour.map(|r| {
            r.mul_div(
                i128::try_from(idle_now).unwrap_or(0),
                i128::try_from(n).unwrap_or(1),
            )
        });
        let gpu_word = if idle_now == 1 { "GPU" } else { "GPUs" };
        let price = match idle_rate {
            Some(r) => format!(" at {}", ctx.per_hour(r.micros())),
            None => " (no price set)".to_string(),
        };
        let what = match e.how {
            End::Exited => format!("{} ended {ago_text} after {ran}", e.label),
            End::WentIdle => format!(
                "{}: its GPUs went idle {ago_text} after {ran} of work",
                e.label
            ),
        };
        let title = format!("{what}; {idle_now} {gpu_word} now idle{price}");
        let cost = idle_rate.map(|r| r.cost_for_ms(ago).micros());
        let mut evidence = vec![
            ("job".to_string(), e.label.clone()),
            (
                "ended".to_string(),
                crate::clock::utc_text(e.ended_ms, crate::clock::UtcStyle::Full),
            ),
            ("ran for".to_string(), ran),
            ("its GPUs".to_string(), gpu_ranges(&e.gpus)),
            ("exit".to_string(), e.exit.clone()),
            ("GPUs idle now".to_string(), format!("{idle_now}/{n}")),
        ];
        if let (Some(c), Some(r)) = (cost, idle_rate) {
            evidence.push((
                "idle since it ended".into(),
                format!("{} at {}", ctx.money(c), ctx.per_hour(r.micros())),
            ));
        }
        Alert {
            id: format!("job_done:{}", key.id()),
            kind: AlertKind::JobDone,
            severity: Severity::Moderate,
            gpu: (e.gpus.len() == 1).then(|| e.gpus[0]),
            title,
            detail: match e.how {
                End::Exited => "The job's last GPU process exited; the meter runs on.".into(),
                End::WentIdle => "The job still runs but its GPUs have done nothing since; the \
                                  meter runs on."
                    .into(),
            },
            evidence,
            cost_micros: cost,
            next_step: Some(format!(
                "If it finished, {} (or start the next job); if it crashed, look at its log and \
                 resume from the last checkpoint.",
                super::idle::stop_advice(ctx)
            )),
            since_unix_ms: e.ended_ms,
            currency: ctx.currency,
        }
    }
}

/// What is known about how the job ended.
fn exit_note(s: &Seen, oom_now: Option<u64>, xids_now: u64, how: End) -> String {
    let mut notes = Vec::new();
    if let (Some(before), Some(now)) = (s.oom_kills, oom_now)
        && now > before
    {
        notes.push(format!(
            "the kernel's OOM killer ran in this cgroup ({} kill(s) while it ran)",
            now - before
        ));
    }
    if xids_now > s.xids {
        notes.push(format!(
            "{} XID error(s) on its GPUs while it ran",
            xids_now - s.xids
        ));
    }
    if notes.is_empty() {
        match how {
            End::Exited => {
                "status unknown (gpumeter is not its parent); no OOM kill or XID seen".into()
            }
            End::WentIdle => "still running, GPUs idle".into(),
        }
    } else {
        notes.join("; ")
    }
}

#[cfg(test)]
mod tests;
