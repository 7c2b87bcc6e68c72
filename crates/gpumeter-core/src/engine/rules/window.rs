//! Time-based sliding windows the rules decide with: [`Window`], a window of booleans with
//! hysteresis (a verdict must hold for most of the window to start, and its opposite for most
//! of the window to end, so a sawtooth never flaps), and [`MeanWindow`], a time-weighted mean.
//!
//! A sample taken at `t` stands for the interval since the previous sample (readings are rates
//! over that interval). Gaps longer than `max_gap_ms` (a stalled source) count only
//! `max_gap_ms`, and a clock that steps back starts the window afresh. Pure data: no clock.

use std::collections::VecDeque;

/// Longest interval one sample may stand for, unless configured otherwise.
pub const DEFAULT_MAX_GAP_MS: i64 = 60_000;
/// Most samples a [`MeanWindow`] keeps (a 1 s tick over 15 minutes needs 900).
const MAX_MEAN_SAMPLES: usize = 4_096;

/// A stretch of time with one value.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Segment {
    start: i64,
    end: i64,
    value: bool,
}

/// What a sample did to the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edge {
    /// The verdict started (the condition held for at least the fire share of the window).
    Rose,
    /// The verdict ended (the condition failed for at least 1 − clear share of the window).
    Fell,
    /// No change.
    Steady,
}

/// A sliding window of booleans with hysteresis. Unknown samples (`None`) move time on but are
/// evidence neither way, so missing readings never start or end a verdict by themselves.
#[derive(Debug, Clone)]
pub struct Window {
    span_ms: i64,
    fire_share: f64,
    clear_share: f64,
    max_gap_ms: i64,
    segments: VecDeque<Segment>,
    last_t: Option<i64>,
    active: bool,
    since_ms: Option<i64>,
}

impl Window {
    /// A window of `span_ms` that fires when the condition held for ≥ `fire_share` of it and
    /// clears when it held for ≤ `clear_share` of it (shares in 0–1, clear < fire).
    pub fn new(span_ms: i64, fire_share: f64, clear_share: f64) -> Self {
        let fire_share = fire_share.clamp(0.01, 1.0);
        Self {
            span_ms: span_ms.max(1),
            fire_share,
            clear_share: clear_share.clamp(0.0, fire_share - 0.001),
            max_gap_ms: DEFAULT_MAX_GAP_MS,
            segments: VecDeque::new(),
            last_t: None,
            active: false,
            since_ms: None,
        }
    }

    /// The same window with another longest interval per sample.
    pub fn with_max_gap(mut self, max_gap_ms: i64) -> Self {
        self.max_gap_ms = max_gap_ms.max(1);
        self
    }

    /// Adds the sample taken at `t_ms` and returns whether the verdict changed.
    pub fn push(&mut self, t_ms: i64, value: Option<bool>) -> Edge {
        let Some(last) = self.last_t else {
            self.last_t = Some(t_ms);
            return Edge::Steady;
        };
        if t_ms < last {
            // The clock stepped back: the stored times mean nothing now. Keep the verdict.
            self.segments.clear();
            self.last_t = Some(t_ms);
            return Edge::Steady;
        }
        self.last_t = Some(t_ms);
        if let Some(value) = value {
            let start = last.max(t_ms - self.max_gap_ms);
            match self.segments.back_mut() {
                Some(seg) if seg.value == value && seg.end == start => seg.end = t_ms,
                _ if start < t_ms => self.segments.push_back(Segment {
                    start,
                    end: t_ms,
                    value,
                }),
                _ => {}
            }
        }
        let from = t_ms - self.span_ms;
        while self.segments.front().is_some_and(|s| s.end <= from) {
            self.segments.pop_front();
        }
        let (held, failed) = self.totals(t_ms);
        let span = self.span_ms as f64;
        if !self.active && held as f64 >= self.fire_share * span {
            self.active = true;
            self.since_ms = Some(t_ms - held);
            Edge::Rose
        } else if self.active && failed as f64 >= (1.0 - self.clear_share) * span {
            self.active = false;
            self.since_ms = None;
            Edge::Fell
        } else {
            Edge::Steady
        }
    }

    /// Milliseconds within the window at `now_ms` when the condition held and when it failed.
    fn totals(&self, now_ms: i64) -> (i64, i64) {
        let from = now_ms - self.span_ms;
        self.segments.iter().fold((0, 0), |(held, failed), s| {
            let len = (s.end.min(now_ms) - s.start.max(from)).max(0);
            if s.value {
                (held + len, failed)
            } else {
                (held, failed + len)
            }
        })
    }

    /// Forgets every sample and the verdict: what came before is no evidence any more.
    pub fn reset(&mut self) {
        self.segments.clear();
        self.active = false;
        self.since_ms = None;
    }

    /// Whether the verdict stands.
    pub fn is_active(&self) -> bool {
        self.active
    }

    /// When the condition began to hold, estimated when the verdict started.
    pub fn active_since(&self) -> Option<i64> {
        self.since_ms
    }

    /// Share of the window (0–1) in which the condition held, as of the last sample.
    pub fn held_share(&self) -> f64 {
        let Some(now) = self.last_t else { return 0.0 };
        self.totals(now).0 as f64 / self.span_ms as f64
    }

    /// Share of the observed part of the window (0–1) in which the condition held; `None` before
    /// anything was observed. Unlike [`Window::held_share`] a young window is not diluted.
    pub fn observed_share(&self) -> Option<f64> {
        let now = self.last_t?;
        let (held, failed) = self.totals(now);
        let seen = held + failed;
        (seen > 0).then(|| held as f64 / seen as f64)
    }

    /// Segments stored (bounded by the span over the sampling interval).
    pub fn len(&self) -> usize {
        self.segments.len()
    }

    /// No segment stored (nothing observed yet, or all aged out).
    pub fn is_empty(&self) -> bool {
        self.segments.is_empty()
    }
}

/// A time-weighted mean over a sliding span.
#[derive(Debug, Clone)]
pub struct MeanWindow {
    span_ms: i64,
    max_gap_ms: i64,
    /// (end time, weight in ms, value)
    samples: VecDeque<(i64, i64, f64)>,
    /// The weights of `samples`, summed (exact: integers).
    weight_ms: i64,
    last_t: Option<i64>,
}

impl MeanWindow {
    /// A mean over the last `span_ms` (at least 1 ms); a sample weighs the time since the
    /// previous one, at most [`DEFAULT_MAX_GAP_MS`] (a stalled source).
    pub fn new(span_ms: i64) -> Self {
        Self {
            span_ms: span_ms.max(1),
            max_gap_ms: DEFAULT_MAX_GAP_MS,
            samples: VecDeque::new(),
            weight_ms: 0,
            last_t: None,
        }
    }

    /// Adds the value read at `t_ms` (`None`: unknown, moves time on only).
    pub fn push(&mut self, t_ms: i64, value: Option<f64>) {
        let last = self.last_t.replace(t_ms);
        match last {
            Some(last) if t_ms < last => {
                self.samples.clear();
                self.weight_ms = 0;
            }
            Some(last) => {
                if let Some(v) = value.filter(|v| v.is_finite()) {
                    let weight = (t_ms - last).min(self.max_gap_ms);
                    if weight > 0 {
                        if self.samples.len() == MAX_MEAN_SAMPLES {
                            self.pop_front();
                        }
                        self.samples.push_back((t_ms, weight, v));
                        self.weight_ms += weight;
                    }
                }
            }
            None => {}
        }
        let from = t_ms - self.span_ms;
        while self.samples.front().is_some_and(|&(end, _, _)| end <= from) {
            self.pop_front();
        }
    }

    fn pop_front(&mut self) {
        if let Some((_, w, _)) = self.samples.pop_front() {
            self.weight_ms -= w;
        }
    }

    /// The mean over the window, weighting each sample by the time it stands for (clipped at
    /// the window's start); `None` when nothing known lies in the window.
    pub fn mean(&self) -> Option<f64> {
        let now = self.last_t?;
        let from = now - self.span_ms;
        // Only the oldest sample can reach past the window's start (see `covered_ms`): it is
        // clipped, the rest count whole. The same products, summed in the same order, as a
        // clip of every sample would give.
        let mut samples = self.samples.iter();
        let &(end, w, v) = samples.next()?;
        let first = (end - (end - w).max(from)).max(0);
        // `0.0 +` as the fold from 0.0 had it: it turns a first product of -0.0 into 0.0.
        let sum = samples.fold(0.0 + v * first as f64, |sum, &(_, w, v)| sum + v * w as f64);
        let weight = self.weight_ms - (w - first);
        (weight > 0).then(|| sum / weight as f64)
    }

    /// [`MeanWindow::mean`] with every sample clipped to the window (the tests' reference).
    #[cfg(test)]
    fn mean_by_sample(&self) -> Option<f64> {
        let now = self.last_t?;
        let from = now - self.span_ms;
        let (sum, weight) = self
            .samples
            .iter()
            .fold((0.0, 0i64), |(sum, weight), &(end, w, v)| {
                let w = (end - (end - w).max(from)).max(0);
                (sum + v * w as f64, weight + w)
            });
        (weight > 0).then(|| sum / weight as f64)
    }

    /// The largest value in the window.
    pub fn max(&self) -> Option<f64> {
        self.samples.iter().map(|&(_, _, v)| v).reduce(f64::max)
    }

    /// Milliseconds of known values in the window. Samples stand for disjoint intervals in
    /// time order and those wholly before the window are gone, so only the oldest can reach
    /// past its start: the kept sum of weights less that overhang.
    pub fn covered_ms(&self) -> i64 {
        let Some(now) = self.last_t else { return 0 };
        let from = now - self.span_ms;
        let overhang = self
            .samples
            .front()
            .map_or(0, |&(end, w, _)| w - (end - (end - w).max(from)).max(0));
        self.weight_ms - overhang
    }

    /// [`MeanWindow::covered_ms`] summed sample by sample (the tests' reference).
    #[cfg(test)]
    fn covered_ms_by_sample(&self) -> i64 {
        let Some(now) = self.last_t else { return 0 };
        let from = now - self.span_ms;
        self.samples
            .iter()
            .map(|&(end, w, _)| (end - (end - w).max(from)).max(0))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `f(t)` once a second for `secs` seconds from `t0`; returns the edges with times.
    fn run(
        w: &mut Window,
        t0: i64,
        secs: i64,
        f: impl Fn(i64) -> Option<bool>,
    ) -> Vec<(i64, Edge)> {
        (0..secs)
            .map(|s| (t0 + s * 1000, w.push(t0 + s * 1000, f(s))))
            .filter(|(_, e)| *e != Edge::Steady)
            .collect()
    }

    #[test]
    fn fires_after_the_fire_share_and_clears_after_the_clear_share() {
        let mut w = Window::new(60_000, 0.8, 0.2);
        let edges = run(&mut w, 0, 120, |_| Some(true));
        // 48 s of 60 held: the 49th sample (the first has no interval) fires.
        assert_eq!(edges, vec![(48_000, Edge::Rose)]);
        assert_eq!(w.active_since(), Some(0));
        let edges = run(&mut w, 120_000, 120, |_| Some(false));
        assert_eq!(edges, vec![(167_000, Edge::Fell)]);
        assert!(!w.is_active());
    }

    #[test]
    fn sawtooth_never_flaps_either_way() {
        // Condition true 5 s of every 7 s (71 %): between the shares, so nothing changes.
        let saw = |s: i64| Some(s % 7 < 5);
        let mut quiet = Window::new(60_000, 0.8, 0.2);
        assert!(run(&mut quiet, 0, 3_600, saw).is_empty());
        let mut firing = Window::new(60_000, 0.8, 0.2);
        assert_eq!(run(&mut firing, 0, 60, |_| Some(true)).len(), 1);
        assert!(run(&mut firing, 60_000, 3_600, saw).is_empty());
        assert!(firing.is_active());
        assert!(firing.len() <= 40, "segments {}", firing.len());
    }

    #[test]
    fn unknown_samples_are_no_evidence() {
        let mut w = Window::new(10_000, 0.8, 0.2);
        run(&mut w, 0, 20, |_| Some(true));
        assert!(w.is_active());
        assert!(run(&mut w, 20_000, 600, |_| None).is_empty());
        assert!(w.is_active());
        assert_eq!(w.held_share(), 0.0);
        assert_eq!(w.observed_share(), None);
    }

    #[test]
    fn long_gaps_count_only_max_gap_and_backward_clock_restarts() {
        let mut w = Window::new(600_000, 0.5, 0.1).with_max_gap(5_000);
        w.push(0, Some(true));
        // One sample after 10 minutes stands for 5 s, not 10 minutes.
        assert_eq!(w.push(600_000, Some(true)), Edge::Steady);
        assert!((w.held_share() - 5_000.0 / 600_000.0).abs() < 1e-9);
        assert_eq!(w.push(100, Some(true)), Edge::Steady);
        assert!(w.is_empty());
    }

    #[test]
    fn observed_share_is_not_diluted_by_a_young_window() {
        let mut w = Window::new(3_600_000, 0.5, 0.1);
        run(&mut w, 0, 61, |s| Some(s > 30));
        assert!((w.observed_share().unwrap() - 0.5).abs() < 0.02);
        assert!(w.held_share() < 0.01);
    }

    /// The kept sum of weights and the mean with only the oldest sample clipped, against the
    /// sums sample by sample: irregular ticks, gaps past `max_gap`, unknown values, fractions
    /// and -0.0, the sample cap, a clock stepping back, spans of all sizes.
    #[test]
    fn covered_time_and_mean_equal_the_sums_by_sample() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut rnd = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for case in 0..200 {
            // Every 50th case: a span so long that the sample cap evicts first.
            let span = if case % 50 == 0 {
                1 << 40
            } else {
                1 + rnd(120_000) as i64
            };
            let mut m = MeanWindow::new(span);
            if case % 3 == 0 {
                m.max_gap_ms = 1 + rnd(5_000) as i64;
            }
            let mut t = 1_780_000_000_000i64;
            for _ in 0..(if case % 50 == 0 { 6_000 } else { 600 }) {
                t += match rnd(40) {
                    0 if case % 50 != 0 => -(rnd(10_000) as i64),
                    1 => rnd(200_000) as i64,
                    _ => rnd(1_500) as i64,
                };
                let v = (rnd(6) != 0).then(|| match rnd(4) {
                    0 => rnd(100) as f64,
                    1 => rnd(1 << 30) as f64 / 7.0,
                    2 => -0.0,
                    _ => (rnd(2_000) as f64 - 1_000.0) * 0.013,
                });
                m.push(t, v);
                assert_eq!(m.covered_ms(), m.covered_ms_by_sample());
                let (a, b) = (m.mean(), m.mean_by_sample());
                // Bit for bit: the same sums in the same order.
                assert_eq!(a.map(f64::to_bits), b.map(f64::to_bits), "{a:?} {b:?}");
            }
            if case % 50 == 0 {
                assert_eq!(m.samples.len(), MAX_MEAN_SAMPLES, "the cap was reached");
            }
        }
    }

    #[test]
    fn mean_is_time_weighted_and_slides() {
        let mut m = MeanWindow::new(10_000);
        assert_eq!(m.mean(), None);
        m.push(0, Some(100.0));
        assert_eq!(m.mean(), None, "the first sample stands for no interval");
        m.push(1_000, Some(10.0));
        m.push(4_000, Some(40.0)); // stands for 3 s
        assert!((m.mean().unwrap() - (10.0 + 3.0 * 40.0) / 4.0).abs() < 1e-9);
        assert_eq!(m.max(), Some(40.0));
        m.push(14_000, Some(0.0));
        // Window (4 s, 14 s]: only the last sample (10 s of 0) remains.
        assert_eq!(m.mean(), Some(0.0));
        assert_eq!(m.covered_ms(), 10_000);
        m.push(15_000, None);
        assert_eq!(m.covered_ms(), 9_000);
    }
}
