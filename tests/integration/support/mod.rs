//! Shared test harnesses.

pub mod fake_nvml;
pub mod serve;
pub mod tmux;
