//! VRAM headroom: per GPU, the used VRAM over the last `trend` (default 15 min) while the GPU
//! computes (VRAM filling on an idle GPU is a model loading, not a leak) and which process
//! grows. A leak is growth that lasts: the trend is cut into five slices, and every
//! slice's median must sit above the one before (each by ≥ 10 % of the whole rise, ≥ 1 GiB in
//! all, ≥ 0.05 GiB/min, over at least 5 minutes). A one-time step — a model loading, the
//! caching allocator growing once — moves at most the two slices it falls in, so it is a change
//! of level, never a leak. The pace is the slices' (first to last median), so a step beside a
//! slow leak cannot inflate it, and growth is at most what the card holds. Growth that fills
//! the card within `horizon` (default a day; beyond that it is not an alert) raises one alert
//! per job, its GPUs named together: "GPUs 4–7 at 57.2/80.0 GiB, +0.4 GiB/min → full in ~58 min
//! (python train_b.py (pid 7100))", headline and evidence giving the same "full in" (the GPU
//! that fills first). A GPU at ≥ 95 % for most of 5 min gets a notice, again one per job. A flat allocation,
//! however high, is no growth: PyTorch's caching allocator holds memory on purpose, so the
//! high-water notice is informational. The cost named is what the job has been paid for so far
//! — what an OOM crash without a checkpoint throws away.

use std::collections::{BTreeMap, VecDeque};

use gpumeter_model::{GpuReading, GpuState, Snapshot};

use super::alert::{Alert, AlertKind, Severity};
use super::config::VramConfig;
use super::label::process_label;
use super::line_fit::LineFit;
use super::window::Window;
use super::work::GpuWork;
use super::{Ctx, RuleOutput};

const GIB: f64 = (1u64 << 30) as f64;
/// Most samples kept per GPU: readings closer than `trend / MAX_SAMPLES` are skipped, so a
/// fast tick keeps the same history in the same memory.
const MAX_SAMPLES: i64 = 900;
/// The trend is judged in this many slices (a step moves at most two of them).
const SLICES: usize = 5;
/// Each slice must rise by at least this share of the whole rise.
const SLICE_SHARE: f64 = 0.1;
/// Growth is judged on at least this much history.
const MIN_COVER_MS: i64 = 5 * 60_000;
/// Per-process memory is remembered at this many points across the trend.
const CHECKPOINTS: i64 = 20;

/// A GPU's used VRAM over time, and its processes' at coarse checkpoints.
#[derive(Debug, Clone)]
struct Track {
    /// Used VRAM over the trend, with the running sums of its line.
    samples: LineFit,
    procs: VecDeque<(i64, BTreeMap<u32, u64>)>,
    growing: Window,
    /// The growth last judged a leak (what a standing alert says through a quiet tick).
    last: Option<Growth>,
    high: Window,
}

/// A leak as judged on one GPU.
#[derive(Debug, Clone, PartialEq)]
struct Growth {
    /// Bytes a minute, first slice to last.
    per_min: f64,
    /// First slice's median to the last's, at most the card.
    rise: u64,
    /// Each slice's median, oldest first.
    levels: Vec<u64>,
    covered_ms: i64,
    to_full_ms: i64,
}

/// The VRAM-headroom rule's state across ticks: each GPU's used-VRAM trend and its processes'
/// growth (see the module docs).
#[derive(Debug, Clone)]
pub struct VramRule {
    cfg: VramConfig,
    fire_share: f64,
    clear_share: f64,
    tracks: BTreeMap<u32, Track>,
}

impl VramRule {
    /// A rule with these settings; it fires when its condition held for `fire_share` of its window
    /// and clears at or below `clear_share` (0–1, `RulesConfig`).
    pub fn new(cfg: VramConfig, fire_share: f64, clear_share: f64) -> Self {
        Self {
            cfg,
            fire_share,
            clear_share,
            tracks: BTreeMap::new(),
        }
    }
}

/// A GPU's growth, when it is a leak filling the card within the horizon.
fn growing(cfg: &VramConfig, t: &Track, g: &GpuReading) -> Option<Growth> {
    let (used, total) = (g.memory_used_bytes?, g.memory_total_bytes?);
    let line = t.samples.trend()?;
    // The cheap test first: most ticks on most GPUs stop here.
    if line.covered_ms < MIN_COVER_MS.min(cfg.trend_ms * 4 / 5)
        || line.bytes_per_min < cfg.growth_bytes_per_min
    {
        return None;
    }
    let levels = t.samples.part_levels(SLICES)?;
    let (first, last) = (*levels.first()?, *levels.last()?);
    let rise = last.saturating_sub(first).min(total);
    // First to last slice centre: (SLICES - 1) slices apart.
    let minutes = line.covered_ms as f64 * (SLICES as f64 - 1.0) / SLICES as f64 / 60_000.0;
    let per_min = rise as f64 / minutes.max(f64::MIN_POSITIVE);
    // The rise over the whole trend at that pace (the slice medians stand a slice in from
    // each end, so theirs is 4/5 of it: a leak at 0.075 GiB/min rose 1.1 GiB in 15 min).
    let over_trend = per_min * line.covered_ms as f64 / 60_000.0;
    if over_trend < cfg.min_rise_bytes as f64 || per_min < cfg.growth_bytes_per_min {
        return None;
    }
    let each = (rise as f64 * SLICE_SHARE) as u64;
    if !levels
        .windows(2)
        .all(|w| w[1] > w[0] && w[1] - w[0] >= each)
    {
        return None;
    }
    let free = total.saturating_sub(used) as f64;
    let to_full_ms = (free / per_min * 60_000.0).min(i64::MAX as f64) as i64;
    (to_full_ms <= cfg.horizon_ms).then_some(Growth {
        per_min,
        rise,
        levels,
        covered_ms: line.covered_ms,
        to_full_ms,
    })
}

impl VramRule {
    /// One tick: folds `ctx` in and returns the alerts that stand now (and any due a reminder).
    pub fn evaluate(&mut self, ctx: &Ctx<'_>) -> RuleOutput {
        let snap = ctx.snap;
        let now = ctx.now_ms;
        let (fire, clear) = (self.fire_share, self.clear_share);
        let (window, high_window, trend_ms) = (
            self.cfg.window_ms,
            self.cfg.high_window_ms,
            self.cfg.trend_ms,
        );
        let mut judged: Vec<u32> = Vec::new();
        for g in &snap.gpus {
            let t = self.tracks.entry(g.index).or_insert_with(|| Track {
                samples: LineFit::default(),
                procs: VecDeque::new(),
                growing: Window::new(window, fire, clear),
                last: None,
                high: Window::new(high_window, fire, clear),
            });
            let used = g.memory_used_bytes.filter(|_| g.state == GpuState::Ok);
            // The trend is the job's memory while it computes: VRAM filling on an idle GPU
            // is a model loading (weights copied in), not a leak in a loop.
            let computing = ctx
                .work()
                .gpus()
                .iter()
                .find(|(i, _)| *i == g.index)
                .is_none_or(|(i, w)| match w {
                    GpuWork::Work => !ctx.work().is_loading(*i),
                    GpuWork::Unknown => true,
                    GpuWork::Idle | GpuWork::Probe | GpuWork::Lost => false,
                });
            if let Some(u) = used.filter(|_| computing) {
                if t.samples.last_t().is_some_and(|last| now < last) {
                    t.samples.clear();
                    t.procs.clear();
                }
                let every = (trend_ms / MAX_SAMPLES).max(1);
                if t.samples.last_t().is_none_or(|last| now - last >= every) {
                    t.samples.push(now, u);
                }
                let step = (trend_ms / CHECKPOINTS).max(1);
                if t.procs.back().is_none_or(|(last, _)| now - last >= step) {
                    t.procs.push_back((now, holders(snap, g.index)));
                }
            }
            while t.samples.front_t().is_some_and(|s| s < now - trend_ms) {
                t.samples.pop_front();
            }
            while t.procs.front().is_some_and(|(s, _)| *s < now - trend_ms) {
                t.procs.pop_front();
            }
            let growth = used.and_then(|_| growing(&self.cfg, t, g));
            t.growing.push(now, used.map(|_| growth.is_some()));
            if growth.is_some() {
                t.last = growth;
            } else if !t.growing.is_active() {
                t.last = None;
            }
            let high = g.memory_used_pct().map(|p| p >= self.cfg.high_pct);
            t.high.push(now, high.filter(|_| g.state == GpuState::Ok));
            judged.push(g.index);
        }
        self.tracks.retain(|gpu, _| snap.gpu(*gpu).is_some());

        let mut out = RuleOutput::default();
        if !self.cfg.enabled {
            return out;
        }
        let leaking: Vec<u32> = judged
            .iter()
            .copied()
            .filter(|g| {
                self.tracks
                    .get(g)
                    .is_some_and(|t| t.growing.is_active() && t.last.is_some())
            })
            .collect();
        for (key, gpus) in by_job(ctx, &leaking) {
            out.alerts
                .extend(self.growth_alert(ctx, &format!("vram:grow:{key}"), &gpus));
        }
        let high: Vec<u32> = judged
            .iter()
            .copied()
            .filter(|g| !leaking.contains(g))
            .filter(|g| self.tracks.get(g).is_some_and(|t| t.high.is_active()))
            .collect();
        for (key, gpus) in by_job(ctx, &high) {
            out.alerts
                .extend(self.high_alert(ctx, &format!("vram:high:{key}"), &gpus));
        }
        out
    }

    /// The alert for `gpus` (one job's, or one GPU), led by the GPU that fills first.
    fn growth_alert(&self, ctx: &Ctx<'_>, id: &str, gpus: &[u32]) -> Option<Alert> {
        let snap = ctx.snap;
        let gib = |b: f64| b / GIB;
        let words = |ms: i64| crate::units::duration(ms, crate::units::DurationStyle::Words);
        let mut rows: Vec<(&GpuReading, &Track, &Growth)> = gpus
            .iter()
            .filter_map(|i| {
                let t = self.tracks.get(i)?;
                Some((snap.gpu(*i)?, t, t.last.as_ref()?))
            })
            .collect();
        rows.sort_by_key(|(g, _, gr)| (gr.to_full_ms, g.index));
        let &(lead, track, growth) = rows.first()?;
        let (used, total) = (
            lead.memory_used_bytes.unwrap_or(0) as f64,
            lead.memory_total_bytes.unwrap_or(0) as f64,
        );
        let full_in = format!("~{}", words(growth.to_full_ms));
        let grower = grower(track);
        let who = grower
            .and_then(|(pid, _)| snap.processes.iter().find(|p| p.pid == pid))
            .map(process_label);
        let mut indices: Vec<u32> = rows.iter().map(|(g, _, _)| g.index).collect();
        indices.sort_unstable();
        let subject = match indices.as_slice() {
            [one] => format!("GPU {one} at"),
            many => format!("GPUs {} at up to", super::job::gpu_ranges(many)),
        };
        let title = format!(
            "{subject} {:.1}/{:.1} GiB, +{:.1} GiB/min → full in {full_in}{}",
            gib(used),
            gib(total),
            gib(growth.per_min),
            who.as_ref().map(|w| format!(" ({w})")).unwrap_or_default()
        );
        let levels: Vec<String> = growth
            .levels
            .iter()
            .map(|&b| format!("{:.1}", gib(b as f64)))
            .collect();
        let mut evidence = vec![
            (
                "VRAM".to_string(),
                format!(
                    "{:.1}/{:.1} GiB ({:.1} GiB free) on GPU {}",
                    gib(used),
                    gib(total),
                    gib(total - used),
                    lead.index
                ),
            ),
            (
                format!("trend over {}", words(growth.covered_ms)),
                format!(
                    "+{:.2} GiB/min (+{:.1} GiB, rising in every fifth: {} GiB)",
                    gib(growth.per_min),
                    gib(growth.rise as f64),
                    levels.join(" → ")
                ),
            ),
            ("full in".to_string(), full_in.clone()),
        ];
        if rows.len() > 1 {
            for (g, _, gr) in &rows {
                evidence.push((
                    format!("GPU {}", g.index),
                    format!(
                        "{:.1}/{:.1} GiB, +{:.2} GiB/min, full in ~{}",
                        gib(g.memory_used_bytes.unwrap_or(0) as f64),
                        gib(g.memory_total_bytes.unwrap_or(0) as f64),
                        gib(gr.per_min),
                        words(gr.to_full_ms)
                    ),
                ));
            }
        }
        if let (Some(w), Some((_, grew))) = (&who, grower) {
            evidence.push((
                "growing".into(),
                format!("{w}: +{:.1} GiB", gib(grew as f64)),
            ));
        }
        let (cost, paid) = self.job_cost(ctx, grower.map(|(pid, _)| pid));
        if let Some(p) = paid {
            evidence.push(("job paid for so far".into(), p));
        }
        let since = rows
            .iter()
            .filter_map(|(_, t, _)| t.growing.active_since())
            .min()
            .unwrap_or(ctx.now_ms);
        let on = match indices.as_slice() {
            [one] => format!("GPU {one}"),
            many => format!("GPUs {}", super::job::gpu_ranges(many)),
        };
        Some(Alert {
            id: id.to_string(),
            kind: AlertKind::Vram,
            severity: if growth.to_full_ms <= 10 * 60_000 {
                Severity::High
            } else if growth.to_full_ms <= 6 * 60 * 60_000 {
                Severity::Moderate
            } else {
                Severity::Info
            },
            gpu: (rows.len() == 1).then_some(lead.index),
            title,
            detail: format!(
                "VRAM on {on} has grown for {} without levelling off (not a one-time step: \
                 every fifth of the trend sits higher than the one before); at this pace the \
                 next allocation fails (CUDA out of memory) in about {}.",
                words(growth.covered_ms),
                words(growth.to_full_ms)
            ),
            evidence,
            cost_micros: cost,
            next_step: Some(
                "Look for tensors kept across steps (losses appended without .item(), growing \
                 caches, a leak in eval); checkpoint now so an OOM costs little; \
                 torch.cuda.memory_summary() shows who holds what."
                    .into(),
            ),
            since_unix_ms: since,
            currency: ctx.currency,
        })
    }

    /// The high-water notice for `gpus` (one job's, or one GPU), led by the fullest.
    fn high_alert(&self, ctx: &Ctx<'_>, id: &str, gpus: &[u32]) -> Option<Alert> {
        let pct_of = |g: &GpuReading| g.memory_used_pct().unwrap_or(0.0);
        let mut rows: Vec<(&GpuReading, &Track)> = gpus
            .iter()
            .filter_map(|i| Some((ctx.snap.gpu(*i)?, self.tracks.get(i)?)))
            .collect();
        rows.sort_by(|(a, _), (b, _)| pct_of(b).total_cmp(&pct_of(a)).then(a.index.cmp(&b.index)));
        let &(lead, track) = rows.first()?;
        let gib = |b: u64| b as f64 / GIB;
        let (used, total) = (
            lead.memory_used_bytes.unwrap_or(0),
            lead.memory_total_bytes.unwrap_or(0),
        );
        let since = rows
            .iter()
            .filter_map(|(_, t)| t.high.active_since())
            .min()
            .unwrap_or(ctx.now_ms);
        let pct = pct_of(lead);
        let trend = track
            .samples
            .trend()
            .map(|tr| format!("{:+.2} GiB/min", tr.bytes_per_min / GIB))
            .unwrap_or_else(|| crate::units::NA.into());
        let lasted = crate::units::duration(ctx.now_ms - since, crate::units::DurationStyle::Words);
        let (used_gib, total_gib) = (gib(used), gib(total));
        let mut indices: Vec<u32> = rows.iter().map(|(g, _)| g.index).collect();
        indices.sort_unstable();
        let (on, up_to) = match indices.as_slice() {
            [one] => (format!("GPU {one}"), ""),
            many => (format!("GPUs {}", super::job::gpu_ranges(many)), "up to "),
        };
        // The window holds the verdict through a dip; the title then says where it is now,
        // the figure the evidence gives too (the fullest GPU's).
        let title = if pct >= self.cfg.high_pct {
            format!(
                "{on} VRAM above {:.0} % for {lasted} ({up_to}{used_gib:.1}/{total_gib:.1} GiB)",
                self.cfg.high_pct
            )
        } else {
            format!(
                "{on} VRAM at {up_to}{pct:.1} % ({used_gib:.1}/{total_gib:.1} GiB), above {:.0} % \
                 for most of the last {lasted}",
                self.cfg.high_pct
            )
        };
        let mut evidence = vec![
            ("VRAM used".into(), format!("{pct:.1} %")),
            (
                "free".into(),
                format!("{:.1} GiB", gib(total.saturating_sub(used))),
            ),
            ("trend".into(), trend),
        ];
        if rows.len() > 1 {
            for (g, _) in &rows {
                evidence.push((
                    format!("GPU {}", g.index),
                    format!(
                        "{:.1}/{:.1} GiB ({:.1} %)",
                        gib(g.memory_used_bytes.unwrap_or(0)),
                        gib(g.memory_total_bytes.unwrap_or(0)),
                        pct_of(g)
                    ),
                ));
            }
        }
        Some(Alert {
            id: id.to_string(),
            kind: AlertKind::Vram,
            severity: Severity::Info,
            gpu: (rows.len() == 1).then_some(lead.index),
            title,
            detail: "A stable, high allocation is normal (PyTorch's caching allocator keeps \
                     memory), but there is little headroom: a longer sequence, a bigger eval \
                     batch or fragmentation runs out of memory."
                .into(),
            evidence,
            cost_micros: None,
            next_step: Some(
                "Nothing to do if it is steady; for headroom, lower the batch size or set \
                 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against fragmentation."
                    .into(),
            ),
            since_unix_ms: since,
            currency: ctx.currency,
        })
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

/// `gpus` grouped by the job that holds them (one alert per job, its GPUs named together),
/// keyed by the job's id; a GPU no job holds stands alone, keyed by its index.
fn by_job(ctx: &Ctx<'_>, gpus: &[u32]) -> Vec<(String, Vec<u32>)> {
    let mut grouped: Vec<u32> = Vec::new();
    let mut out = Vec::new();
    for j in ctx.jobs() {
        let mine: Vec<u32> = j
            .gpus
            .iter()
            .copied()
            .filter(|g| gpus.contains(g) && !grouped.contains(g))
            .collect();
        if !mine.is_empty() {
            grouped.extend(&mine);
            out.push((j.key.id(), mine));
        }
    }
    out.extend(
        gpus.iter()
            .filter(|g| !grouped.contains(g))
            .map(|g| (g.to_string(), vec![*g])),
    );
    out
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
