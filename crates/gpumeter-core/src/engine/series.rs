//! A bounded time series with coarser tiers: recent samples at full resolution, older ones
//! folded into means, so memory stays fixed however long gpumeter runs.
//!
//! Each tier is a ring indexed by time (slot = bucket number mod capacity), so a point needs no
//! timestamp; its mean is kept as a `u16` multiple of the series' step (0.01 for percentages):
//! 2 bytes a point. The charts draw means and reach back 24 h, so the tiers stop at 1 min points
//! for a day, with 10 min points for the week before; a full default series is 5 508 slots ×
//! 2 bytes ≈ 11 KiB (it was 13 140 slots × 4 bytes with a never-read max and a week of 1 min
//! points, ≈ 51 KiB; (timestamp, f64, f64) points took 24 bytes each).

/// One stored point: the mean of the samples folded into it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Start of the bucket, milliseconds since the Unix epoch.
    pub t_ms: i64,
    /// Mean of the samples in the bucket, in the metric's unit, rounded to the series' step.
    pub mean: f64,
}

/// How one tier buckets and how many buckets it keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TierSpec {
    /// Width of one bucket, ms.
    pub resolution_ms: i64,
    /// How many buckets the tier keeps (a ring: the oldest is overwritten).
    pub capacity: usize,
}

/// Default tiers: 1 s for 15 min, 10 s for 6 h, 1 min for 24 h (the charts' widest window),
/// 10 min for 7 days.
pub const DEFAULT_TIERS: [TierSpec; 4] = [
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
        capacity: 1_440,
    },
    TierSpec {
        resolution_ms: 600_000,
        capacity: 1_008,
    },
];

/// The step percentages are kept to.
pub const PERCENT_STEP: f64 = 0.01;

/// A slot no sample fell into.
const GAP: u16 = u16::MAX;

/// Values as multiples of a step, in `0..GAP` (readings here are never negative; larger values
/// clamp to the top).
#[derive(Debug, Clone, Copy)]
struct Codec {
    step: f64,
}

impl Codec {
    fn encode(self, v: f64) -> u16 {
        // `as` saturates, and NaN never gets here (push filters non-finite values).
        (v / self.step).round().clamp(0.0, f64::from(GAP - 1)) as u16
    }

    fn decode(self, q: u16) -> f64 {
        f64::from(q) * self.step
    }
}

/// The bucket being filled.
#[derive(Debug, Clone, Copy)]
struct Open {
    bucket: i64,
    sum: f64,
    n: u32,
}

impl Open {
    fn mean(&self) -> f64 {
        self.sum / f64::from(self.n.max(1))
    }
}

#[derive(Debug, Clone)]
struct Tier {
    spec: TierSpec,
    /// The mean per slot, [`GAP`] where nothing was sampled; allocated on the first close.
    slots: Vec<u16>,
    /// Bucket number of the newest closed slot.
    newest: Option<i64>,
    open: Option<Open>,
}

impl Tier {
    fn new(spec: TierSpec) -> Self {
        Self {
            spec,
            slots: Vec::new(),
            newest: None,
            open: None,
        }
    }

    fn res(&self) -> i64 {
        self.spec.resolution_ms.max(1)
    }

    fn slot(&self, bucket: i64) -> usize {
        // capacity > 0 wherever this is called; rem_euclid keeps it in range for any bucket.
        bucket.rem_euclid(self.spec.capacity as i64) as usize
    }

    fn push(&mut self, t_ms: i64, v: f64, codec: Codec) {
        let bucket = t_ms.div_euclid(self.res());
        match &mut self.open {
            Some(open) if open.bucket == bucket => {
                open.sum += v;
                open.n += 1;
                return;
            }
            Some(open) if bucket < open.bucket => {
                // The clock stepped back: start afresh rather than mix out-of-order time.
                self.slots.fill(GAP);
                self.newest = None;
            }
            _ => self.close(codec),
        }
        self.open = Some(Open {
            bucket,
            sum: v,
            n: 1,
        });
    }

    fn close(&mut self, codec: Codec) {
        let Some(open) = self.open.take() else {
            return;
        };
        let cap = self.spec.capacity;
        if cap == 0 {
            return;
        }
        if self.slots.is_empty() {
            self.slots = vec![GAP; cap];
        }
        // Buckets skipped since the newest closed one are gaps (at most a whole ring's worth).
        if let Some(newest) = self.newest {
            let skipped = (open.bucket - newest - 1).clamp(0, cap as i64);
            for b in open.bucket - skipped..open.bucket {
                let i = self.slot(b);
                self.slots[i] = GAP;
            }
        }
        let i = self.slot(open.bucket);
        self.slots[i] = codec.encode(open.mean());
        self.newest = Some(open.bucket);
    }

    fn span_ms(&self) -> i64 {
        self.spec.resolution_ms * self.spec.capacity as i64
    }

    /// Closed points plus the open bucket, oldest first, from `since_ms` on.
    fn points_since(&self, since_ms: i64, codec: Codec) -> Vec<Point> {
        let closed = self.closed_buckets(since_ms);
        let room = match self.newest {
            Some(_) => (closed.end - closed.start + 1).clamp(0, 4096) as usize,
            None => 0,
        };
        let mut out = Vec::with_capacity(room);
        out.extend(self.points_iter(since_ms, codec));
        out
    }

    /// The closed buckets from `since_ms` on that the ring still holds (an empty range when
    /// none).
    fn closed_buckets(&self, since_ms: i64) -> std::ops::Range<i64> {
        let res = self.res();
        match self.newest {
            Some(newest) => {
                let oldest = newest - self.spec.capacity as i64 + 1;
                let first = oldest.max(since_ms.div_euclid(res) + i64::from(since_ms % res != 0));
                first..newest + 1
            }
            None => 0..0,
        }
    }

    /// [`Tier::points_since`]'s points, one at a time.
    fn points_iter(&self, since_ms: i64, codec: Codec) -> impl Iterator<Item = Point> + '_ {
        Tier::points_of(Some(self), since_ms, codec)
    }

    /// The points of `tier` (none without one), as one iterator type either way.
    fn points_of(
        tier: Option<&Tier>,
        since_ms: i64,
        codec: Codec,
    ) -> impl Iterator<Item = Point> + '_ {
        let buckets = tier.map_or(0..0, |t| t.closed_buckets(since_ms));
        let closed = buckets.filter_map(move |b| {
            let t = tier?;
            let mean = *t.slots.get(t.slot(b))?;
            (mean != GAP).then(|| Point {
                t_ms: b * t.res(),
                mean: codec.decode(mean),
            })
        });
        let open = tier.and_then(|t| {
            let res = t.res();
            t.open
                .filter(|open| open.bucket * res >= since_ms)
                .map(|open| Point {
                    t_ms: open.bucket * res,
                    mean: open.mean(),
                })
        });
        closed.chain(open)
    }

    fn stored(&self) -> usize {
        self.slots.iter().filter(|s| **s != GAP).count()
    }
}

/// A tiered series of one metric. Missing samples (`None`) leave gaps rather than zeros.
#[derive(Debug, Clone)]
pub struct Series {
    codec: Codec,
    tiers: Vec<Tier>,
    last: Option<(i64, f64)>,
}

impl Default for Series {
    /// A percentage series with the default tiers.
    fn default() -> Self {
        Self::with_tiers(&DEFAULT_TIERS)
    }
}

impl Series {
    /// A percentage series (kept to 0.01) with the given tiers, finest first.
    pub fn with_tiers(specs: &[TierSpec]) -> Self {
        Self::with_step(PERCENT_STEP, specs)
    }

    /// A series of non-negative values kept to multiples of `step` (up to 65 534 steps; larger
    /// values clamp), with the given tiers. The newest sample is kept exactly.
    pub fn with_step(step: f64, specs: &[TierSpec]) -> Self {
        let step = if step.is_finite() && step > 0.0 {
            step
        } else {
            PERCENT_STEP
        };
        Self {
            codec: Codec { step },
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
            tier.push(t_ms, v, self.codec);
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
        self.tier_for(span_ms)
            .map(|t| t.points_since(now_ms - span_ms, self.codec))
            .unwrap_or_default()
    }

    /// The finest tier that reaches back `span_ms` (or the coarsest one).
    fn tier_for(&self, span_ms: i64) -> Option<&Tier> {
        self.tiers
            .iter()
            .find(|t| t.span_ms() >= span_ms)
            .or_else(|| self.tiers.last())
    }

    /// [`Series::window`]'s points, oldest first, one at a time (the charts map each into
    /// their own list; no list of points is built for them). Its upper size hint is the
    /// tier's buckets in the window, so a caller can reserve once.
    pub fn window_iter(&self, now_ms: i64, span_ms: i64) -> impl Iterator<Item = Point> + '_ {
        Tier::points_of(self.tier_for(span_ms), now_ms - span_ms, self.codec)
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
        self.tiers.iter().map(Tier::stored).sum()
    }

    /// Bytes held by the stored points (for memory accounting in tests and benchmarks).
    pub fn heap_bytes(&self) -> usize {
        self.tiers
            .iter()
            .map(|t| t.slots.capacity() * std::mem::size_of::<u16>())
            .sum()
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

    /// The points as `points_since` first collected them, bucket by bucket.
    fn points_since_by_loop(t: &Tier, since_ms: i64, codec: Codec) -> Vec<Point> {
        let res = t.res();
        let mut out = Vec::new();
        if let Some(newest) = t.newest {
            let oldest = newest - t.spec.capacity as i64 + 1;
            let first = oldest.max(since_ms.div_euclid(res) + i64::from(since_ms % res != 0));
            for b in first..=newest {
                let mean = t.slots[t.slot(b)];
                if mean != GAP {
                    out.push(Point {
                        t_ms: b * res,
                        mean: codec.decode(mean),
                    });
                }
            }
        }
        if let Some(open) = t.open
            && open.bucket * res >= since_ms
        {
            out.push(Point {
                t_ms: open.bucket * res,
                mean: open.mean(),
            });
        }
        out
    }

    #[test]
    fn window_iter_gives_the_window_s_points() {
        let mut seed = 11u64;
        let mut next = move |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for tiers in [&SMALL[..], &DEFAULT_TIERS[..]] {
            let mut s = Series::with_tiers(tiers);
            let mut t = 0i64;
            for step in 0..3_000 {
                t += 300 + next(2_500) as i64;
                let v = (next(10) > 1).then(|| next(10_000) as f64 / 7.0);
                s.push(t, v);
                if step % 7 == 0 {
                    for span in [1_000, 4_500, 30_000, 60_000, 300_000, 3_600_000, 86_400_000] {
                        let now = t + next(3_000) as i64;
                        let points = s.window_iter(now, span);
                        let most = points.size_hint().1.unwrap();
                        let iter: Vec<Point> = points.collect();
                        assert!(iter.len() <= most, "{step} {span}: {} > {most}", iter.len());
                        assert_eq!(iter, s.window(now, span), "{step} {span}");
                        let tier = s.tiers.iter().find(|x| x.span_ms() >= span);
                        let tier = tier.or_else(|| s.tiers.last()).unwrap();
                        assert_eq!(iter, points_since_by_loop(tier, now - span, s.codec));
                    }
                }
            }
        }
    }

    #[test]
    fn memory_stays_bounded_however_long_it_runs() {
        let mut s = Series::with_tiers(&SMALL);
        for i in 0..10_000 {
            s.push(i * 1_000, Some(i as f64));
        }
        assert!(s.stored_points() <= 5 + 3);
    }

    #[test]
    fn coarse_tier_holds_means() {
        let mut s = Series::with_tiers(&SMALL);
        for i in 0..30 {
            s.push(i * 1_000, Some(if i % 2 == 0 { 0.0 } else { 100.0 }));
        }
        let pts = s.window(30_000, 30_000);
        // 30 s does not fit the 5 s fine tier, so the 10 s tier answers.
        assert_eq!(pts.len(), 3);
        assert!(pts.iter().all(|p| (p.mean - 50.0).abs() < 1e-9));
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
    fn a_skipped_bucket_is_a_gap_and_old_buckets_leave_the_ring() {
        let mut s = Series::with_tiers(&SMALL);
        s.push(0, Some(10.0));
        s.push(2_000, Some(30.0));
        let pts = s.window(3_000, 5_000);
        let ts: Vec<i64> = pts.iter().map(|p| p.t_ms).collect();
        assert_eq!(ts, vec![0, 2_000]);
        // Seven seconds on, the 5-slot ring has dropped second 0 and second 2.
        s.push(9_000, Some(50.0));
        s.push(10_000, Some(60.0));
        let ts: Vec<i64> = s.window(10_500, 5_000).iter().map(|p| p.t_ms).collect();
        assert_eq!(ts, vec![9_000, 10_000]);
        assert_eq!(s.tiers[0].stored(), 1);
    }

    #[test]
    fn a_jump_past_the_whole_ring_clears_it() {
        let mut s = Series::with_tiers(&SMALL);
        for i in 0..5 {
            s.push(i * 1_000, Some(1.0));
        }
        s.push(100_000, Some(2.0));
        s.push(101_000, Some(3.0));
        let pts = s.tiers[0].points_since(i64::MIN / 2, s.codec);
        let got: Vec<(i64, f64)> = pts.iter().map(|p| (p.t_ms, p.mean)).collect();
        assert_eq!(got, vec![(100_000, 2.0), (101_000, 3.0)]);
    }

    #[test]
    fn values_are_kept_to_the_step_and_clamp_at_the_top() {
        let mut s = Series::with_step(0.5, &SMALL);
        s.push(0, Some(10.3));
        s.push(1_000, Some(1e9));
        s.push(2_000, Some(1.0));
        let pts = s.window(2_500, 5_000);
        assert_eq!(pts[0].mean, 10.5);
        assert_eq!(pts[1].mean, 0.5 * f64::from(u16::MAX - 1));
        assert_eq!(s.last(), Some((2_000, 1.0)));
    }

    #[test]
    fn a_full_default_series_costs_two_bytes_a_slot() {
        let mut s = Series::default();
        // A week and a bit at one sample a minute, then 15 minutes at 1 s: every tier full.
        let mut t = 0;
        while t < 8 * 24 * 3_600_000 {
            s.push(t, Some(42.0));
            t += 60_000;
        }
        for _ in 0..1_000 {
            s.push(t, Some(42.0));
            t += 1_000;
        }
        let slots: usize = DEFAULT_TIERS.iter().map(|t| t.capacity).sum();
        assert_eq!(slots, 5_508);
        assert_eq!(s.heap_bytes(), slots * 2);
        // The 1 s, 1 min and 10 min rings are full; the 10 s one holds a point a minute.
        assert!(
            s.stored_points() > 900 + 1_440 + 1_008,
            "{}",
            s.stored_points()
        );
    }

    #[test]
    fn a_day_comes_at_one_minute_and_a_week_at_ten() {
        let mut s = Series::default();
        let mut t = 0;
        while t < 8 * 24 * 3_600_000 {
            s.push(t, Some(f64::from((t / 60_000 % 100) as u32)));
            t += 60_000;
        }
        let day = s.window(t, 24 * 3_600_000);
        assert!((1_439..=1_441).contains(&day.len()), "{}", day.len());
        assert!(day.windows(2).all(|w| w[1].t_ms - w[0].t_ms == 60_000));
        let week = s.window(t, 7 * 24 * 3_600_000);
        assert!((1_007..=1_009).contains(&week.len()), "{}", week.len());
        assert!(week.windows(2).all(|w| w[1].t_ms - w[0].t_ms == 600_000));
        // Ten minutes of 0, 1, … 9 (mod 100) average to their middle.
        let closed = week[week.len() - 2];
        let first = closed.t_ms / 60_000 % 100;
        assert!(
            (closed.mean - (first as f64 + 4.5)).abs() < 0.01,
            "{closed:?}"
        );
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
