//! Deterministic noise without a random-number crate: splitmix64 over (seed, stream, second).
//! The same inputs always give the same wobble, so snapshots are reproducible.

/// One splitmix64 step: a well-mixed 64-bit hash of `x`.
pub(crate) fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Combines two values into one hash input (order matters).
pub(crate) fn mix(a: u64, b: u64) -> u64 {
    splitmix64(a ^ splitmix64(b))
}

/// A value in [-1, 1] for this seed, stream (which quantity of which entity) and whole second.
pub(crate) fn unit(seed: u64, stream: u64, second: i64) -> f64 {
    let h = mix(mix(seed, stream), second as u64);
    // Top 53 bits → [0, 1), then to [-1, 1).
    let frac = (h >> 11) as f64 / (1u64 << 53) as f64;
    frac * 2.0 - 1.0
}

/// A stream id for one quantity (`channel`) of one entity (`kind`, `id`).
pub(crate) fn stream(kind: &str, id: u64, channel: &str) -> u64 {
    mix(mix(fnv1a(kind), id), fnv1a(channel))
}

fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_is_deterministic_and_in_range() {
        let s = stream("gpu", 3, "util");
        for sec in -50..500 {
            let a = unit(7, s, sec);
            assert_eq!(a, unit(7, s, sec));
            assert!((-1.0..1.0).contains(&a));
        }
        assert_ne!(unit(7, s, 1), unit(8, s, 1));
        assert_ne!(stream("gpu", 3, "util"), stream("gpu", 4, "util"));
    }

    #[test]
    fn unit_is_roughly_centred() {
        let s = stream("host", 0, "cpu");
        let mean: f64 = (0..10_000).map(|i| unit(1, s, i)).sum::<f64>() / 10_000.0;
        assert!(mean.abs() < 0.05, "mean {mean}");
    }
}
