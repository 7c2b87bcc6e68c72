//! Turning command-line choices into a running [`Source`]: the built-in demo, a scenario file, or
//! this machine's NVML; and what wraps any source (a spot notice, Kubernetes pods, a
//! recording). Shared by the dashboard and the subcommands.

use std::path::Path;

use gpumeter_sim::Scenario;

use gpumeter_core::clock::SharedClock;
use gpumeter_core::config::DemoPricing;
use gpumeter_core::source::local::LocalSource;
use gpumeter_core::source::sim::SimSource;
use gpumeter_core::source::{Source, SourceError};

/// Why no source could be opened. `main` maps these to exit codes.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// NVML could not be loaded or initialised (exit code 3).
    #[error("{0}")]
    NvmlUnavailable(String),
    /// The named demo scenario or scenario file is not usable.
    #[error("{0}")]
    Scenario(String),
    /// `--demo NAME` names no built-in scenario: a bad argument (exit code 2).
    #[error("{0}")]
    UnknownDemo(String),
    /// Options that do not go together or a value out of its bounds, found past clap: a bad
    /// argument (exit code 2).
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Source(SourceError),
    /// The recording to replay cannot be read.
    #[error(transparent)]
    Replay(#[from] gpumeter_core::recording::ReadError),
    /// The recording to write cannot be created.
    #[error(transparent)]
    Record(#[from] gpumeter_core::recording::RecordError),
}

impl LaunchError {
    /// The process exit code documented in docs/cli.md.
    pub fn exit_code(&self) -> u8 {
        match self {
            LaunchError::NvmlUnavailable(_) => 3,
            LaunchError::UnknownDemo(_) | LaunchError::Usage(_) => 2,
            _ => 1,
        }
    }
}

/// Loads a demo scenario: a built-in name, or a `.toml` file path.
pub fn load_scenario(name_or_path: &str) -> Result<Scenario, LaunchError> {
    let looks_like_path = name_or_path.ends_with(".toml") || name_or_path.contains('/');
    if looks_like_path {
        let text = gpumeter_core::textfile::read_text(
            std::path::Path::new(name_or_path),
            gpumeter_core::textfile::MAX_TEXT_FILE,
        )
        .map_err(|e| {
            LaunchError::Scenario(format!("cannot read scenario file {name_or_path}: {e}"))
        })?;
        return Scenario::from_toml(name_or_path, &text)
            .map_err(|e| LaunchError::Scenario(e.to_string()));
    }
    Scenario::builtin(name_or_path).ok_or_else(|| {
        let names: Vec<&str> = gpumeter_sim::builtin_scenarios()
            .iter()
            .map(|(n, _)| *n)
            .collect();
        // A long argument is quoted cut short, not echoed whole.
        let shown: String = name_or_path.chars().take(80).collect();
        let ellipsis = if shown.len() < name_or_path.len() { "…" } else { "" };
        let near = names
            .iter()
            .map(|n| (strsim::jaro_winkler(n, name_or_path), *n))
            .filter(|(score, _)| *score >= 0.8)
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, n)| format!(" — did you mean '{n}'?"))
            .unwrap_or_default();
        LaunchError::UnknownDemo(format!(
            "unknown demo scenario '{shown}{ellipsis}'{near} (built-in: {}; or give a path to a .toml file)",
            names.join(", ")
        ))
    })
}

/// The `--demo --list` text: one line per built-in scenario.
pub fn scenario_list() -> String {
    let list = gpumeter_sim::builtin_scenarios();
    let width = list.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    list.iter()
        .map(|(name, desc)| format!("{name:<width$}  {desc}\n"))
        .collect()
}

/// A scenario's own `[pricing]`, as the config layer takes it (so `--demo` shows money moving
/// without a config file; the user's file and flags still win).
pub fn demo_pricing(scenario: &Scenario) -> Option<DemoPricing> {
    scenario.pricing.as_ref().map(|p| DemoPricing {
        scenario: scenario.name.clone(),
        rate: p.rate_text.clone(),
        currency: Some(p.currency.clone()),
        budget_micros: p.budget_micros,
    })
}

/// Opens the source the user asked for.
pub fn open_source(
    demo: Option<&str>,
    nvml_lib: Option<&Path>,
    clock: SharedClock,
) -> Result<Box<dyn Source>, LaunchError> {
    match demo {
        Some(name) => Ok(Box::new(SimSource::new(load_scenario(name)?, clock))),
        None => match LocalSource::open(nvml_lib).map(|s| s.with_clock(clock)) {
            Ok(src) => Ok(Box::new(src)),
            Err(SourceError::NvmlUnavailable(msg)) => Err(LaunchError::NvmlUnavailable(msg)),
            Err(e) => Err(LaunchError::Source(e)),
        },
    }
}

/// Descriptor-table size reserved at start: the host scanner keeps the `stat` and `children`
/// files of up to 256 processes open between ticks (`source::host::scan`), about 530
/// descriptors with the rest, and the kernel sizes the table in powers of two.
const RESERVED_DESCRIPTORS: u64 = 1024;

/// Grows this process's file-descriptor table to [`RESERVED_DESCRIPTORS`] (or the soft
/// `RLIMIT_NOFILE`, if lower) now, while only one thread runs. Growing it later, from the
/// collector thread, makes the kernel wait for an RCU grace period each time the table doubles
/// (it is shared between threads): 3–4 such waits, ~10 ms each on a busy machine, delayed the
/// first reading. The table never shrinks, so one `dup` to a high number and its close are
/// enough; it costs ~8 KiB. Best effort: a failure changes nothing but that wait.
pub fn reserve_descriptor_table() {
    use rustix::process::{Resource, getrlimit};
    let soft = getrlimit(Resource::Nofile).current.unwrap_or(u64::MAX);
    let top = RESERVED_DESCRIPTORS.min(soft).saturating_sub(1);
    let Ok(top) = i32::try_from(top) else { return };
    if top < 64 {
        return;
    }
    // Any open descriptor will do; stderr is the one most likely to be open. The duplicate is
    // closed when it drops, at once.
    let _ = rustix::io::fcntl_dupfd_cloexec(std::io::stderr(), top);
}

/// On a spot box with metadata allowed, the interruption notice watched on its own thread
/// (said on stderr); on a spot box without metadata, a note that it is not. `None` for a demo
/// or a replay, which are not this machine.
pub fn spot_watch(
    settings: &gpumeter_core::config::Settings,
    simulated: bool,
) -> Option<gpumeter_core::cloud::watch::NoticeWatch> {
    use gpumeter_core::cloud::{Lifecycle, metadata::Endpoints, watch};
    let found = settings.whereabouts.as_ref().filter(|_| !simulated)?;
    match watch::worth_watching(found, settings.cloud.lifecycle) {
        Some(provider) => {
            eprintln!(
                "gpumeter: spot instance: watching {provider}'s interruption notice every {} s",
                gpumeter_core::cloud::notice::POLL_EVERY.as_secs()
            );
            watch::NoticeWatch::start(Endpoints::from_process(), provider)
        }
        None => {
            if found.whereabouts.lifecycle == Some(Lifecycle::Spot) && !found.asked_metadata {
                eprintln!(
                    "gpumeter: spot instance, but metadata calls are off: its interruption \
                     notice is not watched ([cloud] metadata = true or --cloud-metadata)"
                );
            }
            None
        }
    }
}

/// The same source, its readings carrying the spot notice `watch` reads (when there is one).
pub fn with_notice(
    source: Box<dyn Source>,
    watch: Option<gpumeter_core::cloud::watch::NoticeWatch>,
) -> Box<dyn Source> {
    match watch {
        Some(w) => Box::new(gpumeter_core::source::notice::Noticed::new(source, w)),
        None => source,
    }
}

/// `source` with each reading's GPUs and processes named by their Kubernetes pods, asked of
/// the kubelet's pod-resources socket at `socket` on a thread of its own (`None`: `source` as
/// it is). The dashboard, `watch` and `serve` all wrap their source here; `snapshot` through
/// [`with_pods_answered`].
pub fn with_pods(source: Box<dyn Source>, socket: Option<&Path>) -> Box<dyn Source> {
    attributed(source, socket, false)
}

/// [`with_pods`] for one reading (`snapshot`): waits for the kubelet's first answer (or its
/// failure), within the ask's own bound, so the reading carries the kubelet's names and not
/// only the UIDs of the processes' cgroups.
pub fn with_pods_answered(source: Box<dyn Source>, socket: Option<&Path>) -> Box<dyn Source> {
    attributed(source, socket, true)
}

fn attributed(source: Box<dyn Source>, socket: Option<&Path>, wait: bool) -> Box<dyn Source> {
    use gpumeter_kube::{Attributed, KubeOptions, PodAttribution};
    let Some(socket) = socket else {
        return source;
    };
    let options = KubeOptions {
        socket: socket.to_path_buf(),
        ..KubeOptions::default()
    };
    // The ask gives up after its timeout; a little more covers starting the thread.
    let limit = options.timeout + std::time::Duration::from_millis(500);
    let asking = PodAttribution::start(options);
    if wait {
        asking.wait_first(limit);
    }
    Box::new(Attributed::new(source, asking))
}

/// Opens a recording as the source (`--replay FILE`).
pub fn open_replay(path: &Path) -> Result<Box<dyn Source>, LaunchError> {
    Ok(Box::new(gpumeter_core::source::replay::ReplaySource::open(
        path,
    )?))
}

/// The same source, each reading also recorded to `path` (`--record FILE`); the file is
/// created now, so a bad path fails before anything runs.
pub fn record_to(
    source: Box<dyn Source>,
    path: &Path,
    opts: gpumeter_core::recording::RecordOptions,
) -> Result<Box<dyn Source>, LaunchError> {
    let writer = gpumeter_core::recording::Writer::create(path, opts)?;
    Ok(Box::new(gpumeter_core::source::tee::Tee::new(
        source, writer,
    )))
}

/// The built-in scenario a recording of a demo was taken from (`demo:NAME` in its header), so a
/// replayed demo is priced as the demo was.
pub fn replayed_scenario(path: &Path) -> Option<Scenario> {
    let reader = gpumeter_core::recording::Reader::open(path).ok()?;
    let name = reader.header().source.strip_prefix("demo:")?.to_string();
    Scenario::builtin(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_scenario_names_the_choices() {
        let e = load_scenario("nope").unwrap_err().to_string();
        assert!(e.contains("unknown demo scenario 'nope'"), "{e}");
        assert!(e.contains("training"), "{e}");
    }

    #[test]
    fn missing_scenario_file_names_the_file() {
        let e = load_scenario("/nonexistent/x.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("/nonexistent/x.toml"), "{e}");
    }

    /// The table is grown to the reserve (or the limit), and no descriptor is left open.
    #[test]
    fn the_descriptor_table_is_grown_once_and_nothing_stays_open() {
        fn fd_size() -> u64 {
            let status = std::fs::read_to_string("/proc/self/status").unwrap();
            let line = status.lines().find(|l| l.starts_with("FDSize:")).unwrap();
            line["FDSize:".len()..].trim().parse().unwrap()
        }
        let soft = rustix::process::getrlimit(rustix::process::Resource::Nofile)
            .current
            .unwrap_or(u64::MAX);
        reserve_descriptor_table();
        let want = RESERVED_DESCRIPTORS.min(soft);
        assert!(fd_size() >= want, "FDSize {} < {want}", fd_size());
        let top = want - 1;
        assert!(
            !std::path::Path::new(&format!("/proc/self/fd/{top}")).exists(),
            "descriptor {top} left open"
        );
    }

    #[test]
    fn list_has_one_line_per_builtin() {
        let list = scenario_list();
        assert_eq!(
            list.lines().count(),
            gpumeter_sim::builtin_scenarios().len()
        );
        assert!(list.lines().any(|l| l.starts_with("cpu-starved ")));
    }
}
