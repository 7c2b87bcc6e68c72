//! The arguments of each subcommand (`config`, `eval`, `fleet`, `record`, `check`, `serve`,
//! `watch`, `report`, `snapshot`), built from the shared option groups.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};

use super::options::*;
use super::parse::*;
use gpumeter_core::units::parse_duration;

#[derive(Debug, Args)]
pub struct ConfigCmdArgs {
    #[command(subcommand)]
    pub action: ConfigAction,
}

/// `gpumeter config …`.
#[derive(Debug, Clone, Subcommand)]
pub enum ConfigAction {
    /// Print the default configuration, every key commented (a starting config.toml).
    Default,
    /// Check a config file (default: yours) and print the settings it resolves
    /// to, each key with the file it came from. Exits 1 with the file, line and key on an error.
    Check {
        /// The file to check.
        #[arg(value_name = "PATH")]
        path: Option<PathBuf>,
    },
    /// List the files gpumeter reads, and which of them exist.
    Path,
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// A directory of labelled timelines (*.toml scenario files with a [labels] table).
    #[arg(value_name = "CORPUS")]
    pub corpus: PathBuf,

    /// Print JSON instead of the tables.
    #[arg(long)]
    pub json: bool,

    /// Score the rule settings of this config file's [alerts] tables instead of the defaults.
    #[arg(long, value_name = "PATH", help_heading = "Files")]
    pub config: Option<PathBuf>,
}

/// `gpumeter fleet`.
#[derive(Debug, Args)]
#[command(
    after_help = "Hosts file: one http(s)://host[:port] a line (port 9958 when left out); `#` starts a comment; after the address, optional token_file=PATH (relative to the file) and name=NAME.\nExample line: https://gpu-7.example.com:9958 token_file=tokens/gpu-7 name=trainer-7"
)]
pub struct FleetArgs {
    /// The servers to watch: http(s)://host[:port] of each `gpumeter serve`.
    #[arg(value_name = "URL")]
    pub urls: Vec<String>,

    /// Read the servers from this file (one a line; see below).
    #[arg(long, value_name = "FILE")]
    pub hosts: Option<PathBuf>,

    /// Send `Authorization: Bearer <token>` with the token in this file to every host that
    /// names none of its own (token_file= in the hosts file).
    #[arg(long, value_name = "PATH")]
    pub token_file: Option<PathBuf>,

    /// Poll every host once, print a table (or --json) and exit 0, down hosts marked.
    #[arg(long)]
    pub once: bool,

    /// With --once: print JSON (per-host rows and totals) instead of a table.
    #[arg(long, requires = "once")]
    pub json: bool,

    /// Time between two polls of a host that answers (a failing one is asked less often,
    /// up to once a minute).
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_interval, allow_hyphen_values = true)]
    pub interval: Duration,

    /// How long one request may take before the host is marked slow.
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_timeout, allow_hyphen_values = true)]
    pub timeout: Duration,

    /// Requests in flight at once.
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub concurrency: u16,

    #[command(flatten)]
    pub ui: LookArgs,
}

#[derive(Debug, Args)]
pub struct RecordCmdArgs {
    /// Where to record (NDJSON; zstd-compressed when the name ends in .zst). Must not exist.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Stop after this long (e.g. 8h); default: until interrupted.
    #[arg(long = "for", value_name = "DURATION", value_parser = parse_duration)]
    pub for_: Option<Duration>,

    /// With --demo: step a simulated clock by the interval as fast as possible (no waiting).
    #[arg(long)]
    pub fast: bool,

    #[command(flatten)]
    pub caps: RecordCaps,
    #[command(flatten)]
    pub source: SourceArgs,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The GPUs that were paid for, e.g. 8xH100, 4xA100, 8 or H100 (a mismatch fails).
    #[arg(long, value_name = "N×MODEL", value_parser = parse_expect)]
    pub expect: Option<gpumeter_core::expect::Expect>,

    /// The Python the job will run, to read its torch build (default: python3 or python on
    /// PATH). torch is not imported: CUDA is not initialised.
    #[arg(long, value_name = "PATH")]
    pub python: Option<PathBuf>,

    /// Probe the dataset's directory: at most ~2 s and 256 MiB read (existing files, read
    /// only; a temporary file there only when it holds too little), and its file system.
    #[arg(long, value_name = "PATH")]
    pub data: Option<PathBuf>,

    /// Print the versioned JSON report instead of text.
    #[arg(long)]
    pub json: bool,

    /// Check a built-in simulated machine instead of this one (default scenario: rented, a
    /// fresh 8×H100 box with two hazards), or a scenario file (a path ending in .toml).
    #[arg(long, value_name = "SCENARIO", num_args = 0..=1, default_missing_value = "rented", help_heading = "Source")]
    pub demo: Option<String>,

    /// Load NVML from this file instead of the system's libnvidia-ml.so.1.
    #[arg(
        long,
        value_name = "PATH",
        env = "GPUMETER_NVML_LIB",
        help_heading = "Source"
    )]
    pub nvml_lib: Option<PathBuf>,

    /// Read this config file (for the rate and budget) instead of
    /// $XDG_CONFIG_HOME/gpumeter/config.toml.
    #[arg(long, value_name = "PATH", help_heading = "Files")]
    pub config: Option<PathBuf>,

    #[command(flatten)]
    pub pricing: PricingArgs,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on. Loopback by default; any other address needs a token
    /// (--token-file or GPUMETER_SERVE_TOKEN).
    #[arg(long, value_name = "ADDR:PORT", default_value = gpumeter_core::endpoint::DEFAULT_LISTEN, value_parser = gpumeter_core::endpoint::parse_listen)]
    pub listen: std::net::SocketAddr,

    /// Require `Authorization: Bearer <token>` with the token in this file (mode 600).
    /// The token is never taken from the command line.
    #[arg(long, value_name = "PATH")]
    pub token_file: Option<PathBuf>,

    /// Also export per-process series (pid, user, container, command), for the GPU
    /// processes holding the most VRAM.
    #[arg(long)]
    pub process_metrics: bool,

    /// With --process-metrics: how many processes at most (the rest are counted in
    /// gpumeter_process_series_dropped).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 50,
        requires = "process_metrics"
    )]
    pub process_limit: usize,

    /// Also export the metric names another exporter's dashboards read (dcgm: the DCGM
    /// exporter's DCGM_FI_DEV_* families). These do not pass promtool's lint.
    #[arg(long, value_name = "NAME")]
    pub compat: Option<Compat>,

    #[command(flatten)]
    pub kube: KubeArgs,

    #[command(flatten)]
    pub autostop: AutostopArgs,

    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub files: ConfigArgs,
    #[command(flatten)]
    pub pricing: PricingArgs,
    #[command(flatten)]
    pub recording: RecordArgs,
}

/// Metric names of another exporter, for `serve --compat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Compat {
    /// NVIDIA DCGM exporter names (DCGM_FI_DEV_GPU_UTIL, DCGM_FI_DEV_FB_USED, …).
    Dcgm,
}

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// Stop after this long (e.g. 2h, 7d); default: run until killed.
    #[arg(long = "for", value_name = "DURATION", value_parser = parse_duration)]
    pub for_: Option<Duration>,

    /// With --demo: step a simulated clock by the interval as fast as possible (no waiting).
    #[arg(long)]
    pub fast: bool,

    #[command(flatten)]
    pub kube: KubeArgs,

    #[command(flatten)]
    pub autostop: AutostopArgs,

    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub files: ConfigArgs,
    #[command(flatten)]
    pub pricing: PricingArgs,
    #[command(flatten)]
    pub recording: RecordArgs,
}

/// Autostop, as `watch` and `serve` take it.
#[derive(Debug, Clone, Default, Args)]
pub struct AutostopArgs {
    /// Run the stop command once the machine has been idle this long (GPUs idle, host CPU and
    /// network quiet), e.g. 30m; warns 5 and 1 minutes before (also with `wall`).
    #[arg(long, value_name = "DURATION", value_parser = parse_autostop, allow_hyphen_values = true)]
    pub autostop: Option<Duration>,

    /// The command autostop runs, split into words like a shell would but run without one,
    /// e.g. 'sudo shutdown -h now' (default: [autostop] command in the config file).
    #[arg(long, value_name = "COMMAND", value_parser = parse_command)]
    pub stop_cmd: Option<CommandLine>,
}

impl AutostopArgs {
    /// What the session's autostop guard is asked for.
    pub fn flags(&self) -> gpumeter_core::session::AutostopFlags {
        gpumeter_core::session::AutostopFlags {
            after_ms: self
                .autostop
                .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX)),
            command: self.stop_cmd.as_ref().map(|c| c.0.clone()),
        }
    }
}

/// A command line split into its words (no shell will run it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandLine(pub Vec<String>);

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// How far back to report, e.g. 24h, 7d, 30d.
    #[arg(long, value_name = "DURATION", default_value = "7d", value_parser = parse_duration)]
    pub since: Duration,

    /// Print JSON instead of a table.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,

    /// Print CSV instead of a table.
    #[arg(long)]
    pub csv: bool,

    #[command(flatten)]
    pub files: ConfigArgs,
}

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// Print the versioned JSON schema instead of a table.
    #[arg(long)]
    pub json: bool,

    /// With --demo: how far into the scenario to read, e.g. 90s, 5m (default 60s).
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_at, allow_hyphen_values = true)]
    pub at: Duration,

    #[command(flatten)]
    pub kube: KubeArgs,

    #[command(flatten)]
    pub source: SourceArgs,
    // With --json: the config and prices the `billing` block is computed from.
    #[command(flatten)]
    pub files: ConfigArgs,
    #[command(flatten)]
    pub pricing: PricingArgs,
}
