//! Counters per device between two samples: each disk's or interface's two counters at this
//! sample and the one before, by name, and the rates, sums and busiest device they give. Used
//! by `io` for disks (sectors; ms busy and weighted) and network interfaces (bytes).

use std::collections::HashMap;

/// Two counters of each device (bytes in and out; or ms busy and ms weighted by requests in
/// flight) at this sample and the one before, by name. A device's name is stored when it is
/// first seen and its values updated in place: a sample of the same devices allocates nothing.
#[derive(Debug, Default)]
pub(super) struct PerDevice {
    /// When the last sample was taken (`None`: none, or it failed).
    at_ms: Option<i64>,
    pub(super) devices: HashMap<String, Device>,
    /// The sample being taken (devices not seen in it are dropped at its end).
    sample: u64,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Device {
    /// Its counters at the sample before (`None`: it was not in it).
    prev: Option<(u64, u64)>,
    cur: (u64, u64),
    seen: u64,
}

impl PerDevice {
    pub(super) fn begin(&mut self) {
        self.sample = self.sample.wrapping_add(1);
    }

    /// A device's counters in this sample (a name listed twice: the last line counts).
    pub(super) fn add(&mut self, name: &str, cur: (u64, u64)) {
        let sample = self.sample;
        match self.devices.get_mut(name) {
            Some(d) if d.seen == sample => d.cur = cur,
            Some(d) => {
                d.prev = Some(d.cur);
                d.cur = cur;
                d.seen = sample;
            }
            None => {
                self.devices.insert(
                    name.to_string(),
                    Device {
                        prev: None,
                        cur,
                        seen: sample,
                    },
                );
            }
        }
    }

    /// Ends the sample taken at `now_ms`: the milliseconds since the one before, when there
    /// was one and the clock moved forward. Devices gone since are forgotten.
    pub(super) fn finish(&mut self, now_ms: i64) -> Option<f64> {
        let sample = self.sample;
        self.devices.retain(|_, d| d.seen == sample);
        let prev = self.at_ms.replace(now_ms)?;
        (now_ms > prev).then(|| (now_ms - prev) as f64)
    }

    /// The sample could not be read: the next one has nothing to compare with.
    pub(super) fn forget(&mut self) {
        self.at_ms = None;
        self.devices.clear();
    }

    /// `(before, now)` of each device in both samples whose counters did not go back (reset,
    /// wrap): a device new since adds nothing.
    pub(super) fn deltas(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.devices.values().filter_map(|d| {
            let (a0, b0) = d.prev?;
            let (a, b) = d.cur;
            (a >= a0 && b >= b0).then(|| (a - a0, b - b0))
        })
    }

    /// Each device's counters as rates over `dt_ms`, by name: the first (a device whose first
    /// counter went back is left out), and the second where it did not go back.
    pub(super) fn rates(&self, dt_ms: f64) -> impl Iterator<Item = (&str, f64, Option<f64>)> + '_ {
        let secs = dt_ms / 1000.0;
        self.devices.iter().filter_map(move |(name, d)| {
            let (a0, b0) = d.prev?;
            let (a, b) = d.cur;
            let second = (b >= b0).then(|| (b - b0) as f64 / secs);
            (a >= a0).then(|| (name.as_str(), (a - a0) as f64 / secs, second))
        })
    }

    /// Rates of the summed per-device deltas over `dt_ms`.
    pub(super) fn sum_rates(&self, dt_ms: Option<f64>) -> (Option<f64>, Option<f64>) {
        let Some(dt_ms) = dt_ms else {
            return (None, None);
        };
        let secs = dt_ms / 1000.0;
        let (a, b) = self.deltas().fold((0u64, 0u64), |(a, b), (da, db)| {
            (a.saturating_add(da), b.saturating_add(db))
        });
        (Some(a as f64 / secs), Some(b as f64 / secs))
    }

    /// Busy percent and mean queue of the busiest disk over `dt_ms` (these counters being
    /// ms busy and ms weighted by requests in flight).
    pub(super) fn busiest(&self, dt_ms: Option<f64>) -> Option<(f64, f64)> {
        let dt_ms = dt_ms?;
        self.deltas()
            .map(|(ticks, weighted)| {
                (
                    (ticks as f64 / dt_ms * 100.0).min(100.0),
                    weighted as f64 / dt_ms,
                )
            })
            .reduce(|a, b| if b > a { b } else { a })
    }
}
