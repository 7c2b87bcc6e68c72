//! The built-in scenarios, embedded from `scenarios/*.toml` at build time, in display order.

use std::sync::OnceLock;

use crate::scenario::Scenario;

const BUILTIN: [(&str, &str); 16] = [
    ("training", include_str!("../scenarios/training.toml")),
    ("cpu-starved", include_str!("../scenarios/cpu-starved.toml")),
    ("io-starved", include_str!("../scenarios/io-starved.toml")),
    ("idle", include_str!("../scenarios/idle.toml")),
    ("forgotten", include_str!("../scenarios/forgotten.toml")),
    ("gpu-lost", include_str!("../scenarios/gpu-lost.toml")),
    ("mixed", include_str!("../scenarios/mixed.toml")),
    ("rented", include_str!("../scenarios/rented.toml")),
    ("container", include_str!("../scenarios/container.toml")),
    ("hung", include_str!("../scenarios/hung.toml")),
    ("xid", include_str!("../scenarios/xid.toml")),
    ("oom-soon", include_str!("../scenarios/oom-soon.toml")),
    ("job-done", include_str!("../scenarios/job-done.toml")),
    ("shared", include_str!("../scenarios/shared.toml")),
    ("spot", include_str!("../scenarios/spot.toml")),
    ("kubernetes", include_str!("../scenarios/kubernetes.toml")),
];

/// The TOML text of a built-in scenario.
pub(crate) fn text(name: &str) -> Option<&'static str> {
    BUILTIN.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// (name, one-line description) of every built-in scenario, in display order. The descriptions
/// come from the TOML files themselves (parsed once).
pub fn builtin_scenarios() -> Vec<(&'static str, &'static str)> {
    static LIST: OnceLock<Vec<(&'static str, String)>> = OnceLock::new();
    LIST.get_or_init(|| {
        BUILTIN
            .iter()
            .filter_map(|(name, _)| Scenario::builtin(name).map(|s| (*name, s.description)))
            .collect()
    })
    .iter()
    .map(|(n, d)| (*n, d.as_str()))
    .collect()
}
