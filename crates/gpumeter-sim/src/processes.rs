//! Process entries expanded into concrete processes (ranks × (trainer + workers)) and their
//! readings at a given time. Strings are passed through raw: the fake NVML needs the exact
//! names, and consumers sanitise before display.

use gpumeter_model::{
    GpuProcessKind, GpuUse, PidMatch, PodRef, ProcessReading, SharedStr, ThreadReading,
};

use crate::scenario::{ProcessKind, ProcessSpec, Scenario};
use crate::signal::Range;
use crate::simulate::At;

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
const MIB: u64 = 1024 * 1024;

/// One concrete process: a rank of a `[[process]]` entry, or one of its workers.
#[derive(Debug, Clone)]
pub(crate) struct ProcInstance {
    spec: usize,
    pid: u32,
    ppid: Option<u32>,
    /// `None` for the GPU process itself, `Some(n)` for worker n (0-based).
    worker: Option<u32>,
    /// GPU index of each `spec.gpus` entry for this rank.
    gpus: Vec<u32>,
    /// The driver's pid when it differs (gpumeter in a container); ranks only.
    host_pid: Option<u32>,
    name: Option<SharedStr>,
    command: Option<SharedStr>,
    /// The spec's strings, shared once here so that a reading clones pointers.
    user: Option<SharedStr>,
    container: Option<SharedStr>,
    cpus_allowed_list: Option<SharedStr>,
    thread_name: Option<SharedStr>,
    /// The parent's name (ranks only: a worker's parent is its rank).
    parent_name: Option<SharedStr>,
    /// Its Kubernetes pod (ranks and workers alike: one container).
    pod: Option<PodRef>,
    /// Elapsed second it starts at (before it: absent) and exits at (`repeat` shifts both).
    start_s: i64,
    until_s: Option<f64>,
}

/// Every concrete process in file order: each rank followed by its workers.
pub(crate) fn expand(scenario: &Scenario) -> Vec<ProcInstance> {
    let mut out = Vec::new();
    for (spec_idx, spec) in scenario.processes.iter().enumerate() {
        let workers = spec.workers.as_ref().map_or(0, |w| w.count);
        let stride = spec.pid_stride.unwrap_or(1 + workers);
        let (times, every_s, pid_step) = spec.repeat.as_ref().map_or((1, 0, 0), |r| {
            let step = r
                .pid_step
                .unwrap_or_else(|| spec.count.saturating_mul(stride));
            (r.times.max(1), r.every_s, step)
        });
        for (trial, rank) in (0..times).flat_map(|t| (0..spec.count).map(move |r| (t, r))) {
            let shift = i64::from(trial).saturating_mul(every_s);
            let start_s = spec.start_offset_s.saturating_add(shift);
            let until_s = spec.until_s.map(|u| u + shift as f64);
            let pid = spec
                .pid
                .saturating_add(trial.saturating_mul(pid_step))
                .saturating_add(rank.saturating_mul(stride));
            let fill = |s: &Option<String>, worker: Option<u32>| {
                s.as_ref().map(|s| {
                    let s = s
                        .replace("{rank}", &rank.to_string())
                        .replace("{trial}", &trial.to_string());
                    SharedStr::from(match worker {
                        Some(w) => s.replace("{worker}", &w.to_string()),
                        None => s,
                    })
                })
            };
            let shared = |s: &Option<String>| s.as_deref().map(SharedStr::from);
            let user = shared(&spec.user);
            let container = shared(&spec.container);
            let cpus_allowed_list = shared(&spec.cpus_allowed_list);
            let thread_name = spec.busiest_thread.as_ref().and_then(|t| shared(&t.name));
            let pod = spec.pod.as_ref().map(|p| PodRef {
                namespace: shared(&p.namespace),
                pod: shared(&p.name),
                // As the attribution does: the kubelet's container name, else the cgroup's id.
                container: shared(&p.container).or_else(|| container.clone()),
                pod_uid: shared(&p.uid),
            });
            out.push(ProcInstance {
                spec: spec_idx,
                pid,
                ppid: spec.ppid,
                worker: None,
                gpus: spec
                    .gpus
                    .iter()
                    .map(|g| g.gpu.saturating_add(rank.saturating_mul(spec.gpu_stride)))
                    .collect(),
                name: fill(&spec.name, None),
                command: fill(&spec.command, None),
                user: user.clone(),
                container: container.clone(),
                cpus_allowed_list: cpus_allowed_list.clone(),
                thread_name: thread_name.clone(),
                parent_name: shared(&spec.parent),
                pod: pod.clone(),
                host_pid: spec
                    .host_pid
                    .map(|h| h.saturating_add(rank.saturating_mul(stride))),
                start_s,
                until_s,
            });
            if let Some(w) = &spec.workers {
                for n in 0..w.count {
                    out.push(ProcInstance {
                        spec: spec_idx,
                        pid: pid.saturating_add(n + 1),
                        ppid: Some(pid),
                        worker: Some(n),
                        gpus: Vec::new(),
                        host_pid: None,
                        name: fill(&w.name, Some(n)).or_else(|| fill(&spec.name, Some(n))),
                        command: fill(&w.command, Some(n)).or_else(|| fill(&spec.command, Some(n))),
                        user: user.clone(),
                        container: container.clone(),
                        cpus_allowed_list: cpus_allowed_list.clone(),
                        thread_name: None,
                        parent_name: None,
                        pod: pod.clone(),
                        start_s,
                        until_s,
                    });
                }
            }
        }
    }
    out
}

impl ProcInstance {
    /// The reading at `at`, or `None` once the process has exited.
    pub(crate) fn reading(&self, scenario: &Scenario, at: &At) -> Option<ProcessReading> {
        let spec: &ProcessSpec = scenario.processes.get(self.spec)?;
        if at.t_s < self.start_s as f64 || self.until_s.is_some_and(|until| at.t_s >= until) {
            return None;
        }
        let gpu = self.gpu_uses(spec, at);
        if !spec.visible {
            let mut p = ProcessReading::invisible(self.host_pid.unwrap_or(self.pid));
            p.gpu = gpu;
            return Some(p);
        }
        let worker = self.worker.and(spec.workers.as_ref());
        let cpu = worker.map_or(spec.cpu_pct.as_ref(), |w| w.cpu_pct.as_ref());
        let rss_gib = worker.map_or(spec.rss_gib, |w| w.rss_gib.or(spec.rss_gib));
        Some(ProcessReading {
            pid: self.pid,
            visible: true,
            ns_pid: if self.worker.is_none() {
                spec.ns_pid
            } else {
                None
            },
            ppid: self.ppid,
            user: self.user.clone(),
            container: self.container.clone(),
            name: self.name.clone(),
            command: self.command.clone(),
            cpu_pct: cpu.map(|s| {
                round2(at.sample(s, 0.0, "proc", u64::from(self.pid), "cpu", Range::NonNeg))
            }),
            rss_bytes: rss_gib.map(|g| (g.max(0.0) * GIB).round() as u64 / 4096 * 4096),
            start_time_unix_s: Some(at.start_unix_s + self.start_s),
            state: worker
                .map_or(spec.state.as_ref(), |w| {
                    w.state.as_ref().or(spec.state.as_ref())
                })
                .and_then(|s| s.at(at.t_s)),
            threads: worker.map_or(spec.threads, |w| w.threads),
            gpu,
            cpus_allowed: spec
                .cpus_allowed
                .or_else(|| spec.cpus_allowed_list.as_deref().map(cpu_list_len)),
            cpus_allowed_list: self.cpus_allowed_list.clone(),
            host_pid: self.host_pid,
            pid_match: self
                .host_pid
                .map(|_| spec.pid_match.unwrap_or(PidMatch::Device)),
            busiest_thread: self.thread(spec, at),
            pod: self.pod.clone(),
            parent_name: self.parent_name.clone(),
        })
    }

    fn thread(&self, spec: &ProcessSpec, at: &At) -> Option<ThreadReading> {
        if self.worker.is_some() {
            return None;
        }
        let t = spec.busiest_thread.as_ref()?;
        Some(ThreadReading {
            tid: self.pid.saturating_add(t.tid_offset),
            name: self.thread_name.clone(),
            cpu_pct: t.cpu_pct.as_ref().map(|s| {
                round2(at.sample(s, 0.0, "thread", u64::from(self.pid), "cpu", Range::NonNeg))
            }),
        })
    }

    fn gpu_uses(&self, spec: &ProcessSpec, at: &At) -> Vec<GpuUse> {
        if self.worker.is_some() {
            return Vec::new();
        }
        let kind = match spec.kind {
            ProcessKind::Compute => GpuProcessKind::Compute,
            ProcessKind::Graphics => GpuProcessKind::Graphics,
            ProcessKind::Mixed => GpuProcessKind::Mixed,
        };
        spec.gpus
            .iter()
            .zip(&self.gpus)
            .map(|(g, &index)| {
                let id = u64::from(self.pid) << 16 | u64::from(index);
                let pct = |s: &Option<crate::Signal>, ch: &str| {
                    s.as_ref()
                        .map(|s| at.sample(s, 0.0, "procgpu", id, ch, Range::Pct).round() as u32)
                };
                GpuUse {
                    gpu_index: index,
                    kind,
                    memory_bytes: g.memory_gib.as_ref().map(|s| {
                        let gib = at.sample(s, 0.0, "procgpu", id, "mem", Range::NonNeg);
                        (gib * GIB / MIB as f64).round() as u64 * MIB
                    }),
                    sm_util_pct: pct(&g.sm_util_pct, "sm"),
                    memory_util_pct: pct(&g.mem_util_pct, "memutil"),
                }
            })
            .collect()
    }
}

/// CPUs named by a kernel CPU list (`0-3,8`); malformed parts count nothing.
fn cpu_list_len(list: &str) -> u32 {
    list.split(',')
        .filter_map(|part| {
            let part = part.trim();
            let (lo, hi) = part.split_once('-').unwrap_or((part, part));
            let (lo, hi) = (lo.parse::<u32>().ok()?, hi.parse::<u32>().ok()?);
            hi.checked_sub(lo).map(|d| d + 1)
        })
        .sum()
}

pub(crate) fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}
