//! A fake `libnvidia-ml.so.1`: the NVML C ABI answered from a gpumeter-sim scenario, so
//! gpumeter's real NVML path (nvml-wrapper, a real `dlopen`) and other monitors (nvidia-ml-py
//! clients such as nvitop and gpustat, nvtop) run on machines without a GPU, with every fault
//! a driver throws scripted in the scenario's `[[fault]]` entries.
//!
//! Holds: the C types and codes (`abi`), the global state with its refcount, clock and call
//! counters (`state`), the environment it reads (`load`), the call discipline every export
//! follows (`call`), and the exports by topic: `system`, `device_identity`, `device_util`,
//! `device_power`, `device_clocks`, `device_health`, `device_links`, `process`, GPM (`gpm`) and events (`events`), with the
//! GPM samples and event sets they hand out in `objects`. Reads the scenario engine; touches nothing else.
//!
//! Environment (read on the first `nvmlInit`): `GPUMETER_FAKE_NVML_SCENARIO` (a built-in
//! scenario name or a `.toml` path; default `training`), `GPUMETER_FAKE_NVML_ELAPSED_MS`
//! (freeze scenario time; default: wall time since the library was loaded).
//!
//! Faults: every exported function except `nvmlErrorString` first asks
//! `Simulator::fault(gpu, "<its C symbol>", elapsed, call_number)` — device functions (and
//! `nvmlDeviceGetHandleByIndex*`) with their device index, the others with none — counting
//! calls per device and symbol. A fault's latency is slept without holding the lock.
//!
//! # Safety
//! Every export is an `unsafe extern "C" fn` with NVML's contract: pointers the caller passes
//! are NULL or valid for the documented reads and writes for the duration of the call. NULL
//! where an output is required is `INVALID_ARGUMENT`; handles are checked against the ones this
//! library gave out and never dereferenced; no panic unwinds out (it becomes `UNKNOWN`).

#![allow(clippy::missing_safety_doc)] // The contract is NVML's, stated once above.

pub mod abi;
mod call;
mod device_clocks;
mod device_health;
mod device_identity;
mod device_links;
mod device_power;
mod device_util;
mod events;
mod gpm;
mod load;
mod objects;
mod process;
mod state;
mod system;

pub use device_clocks::*;
pub use device_health::*;
pub use device_identity::*;
pub use device_links::*;
pub use device_power::*;
pub use device_util::*;
pub use events::*;
pub use gpm::*;
pub use load::{DEFAULT_SCENARIO, ELAPSED_ENV, SCENARIO_ENV};
pub use process::*;
pub use system::*;

/// Fixes the load time as the library is loaded, so scenario time starts then and not at the
/// first call. Runs from the ELF `.init_array`; it only reads two clocks.
#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".init_array")]
static MARK_LOAD_TIME: extern "C" fn() = mark_load_time;

#[cfg(target_os = "linux")]
extern "C" fn mark_load_time() {
    let _ = state::loaded_at();
}

#[cfg(test)]
mod tests;
