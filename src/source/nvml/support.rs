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
        let who = match self.gpu {
            Some(index) => format!("GPU {index}"),
            None => "NVML".to_string(),
        };
        // A lost GPU's other failures are noise next to the lost marker.
        if !self.failures.is_empty() && self.stop.is_none() {
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
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use std::cell::Cell;

    use super::*;

    fn counted(calls: &Cell<u32>, result: Result<u32, NvmlError>) -> Result<u32, NvmlError> {
        calls.set(calls.get() + 1);
        result
    }

    #[test]
    fn unsupported_is_asked_once_then_never_again_and_stays_quiet() {
        let mut memo = SupportMemo::default();
        let calls = Cell::new(0);
        for _ in 0..3 {
            let mut ask = Ask::new(Some(0), &mut memo);
            let got = ask.get(Reading::FanSpeed, || {
                counted(&calls, Err(NvmlError::NotSupported))
            });
            assert_eq!(got, None);
            let mut warnings = Vec::new();
            assert_eq!(ask.finish(&mut warnings), None);
            assert!(warnings.is_empty(), "{warnings:?}");
        }
        assert_eq!(calls.get(), 1);
    }

    #[test]
    fn missing_symbol_is_remembered_like_unsupported() {
        let mut memo = SupportMemo::default();
        let mut ask = Ask::new(Some(1), &mut memo);
        let err = NvmlError::FailedToLoadSymbol("undefined symbol".into());
        assert_eq!(ask.get(Reading::NumFans, || Err::<u32, _>(err)), None);
        ask.finish(&mut Vec::new());
        assert!(!memo.should_ask(Reading::NumFans));
        assert!(memo.should_ask(Reading::FanSpeed));
    }

    #[test]
    fn no_permission_is_asked_once_and_then_stands_as_a_warning() {
        let mut memo = SupportMemo::default();
        let calls = Cell::new(0);
        for _ in 0..3 {
            let mut ask = Ask::new(Some(2), &mut memo);
            let got = ask.get(Reading::ComputeProcesses, || {
                counted(&calls, Err(NvmlError::NoPermission))
            });
            assert_eq!(got, None);
            let mut tick = Vec::new();
            ask.finish(&mut tick);
            assert!(tick.is_empty(), "not a failure of this tick: {tick:?}");
            // Every sample carries it, so any one snapshot says why the field is N/A.
            assert_eq!(
                memo.standing("GPU 2").as_deref(),
                Some("GPU 2: compute processes (no permission) refused; shown as N/A")
            );
        }
        assert_eq!(calls.get(), 1);
    }

    #[test]
    fn unsupported_readings_do_not_stand_as_warnings() {
        let mut memo = SupportMemo::default();
        let mut ask = Ask::new(Some(0), &mut memo);
        ask.get(Reading::FanSpeed, || Err::<u32, _>(NvmlError::NotSupported));
        ask.get(Reading::Power, || Err::<u32, _>(NvmlError::NoPermission));
        ask.get(Reading::Energy, || Err::<u32, _>(NvmlError::NoPermission));
        ask.finish(&mut Vec::new());
        assert_eq!(
            memo.standing("GPU 0").as_deref(),
            Some("GPU 0: power (no permission), energy (no permission) refused; shown as N/A")
        );
        assert_eq!(SupportMemo::default().standing("GPU 0"), None);
    }

    #[test]
    fn failures_of_this_tick_are_looked_up_by_reading() {
        let mut memo = SupportMemo::default();
        let mut ask = Ask::new(Some(0), &mut memo);
        ask.get(Reading::PcieRx, || Err::<u32, _>(NvmlError::Timeout));
        assert_eq!(ask.failure(Reading::PcieRx), Some("timeout"));
        assert_eq!(ask.failure(Reading::PcieTx), None);
    }

    #[test]
    fn transient_errors_warn_each_tick_and_are_retried() {
        let mut memo = SupportMemo::default();
        let calls = Cell::new(0);
        for tick in 0..2 {
            let mut ask = Ask::new(Some(0), &mut memo);
            assert_eq!(
                ask.get(Reading::Power, || counted(&calls, Err(NvmlError::Timeout))),
                None
            );
            assert_eq!(
                ask.get(Reading::Temperature, || counted(
                    &calls,
                    Err(NvmlError::Unknown)
                )),
                None
            );
            assert_eq!(ask.get(Reading::Energy, || counted(&calls, Ok(7))), Some(7));
            let mut warnings = Vec::new();
            assert_eq!(ask.finish(&mut warnings), None);
            assert_eq!(
                warnings,
                vec!["GPU 0: could not read power (timeout), temperature (unknown driver error)"],
                "tick {tick}"
            );
        }
        assert_eq!(calls.get(), 6);
    }

    #[test]
    fn lost_gpu_stops_further_calls_this_tick_without_memoising() {
        let mut memo = SupportMemo::default();
        let calls = Cell::new(0);
        let mut ask = Ask::new(Some(3), &mut memo);
        assert_eq!(
            ask.get(Reading::Power, || counted(&calls, Err(NvmlError::Timeout))),
            None
        );
        assert_eq!(
            ask.get(Reading::Utilization, || counted(
                &calls,
                Err(NvmlError::GpuLost)
            )),
            None
        );
        assert_eq!(ask.stopped(), Some(Stop::Lost));
        assert_eq!(ask.get(Reading::Memory, || counted(&calls, Ok(1))), None);
        let mut warnings = Vec::new();
        assert_eq!(ask.finish(&mut warnings), Some(Stop::Lost));
        assert_eq!(calls.get(), 2);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert!(memo.should_ask(Reading::Utilization));
        assert!(memo.should_ask(Reading::Memory));
    }

    #[test]
    fn reset_required_is_its_own_stop() {
        let mut memo = SupportMemo::default();
        let mut ask = Ask::new(Some(0), &mut memo);
        ask.get(Reading::Memory, || Err::<u32, _>(NvmlError::ResetRequired));
        assert_eq!(ask.finish(&mut Vec::new()), Some(Stop::ResetRequired));
    }

    #[test]
    fn attempt_hands_back_the_error_for_special_meanings() {
        let mut memo = SupportMemo::default();
        let mut ask = Ask::new(None, &mut memo);
        match ask.attempt(Reading::ProcessUtilization, || {
            Err::<u32, _>(NvmlError::NotFound)
        }) {
            Asked::Failed(NvmlError::NotFound) => {}
            other => panic!("expected NotFound back, got {other:?}"),
        }
        let mut warnings = Vec::new();
        ask.finish(&mut warnings);
        assert!(
            warnings.is_empty(),
            "an unabsorbed failure must not warn: {warnings:?}"
        );
    }

    #[test]
    fn a_lost_answer_to_a_system_call_fails_only_that_reading() {
        let mut memo = SupportMemo::default();
        let mut ask = Ask::new(None, &mut memo);
        ask.get(Reading::DriverVersion, || Err::<u32, _>(NvmlError::GpuLost));
        assert_eq!(ask.get(Reading::CudaVersion, || Ok(12040)), Some(12040));
        let mut warnings = Vec::new();
        assert_eq!(ask.finish(&mut warnings), None);
        assert_eq!(
            warnings,
            vec!["NVML: could not read driver version (GPU lost)"]
        );
    }

    #[test]
    fn system_calls_are_labelled_nvml() {
        let mut memo = SupportMemo::default();
        let mut ask = Ask::new(None, &mut memo);
        ask.get(Reading::DriverVersion, || Err::<u32, _>(NvmlError::Unknown));
        ask.get(Reading::CudaVersion, || {
            Err::<u32, _>(NvmlError::LibraryNotFound)
        });
        let mut warnings = Vec::new();
        ask.finish(&mut warnings);
        assert_eq!(
            warnings,
            vec!["NVML: could not read driver version (unknown driver error)"]
        );
        assert!(!memo.should_ask(Reading::CudaVersion));
        assert!(memo.should_ask(Reading::DriverVersion));
    }
}
