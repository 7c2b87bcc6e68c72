//! The built-in demo: a [`Source`] over a `gpumeter-sim` scenario, advancing with a [`Clock`].
//!
//! Elapsed scenario time is the clock's now minus its now at creation (never negative; a clock
//! that jumps back replays earlier scenario time), optionally sped up. Scenario strings may be
//! hostile on purpose (the `mixed` scenario): like every source, this one returns process names,
//! commands, users and containers already passed through [`sanitize`], so consumers can rely on
//! every snapshot holding safe strings.
//!
//! [`Clock`]: crate::clock::Clock

use gpumeter_model::{SharedStr, Snapshot};
use gpumeter_sim::{Scenario, Simulator};

use crate::clock::SharedClock;
use crate::sanitize::{MAX_COMMAND_CHARS, MAX_NAME_CHARS, sanitize};
use crate::source::{Source, SourceError};

/// A simulated machine playing a scenario in clock time.
pub struct SimSource {
    sim: Simulator,
    clock: SharedClock,
    start_unix_ms: i64,
    speed: u32,
}

impl SimSource {
    /// Starts `scenario` at the clock's current time.
    pub fn new(scenario: Scenario, clock: SharedClock) -> SimSource {
        let start_unix_ms = clock.now_unix_ms();
        SimSource {
            sim: Simulator::new(scenario),
            clock,
            start_unix_ms,
            speed: 1,
        }
    }

    /// Plays the scenario `factor` times faster than the clock (0 is taken as 1).
    pub fn speed(mut self, factor: u32) -> SimSource {
        self.speed = factor.max(1);
        self
    }

    /// The scenario being played.
    pub fn scenario(&self) -> &Scenario {
        self.sim.scenario()
    }
}

impl Source for SimSource {
    fn sample(&mut self) -> Result<Snapshot, SourceError> {
        let now = self.clock.now_unix_ms();
        let elapsed_ms = u64::try_from(now.saturating_sub(self.start_unix_ms))
            .unwrap_or(0)
            .saturating_mul(u64::from(self.speed));
        let mut snap = self.sim.snapshot_at(elapsed_ms, now);
        snap.source = self.label();
        sanitize_snapshot(&mut snap);
        Ok(snap)
    }

    fn label(&self) -> String {
        format!("demo:{}", self.sim.scenario().name)
    }
}

/// Scenario text is data from a file: clean it like anything read from /proc.
fn sanitize_snapshot(snap: &mut Snapshot) {
    let short = |s: &mut Option<String>| {
        if let Some(v) = s {
            *v = sanitize(v, MAX_NAME_CHARS);
        }
    };
    // A shared string is replaced only when cleaning changes it (it stays shared otherwise).
    let shared = |s: &mut Option<SharedStr>, max: usize| {
        if let Some(v) = s {
            let clean = sanitize(v, max);
            if *clean != **v {
                *v = clean.into();
            }
        }
    };
    for p in &mut snap.processes {
        shared(&mut p.name, MAX_NAME_CHARS);
        shared(&mut p.user, MAX_NAME_CHARS);
        shared(&mut p.container, MAX_NAME_CHARS);
        shared(&mut p.command, MAX_COMMAND_CHARS);
        shared(&mut p.parent_name, MAX_NAME_CHARS);
    }
    for m in &mut snap.host.network_mounts {
        let clean = sanitize(m, MAX_COMMAND_CHARS);
        if *clean != **m {
            *m = clean.into();
        }
    }
    for g in &mut snap.gpus {
        shared(&mut g.name, MAX_NAME_CHARS);
    }
    short(&mut snap.system.hostname);
    for w in &mut snap.warnings {
        *w = sanitize(w, MAX_COMMAND_CHARS);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::clock::FakeClock;

    fn source(name: &str, clock: &FakeClock) -> SimSource {
        SimSource::new(Scenario::builtin(name).unwrap(), Arc::new(clock.clone()))
    }

    #[test]
    fn elapsed_follows_the_clock_from_creation() {
        let clock = FakeClock::new(1_700_000_000_000);
        let mut src = source("gpu-lost", &clock);
        assert_eq!(src.label(), "demo:gpu-lost");
        let first = src.sample().unwrap();
        assert_eq!(first.source, "demo:gpu-lost");
        assert_eq!(first.taken_at_unix_ms, 1_700_000_000_000);
        assert_eq!(first.gpus[2].state, gpumeter_model::GpuState::Ok);
        clock.advance_ms(40_000);
        assert_eq!(
            src.sample().unwrap().gpus[2].state,
            gpumeter_model::GpuState::Lost
        );
        // A clock before the start clamps to elapsed 0 rather than failing.
        clock.set_ms(1_600_000_000_000);
        assert_eq!(
            src.sample().unwrap().gpus[2].state,
            gpumeter_model::GpuState::Ok
        );
    }

    #[test]
    fn speed_multiplies_elapsed_time() {
        let clock = FakeClock::new(0);
        let mut src = source("gpu-lost", &clock).speed(10);
        clock.advance_ms(3_500);
        assert_eq!(
            src.sample().unwrap().gpus[2].state,
            gpumeter_model::GpuState::Lost
        );
    }

    #[test]
    fn a_hostile_parent_name_or_mount_comes_out_sanitized() {
        let clock = FakeClock::new(0);
        let text = "name = \"t\"\ndescription = \"t\"\n[host]\nnetwork_mounts = [\"nfs4 /d\\u001b[31mata\"]\n[[gpu]]\ncount = 1\nname = \"G\"\nmemory_total_gib = 80\n[[process]]\npid = 10\nparent = \"ba\\u001b]0;x\\u0007sh\"\ngpus = [{ gpu = 0, memory_gib = { const = 1 } }]\n";
        let scenario = Scenario::from_toml("t.toml", text).unwrap();
        let snap = SimSource::new(scenario, Arc::new(clock)).sample().unwrap();
        let parent = snap.processes[0].parent_name.as_deref().unwrap();
        assert!(!parent.chars().any(char::is_control), "{parent:?}");
        let mount = &snap.host.network_mounts[0];
        assert!(!mount.chars().any(char::is_control), "{mount:?}");
        assert!(mount.starts_with("nfs4 /d"), "{mount:?}");
    }

    #[test]
    fn hostile_scenario_strings_come_out_sanitized() {
        let clock = FakeClock::new(0);
        let snap = source("mixed", &clock).sample().unwrap();
        let evil = snap.processes.iter().find(|p| p.pid == 734_001).unwrap();
        for s in [&evil.name, &evil.user, &evil.container, &evil.command] {
            let s = s.as_deref().unwrap();
            assert!(!s.chars().any(char::is_control), "{s:?}");
        }
        assert!(evil.command.as_deref().unwrap().chars().count() <= MAX_COMMAND_CHARS + 1);
        assert_eq!(evil.name.as_deref(), Some("evilx"));
    }
}
