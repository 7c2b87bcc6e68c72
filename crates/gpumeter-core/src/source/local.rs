//! This machine: NVML for the GPUs plus /proc for the host and the processes feeding the GPUs.
//!
//! One tick samples NVML first (an `Err` when NVML fails as a whole, so the collector backs
//! off), then the host with the NVML process map (so /proc is read for exactly the GPU
//! processes and their descendants), then assembles the [`Snapshot`]. Time comes from the
//! [`SharedClock`] it is given. Touches `source::nvml` and `source::host` only.

use std::path::Path;
use std::sync::Arc;

use gpumeter_model::Snapshot;

use super::host::{HostSample, HostSampler};
use super::nvml::{NvmlSample, NvmlSource};
use super::{Source, SourceError};
use crate::clock::{SharedClock, SystemClock};

/// The label of this source in the header and in snapshots.
pub const LOCAL_LABEL: &str = "nvml";

/// NVML + /proc on this machine.
pub struct LocalSource {
    nvml: NvmlSource,
    host: HostSampler,
    clock: SharedClock,
}

impl LocalSource {
    /// Opens NVML (`lib_path`, or the system's libnvidia-ml.so.1) and the real /proc, on the
    /// system clock. Fails with [`SourceError::NvmlUnavailable`] and a message saying what to
    /// do when there is no usable NVML.
    pub fn open(lib_path: Option<&Path>) -> Result<LocalSource, SourceError> {
        Ok(Self::from_parts(
            NvmlSource::open(lib_path)?,
            HostSampler::new(),
            Arc::new(SystemClock),
        ))
    }

    /// Uses another clock for `taken_at` and every interval (tests, replays).
    pub fn with_clock(mut self, clock: SharedClock) -> Self {
        self.clock = clock;
        self
    }

    /// Builds from parts: tests pass a fake NVML library's source and a fixture /proc tree.
    pub fn from_parts(nvml: NvmlSource, host: HostSampler, clock: SharedClock) -> Self {
        Self { nvml, host, clock }
    }
}

impl Source for LocalSource {
    fn sample(&mut self) -> Result<Snapshot, SourceError> {
        let now = self.clock.now_unix_ms();
        let mut gpus = self.nvml.try_sample(now)?;
        let host = self.host.sample_taking(now, &mut gpus.gpu_procs);
        Ok(assemble(now, gpus, host))
    }

    fn label(&self) -> String {
        LOCAL_LABEL.to_string()
    }

    fn set_focus(&mut self, focus: super::focus::ProcessFocus) {
        self.host.set_focus(focus);
    }
}

/// One snapshot from the two halves: GPU facts from NVML, machine facts and processes from
/// /proc, warnings from both (NVML's first).
fn assemble(now_unix_ms: i64, gpus: NvmlSample, host: HostSample) -> Snapshot {
    let mut snap = Snapshot::empty(LOCAL_LABEL, now_unix_ms);
    snap.system = host.system;
    snap.system.driver_version = gpus.driver_version;
    snap.system.cuda_driver_version = gpus.cuda_driver_version;
    snap.host = host.host;
    snap.gpus = gpus.gpus;
    snap.processes = host.processes;
    snap.warnings = gpus.warnings;
    snap.warnings.extend(host.warnings);
    snap
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use gpumeter_model::{
        GpuProcessKind, GpuReading, GpuUse, HostReading, ProcessReading, SCHEMA_VERSION, SystemInfo,
    };

    use super::*;

    #[test]
    fn assemble_joins_gpu_and_host_halves() {
        let gpu_use = GpuUse {
            gpu_index: 0,
            kind: GpuProcessKind::Compute,
            memory_bytes: Some(1 << 30),
            sm_util_pct: Some(90),
            memory_util_pct: Some(40),
        };
        let gpus = NvmlSample {
            driver_version: Some("550.54.15".into()),
            cuda_driver_version: Some("12.4".into()),
            gpus: vec![GpuReading {
                index: 0,
                util_gpu_pct: Some(97),
                ..GpuReading::default()
            }],
            gpu_procs: BTreeMap::from([(4242, vec![gpu_use.clone()])]),
            warnings: vec!["GPU 0: could not read power (timeout)".into()],
        };
        let host = HostSample {
            system: SystemInfo {
                hostname: Some("box".into()),
                uptime_s: Some(60),
                ..SystemInfo::default()
            },
            host: HostReading {
                cpu_count: Some(16),
                ..HostReading::default()
            },
            processes: vec![ProcessReading {
                gpu: vec![gpu_use],
                ..ProcessReading::invisible(4242)
            }],
            warnings: vec!["/proc/stat unreadable".into()],
        };
        let snap = assemble(1_700_000_000_000, gpus, host);
        assert_eq!(snap.schema, SCHEMA_VERSION);
        assert_eq!(snap.source, "nvml");
        assert_eq!(snap.taken_at_unix_ms, 1_700_000_000_000);
        assert_eq!(snap.system.hostname.as_deref(), Some("box"));
        assert_eq!(snap.system.driver_version.as_deref(), Some("550.54.15"));
        assert_eq!(snap.system.cuda_driver_version.as_deref(), Some("12.4"));
        assert_eq!(snap.host.cpu_count, Some(16));
        assert_eq!(snap.gpu(0).unwrap().util_gpu_pct, Some(97));
        assert_eq!(snap.processes.len(), 1);
        assert_eq!(snap.processes[0].sm_util_pct(), Some(90));
        assert_eq!(
            snap.warnings,
            vec![
                "GPU 0: could not read power (timeout)",
                "/proc/stat unreadable"
            ]
        );
    }

    #[test]
    fn open_without_a_library_is_unavailable() {
        let err = LocalSource::open(Some(Path::new("/nonexistent/libnvidia-ml.so.1")))
            .err()
            .expect("no library here");
        assert!(matches!(err, SourceError::NvmlUnavailable(_)), "{err:?}");
        assert!(err.to_string().contains("gpumeter --demo"));
    }
}
