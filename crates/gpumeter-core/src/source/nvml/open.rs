//! Loading and initialising NVML, and saying clearly why it failed: what was looked for, what
//! went wrong, and what to do (run the demo, point at a library, fix the driver).
//!
//! The loaded library is held in a [`Library`] guard: nvml-wrapper's `Drop` calls
//! `nvmlShutdown` through a symbol it unwraps, so a library without that symbol would panic on
//! drop. The guard skips the shutdown (and leaks the handle) in that case.

use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::path::Path;

use nvml_wrapper::Nvml;
use nvml_wrapper::error::NvmlError;

use crate::sanitize::sanitize;
use crate::source::SourceError;

/// The library file loaded when no path is given (what nvml-wrapper dlopens).
pub const DEFAULT_NVML_LIB: &str = "libnvidia-ml.so.1";

/// Environment variable naming an NVML library file, as an alternative to `--nvml-lib`.
pub const NVML_LIB_ENV: &str = "GPUMETER_NVML_LIB";

/// Longest underlying reason quoted in an open failure.
const MAX_REASON_CHARS: usize = 300;

/// How to go on without a working NVML.
const WAYS_ON: &str = "To try gpumeter without a GPU, run `gpumeter --demo`. If the library is \
installed elsewhere, point at it with `--nvml-lib PATH` or GPUMETER_NVML_LIB=PATH.";

/// An initialised NVML, shut down on drop only when the library has `nvmlShutdown`.
pub(crate) struct Library {
    nvml: ManuallyDrop<Nvml>,
    can_shut_down: bool,
}

impl Deref for Library {
    type Target = Nvml;

    fn deref(&self) -> &Nvml {
        &self.nvml
    }
}

impl Drop for Library {
    fn drop(&mut self) {
        if self.can_shut_down {
            // SAFETY: `self.nvml` is never used after this, and dropped only here.
            unsafe { ManuallyDrop::drop(&mut self.nvml) }
        }
        // Otherwise the `Nvml` is leaked: its drop would panic on the missing symbol.
    }
}

impl std::fmt::Debug for Library {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Library")
            .field("can_shut_down", &self.can_shut_down)
            .finish()
    }
}

/// Loads the library (`lib_path`, or the system's `libnvidia-ml.so.1`) and calls `nvmlInit_v2`.
pub(crate) fn load(lib_path: Option<&Path>) -> Result<Library, SourceError> {
    let result = match lib_path {
        Some(path) => Nvml::builder().lib_path(path.as_os_str()).init(),
        None => Nvml::init(),
    };
    let nvml = result.map_err(|e| open_error(lib_path, &e))?;
    let can_shut_down = nvml.lib().nvmlShutdown.is_ok();
    Ok(Library {
        nvml: ManuallyDrop::new(nvml),
        can_shut_down,
    })
}

/// The message for a failed load or init.
pub(crate) fn open_error(lib_path: Option<&Path>, error: &NvmlError) -> SourceError {
    let looked_for = match lib_path {
        Some(path) => path.display().to_string(),
        None => DEFAULT_NVML_LIB.to_string(),
    };
    let looked_for = sanitize(&looked_for, MAX_REASON_CHARS);
    // libloading's own text already names the file and the loader's reason.
    let reason = match error {
        NvmlError::LibloadingError(inner) => inner.to_string(),
        other => other.to_string(),
    };
    let reason = sanitize(&reason, MAX_REASON_CHARS);
    let message = match error {
        NvmlError::LibloadingError(_) => format!(
            "NVIDIA driver library not found: could not load {looked_for} ({reason}). gpumeter \
             reads the GPUs through NVML, which comes with the NVIDIA driver. {WAYS_ON}"
        ),
        NvmlError::FailedToLoadSymbol(_) => format!(
            "{looked_for} is not a usable NVML library: it has no nvmlInit_v2 ({reason}). \
             {WAYS_ON}"
        ),
        NvmlError::DriverNotLoaded => format!(
            "NVML ({looked_for}) loaded, but the NVIDIA kernel driver is not running \
             (DRIVER_NOT_LOADED). Check `nvidia-smi`; load the driver (`sudo modprobe nvidia`) \
             or, in a container, start it with the GPUs attached (`--gpus all`). {WAYS_ON}"
        ),
        NvmlError::LibRmVersionMismatch => format!(
            "NVML ({looked_for}) and the NVIDIA kernel driver are different versions \
             (LIB_RM_VERSION_MISMATCH), usually after a driver upgrade without a reboot. \
             Reboot, or reload the nvidia kernel modules. {WAYS_ON}"
        ),
        NvmlError::NoPermission => format!(
            "NVML ({looked_for}) may not talk to the NVIDIA driver (NO_PERMISSION). Check that \
             your user can open /dev/nvidia* (often the `video` group) or, in a container, that \
             the devices are passed in. {WAYS_ON}"
        ),
        NvmlError::LibraryNotFound | NvmlError::FunctionNotFound => format!(
            "NVML ({looked_for}) is incomplete or does not match the driver ({reason}). \
             Reinstall the NVIDIA driver. {WAYS_ON}"
        ),
        _ => format!("NVML ({looked_for}) failed to initialise: {reason}. {WAYS_ON}"),
    };
    SourceError::NvmlUnavailable(message)
}

/// The message for NVML failing as a whole after it was opened (the collector retries).
pub(crate) fn whole_failure(what: &str, error: &NvmlError) -> SourceError {
    let reason = super::errors::describe(error);
    let hint = match error {
        NvmlError::LibRmVersionMismatch => "; a driver upgrade needs a reboot",
        NvmlError::Uninitialized => "; NVML was shut down",
        _ => "",
    };
    SourceError::Nvml(sanitize(
        &format!("{what} failed ({reason}){hint}"),
        MAX_REASON_CHARS,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(e: SourceError) -> String {
        match e {
            SourceError::NvmlUnavailable(m) => m,
            other => panic!("expected NvmlUnavailable, got {other:?}"),
        }
    }

    #[test]
    fn init_failures_each_get_their_own_hint_and_the_demo() {
        let path = Path::new("/opt/nv/libnvidia-ml.so.1");
        let cases = [
            (NvmlError::DriverNotLoaded, "modprobe nvidia"),
            (NvmlError::LibRmVersionMismatch, "Reboot"),
            (NvmlError::NoPermission, "/dev/nvidia*"),
            (NvmlError::Unknown, "failed to initialise"),
            (
                NvmlError::FailedToLoadSymbol("nvmlInit_v2".into()),
                "not a usable NVML",
            ),
        ];
        for (error, hint) in cases {
            let m = text(open_error(Some(path), &error));
            assert!(m.contains(hint), "{m}");
            assert!(m.contains("/opt/nv/libnvidia-ml.so.1"), "{m}");
            assert!(m.contains("gpumeter --demo"), "{m}");
            assert!(m.contains("--nvml-lib PATH"), "{m}");
        }
    }

    #[test]
    fn default_library_name_is_named_when_no_path_given() {
        let m = text(open_error(None, &NvmlError::DriverNotLoaded));
        assert!(m.contains("libnvidia-ml.so.1"), "{m}");
        assert!(m.contains(NVML_LIB_ENV), "{m}");
    }

    #[test]
    fn hostile_path_is_sanitized() {
        let m = text(open_error(
            Some(Path::new("/tmp/\u{1b}[2Jevil.so")),
            &NvmlError::Unknown,
        ));
        assert!(!m.contains('\u{1b}'), "{m}");
    }

    #[test]
    fn whole_failures_name_the_call_and_reason() {
        let e = whole_failure("reading the GPU count", &NvmlError::DriverNotLoaded);
        assert_eq!(
            e.to_string(),
            "NVML: reading the GPU count failed (driver not loaded)"
        );
        let e = whole_failure("reading the GPU count", &NvmlError::LibRmVersionMismatch);
        assert!(
            e.to_string().ends_with("a driver upgrade needs a reboot"),
            "{e}"
        );
    }
}
