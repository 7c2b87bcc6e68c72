//! Scripted NVML failures: the return-code names, the [`NvmlError`] a scenario names, and the
//! call-by-call [`Fault`] the fake library asks for through [`crate::Simulator::fault`].

use serde::Deserialize;

/// NVML return codes by name (`nvmlReturn_t`, without the `NVML_ERROR_` prefix).
const CODES: &[(&str, u32)] = &[
    ("SUCCESS", 0),
    ("UNINITIALIZED", 1),
    ("INVALID_ARGUMENT", 2),
    ("NOT_SUPPORTED", 3),
    ("NO_PERMISSION", 4),
    ("ALREADY_INITIALIZED", 5),
    ("NOT_FOUND", 6),
    ("INSUFFICIENT_SIZE", 7),
    ("INSUFFICIENT_POWER", 8),
    ("DRIVER_NOT_LOADED", 9),
    ("TIMEOUT", 10),
    ("IRQ_ISSUE", 11),
    ("LIBRARY_NOT_FOUND", 12),
    ("FUNCTION_NOT_FOUND", 13),
    ("CORRUPTED_INFOROM", 14),
    ("GPU_IS_LOST", 15),
    ("RESET_REQUIRED", 16),
    ("OPERATING_SYSTEM", 17),
    ("LIB_RM_VERSION_MISMATCH", 18),
    ("IN_USE", 19),
    ("MEMORY", 20),
    ("NO_DATA", 21),
    ("VGPU_ECC_NOT_ENABLED", 22),
    ("INSUFFICIENT_RESOURCES", 23),
    ("FREQ_NOT_SUPPORTED", 24),
    ("ARGUMENT_VERSION_MISMATCH", 25),
    ("DEPRECATED", 26),
    ("NOT_READY", 27),
    ("GPU_NOT_FOUND", 28),
    ("INVALID_STATE", 29),
    ("UNKNOWN", 999),
];

pub(crate) const GPU_IS_LOST: u32 = 15;
pub(crate) const RESET_REQUIRED: u32 = 16;

/// The NVML return code for a name such as `NOT_SUPPORTED` or `NVML_ERROR_NOT_SUPPORTED`.
pub fn nvml_error_code(name: &str) -> Option<u32> {
    let bare = name.strip_prefix("NVML_ERROR_").unwrap_or(name);
    let bare = bare.strip_prefix("NVML_").unwrap_or(bare);
    CODES
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(bare))
        .map(|(_, c)| *c)
}

/// The short name of an NVML return code (`NOT_SUPPORTED`), if it is a known one.
pub fn nvml_error_name(code: u32) -> Option<&'static str> {
    CODES.iter().find(|(_, c)| *c == code).map(|(n, _)| *n)
}

/// An NVML return code as a scenario names it: a name (`"GPU_IS_LOST"`) or a number (`15`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "ErrorSpec")]
pub struct NvmlError(pub u32);

impl NvmlError {
    /// The short name, or the number when it is not a known code.
    pub fn label(self) -> String {
        nvml_error_name(self.0).map_or_else(|| self.0.to_string(), str::to_string)
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ErrorSpec {
    Code(u32),
    Name(String),
}

impl TryFrom<ErrorSpec> for NvmlError {
    type Error = String;

    fn try_from(spec: ErrorSpec) -> Result<Self, String> {
        match spec {
            ErrorSpec::Code(c) => Ok(NvmlError(c)),
            ErrorSpec::Name(n) => nvml_error_code(&n).map(NvmlError).ok_or_else(|| {
                let known: Vec<&str> = CODES.iter().map(|(n, _)| *n).collect();
                format!(
                    "unknown NVML error name `{n}` (known: {}, or a number)",
                    known.join(", ")
                )
            }),
        }
    }
}

/// What the fake library should do for one call: fail with `error` (an NVML return code; `None`
/// = succeed) after sleeping `latency_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    pub error: Option<u32>,
    pub latency_ms: u64,
}

/// Whether a scripted fault names this function: `"*"` covers every device function.
pub(crate) fn function_matches(pattern: &str, gpu: Option<u32>, function: &str) -> bool {
    if pattern == "*" {
        gpu.is_some()
    } else {
        pattern == function
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_codes_round_trip() {
        assert_eq!(nvml_error_code("GPU_IS_LOST"), Some(15));
        assert_eq!(nvml_error_code("NVML_ERROR_NOT_SUPPORTED"), Some(3));
        assert_eq!(nvml_error_code("timeout"), Some(10));
        assert_eq!(nvml_error_code("BOGUS"), None);
        assert_eq!(nvml_error_name(999), Some("UNKNOWN"));
        assert_eq!(NvmlError(4242).label(), "4242");
    }

    #[test]
    fn star_covers_device_functions_only() {
        assert!(function_matches("*", Some(0), "nvmlDeviceGetPowerUsage"));
        assert!(!function_matches("*", None, "nvmlSystemGetDriverVersion"));
        assert!(function_matches("nvmlInit_v2", None, "nvmlInit_v2"));
        assert!(!function_matches("nvmlInit_v2", None, "nvmlInitWithFlags"));
    }
}
