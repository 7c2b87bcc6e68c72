//! The least-squares line through a sliding window of `(t_ms, bytes)` samples, for the VRAM
//! rule's trend. [`LineFit`] keeps the window and its running sums in exact integers, so each
//! tick's fit costs O(1) however many samples the window holds (a full five-minute window at
//! a 100 ms tick is 900 of them); [`fit`] is the same line computed from scratch in floating
//! point, used where the integers could overflow (absurd readings) and as the tests' reference.
//! Pure data: no clock, no snapshot.

use std::collections::VecDeque;

/// The fitted trend.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Trend {
    pub bytes_per_min: f64,
    pub r2: f64,
    pub rise_bytes: f64,
    pub covered_ms: i64,
}

/// Readings at or above this many bytes (256 TiB, no GPU's) are fitted in floating point: the
/// integer sums are exact only below it.
const EXACT_BELOW_BYTES: u64 = 1 << 48;
/// More samples than this are fitted in floating point (the sums' bound assumes at most this).
const MAX_EXACT_SAMPLES: usize = 4_096;
/// Times are offsets from a base; past this many ms (~35 years) the sums are rebuilt on a new
/// base so they stay within range.
const REBASE_AFTER_MS: i64 = 1 << 40;

/// A sliding window of samples with the running sums of its least-squares line. The sums are
/// integers (ms and bytes), so adding and evicting samples never accumulates rounding.
#[derive(Debug, Clone, Default)]
pub(crate) struct LineFit {
    samples: VecDeque<(i64, u64)>,
    /// Time the offsets `x` are taken from.
    base: i64,
    /// Samples at or above [`EXACT_BELOW_BYTES`] in the window.
    wild: usize,
    sx: i128,
    sy: i128,
    sxx: i128,
    sxy: i128,
    syy: i128,
}

impl LineFit {
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.samples.len()
    }

    /// The newest sample's time.
    pub(crate) fn last_t(&self) -> Option<i64> {
        self.samples.back().map(|&(t, _)| t)
    }

    pub(crate) fn clear(&mut self) {
        *self = Self::default();
    }

    fn add(&mut self, t: i64, y: u64, sign: i128) {
        if y >= EXACT_BELOW_BYTES {
            if sign > 0 {
                self.wild += 1;
            } else {
                self.wild -= 1;
            }
            return;
        }
        let (x, y) = (i128::from(t) - i128::from(self.base), i128::from(y));
        self.sx += sign * x;
        self.sy += sign * y;
        self.sxx += sign * x * x;
        self.sxy += sign * x * y;
        self.syy += sign * y * y;
    }

    /// Appends the sample read at `t_ms` (times must not go back: the caller clears first).
    pub(crate) fn push(&mut self, t_ms: i64, bytes: u64) {
        if self.samples.is_empty() {
            self.clear();
            self.base = t_ms;
        } else if t_ms.saturating_sub(self.base) >= REBASE_AFTER_MS
            && self.front_t().is_some_and(|f| f > self.base)
        {
            self.rebase(self.front_t().unwrap_or(t_ms));
        }
        self.samples.push_back((t_ms, bytes));
        self.add(t_ms, bytes, 1);
    }

    /// Drops the oldest sample.
    pub(crate) fn pop_front(&mut self) {
        if let Some((t, y)) = self.samples.pop_front() {
            self.add(t, y, -1);
        }
    }

    /// The oldest sample's time.
    pub(crate) fn front_t(&self) -> Option<i64> {
        self.samples.front().map(|&(t, _)| t)
    }

    /// Rebuilds the sums with times taken from `base`.
    fn rebase(&mut self, base: i64) {
        let samples = std::mem::take(&mut self.samples);
        self.clear();
        self.base = base;
        for &(t, y) in &samples {
            self.add(t, y, 1);
        }
        self.samples = samples;
    }

    /// The median reading of each of `parts` equal time slices of the window, oldest first;
    /// `None` when a slice holds no sample. Robust where the line is not: a one-time step
    /// moves at most the slices it falls in, a leak moves every one.
    pub(crate) fn part_levels(&self, parts: usize) -> Option<Vec<u64>> {
        let (t0, t1) = (self.front_t()?, self.last_t()?);
        let span = i128::from(t1 - t0).max(1) + 1;
        let parts_i = i128::try_from(parts).ok()?.max(1);
        let mut slices: Vec<Vec<u64>> = vec![Vec::new(); parts.max(1)];
        for &(t, y) in &self.samples {
            let k = (i128::from(t - t0) * parts_i / span).clamp(0, parts_i - 1);
            slices[usize::try_from(k).ok()?].push(y);
        }
        slices
            .into_iter()
            .map(|mut v| {
                if v.is_empty() {
                    return None;
                }
                v.sort_unstable();
                Some(v[v.len() / 2])
            })
            .collect()
    }

    /// The least-squares line through the window; `None` with fewer than 3 samples or when
    /// every sample has the same time.
    pub(crate) fn trend(&self) -> Option<Trend> {
        if self.samples.len() < 3 {
            return None;
        }
        let (t0, t1) = (self.front_t()?, self.last_t()?);
        // Offsets beyond the exact range (a clock leaping decades ahead) or absurd readings:
        // the floating-point fit, which cannot overflow.
        let far = t1.saturating_sub(self.base) >= 2 * REBASE_AFTER_MS || t0 < self.base;
        if self.wild > 0 || far || self.samples.len() > MAX_EXACT_SAMPLES {
            return fit(self.samples.iter().map(|&(t, y)| (t, y as f64)));
        }
        let n = i128::try_from(self.samples.len()).ok()?;
        // n² times the (co)variances: exact, and below 2^121 with the bounds above.
        let cxx = n * self.sxx - self.sx * self.sx;
        let cxy = n * self.sxy - self.sx * self.sy;
        let cyy = n * self.syy - self.sy * self.sy;
        if cxx <= 0 {
            return None;
        }
        let (cxx, cxy, cyy) = (cxx as f64, cxy as f64, cyy as f64);
        let slope = cxy / cxx * 60_000.0;
        let r2 = if cyy > 0.0 {
            (cxy / cxx) * (cxy / cyy)
        } else {
            0.0
        };
        Some(Trend {
            bytes_per_min: slope,
            r2,
            rise_bytes: slope * (t1 - t0) as f64 / 60_000.0,
            covered_ms: t1 - t0,
        })
    }
}

/// The least-squares line through `(t_ms, bytes)`, computed from scratch in floating point;
/// `None` with fewer than 3 points.
pub(crate) fn fit(samples: impl Iterator<Item = (i64, f64)> + Clone) -> Option<Trend> {
    let mut it = samples.clone();
    let (t0, _) = it.next()?;
    let (mut len, mut t1) = (1usize, t0);
    for (t, _) in it {
        len += 1;
        t1 = t;
    }
    if len < 3 {
        return None;
    }
    let n = len as f64;
    let xs = samples.clone().map(|(t, _)| (t - t0) as f64 / 60_000.0);
    let mx = xs.clone().sum::<f64>() / n;
    let my = samples.clone().map(|(_, y)| y).sum::<f64>() / n;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (x, (_, y)) in xs.zip(samples) {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx) * (x - mx);
        syy += (y - my) * (y - my);
    }
    if sxx <= 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    let r2 = if syy > 0.0 {
        (sxy * sxy) / (sxx * syy)
    } else {
        0.0
    };
    Some(Trend {
        bytes_per_min: slope,
        r2,
        rise_bytes: slope * (t1 - t0) as f64 / 60_000.0,
        covered_ms: t1 - t0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift), so the cases are varied but repeatable.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n.max(1)
        }
    }

    fn close(a: f64, b: f64, scale: f64) -> bool {
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(scale)
    }

    fn same(inc: Option<Trend>, reference: Option<Trend>) {
        match (inc, reference) {
            (None, None) => {}
            (Some(a), Some(b)) => {
                assert_eq!(a.covered_ms, b.covered_ms);
                assert!(close(a.bytes_per_min, b.bytes_per_min, 1.0), "{a:?} {b:?}");
                assert!(close(a.rise_bytes, b.rise_bytes, 1.0), "{a:?} {b:?}");
                // A flat line: the exact sums say r² = 0; the float path's rounding may leave
                // noise over a zero variance, so compare only where the spread is real.
                assert!(close(a.r2, b.r2, 1e-6) || a.r2 == 0.0, "{a:?} {b:?}");
            }
            other => panic!("one fit missing: {other:?}"),
        }
    }

    #[test]
    fn a_perfect_line_is_recovered_exactly() {
        let mut f = LineFit::default();
        for i in 0..300 {
            f.push(1_000 * i, 60 * (1 << 30) + (i as u64) * 7_158_278);
        }
        let t = f.trend().unwrap();
        // 7 158 278 bytes a second: 429 496 680 a minute (0.4 GiB/min).
        assert!((t.bytes_per_min - 429_496_680.0).abs() < 1e-3, "{t:?}");
        assert!((t.r2 - 1.0).abs() < 1e-12);
        assert_eq!(t.covered_ms, 299_000);
    }

    #[test]
    fn a_flat_allocation_has_no_slope_and_no_fit() {
        let mut f = LineFit::default();
        for i in 0..900 {
            f.push(T0 + 100 * i, 79 * (1 << 30));
        }
        let t = f.trend().unwrap();
        assert_eq!(t.bytes_per_min, 0.0);
        assert_eq!(t.r2, 0.0);
    }

    #[test]
    fn too_few_samples_or_one_instant_give_no_line() {
        let mut f = LineFit::default();
        f.push(5, 1);
        f.push(6, 2);
        assert_eq!(f.trend(), None);
        let mut g = LineFit::default();
        for _ in 0..5 {
            g.push(7, 3);
        }
        assert_eq!(g.trend(), None);
        assert_eq!(fit(g.samples.iter().map(|&(t, y)| (t, y as f64))), None);
    }

    const T0: i64 = 1_780_000_000_000;

    /// The window slides (evicting by age and by count, as the rule does), with noise, steps,
    /// jumps in time and absurd readings: the running sums give the fit from scratch every time.
    #[test]
    fn sliding_sums_match_the_fit_from_scratch_on_varied_input() {
        for seed in 1..=40u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let mut f = LineFit::default();
            let mut t = T0 + rng.below(1 << 30) as i64;
            let mut y: u64 = rng.below(80 << 30);
            let span = 10_000 + rng.below(300_000) as i64;
            let cap = 3 + rng.below(900) as usize;
            for _ in 0..2_000 {
                t += match rng.below(50) {
                    0 => 0,
                    1 => 600_000 + rng.below(3_600_000) as i64,
                    _ => 50 + rng.below(1_500) as i64,
                };
                y = match rng.below(40) {
                    0 => rng.below(80 << 30),
                    1 if seed % 5 == 0 => u64::MAX - rng.below(1 << 20),
                    _ => y.saturating_add(rng.below(1 << 24)).saturating_sub(1 << 23),
                };
                f.push(t, y);
                while f.len() > cap || f.front_t().is_some_and(|s| s < t - span) {
                    f.pop_front();
                }
                let reference = fit(f.samples.iter().map(|&(t, y)| (t, y as f64)));
                same(f.trend(), reference);
            }
        }
    }

    #[test]
    fn times_far_from_the_base_are_rebased_not_overflowed() {
        let mut f = LineFit::default();
        f.push(0, 1 << 30);
        f.push(REBASE_AFTER_MS + 5, 2 << 30);
        f.push(REBASE_AFTER_MS + 10, 3 << 30);
        f.pop_front();
        f.push(REBASE_AFTER_MS + 15, 4 << 30);
        let reference = fit(f.samples.iter().map(|&(t, y)| (t, y as f64)));
        same(f.trend(), reference);
        assert!(f.trend().is_some_and(|t| t.r2 > 0.99));
    }
}
