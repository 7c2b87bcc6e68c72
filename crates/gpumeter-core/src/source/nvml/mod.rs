//! GPU readings through NVML (nvml-wrapper), robust to what a driver does: unsupported
//! readings are N/A and remembered, a lost GPU is marked while the others go on, errors become
//! short warnings (standing ones repeated in every sample while they hold: a lost GPU, a
//! refused reading), and NVML failing as a whole is an `Err` the collector retries.
//!
//! Holds: loading and the open messages (`open`), error sorting (`errors`), the memo of refused
//! readings (`support`), per-GPU memory between ticks (`slot`), per-GPU reading (`device`),
//! processes and their utilization cursor (`processes`), the process lists in one call each
//! (`lists`), intervals (`schedule`), and the
//! one-time pre-flight inspection for `gpumeter check` (`inspect`).
//! Touches only NVML; /proc and the snapshot assembly are in `source::local`. No globals: each
//! [`NvmlSource`] owns its library handle, so tests can open a fake library by path.

mod device;
mod errors;
mod gpm;
mod inspect;
mod lists;
mod open;
mod processes;
mod schedule;
mod slot;
mod support;
mod xid;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gpumeter_model::{GpuReading, GpuState, GpuUse};
use nvml_wrapper::{cuda_driver_version_major, cuda_driver_version_minor};

pub use inspect::inspect;
pub use open::{DEFAULT_NVML_LIB, NVML_LIB_ENV};
pub use slot::NvmlTiming;

use errors::{ErrorKind, classify, describe};
use open::Library;
use slot::DeviceSlot;
use support::{Ask, Reading, Stop, SupportMemo, line};

use crate::sanitize::sanitize;
use crate::source::SourceError;

/// Longest driver version string kept.
const MAX_VERSION_CHARS: usize = 32;

/// One NVML reading of all GPUs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NvmlSample {
    /// The NVIDIA driver version, e.g. `550.54.15`; `None` when NVML does not say.
    pub driver_version: Option<String>,
    /// CUDA driver API version, e.g. `12.4`.
    pub cuda_driver_version: Option<String>,
    /// One reading per GPU, in NVML index order.
    pub gpus: Vec<GpuReading>,
    /// Per host PID, its use of each GPU (compute and graphics merged).
    pub gpu_procs: BTreeMap<u32, Vec<GpuUse>>,
    /// Problems met this tick (sanitized, short).
    pub warnings: Vec<String>,
}

/// The GPUs of this machine, through an initialised NVML library.
#[derive(Debug)]
pub struct NvmlSource {
    lib: Library,
    /// What was opened, to open again after NVML failed as a whole.
    lib_path: Option<PathBuf>,
    /// NVML failed as a whole last time: initialise a fresh handle before the next reading.
    reopen: bool,
    timing: NvmlTiming,
    system_memo: SupportMemo,
    driver_version: Option<String>,
    cuda_driver_version: Option<String>,
    slots: Vec<DeviceSlot>,
    /// GPM samples kept between ticks, one per slot (not in `DeviceSlot`: they hold driver
    /// handles that must be freed once, never cloned).
    gpm: Vec<gpm::GpmSlot>,
    /// XID events, on their own thread.
    xid: xid::XidWatch,
    last_count: Option<u32>,
}

impl Drop for NvmlSource {
    fn drop(&mut self) {
        for g in &mut self.gpm {
            g.release(&self.lib);
        }
    }
}

impl NvmlSource {
    /// Loads NVML (from `lib_path` if given, else the system's libnvidia-ml.so.1) and
    /// initialises it. The error message says what was looked for, why it failed, and how to
    /// go on (`gpumeter --demo`, `--nvml-lib PATH`, `GPUMETER_NVML_LIB`).
    pub fn open(lib_path: Option<&Path>) -> Result<NvmlSource, SourceError> {
        Ok(Self {
            lib: open::load(lib_path)?,
            xid: xid::XidWatch::start(lib_path),
            gpm: Vec::new(),
            lib_path: lib_path.map(Path::to_path_buf),
            reopen: false,
            timing: NvmlTiming::default(),
            system_memo: SupportMemo::default(),
            driver_version: None,
            cuda_driver_version: None,
            slots: Vec::new(),
            last_count: None,
        })
    }

    /// Takes one reading. NVML failing as a whole gives a sample with the GPUs seen so far
    /// marked `Error` and the reason in the warnings; [`NvmlSource::try_sample`] returns it
    /// as an `Err` instead.
    pub fn sample(&mut self, now_unix_ms: i64) -> NvmlSample {
        match self.try_sample(now_unix_ms) {
            Ok(sample) => sample,
            Err(error) => NvmlSample {
                driver_version: self.driver_version.clone(),
                cuda_driver_version: self.cuda_driver_version.clone(),
                gpus: self
                    .slots
                    .iter()
                    .map(|slot| GpuReading {
                        state: GpuState::Error,
                        ..slot.frozen()
                    })
                    .collect(),
                gpu_procs: BTreeMap::new(),
                warnings: vec![line(&error.to_string())],
            },
        }
    }

    /// Takes one reading; `Err(SourceError::Nvml)` when NVML fails as a whole (the device
    /// count cannot be read), so the caller can retry with backoff; the retry initialises
    /// NVML afresh from the same library. Problems with one GPU or one reading stay inside
    /// the sample.
    pub fn try_sample(&mut self, now_unix_ms: i64) -> Result<NvmlSample, SourceError> {
        let mut warnings = Vec::new();
        if self.reopen {
            self.reopen_library(&mut warnings)?;
        }
        self.read_versions(&mut warnings);
        let count = self.lib.device_count().map_err(|e| {
            // A driver that was unloaded or replaced leaves this handle useless: next time,
            // start NVML afresh rather than asking the dead handle again.
            self.reopen = true;
            open::whole_failure("reading the GPU count", &e)
        })?;
        self.track_count(count, &mut warnings);

        warnings.extend(self.xid.drain());
        let mut gpus = Vec::with_capacity(self.slots.len());
        let mut gpu_procs: BTreeMap<u32, Vec<GpuUse>> = BTreeMap::new();
        for (slot, gpm) in self.slots.iter_mut().zip(self.gpm.iter_mut()) {
            if !slot.begin_tick(now_unix_ms) {
                gpus.push(slot.frozen());
                continue;
            }
            match self.lib.device_by_index(slot.index) {
                Ok(dev) => {
                    let (reading, procs) =
                        device::read_device(&dev, slot, gpm, now_unix_ms, &mut warnings);
                    gpus.push(reading);
                    for (pid, gpu_use) in procs {
                        gpu_procs.entry(pid).or_default().push(gpu_use);
                    }
                }
                Err(error) => {
                    match classify(&error) {
                        ErrorKind::GpuLost => slot.stop(Stop::Lost, now_unix_ms),
                        ErrorKind::ResetRequired => slot.stop(Stop::ResetRequired, now_unix_ms),
                        _ => warnings.push(slot.handle_failed(&describe(&error))),
                    }
                    gpus.push(slot.frozen());
                }
            }
        }
        // XIDs come from the event thread, not the device: a GPU that fell off the bus (XID
        // 79) keeps its counts, the one reading that says why it is gone.
        for g in &mut gpus {
            g.xid_errors = self.xid.counts(g.index);
        }
        // After this tick's news: what stays true (lost GPUs, refused readings), in every
        // sample, so any one snapshot explains its N/A fields.
        warnings.extend(self.system_memo.standing("NVML"));
        warnings.extend(self.slots.iter().filter_map(DeviceSlot::standing));
        Ok(NvmlSample {
            driver_version: self.driver_version.clone(),
            cuda_driver_version: self.cuda_driver_version.clone(),
            gpus,
            gpu_procs,
            warnings,
        })
    }

    /// Initialises NVML again after a whole failure. The new handle is made before the old
    /// one is dropped, so NVML's init refcount never reaches zero in between.
    fn reopen_library(&mut self, warnings: &mut Vec<String>) -> Result<(), SourceError> {
        let fresh = open::load(self.lib_path.as_deref()).map_err(|e| match e {
            SourceError::NvmlUnavailable(message) => SourceError::Nvml(message),
            other => other,
        })?;
        self.release_gpm();
        self.lib = fresh;
        self.reopen = false;
        // A reloaded driver may report another version.
        self.driver_version = None;
        self.cuda_driver_version = None;
        warnings.push(line("NVML reinitialised after a failure"));
        Ok(())
    }

    /// Driver and CUDA versions: asked until known (or refused), then kept.
    fn read_versions(&mut self, warnings: &mut Vec<String>) {
        let lib = &self.lib;
        let mut ask = Ask::new(None, &mut self.system_memo);
        if self.driver_version.is_none() {
            self.driver_version = ask
                .get(Reading::DriverVersion, || lib.sys_driver_version())
                .map(|v| sanitize(&v, MAX_VERSION_CHARS));
        }
        if self.cuda_driver_version.is_none() {
            self.cuda_driver_version = ask
                .get(Reading::CudaVersion, || lib.sys_cuda_driver_version())
                .map(format_cuda_version);
        }
        ask.finish(warnings);
    }

    /// Keeps one slot per enumerated GPU. NVML's count is fixed while the driver runs; if it
    /// changes anyway, indices may now name other boards, so identities are read again.
    fn track_count(&mut self, count: u32, warnings: &mut Vec<String>) {
        if let Some(previous) = self.last_count
            && previous != count
        {
            warnings.push(line(&format!(
                "NVML now reports {count} GPU(s), was {previous}"
            )));
            self.release_gpm();
            self.slots.clear();
        }
        self.last_count = Some(count);
        let have = u32::try_from(self.slots.len()).unwrap_or(u32::MAX);
        self.slots
            .extend((have..count).map(|index| DeviceSlot::new(index, &self.timing)));
        self.gpm
            .resize_with(self.slots.len(), gpm::GpmSlot::default);
    }

    /// Frees the kept GPM samples (before their library or their GPU's slot goes).
    fn release_gpm(&mut self) {
        for g in &mut self.gpm {
            g.release(&self.lib);
        }
        self.gpm.clear();
    }
}

/// `12040` → `"12.4"`, with nvml-wrapper's own split of the CUDA version number.
fn format_cuda_version(version: i32) -> String {
    format!(
        "{}.{}",
        cuda_driver_version_major(version),
        cuda_driver_version_minor(version)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuda_versions_format_as_major_dot_minor() {
        assert_eq!(format_cuda_version(12040), "12.4");
        assert_eq!(format_cuda_version(11080), "11.8");
        assert_eq!(format_cuda_version(13000), "13.0");
    }

    #[test]
    fn missing_library_names_the_path_and_the_demo() {
        let path = Path::new("/nonexistent/libnvidia-ml.so.1");
        match NvmlSource::open(Some(path)) {
            Err(SourceError::NvmlUnavailable(message)) => {
                assert!(
                    message.contains("/nonexistent/libnvidia-ml.so.1"),
                    "{message}"
                );
                assert!(message.contains("gpumeter --demo"), "{message}");
                assert!(message.contains("not found"), "{message}");
            }
            Err(other) => panic!("expected NvmlUnavailable, got {other:?}"),
            Ok(_) => panic!("a nonexistent library must not open"),
        }
    }

    #[test]
    fn a_file_that_is_not_a_library_is_unavailable_too() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("libnvidia-ml.so.1");
        std::fs::write(&path, b"not an ELF file").unwrap();
        match NvmlSource::open(Some(&path)) {
            Err(SourceError::NvmlUnavailable(message)) => {
                assert!(message.contains(&*path.to_string_lossy()), "{message}");
                assert!(message.contains("--nvml-lib PATH"), "{message}");
            }
            Err(other) => panic!("expected NvmlUnavailable, got {other:?}"),
            Ok(_) => panic!("garbage must not open"),
        }
    }
}
