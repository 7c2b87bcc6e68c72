//! Readings written by hand for tests (the `test-support` feature, turned on only from the
//! `[dev-dependencies]` of the crates whose tests use it): [`SnapshotBuilder`], one builder in
//! place of a `snap()` in every test module.

use crate::{GpuReading, ProcessReading, Snapshot};

/// A [`Snapshot`] built field by field: `SnapshotBuilder::new("demo:test", t).hostname("box")
/// .gpus(&[80, 0]).build()`. What it is not told stays as [`Snapshot::empty`] leaves it
/// (absent, never 0).
#[derive(Debug, Clone)]
#[must_use]
pub struct SnapshotBuilder {
    snapshot: Snapshot,
}

impl SnapshotBuilder {
    /// An empty reading from `source` taken at `taken_at_unix_ms`.
    pub fn new(source: impl Into<String>, taken_at_unix_ms: i64) -> Self {
        Self {
            snapshot: Snapshot::empty(source, taken_at_unix_ms),
        }
    }

    /// The host's name.
    pub fn hostname(mut self, name: &str) -> Self {
        self.snapshot.system.hostname = Some(name.to_string());
        self
    }

    /// When the host booted, seconds since the Unix epoch.
    pub fn boot_time_s(mut self, unix_s: i64) -> Self {
        self.snapshot.system.boot_time_unix_s = Some(unix_s);
        self
    }

    /// How long the host has been up, in seconds.
    pub fn uptime_s(mut self, seconds: u64) -> Self {
        self.snapshot.system.uptime_s = Some(seconds);
        self
    }

    /// GPU `index` at `util_pct` % util, its memory controller idle (0 %); every other reading
    /// absent.
    pub fn gpu(self, index: u32, util_pct: u32) -> Self {
        self.gpu_reading(GpuReading {
            index,
            util_gpu_pct: Some(util_pct),
            util_memory_pct: Some(0),
            ..GpuReading::default()
        })
    }

    /// GPUs 0, 1, … at these utils, as [`SnapshotBuilder::gpu`] adds each.
    pub fn gpus(self, utils_pct: &[u32]) -> Self {
        (0u32..)
            .zip(utils_pct)
            .fold(self, |b, (index, &util)| b.gpu(index, util))
    }

    /// A GPU reading as given.
    pub fn gpu_reading(mut self, gpu: GpuReading) -> Self {
        self.snapshot.gpus.push(gpu);
        self
    }

    /// `change` applied to every GPU added so far.
    pub fn each_gpu(mut self, change: impl FnMut(&mut GpuReading)) -> Self {
        self.snapshot.gpus.iter_mut().for_each(change);
        self
    }

    /// A process reading as given.
    pub fn process(mut self, process: ProcessReading) -> Self {
        self.snapshot.processes.push(process);
        self
    }

    /// `change` applied to the snapshot itself, for what the other calls do not set.
    pub fn with(mut self, change: impl FnOnce(&mut Snapshot)) -> Self {
        change(&mut self.snapshot);
        self
    }

    /// The snapshot.
    pub fn build(self) -> Snapshot {
        self.snapshot
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GpuState;

    #[test]
    fn unset_readings_stay_absent_and_gpus_are_numbered_in_order() {
        let s = SnapshotBuilder::new("demo:test", 5_000)
            .hostname("box")
            .gpus(&[80, 0])
            .gpu_reading(GpuReading {
                index: 7,
                state: GpuState::Lost,
                ..GpuReading::default()
            })
            .build();
        assert_eq!(s.taken_at_unix_ms, 5_000);
        assert_eq!(s.system.hostname.as_deref(), Some("box"));
        assert_eq!(s.system.uptime_s, None);
        let utils: Vec<_> = s.gpus.iter().map(|g| (g.index, g.util_gpu_pct)).collect();
        assert_eq!(utils, [(0, Some(80)), (1, Some(0)), (7, None)]);
        assert_eq!(s.gpus[0].util_memory_pct, Some(0));
        assert_eq!(s.gpus[0].power_watts, None);
    }
}
