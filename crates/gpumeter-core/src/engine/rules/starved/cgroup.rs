//! The container's side of a starved alert: the cgroup's CPU budget when it is what limits the
//! job ("the container may use 8 cores and used 7.9; throttled 38 % of the last 60 s"), the
//! busiest thread for the single-threaded verdict, the cgroup evidence lines (quota, throttled
//! share, memory limit, OOM kills, pressure) and the job's main process named by its local PID
//! with the host PID beside it. Pure formatting of what the rule
//! ([`super`]) measured.

use gpumeter_model::{PidMatch, PlaceKind, Snapshot};

use super::state::{Host, JobState, THROTTLED_PCT, Verdict};
use crate::engine::rules::job::busiest_thread;
use crate::units;

/// The cgroup's CPU budget, when it is what limits the job: (cores, what sets it).
pub(super) fn cgroup_budget(snap: &Snapshot, allowed: Option<f64>) -> Option<(f64, &'static str)> {
    let allowed = allowed?;
    let quota = snap.host.cpu_quota_cores.map(|q| (q, "cgroup CPU quota"));
    let cpuset = snap
        .host
        .cgroup
        .cpuset_cpus
        .map(|c| (f64::from(c), "cgroup cpuset"));
    [quota, cpuset]
        .into_iter()
        .flatten()
        .filter(|(c, _)| (c - allowed).abs() < 0.05)
        .reduce(|a, b| if b.0 < a.0 { b } else { a })
}

/// "the container may use 8 cores and used 7.9; throttled 38 % of the last 60 s".
pub(super) fn budget_sentence(
    snap: &Snapshot,
    host: &Host,
    js: &JobState,
    window: &str,
) -> Option<String> {
    let (cores, _) = cgroup_budget(snap, js.cores_allowed.mean())?;
    let who = match snap.system.runs_in.as_ref().map(|r| r.kind) {
        Some(PlaceKind::Container) => "the container",
        _ => "the cgroup",
    };
    let used = host.cgroup_used.mean().or(js.cores_used.mean())?;
    let mut out = format!(
        "{who} may use {} cores and used {used:.1}",
        cores_text(cores)
    );
    if let Some(t) = host.throttled.mean() {
        out.push_str(&format!("; throttled {t:.0} % of the last {window}"));
    }
    Some(out)
}

/// `8` for whole cores, `2.5` otherwise.
pub(super) fn cores_text(c: f64) -> String {
    if (c - c.round()).abs() < 0.05 {
        format!("{c:.0}")
    } else {
        format!("{c:.1}")
    }
}

/// "thread `pt_main_thread` (tid 4243) at 99 % of one core while the other 15 cores idle".
pub(super) fn thread_sentence(snap: &Snapshot, js: &JobState, v: &Verdict<'_>) -> Option<String> {
    let (_, t) = busiest_thread(snap, v.job)?;
    let pct = js.thread_pct.mean()?;
    let mut out = format!(
        "thread `{}` (tid {}) at {pct:.0} % of one core",
        t.name.as_deref().unwrap_or("?"),
        t.tid
    );
    if let (Some(allowed), Some(used)) = (js.cores_allowed.mean(), js.cores_used.mean()) {
        let idle = (allowed - used).max(0.0).round();
        out.push_str(&format!(" while the other {idle:.0} cores idle"));
    }
    Some(out)
}

/// The main process as the job line names it: `python (pid 12, host pid 4000000)` inside a
/// container (`guessed` when the match is), `host pid N (not in this container)` when /proc
/// here cannot see it.
pub(super) fn job_main_text(snap: &Snapshot, pid: u32) -> String {
    let Some(p) = snap.processes.iter().find(|p| p.pid == pid) else {
        return format!("(not visible in /proc) (pid {pid})");
    };
    if !p.visible {
        let inside = snap
            .system
            .runs_in
            .as_ref()
            .is_some_and(|r| r.kind == PlaceKind::Container);
        return if inside {
            format!("host pid {pid} (not in this container)")
        } else {
            format!("(not visible in /proc) (pid {pid})")
        };
    }
    let name = p.name.clone().unwrap_or_else(|| "?".into());
    match (p.host_pid, p.pid_match) {
        (Some(h), Some(PidMatch::Guess)) => format!("{name} (pid {pid}, host pid {h}, guessed)"),
        (Some(h), _) => format!("{name} (pid {pid}, host pid {h})"),
        _ => format!("{name} (pid {pid})"),
    }
}

/// The cgroup's budget and pressure, where known: CPU quota and throttling, memory limit and
/// OOM kills, pressure stall.
pub(super) fn cgroup_evidence(snap: &Snapshot, host: &Host, window: &str) -> Vec<(String, String)> {
    let cg = &snap.host.cgroup;
    let mut out = Vec::new();
    let limit = match (snap.host.cpu_quota_cores, cg.cpuset_cpus) {
        (Some(q), _) => Some(format!("{} cores (quota)", cores_text(q))),
        (None, Some(c)) => Some(format!("{c} CPUs (cpuset)")),
        _ => None,
    };
    if let Some(limit) = limit {
        let used = host
            .cgroup_used
            .mean()
            .map_or_else(|| units::NA.into(), |u| format!("{u:.1}"));
        let throttled = host.throttled.mean().map_or_else(
            || units::NA.into(),
            |t| {
                let hot = if t >= THROTTLED_PCT {
                    " (at its quota)"
                } else {
                    ""
                };
                format!("{t:.0} % of CFS periods over {window}{hot}")
            },
        );
        out.push(("cgroup CPU".into(), format!("may use {limit}, used {used}")));
        out.push(("throttled".into(), throttled));
    }
    if let Some(limit) = cg.mem_limit_bytes {
        let used = cg
            .mem_used_bytes
            .map_or_else(|| units::NA.into(), units::bytes);
        out.push((
            "cgroup memory".into(),
            format!("{used} of {} limit", units::bytes(limit)),
        ));
    }
    if let Some(n) = host.oom_kills().filter(|&n| n > 0) {
        out.push((
            "OOM kills".into(),
            format!("{n} in the last {window} (dataloader workers killed and restarted?)"),
        ));
    }
    if let Some(p) = host.io_pressure.mean() {
        out.push((
            "I/O pressure (PSI some)".into(),
            format!("{p:.0} % of the time"),
        ));
    }
    if let Some(p) = host.cpu_pressure.mean() {
        out.push((
            "CPU pressure (PSI some)".into(),
            format!("{p:.0} % of the time"),
        ));
    }
    out
}
