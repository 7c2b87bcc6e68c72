//! Waveforms that drive every simulated reading, deserialised from inline TOML tables:
//! `{ const = 95 }`, `{ sine = { min, max, period_s } }`, `{ sawtooth = { min, max, period_s } }`,
//! `{ square = { low, high, period_s, duty } }`, `{ steps = [[t_s, value], …] }`, each with an
//! optional `noise` amplitude. Checked when parsed (periods > 0, duty in 0–1, steps in order), so
//! a bad scenario fails with the TOML line instead of producing nonsense. `starts = [t_s, value]`
//! on any of them holds `value` before `t_s` (a loop that starts late), `ends = [t_s, value]`
//! from `t_s` on (a periodic job that stops).

use serde::Deserialize;

/// A time-varying value: a waveform plus deterministic noise of amplitude `noise`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "RawSignal")]
pub struct Signal {
    pub wave: Wave,
    /// Peak deviation added by noise (same unit as the value), ≥ 0.
    pub noise: f64,
    /// Before this elapsed second (unshifted), the value holds: the wave has not begun.
    pub starts: Option<(f64, f64)>,
    /// From this elapsed second on (unshifted), the value holds: the wave stops.
    pub ends: Option<(f64, f64)>,
}

/// The shape of a [`Signal`].
#[derive(Debug, Clone, PartialEq)]
pub enum Wave {
    Const(f64),
    /// Smooth oscillation between `min` and `max`, starting at the midpoint.
    Sine {
        min: f64,
        max: f64,
        period_s: f64,
    },
    /// Linear ramp from `min` to `max`, then a drop back to `min`.
    Sawtooth {
        min: f64,
        max: f64,
        period_s: f64,
    },
    /// `high` for the first `duty` share of each period, then `low`.
    Square {
        low: f64,
        high: f64,
        period_s: f64,
        duty: f64,
    },
    /// Piecewise constant: each `(t_s, value)` holds from `t_s` until the next step; before the
    /// first step the first value holds. Not shifted by per-GPU phase (a job ends for all).
    Steps(Vec<(f64, f64)>),
}

/// The physical range a reading is clamped to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Range {
    /// 0–100.
    Pct,
    /// 0 and up.
    NonNeg,
    /// 0 to the given ceiling (e.g. memory used ≤ total).
    UpTo(f64),
}

impl Range {
    pub fn clamp(self, v: f64) -> f64 {
        let v = if v.is_finite() { v } else { 0.0 };
        match self {
            Range::Pct => v.clamp(0.0, 100.0),
            Range::NonNeg => v.max(0.0),
            Range::UpTo(max) => v.clamp(0.0, max.max(0.0)),
        }
    }
}

impl Signal {
    /// A constant without noise.
    pub fn constant(v: f64) -> Self {
        Self {
            wave: Wave::Const(v),
            noise: 0.0,
            starts: None,
            ends: None,
        }
    }

    /// The waveform's value at `t_s` (seconds since scenario start) shifted by `phase_s`,
    /// plus `noise_unit` (in [-1, 1]) times the noise amplitude, clamped to `range`.
    pub fn sample(&self, t_s: f64, phase_s: f64, noise_unit: f64, range: Range) -> f64 {
        let shifted = t_s + phase_s;
        let base = match &self.wave {
            Wave::Const(v) => *v,
            Wave::Sine { min, max, period_s } => {
                let mid = (min + max) / 2.0;
                let amp = (max - min) / 2.0;
                mid + amp * (std::f64::consts::TAU * shifted / period_s).sin()
            }
            Wave::Sawtooth { min, max, period_s } => min + (max - min) * frac(shifted / period_s),
            Wave::Square {
                low,
                high,
                period_s,
                duty,
            } => {
                if frac(shifted / period_s) < *duty {
                    *high
                } else {
                    *low
                }
            }
            Wave::Steps(steps) => steps
                .iter()
                .take_while(|(t, _)| *t <= t_s)
                .last()
                .or(steps.first())
                .map_or(0.0, |(_, v)| *v),
        };
        let held = (self.starts.filter(|(to, _)| t_s < *to))
            .or(self.ends.filter(|(from, _)| t_s >= *from))
            .map(|(_, v)| v);
        let base = held.unwrap_or(base);
        range.clamp(base + self.noise * noise_unit.clamp(-1.0, 1.0))
    }
}

fn frac(x: f64) -> f64 {
    x.rem_euclid(1.0)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSignal {
    #[serde(rename = "const")]
    constant: Option<f64>,
    sine: Option<MinMax>,
    sawtooth: Option<MinMax>,
    square: Option<SquareSpec>,
    steps: Option<Vec<(f64, f64)>>,
    noise: Option<f64>,
    starts: Option<(f64, f64)>,
    ends: Option<(f64, f64)>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MinMax {
    min: f64,
    max: f64,
    period_s: f64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SquareSpec {
    low: f64,
    high: f64,
    period_s: f64,
    #[serde(default = "half")]
    duty: f64,
}

fn half() -> f64 {
    0.5
}

impl TryFrom<RawSignal> for Signal {
    type Error = String;

    fn try_from(raw: RawSignal) -> Result<Self, String> {
        let mut waves = Vec::new();
        if let Some(v) = raw.constant {
            waves.push(Wave::Const(v));
        }
        if let Some(s) = raw.sine {
            check_period(s.period_s, "sine")?;
            waves.push(Wave::Sine {
                min: s.min,
                max: s.max,
                period_s: s.period_s,
            });
        }
        if let Some(s) = raw.sawtooth {
            check_period(s.period_s, "sawtooth")?;
            waves.push(Wave::Sawtooth {
                min: s.min,
                max: s.max,
                period_s: s.period_s,
            });
        }
        if let Some(s) = raw.square {
            check_period(s.period_s, "square")?;
            if !(0.0..=1.0).contains(&s.duty) {
                return Err(format!("square.duty must be within 0–1, got {}", s.duty));
            }
            waves.push(Wave::Square {
                low: s.low,
                high: s.high,
                period_s: s.period_s,
                duty: s.duty,
            });
        }
        if let Some(steps) = raw.steps {
            if steps.is_empty() {
                return Err("steps needs at least one [t_s, value] pair".into());
            }
            if steps.windows(2).any(|w| w[1].0 < w[0].0) {
                return Err("steps must be in increasing time order".into());
            }
            waves.push(Wave::Steps(steps));
        }
        let noise = raw.noise.unwrap_or(0.0);
        if !(noise.is_finite() && noise >= 0.0) {
            return Err(format!("noise must be a finite amplitude ≥ 0, got {noise}"));
        }
        let mut waves = waves.into_iter();
        match (waves.next(), waves.next()) {
            (Some(wave), None) => Ok(Signal {
                wave,
                noise,
                starts: raw.starts,
                ends: raw.ends,
            }),
            (None, _) => {
                Err("a signal needs one of `const`, `sine`, `sawtooth`, `square`, `steps`".into())
            }
            (Some(_), Some(_)) => Err(
                "a signal takes exactly one of `const`, `sine`, `sawtooth`, `square`, `steps`"
                    .into(),
            ),
        }
    }
}

fn check_period(period_s: f64, what: &str) -> Result<(), String> {
    if period_s.is_finite() && period_s > 0.0 {
        Ok(())
    } else {
        Err(format!("{what}.period_s must be > 0, got {period_s}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Deserialize)]
    struct Holder {
        s: Signal,
    }

    fn parse(text: &str) -> Result<Signal, String> {
        toml::from_str::<Holder>(&format!("s = {text}"))
            .map(|h| h.s)
            .map_err(|e| e.message().to_string())
    }

    #[test]
    fn waveforms_hit_their_landmarks() {
        let saw = parse("{ sawtooth = { min = 10, max = 70, period_s = 6 } }").unwrap();
        assert_eq!(saw.sample(0.0, 0.0, 0.0, Range::Pct), 10.0);
        assert!((saw.sample(3.0, 0.0, 0.0, Range::Pct) - 40.0).abs() < 1e-9);
        let sq = parse("{ square = { low = 1, high = 9, period_s = 10, duty = 0.3 } }").unwrap();
        assert_eq!(sq.sample(2.0, 0.0, 0.0, Range::NonNeg), 9.0);
        assert_eq!(sq.sample(5.0, 0.0, 0.0, Range::NonNeg), 1.0);
        assert_eq!(sq.sample(5.0, -3.5, 0.0, Range::NonNeg), 9.0);
        let steps = parse("{ steps = [[0, 95], [20, 0]] }").unwrap();
        assert_eq!(steps.sample(19.9, 100.0, 0.0, Range::Pct), 95.0);
        assert_eq!(steps.sample(20.0, 0.0, 0.0, Range::Pct), 0.0);
        let sine = parse("{ sine = { min = 0, max = 100, period_s = 4 } }").unwrap();
        assert!((sine.sample(1.0, 0.0, 0.0, Range::Pct) - 100.0).abs() < 1e-9);
    }

    #[test]
    fn noise_adds_within_amplitude_and_clamps() {
        let s = parse("{ const = 99, noise = 3 }").unwrap();
        assert_eq!(s.sample(0.0, 0.0, 1.0, Range::Pct), 100.0);
        assert_eq!(s.sample(0.0, 0.0, -1.0, Range::Pct), 96.0);
    }

    #[test]
    fn bad_signals_are_rejected_with_reasons() {
        let e = parse("{ sine = { min = 0, max = 1, period_s = -2 } }").unwrap_err();
        assert!(e.contains("period_s must be > 0"), "{e}");
        let e = parse("{ const = 1, sine = { min = 0, max = 1, period_s = 2 } }").unwrap_err();
        assert!(e.contains("exactly one"), "{e}");
        let e = parse("{ noise = 1 }").unwrap_err();
        assert!(e.contains("needs one of"), "{e}");
        let e = parse("{ cosine = 3 }").unwrap_err();
        assert!(e.contains("unknown field `cosine`"), "{e}");
        let e = parse("{ steps = [[5, 1], [2, 0]] }").unwrap_err();
        assert!(e.contains("increasing"), "{e}");
        let e = parse("{ square = { low = 0, high = 1, period_s = 1, duty = 2 } }").unwrap_err();
        assert!(e.contains("duty"), "{e}");
    }

    fn any_wave() -> impl Strategy<Value = Wave> {
        let v = -1e6f64..1e6;
        let p = 0.001f64..1e5;
        prop_oneof![
            v.clone().prop_map(Wave::Const),
            (v.clone(), v.clone(), p.clone()).prop_map(|(min, max, period_s)| Wave::Sine {
                min,
                max,
                period_s
            }),
            (v.clone(), v.clone(), p.clone()).prop_map(|(min, max, period_s)| Wave::Sawtooth {
                min,
                max,
                period_s
            }),
            (v.clone(), v.clone(), p, 0.0f64..=1.0).prop_map(|(low, high, period_s, duty)| {
                Wave::Square {
                    low,
                    high,
                    period_s,
                    duty,
                }
            }),
            proptest::collection::vec((0.0f64..1e5, v), 1..6).prop_map(|mut s| {
                s.sort_by(|a, b| a.0.total_cmp(&b.0));
                Wave::Steps(s)
            }),
        ]
    }

    proptest! {
        #[test]
        fn samples_stay_in_their_range(
            wave in any_wave(),
            noise in 0.0f64..1e4,
            t in -1e7f64..1e7,
            phase in -1e3f64..1e3,
            u in -1.0f64..=1.0,
            cap in 0.0f64..1e9,
        ) {
            let s = Signal {
                wave,
                noise,
                starts: None,
                ends: None,
            };
            let pct = s.sample(t, phase, u, Range::Pct);
            prop_assert!((0.0..=100.0).contains(&pct));
            prop_assert!(s.sample(t, phase, u, Range::NonNeg) >= 0.0);
            let up = s.sample(t, phase, u, Range::UpTo(cap));
            prop_assert!((0.0..=cap).contains(&up));
        }
    }
}
