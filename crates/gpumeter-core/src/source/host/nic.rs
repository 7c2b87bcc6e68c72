//! Link speeds of the network interfaces (`sys/class/net/<if>/speed`, Mbit/s), so a receive
//! rate can be weighed against what the link carries: 3 GB/s is a NIC at its limit on 25 Gbit
//! and a quiet one on 200 Gbit. Read once per interface (a link renegotiates rarely); an
//! interface with no speed (virtual ones answer `-1` or an error) is unknown, never idle.

use std::collections::HashMap;
use std::path::PathBuf;

/// Each interface's speed in bytes per second, as first read.
#[derive(Debug)]
pub(super) struct LinkSpeeds {
    /// `sys/class/net`.
    dir: PathBuf,
    known: HashMap<String, Option<f64>>,
}

impl LinkSpeeds {
    pub(super) fn new(sys: &std::path::Path) -> Self {
        Self {
            dir: sys.join("class/net"),
            known: HashMap::new(),
        }
    }

    /// The interface's link speed in bytes per second, when the kernel gives one.
    pub(super) fn bytes_per_s(&mut self, name: &str) -> Option<f64> {
        if let Some(s) = self.known.get(name) {
            return *s;
        }
        let speed = std::fs::read_to_string(self.dir.join(name).join("speed"))
            .ok()
            .and_then(|t| t.trim().parse::<i64>().ok())
            .filter(|&mbit| mbit > 0)
            .map(|mbit| mbit as f64 * 1e6 / 8.0);
        self.known.insert(name.to_string(), speed);
        speed
    }

    /// Forgets interfaces no longer present (a container's veth comes and goes).
    pub(super) fn retain(&mut self, present: impl Fn(&str) -> bool) {
        self.known.retain(|name, _| present(name));
    }
}

/// The interface closest to its limit: `(link speed, received / speed, sent / speed)` in
/// percent, of the one receiving the highest share, among `(name, bytes received per second,
/// bytes sent per second)` whose speed is known.
pub(super) fn busiest<'a>(
    speeds: &mut LinkSpeeds,
    rates: impl Iterator<Item = (&'a str, f64, Option<f64>)>,
) -> Option<(f64, f64, Option<f64>)> {
    let share = |rate: f64, speed: f64| (rate / speed * 100.0).min(100.0);
    rates
        .filter_map(|(name, rx, tx)| {
            let speed = speeds.bytes_per_s(name)?;
            Some((speed, share(rx, speed), tx.map(|t| share(t, speed))))
        })
        .reduce(|a, b| if b.1 > a.1 { b } else { a })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::host::fixture::Fixture;

    #[test]
    fn the_nic_nearest_its_link_speed_is_the_busiest() {
        let f = Fixture::new();
        f.write("sys/class/net/eth0/speed", "25000\n");
        f.write("sys/class/net/eth1/speed", "200000\n");
        f.write("sys/class/net/veth9/speed", "-1\n");
        let mut s = LinkSpeeds::new(&f.root().join("sys"));
        // 3 GB/s on 25 Gbit (3.125 GB/s) is 96 %; 5 GB/s on 200 Gbit is 20 %.
        let (speed, pct, tx) = busiest(
            &mut s,
            [
                ("eth0", 3.0e9, Some(2.5e9)),
                ("eth1", 5.0e9, Some(9.0e9)),
                ("veth9", 9.0e9, None),
            ]
            .into_iter(),
        )
        .unwrap();
        assert_eq!(speed, 3.125e9);
        assert!((pct - 96.0).abs() < 1e-9, "{pct}");
        // What that NIC sent, on the same link: 2.5 GB/s is 80 %.
        assert!(tx.is_some_and(|t| (t - 80.0).abs() < 1e-9), "{tx:?}");
    }

    #[test]
    fn interfaces_without_a_speed_are_unknown_not_idle() {
        let f = Fixture::new();
        f.write("sys/class/net/veth9/speed", "-1\n");
        let mut s = LinkSpeeds::new(&f.root().join("sys"));
        assert_eq!(
            busiest(
                &mut s,
                [("veth9", 1e6, None), ("lo", 1e6, None)].into_iter()
            ),
            None
        );
        assert_eq!(s.bytes_per_s("eth0"), None, "no such interface");
        s.retain(|n| n == "veth9");
        assert_eq!(s.known.len(), 1);
    }
}
