//! Which scenario the library plays and on what clock, from the environment, read once on the
//! first `nvmlInit`:
//! - `GPUMETER_FAKE_NVML_SCENARIO`: a built-in scenario name (`training`, `mixed`, …) or a
//!   path to a scenario `.toml` file; unset means `training`.
//! - `GPUMETER_FAKE_NVML_ELAPSED_MS`: freezes scenario time at this many milliseconds (tests);
//!   unset means wall time since the library was loaded.
//! - any variable a process entry names in `pid_env` (its pid, when set).
//!
//! A problem is one line of text; `nvmlInit` prints it and returns `UNKNOWN`.

use gpumeter_sim::{Scenario, Simulator};

use crate::state::{ScenarioClock, World};

/// Names the scenario: a built-in name or a `.toml` path.
pub const SCENARIO_ENV: &str = "GPUMETER_FAKE_NVML_SCENARIO";
/// Freezes scenario time (milliseconds).
pub const ELAPSED_ENV: &str = "GPUMETER_FAKE_NVML_ELAPSED_MS";
/// Played when `GPUMETER_FAKE_NVML_SCENARIO` is unset.
pub const DEFAULT_SCENARIO: &str = "training";

/// The world the environment describes.
pub(crate) fn world_from_env() -> Result<World, String> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let name = env(SCENARIO_ENV).unwrap_or_else(|| DEFAULT_SCENARIO.to_string());
    let mut scenario = scenario(&name)?;
    scenario
        .resolve_pid_env(&name, env)
        .map_err(|e| one_line(&e.to_string()))?;
    let clock = match env(ELAPSED_ENV) {
        None => ScenarioClock::Wall,
        Some(v) => ScenarioClock::Frozen(
            v.trim()
                .parse()
                .map_err(|_| format!("{ELAPSED_ENV}=`{v}` is not a number of milliseconds"))?,
        ),
    };
    Ok(World::new(Simulator::new(scenario), clock))
}

/// A built-in name, or a file when it looks like a path (like `gpumeter --demo`).
fn scenario(name_or_path: &str) -> Result<Scenario, String> {
    if name_or_path.ends_with(".toml") || name_or_path.contains('/') {
        let text = std::fs::read_to_string(name_or_path)
            .map_err(|e| format!("cannot read scenario file {name_or_path}: {e}"))?;
        return Scenario::from_toml(name_or_path, &text).map_err(|e| one_line(&e.to_string()));
    }
    Scenario::builtin(name_or_path).ok_or_else(|| {
        let names: Vec<&str> = gpumeter_sim::builtin_scenarios()
            .iter()
            .map(|(n, _)| *n)
            .collect();
        format!(
            "{SCENARIO_ENV}: unknown scenario `{name_or_path}` (built-in: {}; or a path to a .toml file)",
            names.join(", ")
        )
    })
}

/// Scenario errors quote the offending line on a second line: keep it, on one line.
fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_builtin_names_the_choices() {
        let e = scenario("nope").err().unwrap();
        assert!(e.contains("unknown scenario `nope`"), "{e}");
        assert!(e.contains("training"), "{e}");
    }

    #[test]
    fn missing_file_names_the_file() {
        let e = scenario("/nonexistent/s.toml").err().unwrap();
        assert!(e.contains("/nonexistent/s.toml"), "{e}");
        assert!(!e.contains('\n'));
    }

    #[test]
    fn parse_errors_become_one_line() {
        let dir = std::env::temp_dir().join(format!("fake-nvml-load-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bad.toml");
        std::fs::write(&path, "name = \"x\"\ndescription = \"y\"\nbogus = 1\n").unwrap();
        let e = scenario(path.to_str().unwrap()).err().unwrap();
        assert!(e.contains("bad.toml:3:"), "{e}");
        assert!(e.contains("bogus"), "{e}");
        assert!(!e.contains('\n'), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
