//! What the GPUs did this tick, judged once for every rule and autostop: nothing (idle), a
//! probe, or real work. A *probe* is a short burst (≤ `probe_max`, default 10 s) on a GPU that
//! holds no more than a CUDA context (< `probe_memory`, default 2 GiB): a monitoring agent's
//! health check or `nvidia-smi`-style query. It is no work the meter is paid for, so idle and
//! autostop see through it, and autostop says what it ignored. A burst on a GPU holding a
//! model, or one that lasts, is work.
//!
//! Work that comes in bursts again and again — at least two separate bursts within the idle
//! window — is a loop running (a training loop waiting on its input, a busy inference server):
//! the waits between its bursts are *starvation* or serving, not idle, and the idle rule does not
//! count them (a single burst in the window, a request every few minutes, still leaves idle).
//! How long the current burst has lasted is kept too: a burst of sustained work (a batch of
//! requests served for half a minute) ends an idle stretch, where a single request does not.
//!
//! A GPU at the idle level whose used VRAM keeps rising (≥ 512 MiB within a minute) is loading
//! a model — from a network share the SMs idle and PCIe carries a trickle for minutes — and
//! that is work under way, not idle paid time.
//!
//! Pure: fed one snapshot per tick by [`super::Rules`]; touches the model and the idle settings.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use gpumeter_model::{GpuReading, GpuState, Snapshot};

use super::config::IdleConfig;
use super::idle::gpu_idle;

/// One GPU's tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuWork {
    /// At the idle level (util, memory-controller util and PCIe low: `[alerts.idle]`).
    Idle,
    /// Busy, but a short burst on a GPU holding only a context.
    Probe,
    /// Work the meter is paid for: busy with a model in memory or for longer than a probe, or idle
    /// while a model loads (VRAM rising).
    Work,
    /// The card is lost (`GPU_IS_LOST`): no work, still billed.
    Lost,
    /// The reading cannot say (utilization unsupported).
    Unknown,
}

/// A probe that ended: when, and the processes it ran in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    /// When the probe ended, ms since the Unix epoch.
    pub ended_ms: i64,
    /// The processes on the probing GPUs during the probe (pids).
    pub pids: BTreeSet<u32>,
}

/// A GPU at the idle level whose used VRAM rose by this much within [`LOAD_SPAN_MS`] is loading
/// a model (weights copied in from a slow disk or a network share: the SMs idle, PCIe a trickle):
/// work under way, not idle paid time.
pub const LOAD_RISE_BYTES: u64 = 512 << 20;
/// How far back a rise in used VRAM is looked for.
pub const LOAD_SPAN_MS: i64 = 60_000;

/// Work-burst starts kept at most (for the loop test; far more than any window holds).
const MAX_STARTS: usize = 64;
/// Probes kept at most (autostop names the recent ones).
const MAX_PROBES: usize = 256;

/// The judgement, kept across ticks (bursts have a length).
#[derive(Debug, Clone, Default)]
pub struct WorkTracker {
    /// Per GPU: since when it has been busy, and the pids on it during the burst.
    bursts: BTreeMap<u32, (i64, BTreeSet<u32>)>,
    /// This tick's verdict per GPU, in snapshot order.
    gpus: Vec<(u32, GpuWork)>,
    /// Whether some GPU did work on the previous tick (to find where work bursts start).
    was_working: bool,
    starts: VecDeque<i64>,
    /// Since when some GPU has worked without a break (`None`: none works now).
    working_since: Option<i64>,
    /// The machine-wide probe in progress (pids so far), and the probes that ended.
    probing: Option<BTreeSet<u32>>,
    probes: VecDeque<Probe>,
    /// Per GPU: used VRAM over the last [`LOAD_SPAN_MS`], one sample a second at most.
    memory: BTreeMap<u32, VecDeque<(i64, u64)>>,
    /// The GPUs whose work this tick is loading (VRAM rising at the idle level).
    loading: BTreeSet<u32>,
    now_ms: i64,
}

impl WorkTracker {
    /// One tick.
    pub fn update(&mut self, snap: &Snapshot, now_ms: i64, cfg: &IdleConfig) {
        self.now_ms = now_ms;
        let mut gpus = Vec::with_capacity(snap.gpus.len());
        self.loading.clear();
        let mut probing_now: Option<BTreeSet<u32>> = None;
        for g in &snap.gpus {
            let work = self.judge(snap, g, now_ms, cfg);
            if work == GpuWork::Probe {
                let pids = self.bursts.get(&g.index).map(|(_, p)| p.clone());
                probing_now
                    .get_or_insert_with(BTreeSet::new)
                    .extend(pids.into_iter().flatten());
            }
            gpus.push((g.index, work));
        }
        self.gpus = gpus;
        self.memory
            .retain(|i, _| snap.gpus.iter().any(|g| g.index == *i));
        let working = self.gpus.iter().any(|(_, w)| *w == GpuWork::Work);
        if working && !self.was_working {
            self.starts.push_back(now_ms);
            if self.starts.len() > MAX_STARTS {
                self.starts.pop_front();
            }
        }
        self.was_working = working;
        self.working_since = if working {
            Some(self.working_since.unwrap_or(now_ms))
        } else {
            None
        };
        match (probing_now, working) {
            (Some(pids), false) => self.probing.get_or_insert_with(BTreeSet::new).extend(pids),
            // A probe that turned into work was never a probe; one that ended is logged.
            (_, true) => self.probing = None,
            (None, false) => {
                if let Some(pids) = self.probing.take() {
                    self.probes.push_back(Probe {
                        ended_ms: now_ms,
                        pids,
                    });
                    if self.probes.len() > MAX_PROBES {
                        self.probes.pop_front();
                    }
                }
            }
        }
    }

    fn judge(&mut self, snap: &Snapshot, g: &GpuReading, now_ms: i64, cfg: &IdleConfig) -> GpuWork {
        if g.state == GpuState::Lost {
            self.bursts.remove(&g.index);
            return GpuWork::Lost;
        }
        match gpu_idle(g, cfg) {
            None => {
                self.bursts.remove(&g.index);
                GpuWork::Unknown
            }
            Some(true) => {
                self.bursts.remove(&g.index);
                if self.vram_rising(g, now_ms) {
                    self.loading.insert(g.index);
                    GpuWork::Work
                } else {
                    GpuWork::Idle
                }
            }
            Some(false) => {
                let (since, pids) = self
                    .bursts
                    .entry(g.index)
                    .or_insert_with(|| (now_ms, BTreeSet::new()));
                pids.extend(
                    snap.processes
                        .iter()
                        .filter(|p| p.gpu.iter().any(|u| u.gpu_index == g.index))
                        .map(|p| p.pid),
                );
                let small = g
                    .memory_used_bytes
                    .is_some_and(|m| m < cfg.probe_memory_bytes);
                let short = now_ms - *since <= cfg.probe_max_ms;
                if g.state == GpuState::Ok && small && short {
                    GpuWork::Probe
                } else {
                    GpuWork::Work
                }
            }
        }
    }

    /// Keeps `g`'s used VRAM and says whether it rose by [`LOAD_RISE_BYTES`] within
    /// [`LOAD_SPAN_MS`] (from the lowest it was then to now).
    fn vram_rising(&mut self, g: &GpuReading, now_ms: i64) -> bool {
        let Some(used) = g.memory_used_bytes else {
            self.memory.remove(&g.index);
            return false;
        };
        let q = self.memory.entry(g.index).or_default();
        while q
            .front()
            .is_some_and(|&(t, _)| t < now_ms - LOAD_SPAN_MS || t > now_ms)
        {
            q.pop_front();
        }
        if q.back().is_none_or(|&(t, _)| now_ms - t >= 1_000) {
            q.push_back((now_ms, used));
        }
        let low = q.iter().map(|&(_, m)| m).min().unwrap_or(used);
        used.saturating_sub(low) >= LOAD_RISE_BYTES
    }

    /// Whether `gpu`'s work this tick is loading: VRAM rising while its SMs idle.
    pub fn is_loading(&self, gpu: u32) -> bool {
        self.loading.contains(&gpu)
    }

    /// This tick's verdict per GPU (index, verdict), in snapshot order.
    pub fn gpus(&self) -> &[(u32, GpuWork)] {
        &self.gpus
    }

    /// Whether every GPU did no work this tick (idle or a probe); `None` without GPUs or when
    /// one cannot say. A lost GPU counts as work undone only when `lost_is_idle`.
    pub fn no_work(&self, lost_is_idle: bool) -> Option<bool> {
        if self.gpus.is_empty() {
            return None;
        }
        let mut all = Some(true);
        for (_, w) in &self.gpus {
            match w {
                GpuWork::Idle | GpuWork::Probe => {}
                GpuWork::Lost if lost_is_idle => {}
                GpuWork::Lost | GpuWork::Work => return Some(false),
                GpuWork::Unknown => all = None,
            }
        }
        all
    }

    /// How long some GPU has now worked without a break (0 when none works this tick).
    pub fn working_for_ms(&self) -> i64 {
        self.working_since.map_or(0, |since| self.now_ms - since)
    }

    /// Whether work has come in at least two separate bursts within the last `window_ms`:
    /// a loop is running, and its waits are not idle.
    pub fn loop_running(&self, window_ms: i64) -> bool {
        let from = self.now_ms - window_ms;
        self.starts.iter().filter(|&&t| t >= from).count() >= 2
    }

    /// The probes that ended at or after `since_ms`, oldest first.
    pub fn probes_since(&self, since_ms: i64) -> impl Iterator<Item = &Probe> {
        self.probes.iter().filter(move |p| p.ended_ms >= since_ms)
    }

    /// "3 short probes by pid 812" for the probes since `since_ms`; `None` when there were none.
    pub fn probes_text(&self, since_ms: i64) -> Option<String> {
        let mut n = 0usize;
        let mut pids = BTreeSet::new();
        for p in self.probes_since(since_ms) {
            n += 1;
            pids.extend(p.pids.iter().copied());
        }
        if n == 0 {
            return None;
        }
        let what = if n == 1 {
            "short probe"
        } else {
            "short probes"
        };
        let by = match pids.len() {
            0 => String::new(),
            1 => format!(
                " by pid {}",
                pids.iter().next().copied().unwrap_or_default()
            ),
            _ => {
                let shown: Vec<String> = pids.iter().take(4).map(u32::to_string).collect();
                let more = if pids.len() > 4 { ", …" } else { "" };
                format!(" by pids {}{more}", shown.join(", "))
            }
        };
        Some(format!("{n} {what}{by}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rules::RulesConfig;
    use gpumeter_model::{GpuProcessKind, GpuUse, ProcessReading};

    const GIB: u64 = 1 << 30;

    /// Two GPUs at `util` %, each holding `mem` bytes, with pid 812 on both.
    fn snap(t: i64, util: u32, mem: u64) -> Snapshot {
        let mut s = Snapshot::empty("t", t);
        s.gpus = (0..2)
            .map(|i| GpuReading {
                index: i,
                util_gpu_pct: Some(util),
                memory_used_bytes: Some(mem),
                ..GpuReading::default()
            })
            .collect();
        let mut p = ProcessReading::invisible(812);
        p.gpu = (0..2)
            .map(|i| GpuUse {
                gpu_index: i,
                kind: GpuProcessKind::Compute,
                memory_bytes: Some(mem),
                sm_util_pct: None,
                memory_util_pct: None,
            })
            .collect();
        s.processes = vec![p];
        s
    }

    /// Feeds `f(second)` for `secs` seconds from `from`; the last tick's per-GPU verdicts.
    fn run(w: &mut WorkTracker, from: i64, secs: i64, f: impl Fn(i64) -> (u32, u64)) {
        let cfg = RulesConfig::default().idle;
        for t in from..from + secs {
            let (util, mem) = f(t);
            w.update(&snap(t * 1000, util, mem), t * 1000, &cfg);
        }
    }

    #[test]
    fn a_short_burst_on_a_context_only_gpu_is_a_probe_and_is_counted_once_it_ends() {
        let mut w = WorkTracker::default();
        // 2 s at 100 % every 300 s, 300 MiB held: a health probe, four times.
        run(&mut w, 0, 1200, |t| {
            (if t % 300 < 2 { 100 } else { 0 }, GIB / 3)
        });
        assert!(w.gpus().iter().all(|(_, g)| *g == GpuWork::Idle));
        assert_eq!(w.no_work(false), Some(true));
        assert!(!w.loop_running(120_000), "probes are no work bursts");
        assert_eq!(w.probes_since(0).count(), 4);
        assert_eq!(
            w.probes_text(0).as_deref(),
            Some("4 short probes by pid 812")
        );
        assert_eq!(w.probes_text(1_000_000), None);
        // During a probe the tick is a probe, and still no work.
        run(&mut w, 1200, 1, |_| (100, GIB / 3));
        assert!(w.gpus().iter().all(|(_, g)| *g == GpuWork::Probe));
        assert_eq!(w.no_work(false), Some(true));
    }

    #[test]
    fn a_burst_that_lasts_or_runs_beside_a_model_is_work() {
        let mut w = WorkTracker::default();
        // Small, but 11 s long: work from its 11th second, and not logged as a probe.
        run(&mut w, 0, 12, |_| (100, GIB / 3));
        assert!(w.gpus().iter().all(|(_, g)| *g == GpuWork::Work));
        run(&mut w, 12, 5, |_| (0, GIB / 3));
        assert_eq!(w.probes_since(0).count(), 0);
        // A 2 s burst on GPUs holding 60 GiB of weights: a served request, work.
        let mut w = WorkTracker::default();
        run(&mut w, 0, 1, |_| (100, 60 * GIB));
        assert_eq!(w.no_work(false), Some(false));
    }

    #[test]
    fn bursts_of_work_again_and_again_are_a_loop_and_one_alone_is_not() {
        let mut w = WorkTracker::default();
        // 3 s of compute every 25 s on GPUs holding 60 GiB: a starved training loop.
        run(&mut w, 0, 100, |t| {
            (if t % 25 < 3 { 98 } else { 0 }, 60 * GIB)
        });
        assert_eq!(w.no_work(false), Some(true), "between bursts");
        assert!(w.loop_running(120_000));
        // One request burst, then quiet for longer than the window: no loop.
        let mut w = WorkTracker::default();
        run(&mut w, 0, 300, |t| (if t < 5 { 90 } else { 0 }, 40 * GIB));
        assert!(!w.loop_running(120_000));
    }

    #[test]
    fn lost_and_unreadable_gpus_are_said_as_such() {
        let mut w = WorkTracker::default();
        let cfg = RulesConfig::default().idle;
        let mut s = snap(0, 0, 0);
        s.gpus[0].state = GpuState::Lost;
        w.update(&s, 0, &cfg);
        assert_eq!(w.no_work(false), Some(false));
        assert_eq!(w.no_work(true), Some(true));
        s.gpus[1].util_gpu_pct = None;
        w.update(&s, 1000, &cfg);
        assert_eq!(w.no_work(true), None);
        assert_eq!(WorkTracker::default().no_work(true), None);
    }
}
