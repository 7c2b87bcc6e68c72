//! Each reading into the rule's windows: the host's machine-wide numbers, and per GPU its
//! activity (GPM's SM activity where the card has it, else util), its bursts and loops, and
//! the starved condition of the sample. What the jobs did is judged in [`super`].

use std::collections::BTreeMap;

use gpumeter_model::Snapshot;

use super::state::{self, GpuState};
use super::{LOOP_RISES, MAX_SMOOTH_MS, StarvedRule};
use crate::engine::rules::Ctx;
use crate::engine::rules::window::{MeanWindow, Window};

/// The share of memory in use (percent): the host's, or the cgroup's against its limit where
/// that is fuller (a container runs out at its limit, however much the host has).
fn mem_used_pct(snap: &Snapshot) -> Option<f64> {
    let share = |used: Option<u64>, total: Option<u64>| {
        let (u, t) = (used?, total.filter(|&t| t > 0)?);
        Some(u as f64 / t as f64 * 100.0)
    };
    let h = &snap.host;
    [
        share(h.mem_used_bytes, h.mem_total_bytes),
        share(h.cgroup.mem_used_bytes, h.cgroup.mem_limit_bytes),
    ]
    .into_iter()
    .flatten()
    .reduce(f64::max)
}

impl StarvedRule {
    /// The machine-wide numbers every verdict shares, into their windows.
    pub(super) fn observe_host(&mut self, snap: &Snapshot, now: i64) {
        self.host.iowait.push(now, snap.host.iowait_pct);
        self.host
            .disk_read
            .push(now, snap.host.disk_read_bytes_per_s);
        let cg = &snap.host.cgroup;
        self.host.throttled.push(now, cg.cpu_throttled_pct);
        self.host.cgroup_used.push(now, cg.cpu_used_cores);
        self.host.io_pressure.push(now, snap.host.io_pressure_pct);
        self.host.cpu_pressure.push(now, snap.host.cpu_pressure_pct);
        self.host.disk_busy.push(now, snap.host.disk_busy_pct);
        self.host.disk_queue.push(now, snap.host.disk_queue_depth);
        self.host.mem_pressure.push(now, snap.host.mem_pressure_pct);
        self.host.swap_in.push(now, snap.host.swap_in_bytes_per_s);
        self.host
            .major_faults
            .push(now, snap.host.major_faults_per_s);
        self.host.mem_used.push(now, mem_used_pct(snap));
        self.host.nic_util.push(now, snap.host.nic_rx_util_pct);
        self.host.nic_tx.push(now, snap.host.nic_tx_util_pct);
        self.host
            .nic_speed
            .push(now, snap.host.nic_speed_bytes_per_s);
        if let Some(n) = cg.oom_kills {
            self.host.oom.push_back((now, n));
        }
        while self
            .host
            .oom
            .front()
            .is_some_and(|&(t, _)| t < now - self.cfg.window_ms || t > now)
        {
            self.host.oom.pop_front();
        }
        if self.host.disk_read.covered_ms() * 2 >= self.cfg.window_ms {
            let m = self.host.disk_read.mean().unwrap_or(0.0);
            self.host.disk_peak = self.host.disk_peak.max(m);
        }
    }

    /// Each GPU's activity (GPM's SM activity where the card has it, else util) and its
    /// starved condition, while a job holds it; GPUs gone from the reading are dropped.
    /// `gap_cores`: the cores each GPU's job uses this tick.
    pub(super) fn observe_gpus(&mut self, ctx: &Ctx<'_>, gap_cores: &BTreeMap<u32, f64>) {
        let (snap, now) = (ctx.snap, ctx.now_ms);
        let (span, horizon) = (self.cfg.window_ms, self.cfg.severity_horizon_ms);
        let smooth = (span / 4).clamp(500, MAX_SMOOTH_MS);
        let (fire, clear) = (self.fire_share, self.clear_share);
        let cache = ctx.job_cache();
        for g in &snap.gpus {
            let held = cache.held(g.index);
            let st = self.gpus.entry(g.index).or_insert_with(|| GpuState {
                activity: MeanWindow::new(span),
                util: MeanWindow::new(span),
                recent: MeanWindow::new(smooth),
                recent_mean: None,
                decoder: MeanWindow::new(span),
                gpm: false,
                below: self.cfg.util_below_pct,
                verdict: Window::new(span, fire, clear),
                history: Window::new(horizon, 0.5, 0.1),
                rises: std::collections::VecDeque::new(),
                now_activity: None,
                was_active: false,
                active_since: None,
                bursts: std::collections::VecDeque::new(),
                gap_cores: MeanWindow::new(2 * span),
            });
            let util = g.util_gpu_pct.map(f64::from).filter(|_| held);
            let sm = g.sm_active_pct.filter(|v| v.is_finite() && held);
            // A card that reports GPM is judged on it: util reads 100 % while one kernel is
            // resident, however little of the GPU it uses.
            st.gpm = sm.is_some();
            st.below = if st.gpm {
                self.cfg.sm_active_below_pct
            } else {
                self.cfg.util_below_pct
            };
            let activity = sm.or(util);
            st.now_activity = activity;
            st.activity.push(now, activity);
            st.util.push(now, util);
            st.decoder
                .push(now, g.decoder_util_pct.map(f64::from).filter(|_| held));
            st.recent.push(now, activity);
            st.recent_mean = st.recent.mean();
            let active = activity.is_some_and(|a| a > self.idle_util_pct);
            if active && !st.was_active {
                st.rises.push_back(now);
                st.active_since = Some(now);
            }
            if !active
                && st.was_active
                && let Some(rise) = st.active_since.take()
            {
                st.bursts.push_back((rise, now));
            }
            st.was_active = active;
            while st.rises.front().is_some_and(|&t| t < now - span) {
                st.rises.pop_front();
            }
            while st.bursts.front().is_some_and(|&(_, f)| f < now - 2 * span) {
                st.bursts.pop_front();
            }
            st.gap_cores.push(
                now,
                gap_cores.get(&g.index).copied().filter(|_| held && !active),
            );
            // A GPU whose video encoders are at their limit does the work it was given there
            // (a transcode): its SMs' low share is no starvation.
            let encoding = g
                .encoder_util_pct
                .is_some_and(|e| f64::from(e) >= state::ENCODER_BUSY_PCT);
            let starving = |m: f64| m > self.idle_util_pct && m < st.below && !encoding;
            // Between the bursts of a loop (two or more rises in the window) the short span
            // reads idle; the loop's own mean over the window says it is starving. A loop of
            // a longer period (see `GpuState::periodic`) is judged on that mean in its bursts
            // too: the short span reads busy within a 20 s update after a 40 s rollout.
            let bursting = st.rises_since(now - span) >= LOOP_RISES - 1;
            let periodic = st.periodic(now);
            let starved = if self.young.contains(&g.index) {
                None
            } else if held {
                st.recent_mean.map(|m| {
                    let mean_starving = || st.activity.mean().is_some_and(starving);
                    starving(m)
                        || (m <= self.idle_util_pct && bursting && mean_starving())
                        || (periodic && mean_starving())
                })
            } else {
                Some(false)
            };
            st.verdict.push(now, starved);
            st.history.push(now, if held { starved } else { None });
        }
        self.gpus.retain(|i, _| snap.gpu(*i).is_some());
    }

    /// Whether the job's GPUs wait this tick: their activity (as [`Self::observe_gpus`] read
    /// it: SM activity where the card reports GPM, else util), averaged, below their starved
    /// levels; unknown counts as waiting.
    pub(super) fn waiting_now(&self, gpus: &[u32]) -> bool {
        let (mut act, mut below, mut n) = (0.0, 0.0, 0.0);
        for st in gpus.iter().filter_map(|g| self.gpus.get(g)) {
            let Some(a) = st.now_activity else {
                continue;
            };
            act += a;
            below += st.below;
            n += 1.0;
        }
        n == 0.0 || act < below
    }
}
