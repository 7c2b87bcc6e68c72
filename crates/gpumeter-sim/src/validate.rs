//! Loading a scenario: TOML → [`Scenario`], then the checks serde cannot express (indices in
//! range, one memory total, distinct PIDs), each naming its field.

use std::collections::BTreeSet;

use crate::error::ScenarioError;
use crate::scenario::{PodSpec, Scenario, StateSpec};

/// The letters `/proc/PID/stat` gives a process's state.
const STATE_LETTERS: &str = "RSDZTtXIWPK";

/// What is wrong with a state (an unknown letter, steps empty or out of order), if anything.
fn state_problem(state: &StateSpec) -> Option<String> {
    let letters: Vec<char> = match state {
        StateSpec::One(c) => vec![*c],
        StateSpec::Steps { steps } => {
            if steps.is_empty() {
                return Some("steps must not be empty".into());
            }
            if steps.windows(2).any(|w| w[1].0 <= w[0].0) {
                return Some("steps must be in increasing time order".into());
            }
            steps.iter().map(|(_, c)| *c).collect()
        }
    };
    letters
        .into_iter()
        .find(|c| !STATE_LETTERS.contains(*c))
        .map(|c| format!("`{c}` is not a process state (one of {STATE_LETTERS})"))
}

/// What is wrong with a pod (no name or UID, a name Kubernetes would refuse), as
/// `(field, message)`: the dashboard and serve's labels show these names, so a scenario gives
/// only ones a cluster could. Values are quoted escaped: an escape sequence is not run.
fn pod_problem(pod: &PodSpec) -> Option<(&'static str, String)> {
    // A DNS label (RFC 1123): namespaces and container names; a pod's name may also have dots.
    let dns = |value: &str, max: usize, dots: bool| {
        let ok_char = |c: char| {
            c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || (dots && c == '.')
        };
        let edge =
            |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
        value.len() <= max
            && value.chars().all(ok_char)
            && edge(value.chars().next())
            && edge(value.chars().last())
    };
    let name_rule = |max| {
        format!(
            "lowercase letters, digits and '-', starting and ending with a letter or digit, at most {max} characters"
        )
    };
    if pod.name.is_none() && pod.uid.is_none() {
        return Some((
            "pod",
            "needs a name (or a uid, for a pod known only by its cgroup)".into(),
        ));
    }
    if let Some(n) = &pod.name
        && !dns(n, 253, true)
    {
        return Some((
            "pod.name",
            format!(
                "`{}` is not a Kubernetes pod name ({}; '.' allowed)",
                n.escape_debug(),
                name_rule(253)
            ),
        ));
    }
    for (field, value) in [
        ("pod.namespace", &pod.namespace),
        ("pod.container", &pod.container),
    ] {
        if let Some(v) = value
            && !dns(v, 63, false)
        {
            return Some((
                field,
                format!(
                    "`{}` is not a Kubernetes name ({})",
                    v.escape_debug(),
                    name_rule(63)
                ),
            ));
        }
    }
    if let Some(u) = &pod.uid
        && (u.is_empty() || u.len() > 36 || !u.chars().all(|c| c.is_ascii_hexdigit() || c == '-'))
    {
        return Some((
            "pod.uid",
            format!(
                "`{}` is not a pod UID (hex digits and '-', at most 36)",
                u.escape_debug()
            ),
        ));
    }
    None
}

/// MIG devices one board may hold (an A100/H100 at its smallest slices).
pub const MAX_MIG_DEVICES: u32 = 7;

/// NVML's `NVML_NVLINK_MAX_LINKS`.
const MAX_NVLINKS: u32 = 18;

impl Scenario {
    /// Parses and checks a scenario; `origin` (a file name) prefixes every error message.
    pub fn from_toml(origin: &str, text: &str) -> Result<Scenario, ScenarioError> {
        let scenario: Scenario =
            toml::from_str(text).map_err(|e| ScenarioError::from_toml(origin, text, &e))?;
        scenario.check(origin)?;
        Ok(scenario)
    }

    /// A built-in scenario by name (see [`crate::builtin_scenarios`]).
    pub fn builtin(name: &str) -> Option<Scenario> {
        crate::builtin::text(name)
            .and_then(|text| Scenario::from_toml(&format!("builtin:{name}.toml"), text).ok())
    }

    /// Replaces the `pid` of every process entry that names a `pid_env` variable with that
    /// variable's value, looked up through `lookup` (the fake NVML passes the process
    /// environment; the engine itself reads none), then checks the scenario again (pids must
    /// stay distinct). An unset variable keeps `pid`; a set one that is not a pid is an error.
    pub fn resolve_pid_env(
        &mut self,
        origin: &str,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<(), ScenarioError> {
        for (i, p) in self.processes.iter_mut().enumerate() {
            let Some(var) = &p.pid_env else { continue };
            let Some(value) = lookup(var) else { continue };
            p.pid = value.trim().parse().map_err(|_| {
                ScenarioError::invalid(
                    origin,
                    format!("process[{i}].pid_env"),
                    format!("${var} = `{value}` is not a process id"),
                )
            })?;
        }
        self.check(origin)
    }

    /// Number of GPUs after replicating each `[[gpu]]` entry.
    pub fn gpu_count(&self) -> u32 {
        self.gpus.iter().map(|g| g.count).sum()
    }

    fn check(&self, origin: &str) -> Result<(), ScenarioError> {
        let bad = |field: String, msg: String| Err(ScenarioError::invalid(origin, field, msg));
        if self.name.trim().is_empty() {
            return bad("name".into(), "must not be empty".into());
        }
        if self.host.mem_total_bytes.is_some() && self.host.mem_total_gib.is_some() {
            return bad(
                "host.mem_total_gib".into(),
                "give mem_total_bytes or mem_total_gib, not both".into(),
            );
        }
        if let Some(q) = self.host.cpu_quota_cores
            && !(q.is_finite() && q > 0.0)
        {
            return bad(
                "host.cpu_quota_cores".into(),
                format!("must be > 0, got {q}"),
            );
        }
        if let Some(g) = self.host.nic_speed_gbit
            && !(g.is_finite() && g > 0.0)
        {
            return bad(
                "host.nic_speed_gbit".into(),
                format!("must be > 0, got {g}"),
            );
        }
        for (i, p) in self.processes.iter().enumerate() {
            if p.cpus_allowed == Some(0) {
                return bad(
                    format!("process[{i}].cpus_allowed"),
                    "must be at least 1".into(),
                );
            }
            if let Some((field, msg)) = p.pod.as_ref().and_then(pod_problem) {
                return bad(format!("process[{i}].{field}"), msg);
            }
            let states = [
                (format!("process[{i}].state"), p.state.as_ref()),
                (
                    format!("process[{i}].workers.state"),
                    p.workers.as_ref().and_then(|w| w.state.as_ref()),
                ),
            ];
            for (field, state) in states {
                if let Some(msg) = state.and_then(state_problem) {
                    return bad(field, msg);
                }
            }
        }
        for (i, g) in self.gpus.iter().enumerate() {
            if g.count == 0 {
                return bad(format!("gpu[{i}].count"), "must be at least 1".into());
            }
            // A limit of 0 W would read as every draw over it: no board has one.
            for (key, w) in [
                ("power_limit_watts", g.power_limit_watts),
                ("power_default_watts", g.power_default_watts),
            ] {
                if let Some(w) = w.filter(|w| !(w.is_finite() && *w > 0.0)) {
                    return bad(format!("gpu[{i}].{key}"), format!("must be > 0, got {w}"));
                }
            }
            match (g.memory_total_bytes, g.memory_total_gib) {
                (Some(_), Some(_)) => {
                    return bad(
                        format!("gpu[{i}].memory_total_gib"),
                        "give memory_total_bytes or memory_total_gib, not both".into(),
                    );
                }
                (None, Some(gib)) if !(gib.is_finite() && gib >= 0.0) => {
                    return bad(
                        format!("gpu[{i}].memory_total_gib"),
                        format!("must be ≥ 0, got {gib}"),
                    );
                }
                _ => {}
            }
            match (g.mig_enabled, g.mig_devices) {
                (_, Some(n)) if n > MAX_MIG_DEVICES => {
                    return bad(
                        format!("gpu[{i}].mig_devices"),
                        format!("at most {MAX_MIG_DEVICES} on one board, got {n}"),
                    );
                }
                (Some(true), _) | (_, None) => {}
                (_, Some(_)) => {
                    return bad(
                        format!("gpu[{i}].mig_devices"),
                        "MIG devices need mig_enabled = true".into(),
                    );
                }
            }
            if let Some(nv) = &g.health.nvlink {
                if nv.links > MAX_NVLINKS {
                    return bad(
                        format!("gpu[{i}].health.nvlink.links"),
                        format!("at most {MAX_NVLINKS}, got {}", nv.links),
                    );
                }
                if let Some(d) = nv.down.iter().find(|d| **d >= nv.links) {
                    return bad(
                        format!("gpu[{i}].health.nvlink.down"),
                        format!("link {d} does not exist ({} links)", nv.links),
                    );
                }
            }
            for (j, t) in g.throttle.iter().enumerate() {
                if t.when.is_some() == (t.above.is_none() && t.below.is_none()) {
                    return bad(
                        format!("gpu[{i}].throttle[{j}]"),
                        "`when` goes with `above` and/or `below`".into(),
                    );
                }
            }
        }
        let gpu_count = self.gpu_count();
        let mut pids = BTreeSet::new();
        for (i, p) in self.processes.iter().enumerate() {
            if p.count == 0 {
                return bad(format!("process[{i}].count"), "must be at least 1".into());
            }
            if p.pid_env.as_deref().is_some_and(|v| v.trim().is_empty()) {
                return bad(
                    format!("process[{i}].pid_env"),
                    "must name a variable".into(),
                );
            }
            let workers = p.workers.as_ref().map_or(0, |w| w.count);
            let stride = p.pid_stride.unwrap_or(1 + workers);
            if p.count > 1 && stride <= workers {
                return bad(
                    format!("process[{i}].pid_stride"),
                    format!("{stride} would reuse worker pids (needs > {workers})"),
                );
            }
            let (times, pid_step) = match &p.repeat {
                None => (1, 0),
                Some(r) => {
                    if r.times == 0 || r.every_s <= 0 {
                        return bad(
                            format!("process[{i}].repeat"),
                            format!(
                                "needs times ≥ 1 and every_s > 0, got times = {} and every_s = {}",
                                r.times, r.every_s
                            ),
                        );
                    }
                    let step = r.pid_step.unwrap_or(p.count.saturating_mul(stride));
                    (r.times, u64::from(step))
                }
            };
            for (trial, rank) in (0..times).flat_map(|t| (0..p.count).map(move |r| (t, r))) {
                let base = u64::from(p.pid)
                    + u64::from(trial) * pid_step
                    + u64::from(rank) * u64::from(stride);
                for pid in base..=base + u64::from(workers) {
                    if pid > u64::from(u32::MAX) || !pids.insert(pid) {
                        return bad(
                            format!("process[{i}].pid"),
                            format!("pid {pid} is out of range or used twice"),
                        );
                    }
                }
                for (j, g) in p.gpus.iter().enumerate() {
                    let idx = u64::from(g.gpu) + u64::from(rank) * u64::from(p.gpu_stride);
                    if idx >= u64::from(gpu_count) {
                        return bad(
                            format!("process[{i}].gpus[{j}].gpu"),
                            format!(
                                "rank {rank} lands on GPU {idx}, but the scenario has {gpu_count} GPUs"
                            ),
                        );
                    }
                }
            }
        }
        for (i, x) in self.xids.iter().enumerate() {
            if x.gpu >= gpu_count {
                return bad(
                    format!("xid[{i}].gpu"),
                    format!("GPU {} does not exist ({gpu_count} GPUs)", x.gpu),
                );
            }
            if !(x.at_s.is_finite() && x.at_s >= 0.0) {
                return bad(
                    format!("xid[{i}].at_s"),
                    format!("must be ≥ 0, got {}", x.at_s),
                );
            }
        }
        for (i, f) in self.faults.iter().enumerate() {
            if let Some(g) = f.gpu.filter(|g| *g >= gpu_count) {
                return bad(
                    format!("fault[{i}].gpu"),
                    format!("GPU {g} does not exist ({gpu_count} GPUs)"),
                );
            }
            if f.function != "*" && !f.function.starts_with("nvml") {
                return bad(
                    format!("fault[{i}].function"),
                    format!("`{}` is not an NVML symbol (nvml…) or \"*\"", f.function),
                );
            }
            if f.error.is_none() && f.latency_ms.is_none() {
                return bad(
                    format!("fault[{i}]"),
                    "needs `error`, `latency_ms` or both".into(),
                );
            }
            if let Some(t) = f.from_s.filter(|t| !(t.is_finite() && *t >= 0.0)) {
                return bad(
                    format!("fault[{i}].from_s"),
                    format!("must be ≥ 0, got {t}"),
                );
            }
            if let Some(t) = f
                .until_s
                .filter(|t| !(t.is_finite() && *t > f.from_s.unwrap_or(0.0)))
            {
                return bad(
                    format!("fault[{i}].until_s"),
                    format!("must be after from_s, got {t}"),
                );
            }
        }
        Ok(())
    }
}
