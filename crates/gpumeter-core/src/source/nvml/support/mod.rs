//! Asking NVML for one reading at a time, remembering what a device cannot answer.
//!
//! [`SupportMemo`] holds, per device, the readings that were refused for good (unsupported,
//! missing from the library, no permission): they are never asked again. Refusals that deserve
//! words (no permission, a rejected struct version) are kept with their reason and repeated as
//! a standing warning in every sample ([`SupportMemo::standing`]): a snapshot read on its own
//! (`gpumeter snapshot`, a recording, the dashboard's latest) must say why a field is N/A.
//! [`Ask`] wraps one device's calls for one tick: it consults the memo, sorts each error (see
//! `errors`), collects this tick's failures, and stops asking once the device is lost or needs a
//! reset. Pure logic over closures, so it is tested without a library.

use std::collections::BTreeMap;

use nvml_wrapper::error::NvmlError;

use super::errors::{ErrorKind, classify, describe};
use crate::sanitize::sanitize;

/// Longest warning line the source emits.
pub(crate) const MAX_WARNING_CHARS: usize = 300;

/// One thing asked of NVML (one call, or one argument of a call).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Reading {
    DriverVersion,
    CudaVersion,
    Name,
    Uuid,
    PciInfo,
    Utilization,
    Memory,
    Power,
    PowerLimit,
    PowerDefaultLimit,
    Energy,
    Temperature,
    NumFans,
    FanSpeed,
    ClockGraphics,
    ClockSm,
    ClockMemory,
    ClockSmMax,
    ClockMemoryMax,
    Throttle,
    PcieRx,
    PcieTx,
    PcieLinkGen,
    PcieLinkGenMax,
    PcieLinkWidth,
    PcieLinkWidthMax,
    Encoder,
    Decoder,
    MigMode,
    ComputeProcesses,
    GraphicsProcesses,
    ProcessUtilization,
    GpmSupport,
    GpmSample,
    GpmMetrics,
}

impl Reading {
    /// What the user calls it, for warnings.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Reading::DriverVersion => "driver version",
            Reading::CudaVersion => "CUDA driver version",
            Reading::Name => "name",
            Reading::Uuid => "UUID",
            Reading::PciInfo => "PCI info",
            Reading::Utilization => "utilization",
            Reading::Memory => "memory",
            Reading::Power => "power",
            Reading::PowerLimit => "power limit",
            Reading::PowerDefaultLimit => "default power limit",
            Reading::Energy => "energy",
            Reading::Temperature => "temperature",
            Reading::NumFans => "fan count",
            Reading::FanSpeed => "fan speed",
            Reading::ClockGraphics => "graphics clock",
            Reading::ClockSm => "SM clock",
            Reading::ClockMemory => "memory clock",
            Reading::ClockSmMax => "max SM clock",
            Reading::ClockMemoryMax => "max memory clock",
            Reading::Throttle => "throttle reasons",
            Reading::PcieRx => "PCIe RX",
            Reading::PcieTx => "PCIe TX",
            Reading::PcieLinkGen => "PCIe link gen",
            Reading::PcieLinkGenMax => "max PCIe link gen",
            Reading::PcieLinkWidth => "PCIe link width",
            Reading::PcieLinkWidthMax => "max PCIe link width",
            Reading::Encoder => "encoder utilization",
            Reading::Decoder => "decoder utilization",
            Reading::MigMode => "MIG mode",
            Reading::ComputeProcesses => "compute processes",
            Reading::GraphicsProcesses => "graphics processes",
            Reading::ProcessUtilization => "process utilization",
            Reading::GpmSupport => "GPM support",
            Reading::GpmSample => "GPM sample",
            Reading::GpmMetrics => "GPM metrics",
        }
    }
}

/// The readings one device (or the device-less system calls) will not answer: unsupported
/// ones silently (`None`), refused ones with the reason the user should read (`Some`).
#[derive(Debug, Default, Clone)]
pub(crate) struct SupportMemo {
    refused: BTreeMap<Reading, Option<String>>,
}

impl SupportMemo {
    /// Whether asking for this reading could still give an answer.
    pub(crate) fn should_ask(&self, reading: Reading) -> bool {
        !self.refused.contains_key(&reading)
    }

    /// Never ask for this reading again; N/A says enough (unsupported).
    pub(crate) fn refuse(&mut self, reading: Reading) {
        self.refused.entry(reading).or_insert(None);
    }

    /// Never ask for this reading again, and keep saying why.
    pub(crate) fn refuse_because(&mut self, reading: Reading, why: String) {
        self.refused.insert(reading, Some(why));
    }

    /// Whether any refusal stands (what [`SupportMemo::standing`] would report).
    pub(crate) fn has_standing(&self) -> bool {
        self.refused.values().any(Option::is_some)
    }

    /// The line repeated in every sample while readings are refused with a reason:
    /// "GPU 2: power (no permission) refused; shown as N/A". `who` is "GPU 2" or "NVML".
    pub(crate) fn standing(&self, who: &str) -> Option<String> {
        let reasons: Vec<(Reading, String)> = self
            .refused
            .iter()
            .filter_map(|(r, why)| why.clone().map(|w| (*r, w)))
            .collect();
        (!reasons.is_empty())
            .then(|| line(&format!("{who}: {} refused; shown as N/A", join(&reasons))))
    }
}

/// The device stopped answering in a way that ends this tick's questions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    Lost,
    ResetRequired,
}

/// The result of one call made through [`Ask::attempt`].
#[derive(Debug)]
pub(crate) enum Asked<T> {
    /// Not asked: remembered as refused, or the device already stopped answering this tick.
    Skipped,
    Answered(T),
    Failed(NvmlError),
}

/// One device's questions for one tick.
#[derive(Debug)]
pub(crate) struct Ask<'m> {
    /// `Some(index)` for a GPU, `None` for device-less system calls.
    gpu: Option<u32>,
    memo: &'m mut SupportMemo,
    /// Readings that failed this tick, with why.
    failures: Vec<(Reading, String)>,
    stop: Option<Stop>,
}

impl<'m> Ask<'m> {
    pub(crate) fn new(gpu: Option<u32>, memo: &'m mut SupportMemo) -> Self {
        Self {
            gpu,
            memo,
            failures: Vec::new(),
            stop: None,
        }
    }

    /// Asks for a reading; `None` when unsupported, refused, failed, or the device stopped.
    pub(crate) fn get<T>(
        &mut self,
        reading: Reading,
        call: impl FnOnce() -> Result<T, NvmlError>,
    ) -> Option<T> {
        match self.attempt(reading, call) {
            Asked::Answered(value) => Some(value),
            Asked::Failed(error) => {
                self.absorb(reading, &error);
                None
            }
            Asked::Skipped => None,
        }
    }

    /// Asks, handing a failure back so the caller can read special meanings into it
    /// (`NOT_FOUND` from process utilization means "no new samples"); pass the rest to
    /// [`Ask::absorb`].
    pub(crate) fn attempt<T>(
        &mut self,
        reading: Reading,
        call: impl FnOnce() -> Result<T, NvmlError>,
    ) -> Asked<T> {
        if self.stop.is_some() || !self.memo.should_ask(reading) {
            return Asked::Skipped;
        }
        match call() {
            Ok(value) => Asked::Answered(value),
            Err(error) => Asked::Failed(error),
        }
    }

    /// Deals with a failed call the usual way. A device-less call has no device to stop:
    /// a lost/reset answer there is a failure of that one reading.
    pub(crate) fn absorb(&mut self, reading: Reading, error: &NvmlError) {
        match classify(error) {
            ErrorKind::GpuLost | ErrorKind::ResetRequired if self.gpu.is_none() => {
                self.failures.push((reading, describe(error)));
            }
            ErrorKind::Unsupported => self.memo.refuse(reading),
            ErrorKind::Refused => self.memo.refuse_because(reading, describe(error)),
            ErrorKind::GpuLost => self.stop = Some(Stop::Lost),
            ErrorKind::ResetRequired => self.stop = Some(Stop::ResetRequired),
            ErrorKind::Transient => self.failures.push((reading, describe(error))),
        }
    }

    /// Whether the device stopped answering this tick.
    pub(crate) fn stopped(&self) -> Option<Stop> {
        self.stop
    }

    /// Why this reading failed this tick, if it did (transiently).
    pub(crate) fn failure(&self, reading: Reading) -> Option<&str> {
        self.failures
            .iter()
            .find(|(r, _)| *r == reading)
            .map(|(_, why)| why.as_str())
    }

    /// Ends the tick: appends one warning line for the readings that failed this time (none
    /// when the device stopped: the lost marker says it) and says whether the device stopped.
    /// Refusals are not repeated here: the owner of the memo reports them as standing.
    pub(crate) fn finish(self, warnings: &mut Vec<String>) -> Option<Stop> {
        // A lost GPU's other failures are noise next to the lost marker.
        if !self.failures.is_empty() && self.stop.is_none() {
            let who = match self.gpu {
                Some(index) => format!("GPU {index}"),
                None => "NVML".to_string(),
            };
            warnings.push(line(&format!(
                "{who}: could not read {}",
                join(&self.failures)
            )));
        }
        self.stop
    }
}

fn join(items: &[(Reading, String)]) -> String {
    items
        .iter()
        .map(|(reading, why)| format!("{} ({why})", reading.label()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A sanitized, length-capped warning line.
pub(crate) fn line(text: &str) -> String {
    sanitize(text, MAX_WARNING_CHARS)
}

#[cfg(test)]
mod tests;
