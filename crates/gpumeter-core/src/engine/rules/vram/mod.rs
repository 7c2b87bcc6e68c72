//! VRAM headroom: per GPU, the used VRAM's trend over the last `trend` (default 5 min, a
//! least-squares line through every sample) and which process grows. Steady growth (≥ 0.05
//! GiB/min, ≥ 1 GiB over the trend, a line that fits, full within the hour) for most of the
//! window raises "GPU 2 at 76.1/79.6 GiB, +0.4 GiB/min → full in ~9 min (python train.py (pid
//! 4242))"; a GPU at ≥ 95 % for most of 5 min gets a notice. A flat allocation, however high, is
//! no growth: PyTorch's caching allocator holds memory on purpose, so the high-water notice is
//! informational. The cost named is what the job has been paid for so far — what an OOM crash
//! without a checkpoint throws away.

use std::collections::{BTreeMap, VecDeque};

use gpumeter_model::{GpuReading, GpuState, Snapshot};

use super::alert::{Alert, AlertKind, Severity};
use super::config::VramConfig;
use super::label::process_label;
use super::line_fit::LineFit;
pub use super::line_fit::Trend;
use super::window::Window;
use super::{Ctx, RuleOutput};

const GIB: f64 = (1u64 << 30) as f64;
/// Most samples kept per GPU (a 1 s tick over 15 minutes).
const MAX_SAMPLES: usize = 900;
/// Per-process memory is remembered at this many points across the trend.
const CHECKPOINTS: i64 = 20;
/// A line that explains less than this share of the variance is not "steady" growth.
const MIN_FIT_R2: f64 = 0.6;

/// A GPU's used VRAM over time, and its processes' at coarse checkpoints.
#[derive(Debug, Clone)]
struct Track {
    /// Used VRAM over the trend, with the running sums of its line.
    samples: LineFit,
    procs: VecDeque<(i64, BTreeMap<u32, u64>)>,
    growing: Window,
    high: Window,
}

#[derive(Debug, Clone)]
pub struct VramRule {
    cfg: VramConfig,
    fire_share: f64,
    clear_share: f64,
    tracks: BTreeMap<u32, Track>,
}

impl VramRule {
    pub fn new(cfg: VramConfig, fire_share: f64, clear_share: f64) -> Self {
        Self {
            cfg,
            fire_share,
            clear_share,
            tracks: BTreeMap::new(),
        }
    }

    /// Whether this GPU's trend is steady growth towards full.
    fn growing(&self, trend: Option<Trend>, g: &GpuReading) -> Option<bool> {
        let t = trend?;
        let (used, total) = (g.memory_used_bytes?, g.memory_total_bytes?);
        if t.covered_ms < self.cfg.trend_ms * 4 / 5 {
            return None;
        }
        let free = total.saturating_sub(used) as f64;
        let to_full_min = free / t.bytes_per_min.max(f64::MIN_POSITIVE);
        Some(
            t.bytes_per_min >= self.cfg.growth_bytes_per_min
                && t.rise_bytes >= self.cfg.min_rise_bytes as f64
                && t.r2 >= MIN_FIT_R2
                && to_full_min * 60_000.0 <= self.cfg.horizon_ms as f64,
        )
    }

    pub fn evaluate(&mut self, ctx: &Ctx<'_>) -> RuleOutput {
        let snap = ctx.snap;
        let now = ctx.now_ms;
        let (fire, clear) = (self.fire_share, self.clear_share);
        let (window, high_window, trend_ms) = (
            self.cfg.window_ms,
            self.cfg.high_window_ms,
            self.cfg.trend_ms,
        );
        let mut judged = Vec::new();
        for g in &snap.gpus {
            let t = self.tracks.entry(g.index).or_insert_with(|| Track {
                samples: LineFit::default(),
                procs: VecDeque::new(),
                growing: Window::new(window, fire, clear),
                high: Window::new(high_window, fire, clear),
            });
            let used = g.memory_used_bytes.filter(|_| g.state == GpuState::Ok);
            if let Some(u) = used {
                if t.samples.last_t().is_some_and(|last| now < last) {
                    t.samples.clear();
                    t.procs.clear();
                }
                t.samples.push(now, u);
                let step = (trend_ms / CHECKPOINTS).max(1);
                if t.procs.back().is_none_or(|(last, _)| now - last >= step) {
                    t.procs.push_back((now, holders(snap, g.index)));
                }
            }
            while t.samples.len() > MAX_SAMPLES
                || t.samples.front_t().is_some_and(|s| s < now - trend_ms)
            {
                t.samples.pop_front();
            }
            while t.procs.front().is_some_and(|(s, _)| *s < now - trend_ms) {
                t.procs.pop_front();
            }
            let trend = used.and(t.samples.trend());
            judged.push((g.index, trend, self.growing(trend, g)));
            let high = g.memory_used_pct().map(|p| p >= self.cfg.high_pct);
            if let Some(t) = self.tracks.get_mut(&g.index) {
                t.high.push(now, high.filter(|_| g.state == GpuState::Ok));
            }
        }
        for (gpu, _, growing) in &judged {
            if let Some(t) = self.tracks.get_mut(gpu) {
                t.growing.push(now, *growing);
            }
        }
        self.tracks.retain(|gpu, _| snap.gpu(*gpu).is_some());

        let mut out = RuleOutput::default();
        if !self.cfg.enabled {
            return out;
        }
        for (gpu, trend, _) in judged {
            let (Some(t), Some(g)) = (self.tracks.get(&gpu), snap.gpu(gpu)) else {
                continue;
            };
            if let (true, Some(trend)) = (t.growing.is_active(), trend) {
                out.alerts.push(self.growth_alert(ctx, g, t, trend));
            } else if t.high.is_active() {
                out.alerts.push(self.high_alert(ctx, g, t));
            }
        }
        out
    }

    fn growth_alert(&self, ctx: &Ctx<'_>, g: &GpuReading, t: &Track, trend: Trend) -> Alert {
        let snap = ctx.snap;
        let (used, total) = (
            g.memory_used_bytes.unwrap_or(0),
            g.memory_total_bytes.unwrap_or(0),
        );
        let free = total.saturating_sub(used) as f64;
        let per_min = trend.bytes_per_min;
        let to_full_ms = (free / per_min.max(f64::MIN_POSITIVE) * 60_000.0) as i64;
        let grower = grower(t);
        let who = grower
            .and_then(|(pid, _)| snap.processes.iter().find(|p| p.pid == pid))
            .map(process_label);
        let title = format!(
            "GPU {} at {:.1}/{:.1} GiB, +{:.1} GiB/min → full in ~{}{}",
            g.index,
            used as f64 / GIB,
            total as f64 / GIB,
            per_min / GIB,
            crate::units::duration(to_full_ms, crate::units::DurationStyle::Words),
            who.as_ref().map(|w| format!(" ({w})")).unwrap_or_default()
        );
        let mut evidence = vec![
            (
                "VRAM".to_string(),
                format!(
                    "{:.1}/{:.1} GiB ({:.1} GiB free)",
                    used as f64 / GIB,
                    total as f64 / GIB,
                    free / GIB
                ),
            ),
            (
                format!(
                    "trend over {}",
                    crate::units::duration(trend.covered_ms, crate::units::DurationStyle::Words)
                ),
                format!(
                    "+{:.2} GiB/min (+{:.1} GiB, fit r² {:.2})",
                    per_min / GIB,
                    trend.rise_bytes / GIB,
                    trend.r2
                ),
            ),
            (
                "full in".to_string(),
                format!(
                    "~{}",
                    crate::units::duration(to_full_ms, crate::units::DurationStyle::Words)
                ),
            ),
        ];
        if let (Some(w), Some((_, grew))) = (&who, grower) {
            evidence.push((
                "growing".into(),
                format!("{w}: +{:.1} GiB", grew as f64 / GIB),
            ));
        }
        let (cost, paid) = self.job_cost(ctx, grower.map(|(pid, _)| pid));
        if let Some(p) = paid {
            evidence.push(("job paid for so far".into(), p));
        }
        Alert {
            id: format!("vram:grow:{}", g.index),
            kind: AlertKind::Vram,
            severity: if to_full_ms <= 10 * 60_000 {
                Severity::High
            } else {
                Severity::Moderate
            },
            gpu: Some(g.index),
            title,
            detail: format!(
                "VRAM on GPU {} has grown steadily for {}; at this pace the next allocation \
                 fails (CUDA out of memory) in about {}.",
                g.index,
                crate::units::duration(trend.covered_ms, crate::units::DurationStyle::Words),
                crate::units::duration(to_full_ms, crate::units::DurationStyle::Words)
            ),
            evidence,
            cost_micros: cost,
            next_step: Some(
                "Look for tensors kept across steps (losses appended without .item(), growing \
                 caches, a leak in eval); checkpoint now so an OOM costs little; \
                 torch.cuda.memory_summary() shows who holds what."
                    .into(),
            ),
            since_unix_ms: t.growing.active_since().unwrap_or(ctx.now_ms),
            currency: ctx.currency,
        }
    }

    fn high_alert(&self, ctx: &Ctx<'_>, g: &GpuReading, t: &Track) -> Alert {
        let (used, total) = (
            g.memory_used_bytes.unwrap_or(0),
            g.memory_total_bytes.unwrap_or(0),
        );
        let since = t.high.active_since().unwrap_or(ctx.now_ms);
        let pct = g.memory_used_pct().unwrap_or(0.0);
        let trend = t
            .samples
            .trend()
            .map(|tr| format!("{:+.2} GiB/min", tr.bytes_per_min / GIB))
            .unwrap_or_else(|| crate::units::NA.into());
        Alert {
            id: format!("vram:high:{}", g.index),
            kind: AlertKind::Vram,
            severity: Severity::Info,
            gpu: Some(g.index),
            title: format!(
                "GPU {} VRAM above {:.0} % for {} ({:.1}/{:.1} GiB)",
                g.index,
                self.cfg.high_pct,
                crate::units::duration(ctx.now_ms - since, crate::units::DurationStyle::Words),
                used as f64 / GIB,
                total as f64 / GIB
            ),
            detail: "A stable, high allocation is normal (PyTorch's caching allocator keeps \
                     memory), but there is little headroom: a longer sequence, a bigger eval \
                     batch or fragmentation runs out of memory."
                .into(),
            evidence: vec![
                ("VRAM used".into(), format!("{pct:.1} %")),
                (
                    "free".into(),
                    format!("{:.1} GiB", total.saturating_sub(used) as f64 / GIB),
                ),
                ("trend".into(), trend),
            ],
            cost_micros: None,
            next_step: Some(
                "Nothing to do if it is steady; for headroom, lower the batch size or set \
                 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against fragmentation."
                    .into(),
            ),
            since_unix_ms: since,
            currency: ctx.currency,
        }
    }

    /// What the job of `pid` has been paid for since it started, on the GPUs it holds.
    fn job_cost(&self, ctx: &Ctx<'_>, pid: Option<u32>) -> (Option<i64>, Option<String>) {
        let snap = ctx.snap;
        let Some(p) = pid.and_then(|pid| snap.processes.iter().find(|p| p.pid == pid)) else {
            return (None, None);
        };
        let (Some(rate), Some(start)) = (ctx.rate_per_hour, p.start_time_unix_s) else {
            return (None, None);
        };
        let gpus = snap
            .processes
            .iter()
            .filter(|q| (q.ppid.is_some() && q.ppid == p.ppid) || q.pid == p.pid)
            .flat_map(|q| q.gpu.iter().map(|u| u.gpu_index))
            .collect::<std::collections::BTreeSet<u32>>()
            .len()
            .max(1);
        let n = i128::try_from(snap.gpus.len().max(1)).unwrap_or(1);
        let share = rate.mul_div(i128::try_from(gpus).unwrap_or(1), n);
        let age = ctx.now_ms - start.saturating_mul(1000);
        let c = share.cost_for_ms(age).micros();
        (
            Some(c),
            Some(format!(
                "{} over {} on {gpus} GPU(s) (an OOM without a checkpoint loses it)",
                ctx.money(c),
                crate::units::duration(age, crate::units::DurationStyle::Words)
            )),
        )
    }
}

/// Memory each process holds on `gpu` now.
fn holders(snap: &Snapshot, gpu: u32) -> BTreeMap<u32, u64> {
    snap.processes
        .iter()
        .filter_map(|p| {
            let u = p.gpu.iter().find(|u| u.gpu_index == gpu)?;
            Some((p.pid, u.memory_bytes?))
        })
        .collect()
}

/// The process whose memory grew most across the checkpoints, and by how much.
fn grower(t: &Track) -> Option<(u32, u64)> {
    let (_, first) = t.procs.front()?;
    let (_, last) = t.procs.back()?;
    last.iter()
        .map(|(pid, now)| {
            (
                *pid,
                now.saturating_sub(first.get(pid).copied().unwrap_or(0)),
            )
        })
        .filter(|(_, grew)| *grew > 0)
        .max_by_key(|(pid, grew)| (*grew, std::cmp::Reverse(*pid)))
}

#[cfg(test)]
mod tests;
