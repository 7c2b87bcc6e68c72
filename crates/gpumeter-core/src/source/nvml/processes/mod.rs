//! One GPU's processes: the compute and graphics lists merged per PID (kind `Mixed` when a
//! process is in both), and per-process SM/memory utilization from
//! `nvmlDeviceGetProcessUtilization` read with a last-seen cursor.
//!
//! The driver only returns utilization samples for processes that were busy during the period
//! asked about, and `NOT_FOUND` when nothing was. So a process that NVML lists on a GPU whose
//! utilization query answered, but that has no recent sample, was idle: it reads 0 %, not N/A
//! (the "forgotten allocation" rule depends on seeing that 0). N/A is kept for GPUs that cannot
//! answer (unsupported, MIG, errors). Pure logic: tested with hand-made samples.

use std::collections::BTreeMap;

use gpumeter_model::{GpuProcessKind, GpuUse};
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::struct_wrappers::device::{ProcessInfo, ProcessUtilizationSample};

/// How long a per-process sample stays current when no newer one arrives.
pub(crate) const DEFAULT_PROCESS_UTIL_HOLD_MS: u64 = 5_000;

/// Merges one GPU's compute and graphics process lists into one [`GpuUse`] per PID.
/// A list that could not be read is `None` and contributes nothing.
///
/// Memory: entries of the same kind add up (under MIG one process may appear once per
/// instance); across the two kinds the larger is taken, because the driver reports the same
/// process's memory in both lists.
pub(crate) fn merge_processes(
    gpu_index: u32,
    compute: Option<&[ProcessInfo]>,
    graphics: Option<&[ProcessInfo]>,
) -> BTreeMap<u32, GpuUse> {
    let compute = sum_by_pid(compute.unwrap_or_default());
    let graphics = sum_by_pid(graphics.unwrap_or_default());
    let mut merged = BTreeMap::new();
    for (&pid, &memory) in &compute {
        let (kind, memory) = match graphics.get(&pid) {
            Some(&other) => (GpuProcessKind::Mixed, max_known(memory, other)),
            None => (GpuProcessKind::Compute, memory),
        };
        merged.insert(pid, new_use(gpu_index, kind, memory));
    }
    for (&pid, &memory) in &graphics {
        merged
            .entry(pid)
            .or_insert_with(|| new_use(gpu_index, GpuProcessKind::Graphics, memory));
    }
    merged
}

fn new_use(gpu_index: u32, kind: GpuProcessKind, memory_bytes: Option<u64>) -> GpuUse {
    GpuUse {
        gpu_index,
        kind,
        memory_bytes,
        sm_util_pct: None,
        memory_util_pct: None,
    }
}

/// Memory per PID within one list; `None` when no entry of that PID says how much.
fn sum_by_pid(list: &[ProcessInfo]) -> BTreeMap<u32, Option<u64>> {
    let mut by_pid: BTreeMap<u32, Option<u64>> = BTreeMap::new();
    for info in list {
        let memory = match info.used_gpu_memory {
            UsedGpuMemory::Used(bytes) => Some(bytes),
            UsedGpuMemory::Unavailable => None,
        };
        let slot = by_pid.entry(info.pid).or_insert(None);
        *slot = match (*slot, memory) {
            (Some(a), Some(b)) => Some(a.saturating_add(b)),
            (a, b) => a.or(b),
        };
    }
    by_pid
}

fn max_known(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// The newest utilization sample of one process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Recent {
    sm_pct: u32,
    memory_pct: u32,
    /// Driver timestamp of the sample (µs, the driver's clock).
    sample_us: u64,
    /// When it arrived, on the caller's clock.
    seen_at_ms: i64,
}

/// Per-GPU state of the process-utilization query: the last-seen cursor and each process's
/// newest sample.
#[derive(Debug, Clone)]
pub(crate) struct ProcessUtilTracker {
    cursor_us: Option<u64>,
    recent: BTreeMap<u32, Recent>,
    hold_ms: i64,
    /// Whether the latest query answered (with samples or with "nothing new").
    answered: bool,
}

impl ProcessUtilTracker {
    pub(crate) fn new(hold_ms: u64) -> Self {
        Self {
            cursor_us: None,
            recent: BTreeMap::new(),
            hold_ms: i64::try_from(hold_ms).unwrap_or(i64::MAX),
            answered: false,
        }
    }

    /// The timestamp to pass as `last_seen` (`None` the first time: every buffered sample).
    pub(crate) fn cursor(&self) -> Option<u64> {
        self.cursor_us
    }

    /// New samples arrived. Keeps the newest per PID and moves the cursor past them.
    pub(crate) fn record(&mut self, samples: &[ProcessUtilizationSample], now_ms: i64) {
        for s in samples {
            self.cursor_us = Some(self.cursor_us.map_or(s.timestamp, |c| c.max(s.timestamp)));
            let newer = self
                .recent
                .get(&s.pid)
                .is_none_or(|r| r.seen_at_ms != now_ms || s.timestamp >= r.sample_us);
            if newer {
                self.recent.insert(
                    s.pid,
                    Recent {
                        sm_pct: s.sm_util.min(100),
                        memory_pct: s.mem_util.min(100),
                        sample_us: s.timestamp,
                        seen_at_ms: now_ms,
                    },
                );
            }
        }
        self.answered = true;
        self.expire(now_ms);
    }

    /// The driver answered `NOT_FOUND`: no process was busy since the cursor.
    pub(crate) fn nothing_new(&mut self, now_ms: i64) {
        self.answered = true;
        self.expire(now_ms);
    }

    /// The query was not made or failed: unknown for processes without a current sample.
    pub(crate) fn unanswered(&mut self, now_ms: i64) {
        self.answered = false;
        self.expire(now_ms);
    }

    /// Forgets everything (the GPU was lost or reset).
    pub(crate) fn reset(&mut self) {
        self.cursor_us = None;
        self.recent.clear();
        self.answered = false;
    }

    /// (SM %, memory %) of a process listed on this GPU, as of `now_ms`.
    pub(crate) fn lookup(&self, pid: u32, now_ms: i64) -> (Option<u32>, Option<u32>) {
        match self.recent.get(&pid) {
            Some(r) if self.is_current(r, now_ms) => (Some(r.sm_pct), Some(r.memory_pct)),
            _ if self.answered => (Some(0), Some(0)),
            _ => (None, None),
        }
    }

    fn is_current(&self, r: &Recent, now_ms: i64) -> bool {
        // A clock that stepped back makes the age negative: treat that as stale too.
        let age = now_ms.saturating_sub(r.seen_at_ms);
        (0..=self.hold_ms).contains(&age)
    }

    fn expire(&mut self, now_ms: i64) {
        let hold = self.hold_ms;
        self.recent.retain(|_, r| {
            let age = now_ms.saturating_sub(r.seen_at_ms);
            (0..=hold).contains(&age)
        });
    }
}

/// Fills in per-process utilization on merged processes.
pub(crate) fn apply_util(
    uses: &mut BTreeMap<u32, GpuUse>,
    tracker: &ProcessUtilTracker,
    now_ms: i64,
) {
    for (&pid, gpu_use) in uses.iter_mut() {
        let (sm, memory) = tracker.lookup(pid, now_ms);
        gpu_use.sm_util_pct = sm;
        gpu_use.memory_util_pct = memory;
    }
}

#[cfg(test)]
mod tests;
