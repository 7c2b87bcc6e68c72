//! gpumeter's integration tests: one test binary (linking is slow), a module per area.
// Always true in a test crate; it lets clippy.toml's allow-*-in-tests cover helpers, not only #[test] fns.
#![cfg(test)]
#![allow(dead_code)]

mod billing_cli;
mod billing_week;
mod check;
mod cli;
mod cli_help;
mod cloud;
mod config_cmd;
mod container;
mod corpus;
mod dashboard_kube;
mod fake_nvml;
mod fake_nvml_cadence;
mod fake_nvml_faults;
mod fake_nvml_gpm;
mod fake_nvml_mig;
mod fake_nvml_tui;
mod fleet;
mod fleet_tui;
mod insights;
mod kubernetes;
mod layering;
mod pynvml;
mod record;
mod serve;
mod serve_kube;
mod serve_load;
mod serve_prometheus;
mod signals;
mod startup;
mod support;
mod themes;
mod tui;
