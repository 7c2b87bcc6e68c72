//! The metric histories the dashboard charts: per GPU (util, GPM's SM activity where the card
//! has it, memory-controller util, VRAM %, power), for the host (CPU, iowait), each a
//! bounded [`Series`], and each GPU process's own VRAM and SM share
//! ([`ProcessHistories`], coarser and capped).

use std::collections::BTreeMap;

use gpumeter_model::Snapshot;

use super::process_history::{ProcessGpuHistory, ProcessHistories, ProcessKey};
use super::series::{DEFAULT_TIERS, Series};

/// Power is kept to 0.1 W (up to 6.5 kW); the percentages to 0.01.
const POWER_STEP_W: f64 = 0.1;

/// One GPU's histories.
#[derive(Debug, Clone)]
pub struct GpuHistory {
    /// GPU utilization: share of each sample period in which a kernel ran, percent 0–100.
    pub util_pct: Series,
    /// GPM SM activity; empty on cards without GPM.
    pub sm_active_pct: Series,
    /// Memory-controller utilization: share of each sample period in which device memory was read
    /// or written, percent 0–100.
    pub memory_util_pct: Series,
    /// VRAM used, percent 0–100 of the card's total.
    pub vram_used_pct: Series,
    /// Board power draw, watts, kept to 0.1 W.
    pub power_watts: Series,
}

impl Default for GpuHistory {
    fn default() -> Self {
        Self {
            util_pct: Series::default(),
            sm_active_pct: Series::default(),
            memory_util_pct: Series::default(),
            vram_used_pct: Series::default(),
            power_watts: Series::with_step(POWER_STEP_W, &DEFAULT_TIERS),
        }
    }
}

/// All histories, keyed by GPU index.
#[derive(Debug, Clone, Default)]
pub struct History {
    /// Each GPU's histories, keyed by the GPU index.
    pub gpus: BTreeMap<u32, GpuHistory>,
    /// Host CPU busy share across all CPUs, percent 0–100.
    pub host_cpu_pct: Series,
    /// Share of host CPU time spent waiting on I/O, percent 0–100.
    pub host_iowait_pct: Series,
    /// Each GPU process's own, per GPU it uses.
    pub processes: ProcessHistories,
    /// When the first snapshot was folded in (how far back any chart can reach).
    pub first_at_unix_ms: Option<i64>,
}

impl History {
    /// Folds one snapshot in.
    pub fn record(&mut self, snap: &Snapshot) {
        let t = snap.taken_at_unix_ms;
        self.first_at_unix_ms = Some(self.first_at_unix_ms.map_or(t, |f| f.min(t)));
        for gpu in &snap.gpus {
            let h = self.gpus.entry(gpu.index).or_default();
            h.util_pct.push(t, gpu.util_gpu_pct.map(f64::from));
            h.sm_active_pct.push(t, gpu.sm_active_pct);
            h.memory_util_pct
                .push(t, gpu.util_memory_pct.map(f64::from));
            h.vram_used_pct.push(t, gpu.memory_used_pct());
            h.power_watts.push(t, gpu.power_watts);
        }
        self.host_cpu_pct.push(t, snap.host.cpu_util_pct);
        self.host_iowait_pct.push(t, snap.host.iowait_pct);
        self.processes.record(snap);
    }

    /// One GPU's histories, if it was ever seen.
    pub fn gpu(&self, index: u32) -> Option<&GpuHistory> {
        self.gpus.get(&index)
    }

    /// One process's history on one GPU, if it is tracked.
    pub fn process(&self, key: &ProcessKey) -> Option<&ProcessGpuHistory> {
        self.processes.get(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpumeter_model::GpuReading;

    #[test]
    fn records_each_gpu_and_skips_unsupported() {
        let mut h = History::default();
        let mut snap = Snapshot::empty("t", 5_000);
        snap.gpus.push(GpuReading {
            index: 3,
            util_gpu_pct: Some(40),
            power_watts: None,
            ..GpuReading::default()
        });
        h.record(&snap);
        let g = h.gpu(3).unwrap();
        assert_eq!(g.util_pct.last(), Some((5_000, 40.0)));
        assert_eq!(g.power_watts.last(), None);
        assert_eq!(g.sm_active_pct.last(), None, "no GPM, no SM history");
        snap.taken_at_unix_ms = 6_000;
        snap.gpus[0].sm_active_pct = Some(3.5);
        h.record(&snap);
        assert_eq!(h.gpu(3).unwrap().sm_active_pct.last(), Some((6_000, 3.5)));
        assert!(h.gpu(0).is_none());
    }

    #[test]
    fn power_keeps_tenths_of_a_watt_above_the_percent_range() {
        let mut h = History::default();
        for (i, w) in [(0, 687.25), (1, 687.25)] {
            let mut snap = Snapshot::empty("t", 60_000 + i * 1_000);
            snap.gpus.push(GpuReading {
                index: 0,
                power_watts: Some(w),
                ..GpuReading::default()
            });
            h.record(&snap);
        }
        let pts = h.gpu(0).unwrap().power_watts.window(62_000, 10_000);
        assert_eq!(pts.len(), 2);
        // The closed point is stored to 0.1 W; the open one is exact.
        assert!((pts[0].mean - 687.3).abs() < 1e-9, "{pts:?}");
        assert_eq!(pts[1].mean, 687.25);
    }
}
