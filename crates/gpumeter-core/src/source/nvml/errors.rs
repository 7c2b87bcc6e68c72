//! What an NVML error means for gpumeter: each [`NvmlError`] is sorted into the one thing the
//! source does about it (remember and stay quiet, remember and warn once, mark the GPU lost,
//! or try again next tick). Pure functions: no library needed to test them.

use nvml_wrapper::error::NvmlError;

use crate::sanitize::sanitize;

/// Longest error text put into a warning.
const MAX_ERROR_CHARS: usize = 120;

/// NVML's `NVML_ERROR_ARGUMENT_VERSION_MISMATCH`, which nvml-wrapper has no variant for.
const ARGUMENT_VERSION_MISMATCH: u32 = 25;

/// The response an error calls for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorKind {
    /// This device or driver cannot give this reading: remember it, show N/A, say nothing.
    Unsupported,
    /// This reading is refused for good (permissions, a struct version the driver rejects,
    /// a string it cannot decode): remember it, show N/A, warn once.
    Refused,
    /// The GPU fell off the bus: mark it lost, stop asking it anything.
    GpuLost,
    /// The GPU needs a reset before it answers again.
    ResetRequired,
    /// Anything else (timeout, unknown driver error…): N/A this tick, warn, ask again next tick.
    Transient,
}

/// Sorts an error.
#[allow(deprecated)] // `AlreadyInitialized` is matched only so that it is not mistaken for news.
pub(crate) fn classify(error: &NvmlError) -> ErrorKind {
    use NvmlError as E;
    match error {
        // Missing symbols are as permanent as an unsupported function: the library is what it is.
        E::NotSupported
        | E::FunctionNotFound
        | E::FailedToLoadSymbol(_)
        | E::LibraryNotFound
        | E::VgpuEccNotSupported => ErrorKind::Unsupported,
        E::NoPermission
        | E::OperatingSystem
        | E::InvalidArg
        | E::Utf8Error(_)
        | E::NulError(_)
        | E::IncorrectBits(_)
        | E::StringTooLong { .. }
        | E::GetPciInfoFailed
        | E::PciInfoToCFailed => ErrorKind::Refused,
        E::UnexpectedVariant(code) if *code == ARGUMENT_VERSION_MISMATCH => ErrorKind::Refused,
        E::GpuLost => ErrorKind::GpuLost,
        E::ResetRequired => ErrorKind::ResetRequired,
        E::Uninitialized
        | E::AlreadyInitialized
        | E::NotFound
        | E::InsufficientSize(_)
        | E::InsufficientPower
        | E::DriverNotLoaded
        | E::Timeout
        | E::IrqIssue
        | E::CorruptedInfoROM
        | E::LibRmVersionMismatch
        | E::InUse
        | E::InsufficientMemory
        | E::NoData
        | E::Unknown
        | E::UnexpectedVariant(_)
        | E::LibloadingError(_)
        | E::SetReleaseFailed => ErrorKind::Transient,
    }
}

/// A short, sanitized description for a warning line ("timeout", "no permission").
pub(crate) fn describe(error: &NvmlError) -> String {
    use NvmlError as E;
    let text = match error {
        E::NotSupported => "not supported",
        E::FunctionNotFound => "function not in this driver",
        E::NoPermission => "no permission",
        E::OperatingSystem => "blocked by the operating system",
        E::InvalidArg => "invalid argument",
        E::GpuLost => "GPU lost",
        E::ResetRequired => "GPU reset required",
        E::Uninitialized => "NVML not initialized",
        E::DriverNotLoaded => "driver not loaded",
        E::LibRmVersionMismatch => "driver/library version mismatch",
        E::Timeout => "timeout",
        E::Unknown => "unknown driver error",
        E::NotFound => "not found",
        E::NoData => "no data",
        E::InUse => "in use",
        E::InsufficientPower => "insufficient power",
        E::InsufficientMemory => "out of memory",
        E::IrqIssue => "interrupt problem",
        E::CorruptedInfoROM => "corrupted infoROM",
        E::UnexpectedVariant(code) if *code == ARGUMENT_VERSION_MISMATCH => {
            "struct version not accepted by the driver"
        }
        E::UnexpectedVariant(code) => return format!("NVML error {code}"),
        other => return sanitize(&other.to_string(), MAX_ERROR_CHARS),
    };
    text.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsupported_and_missing_functions_are_remembered_silently() {
        for e in [
            NvmlError::NotSupported,
            NvmlError::FunctionNotFound,
            NvmlError::FailedToLoadSymbol("undefined symbol: nvmlDeviceGetNumFans".into()),
        ] {
            assert_eq!(classify(&e), ErrorKind::Unsupported, "{e:?}");
        }
    }

    #[test]
    fn permission_and_version_refusals_warn_once() {
        assert_eq!(classify(&NvmlError::NoPermission), ErrorKind::Refused);
        assert_eq!(
            classify(&NvmlError::UnexpectedVariant(ARGUMENT_VERSION_MISMATCH)),
            ErrorKind::Refused
        );
        assert_eq!(
            describe(&NvmlError::UnexpectedVariant(ARGUMENT_VERSION_MISMATCH)),
            "struct version not accepted by the driver"
        );
    }

    #[test]
    fn lost_and_reset_are_device_states() {
        assert_eq!(classify(&NvmlError::GpuLost), ErrorKind::GpuLost);
        assert_eq!(
            classify(&NvmlError::ResetRequired),
            ErrorKind::ResetRequired
        );
    }

    #[test]
    fn timeouts_and_unknown_errors_are_retried() {
        for e in [
            NvmlError::Timeout,
            NvmlError::Unknown,
            NvmlError::NotFound,
            NvmlError::NoData,
            NvmlError::UnexpectedVariant(777),
        ] {
            assert_eq!(classify(&e), ErrorKind::Transient, "{e:?}");
        }
    }

    #[test]
    fn descriptions_are_short_and_clean() {
        assert_eq!(describe(&NvmlError::Timeout), "timeout");
        assert_eq!(
            describe(&NvmlError::UnexpectedVariant(777)),
            "NVML error 777"
        );
        let hostile = NvmlError::FailedToLoadSymbol(format!("\u{1b}[2J{}", "x".repeat(500)));
        let text = describe(&hostile);
        assert!(!text.contains('\u{1b}'));
        assert!(text.chars().count() <= MAX_ERROR_CHARS + 1);
    }
}
