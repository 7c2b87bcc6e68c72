//! Each GPU process's own history on each GPU it uses: its VRAM bytes and its SM share
//! (`GpuUse::memory_bytes`, `GpuUse::sm_util_pct`), for the process detail view. A reading the
//! driver does not give is a gap, never 0.
//!
//! Keyed by PID, start time and GPU index, so a reused PID is another process and starts
//! afresh. Coarse on purpose, so that many processes stay small: 5 s points for 1 h, then
//! 1 min points for 24 h (the charts' widest window); 2 160 slots × 2 bytes per series, two
//! series: ≈ 8.4 KiB per process and GPU once filled. At most [`MAX_TRACKED`] (process, GPU)
//! pairs are kept (≈ 540 KiB in all); past that a new one is not tracked until one goes. A
//! pair no longer listed on its GPU keeps its history for [`UNLISTED_KEEP_MS`] (the driver's
//! process list can miss a reading, a GPU can fail one), as a gap; it goes at once when its PID
//! is listed there with another start time (a reused PID), or when a new pair needs its room.

use std::collections::HashMap;

use gpumeter_model::Snapshot;

use super::series::{Series, TierSpec};

/// (process, GPU) pairs tracked at most.
pub const MAX_TRACKED: usize = 64;

/// 5 s points for 1 h, 1 min points for 24 h.
pub const PROCESS_TIERS: [TierSpec; 2] = [
    TierSpec {
        resolution_ms: 5_000,
        capacity: 720,
    },
    TierSpec {
        resolution_ms: 60_000,
        capacity: 1_440,
    },
];

/// How long a pair no longer listed keeps its history: a few readings at any interval, so
/// one missed process list does not wipe the chart of a process that is still there.
pub const UNLISTED_KEEP_MS: i64 = 30_000;

/// VRAM is kept to 8 MiB (up to 512 GiB a process).
const VRAM_STEP_BYTES: f64 = 8.0 * 1024.0 * 1024.0;

/// Which process on which GPU: the PID with its start time (`None` where /proc cannot see it;
/// such a PID's reuse cannot be told apart) and the GPU's index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProcessKey {
    /// The process ID.
    pub pid: u32,
    /// The process's start time, seconds since the Unix epoch (`None`: /proc could not tell).
    pub start_time_unix_s: Option<i64>,
    /// Index of the GPU the process uses.
    pub gpu_index: u32,
}

/// One process's history on one GPU.
#[derive(Debug, Clone)]
pub struct ProcessGpuHistory {
    /// The process's VRAM on this GPU, bytes, kept to 8 MiB; gaps where the driver does not say.
    pub vram_bytes: Series,
    /// The process's share of this GPU's SMs, percent 0–100; gaps where the driver does not say.
    pub sm_util_pct: Series,
}

impl Default for ProcessGpuHistory {
    fn default() -> Self {
        Self {
            vram_bytes: Series::with_step(VRAM_STEP_BYTES, &PROCESS_TIERS),
            sm_util_pct: Series::with_tiers(&PROCESS_TIERS),
        }
    }
}

/// Every tracked (process, GPU) pair's history.
#[derive(Debug, Clone, Default)]
pub struct ProcessHistories {
    /// Each pair's history, with the time of the last reading that listed it.
    by_key: HashMap<ProcessKey, (i64, ProcessGpuHistory)>,
}

impl ProcessHistories {
    /// Folds one snapshot in: each GPU use recorded; pairs unlisted past [`UNLISTED_KEEP_MS`],
    /// and the old process of a reused PID, dropped.
    pub fn record(&mut self, snap: &Snapshot) {
        let t = snap.taken_at_unix_ms;
        let keys = || {
            snap.processes.iter().flat_map(|p| {
                p.gpu.iter().map(move |u| {
                    (
                        ProcessKey {
                            pid: p.pid,
                            start_time_unix_s: p.start_time_unix_s,
                            gpu_index: u.gpu_index,
                        },
                        u,
                    )
                })
            })
        };
        // Stamp the pairs still listed, then drop the ones gone for good, so a pair that went
        // frees its room for a new one in the same reading.
        for (key, _) in keys() {
            if let Some((seen, _)) = self.by_key.get_mut(&key) {
                *seen = t;
            }
        }
        let reused = |k: &ProcessKey| {
            keys().any(|(l, _)| {
                l.pid == k.pid
                    && l.gpu_index == k.gpu_index
                    && l.start_time_unix_s != k.start_time_unix_s
            })
        };
        self.by_key
            .retain(|k, (seen, _)| *seen == t || (t - *seen <= UNLISTED_KEEP_MS && !reused(k)));
        // Once no room can be made, none will be this reading: stop looking (a box with
        // hundreds of GPU processes would otherwise scan the map for each untracked one).
        let mut full = false;
        for (key, u) in keys() {
            if !self.by_key.contains_key(&key) && (full || !self.make_room(t)) {
                full = true;
                continue;
            }
            let (_, h) = self.by_key.entry(key).or_insert((t, Default::default()));
            h.vram_bytes.push(t, u.memory_bytes.map(|b| b as f64));
            h.sm_util_pct.push(t, u.sm_util_pct.map(f64::from));
        }
    }

    /// Whether a new pair fits: below the cap, or by dropping the pair unlisted longest.
    fn make_room(&mut self, now_ms: i64) -> bool {
        if self.by_key.len() < MAX_TRACKED {
            return true;
        }
        let oldest = self
            .by_key
            .iter()
            .filter(|(_, (seen, _))| *seen < now_ms)
            .min_by_key(|(_, (seen, _))| *seen)
            .map(|(k, _)| *k);
        oldest.is_some_and(|k| self.by_key.remove(&k).is_some())
    }

    /// The history of `key`, if it is tracked.
    pub fn get(&self, key: &ProcessKey) -> Option<&ProcessGpuHistory> {
        self.by_key.get(key).map(|(_, h)| h)
    }

    /// How many pairs are tracked.
    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    /// No (process, GPU) pair is tracked.
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }

    /// Heap bytes the series hold (the map's own table aside).
    pub fn heap_bytes(&self) -> usize {
        self.by_key
            .values()
            .map(|(_, h)| h.vram_bytes.heap_bytes() + h.sm_util_pct.heap_bytes())
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpumeter_model::{GpuProcessKind, GpuUse, ProcessReading};

    fn reading(
        pid: u32,
        start: i64,
        gpu: u32,
        mem: Option<u64>,
        sm: Option<u32>,
    ) -> ProcessReading {
        let mut p = ProcessReading::invisible(pid);
        p.visible = true;
        p.start_time_unix_s = Some(start);
        p.gpu.push(GpuUse {
            gpu_index: gpu,
            kind: GpuProcessKind::Compute,
            memory_bytes: mem,
            sm_util_pct: sm,
            memory_util_pct: None,
        });
        p
    }

    fn snap(t_ms: i64, procs: Vec<ProcessReading>) -> Snapshot {
        let mut s = Snapshot::empty("t", t_ms);
        s.processes = procs;
        s
    }

    fn key(pid: u32, start: i64, gpu: u32) -> ProcessKey {
        ProcessKey {
            pid,
            start_time_unix_s: Some(start),
            gpu_index: gpu,
        }
    }

    #[test]
    fn records_vram_and_sm_and_unknown_stays_a_gap() {
        let mut h = ProcessHistories::default();
        h.record(&snap(10_000, vec![reading(7, 100, 1, Some(1 << 30), None)]));
        let p = h.get(&key(7, 100, 1)).unwrap();
        assert_eq!(p.vram_bytes.last(), Some((10_000, f64::from(1u32 << 30))));
        assert_eq!(p.sm_util_pct.last(), None, "unknown SM is no point, not 0");
        assert!(p.sm_util_pct.window(20_000, 60_000).is_empty());
        h.record(&snap(15_000, vec![reading(7, 100, 1, None, Some(42))]));
        let p = h.get(&key(7, 100, 1)).unwrap();
        assert_eq!(p.sm_util_pct.last(), Some((15_000, 42.0)));
        // The unknown VRAM reading added nothing: the newest is still the first.
        assert_eq!(p.vram_bytes.last().map(|l| l.0), Some(10_000));
        assert!(h.get(&key(7, 100, 0)).is_none(), "another GPU, another key");
    }

    #[test]
    fn a_reused_pid_starts_fresh_and_a_gone_process_is_dropped() {
        let mut h = ProcessHistories::default();
        h.record(&snap(
            1_000,
            vec![reading(7, 100, 0, Some(5 << 30), Some(90))],
        ));
        // PID 7 again, started later: another process.
        h.record(&snap(
            6_000,
            vec![reading(7, 200, 0, Some(1 << 30), Some(3))],
        ));
        assert!(h.get(&key(7, 100, 0)).is_none(), "the old one is gone");
        let fresh = h.get(&key(7, 200, 0)).unwrap();
        assert_eq!(fresh.sm_util_pct.window(6_000, 60_000).len(), 1);
        assert_eq!(fresh.sm_util_pct.last(), Some((6_000, 3.0)));
        // Unlisted for one reading (a missed process list): kept, as a gap.
        h.record(&snap(11_000, vec![]));
        let kept = h.get(&key(7, 200, 0)).expect("one missed reading keeps it");
        assert_eq!(kept.sm_util_pct.last(), Some((6_000, 3.0)));
        // Listed again: the same history goes on.
        h.record(&snap(
            16_000,
            vec![reading(7, 200, 0, Some(1 << 30), Some(4))],
        ));
        let back = h.get(&key(7, 200, 0)).unwrap();
        assert_eq!(back.sm_util_pct.window(16_000, 60_000).len(), 2);
        // Gone longer than UNLISTED_KEEP_MS: dropped.
        h.record(&snap(16_000 + UNLISTED_KEEP_MS, vec![]));
        assert!(h.get(&key(7, 200, 0)).is_some(), "not yet past the keep");
        h.record(&snap(16_001 + UNLISTED_KEEP_MS, vec![]));
        assert!(h.is_empty());
    }

    #[test]
    fn at_most_max_tracked_pairs_and_memory_stays_bounded() {
        let mut h = ProcessHistories::default();
        let many: Vec<_> = (0..MAX_TRACKED as u32 + 10)
            .map(|pid| reading(pid, 1, 0, Some(1 << 30), Some(50)))
            .collect();
        // A day and a bit of 5 s ticks for every one of them.
        for k in 0..(25 * 720) {
            h.record(&snap(k * 5_000, many.clone()));
        }
        assert_eq!(h.len(), MAX_TRACKED);
        // The first ones came first and are kept; the ones past the cap are not tracked.
        assert!(h.get(&key(0, 1, 0)).is_some());
        assert!(h.get(&key(MAX_TRACKED as u32 + 5, 1, 0)).is_none());
        let per_pair = 2 * 2 * (720 + 1_440);
        assert!(
            h.heap_bytes() <= MAX_TRACKED * per_pair,
            "{}",
            h.heap_bytes()
        );
        // When one goes, a waiting one takes its place.
        let mut fewer = many.clone();
        fewer.remove(0);
        h.record(&snap(25 * 720 * 5_000, fewer));
        assert_eq!(h.len(), MAX_TRACKED);
        assert!(h.get(&key(0, 1, 0)).is_none());
        assert!(h.get(&key(MAX_TRACKED as u32, 1, 0)).is_some());
    }
}
