//! A bounded time series with coarser tiers: recent samples at full resolution, older ones
//! folded into means, so memory stays fixed however long gpumeter runs.

use std::collections::VecDeque;

/// One stored point: the mean and max of the samples folded into it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Start of the bucket, milliseconds since the Unix epoch.
    pub t_ms: i64,
    pub mean: f64,
    pub max: f64,
}

/// How one tier buckets and how many buckets it keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TierSpec {
    pub resolution_ms: i64,
    pub capacity: usize,
}

/// Default tiers: 1 s for 15 min, 10 s for 6 h, 1 min for 7 days.
pub const DEFAULT_TIERS: [TierSpec; 3] = [
    TierSpec {
        resolution_ms: 1_000,
        capacity: 900,
    },
    TierSpec {
        resolution_ms: 10_000,
        capacity: 2_160,
    },
    TierSpec {
        resolution_ms: 60_000,
        capacity: 10_080,
    },
];

#[derive(Debug, Clone)]
struct Tier {
    spec: TierSpec,
    points: VecDeque<Point>,
    /// The bucket being filled: (bucket start, sum, count, max).
    open: Option<(i64, f64, u32, f64)>,
}

impl Tier {
    fn new(spec: TierSpec) -> Self {
        Self {
            spec,
            points: VecDeque::with_capacity(spec.capacity.min(1024)),
            open: None,
        }
    }

    fn push(&mut self, t_ms: i64, v: f64) {
        let res = self.spec.resolution_ms.max(1);
        let bucket = t_ms.div_euclid(res) * res;
        match &mut self.open {
            Some((start, sum, n, max)) if *start == bucket => {
                *sum += v;
                *n += 1;
                *max = max.max(v);
            }
            Some((start, _, _, _)) if bucket < *start => {
                // The clock stepped back: start afresh rather than mix out-of-order time.
                self.points.clear();
                self.open = Some((bucket, v, 1, v));
            }
            _ => {
                self.close();
                self.open = Some((bucket, v, 1, v));
            }
        }
    }

    fn close(&mut self) {
        if let Some((start, sum, n, max)) = self.open.take() {
            if self.points.len() == self.spec.capacity {
                self.points.pop_front();
            }
            if self.spec.capacity > 0 {
                self.points.push_back(Point {
                    t_ms: start,
                    mean: sum / f64::from(n.max(1)),
                    max,
                });
            }
        }
    }

    fn span_ms(&self) -> i64 {
        self.spec.resolution_ms * self.spec.capacity as i64
    }

    /// Closed points plus the open bucket, oldest first, from `since_ms` on.
    fn points_since(&self, since_ms: i64) -> Vec<Point> {
        let mut out: Vec<Point> = self
            .points
            .iter()
            .filter(|p| p.t_ms >= since_ms)
            .copied()
            .collect();
        if let Some((start, sum, n, max)) = self.open
            && start >= since_ms
        {
            out.push(Point {
                t_ms: start,
                mean: sum / f64::from(n.max(1)),
                max,
            });
        }
        out
    }
}

/// A tiered series of one metric. Missing samples (`None`) leave gaps rather than zeros.
#[derive(Debug, Clone)]
pub struct Series {
    tiers: Vec<Tier>,
    last: Option<(i64, f64)>,
}

impl Default for Series {
    fn default() -> Self {
        Self::with_tiers(&DEFAULT_TIERS)
    }
}

impl Series {
    /// A series with the given tiers, finest first.
    pub fn with_tiers(specs: &[TierSpec]) -> Self {
        Self {
            tiers: specs.iter().copied().map(Tier::new).collect(),
            last: None,
        }
    }

    /// Adds a sample; `None` (unsupported, lost) adds nothing.
    pub fn push(&mut self, t_ms: i64, v: Option<f64>) {
        let Some(v) = v.filter(|v| v.is_finite()) else {
            return;
        };
        for tier in &mut self.tiers {
            tier.push(t_ms, v);
        }
        self.last = Some((t_ms, v));
    }

    /// The newest sample.
    pub fn last(&self) -> Option<(i64, f64)> {
        self.last
    }

    /// Points covering the last `span_ms` before `now_ms`, from the finest tier that reaches
    /// back that far (or the coarsest one).
    pub fn window(&self, now_ms: i64, span_ms: i64) -> Vec<Point> {
        let since = now_ms - span_ms;
        let tier = self
            .tiers
            .iter()
            .find(|t| t.span_ms() >= span_ms)
            .or_else(|| self.tiers.last());
        tier.map(|t| t.points_since(since)).unwrap_or_default()
    }

    /// Mean of the samples in the last `span_ms` (by the finest covering tier).
    pub fn mean_over(&self, now_ms: i64, span_ms: i64) -> Option<f64> {
        let pts = self.window(now_ms, span_ms);
        if pts.is_empty() {
            return None;
        }
        Some(pts.iter().map(|p| p.mean).sum::<f64>() / pts.len() as f64)
    }

    /// Stored points across all tiers (for memory accounting in tests and benchmarks).
    pub fn stored_points(&self) -> usize {
        self.tiers.iter().map(|t| t.points.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: [TierSpec; 2] = [
        TierSpec {
            resolution_ms: 1_000,
            capacity: 5,
        },
        TierSpec {
            resolution_ms: 10_000,
            capacity: 3,
        },
    ];

    #[test]
    fn memory_stays_bounded_however_long_it_runs() {
        let mut s = Series::with_tiers(&SMALL);
        for i in 0..10_000 {
            s.push(i * 1_000, Some(i as f64));
        }
        assert!(s.stored_points() <= 5 + 3);
    }

    #[test]
    fn coarse_tier_holds_means_and_maxes() {
        let mut s = Series::with_tiers(&SMALL);
        for i in 0..30 {
            s.push(i * 1_000, Some(if i % 2 == 0 { 0.0 } else { 100.0 }));
        }
        let pts = s.window(30_000, 30_000);
        // 30 s does not fit the 5 s fine tier, so the 10 s tier answers.
        assert_eq!(pts.len(), 3);
        assert!(
            pts.iter()
                .all(|p| (p.mean - 50.0).abs() < 1e-9 && p.max == 100.0)
        );
    }

    #[test]
    fn none_leaves_a_gap_not_a_zero() {
        let mut s = Series::with_tiers(&SMALL);
        s.push(0, Some(80.0));
        s.push(1_000, None);
        s.push(2_000, Some(80.0));
        assert_eq!(s.mean_over(3_000, 5_000), Some(80.0));
    }

    #[test]
    fn backward_clock_step_restarts_rather_than_mixing() {
        let mut s = Series::with_tiers(&SMALL);
        s.push(10_000, Some(1.0));
        s.push(11_000, Some(1.0));
        s.push(2_000, Some(7.0));
        let pts = s.window(3_000, 5_000);
        assert_eq!(pts.len(), 1);
        assert_eq!(pts[0].mean, 7.0);
    }
}
