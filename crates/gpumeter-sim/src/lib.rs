//! gpumeter's scenario engine: simulated GPU machines described in TOML.
//!
//! One engine serves both the `--demo` dashboard (through [`Simulator::snapshot_at`], with the
//! scripted faults already applied) and the fake `libnvidia-ml.so.1` (through
//! [`Simulator::truth_at`] and [`Simulator::fault`], which answers call by call). Scenarios are
//! data: the built-in ones live in `scenarios/*.toml` and are embedded at build time.
//!
//! Everything here is deterministic: the same scenario and elapsed time give the same reading.
//! No I/O, no wall clock, no randomness source beyond a seeded hash. Strings from scenarios
//! (process names, command lines) are passed through raw; sanitising is the consumer's job.

mod builtin;
mod demo_faults;
mod error;
mod faults;
mod gpm;
mod gpu;
mod health;
mod noise;
mod notice;
mod pricing;
mod processes;
mod scenario;
mod signal;
mod simulate;
mod validate;

pub use builtin::builtin_scenarios;
pub use error::ScenarioError;
pub use faults::{Fault, NvmlError, nvml_error_code, nvml_error_name};
pub use gpm::{GpmSpec, XidSpec};
pub use health::{ComputeModeSpec, GpuHealthSpec, NvLinkSpec, PreflightSpec};
pub use notice::InterruptionSpec;
pub use pricing::{Pricing, RateUnit};
pub use scenario::{
    FaultSpec, FireLabel, GpuSignal, GpuSpec, HostSpec, Labels, ProcessGpuSpec, ProcessKind,
    ProcessSpec, RepeatSpec, Scenario, ThreadSpec, ThrottleRule, WorkersSpec,
};
pub use signal::{Range, Signal, Wave};
pub use simulate::Simulator;
pub use validate::MAX_MIG_DEVICES;
