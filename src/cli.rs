//! The command line: what a user can ask for, parsed by clap. Parsing only; `main.rs` acts on it.
//!
//! Options come in groups, one struct per concern ([`SourceArgs`], [`ConfigArgs`],
//! [`PricingArgs`], [`UiArgs`]); the dashboard (no subcommand) takes them all, and each
//! subcommand flattens only the groups it reads, so its `--help` lists only what it uses.
//! A group given before the subcommand (`gpumeter --demo idle watch`) still counts: see
//! [`SourceArgs::or`] and friends.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::billing::{Budget, Rate};
use crate::config::{CliPricing, DemoPricing, Env, LoadOptions};
use crate::money::Currency;
use crate::units::parse_duration;

/// The interval when none is given.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(1);

/// Watch rented GPUs: utilization, memory, power and processes, with the bill beside them.
#[derive(Debug, Parser)]
#[command(name = "gpumeter", version, about, long_about = None)]
#[command(
    after_help = "Exit codes: 0 ok, 1 error, 2 bad arguments, 3 NVML unavailable (no driver or library).\n\
Try it without a GPU: gpumeter --demo   (list scenarios: gpumeter --demo --list)"
)]
pub struct Cli {
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub files: ConfigArgs,
    #[command(flatten)]
    pub pricing: PricingArgs,
    #[command(flatten)]
    pub ui: UiArgs,
    #[command(flatten)]
    pub recording: RecordArgs,

    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Where readings come from.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Source")]
pub struct SourceArgs {
    /// Run on a built-in simulated machine instead of the local GPUs (default scenario:
    /// training), or on a scenario file (a path ending in .toml).
    #[arg(long, value_name = "SCENARIO", num_args = 0..=1, default_missing_value = "training")]
    pub demo: Option<String>,

    /// With --demo: list the built-in scenarios and exit.
    #[arg(long, requires = "demo")]
    pub list: bool,

    /// Load NVML from this file instead of the system's libnvidia-ml.so.1.
    #[arg(long, value_name = "PATH", env = "GPUMETER_NVML_LIB")]
    pub nvml_lib: Option<PathBuf>,

    /// Time between readings, e.g. 1s, 500ms, 2s (at least 100ms) [default: 1s].
    #[arg(long, value_name = "DURATION", value_parser = parse_interval)]
    pub interval: Option<Duration>,

    /// Play a recording (from `gpumeter record` or --record) instead of reading the GPUs.
    #[arg(long, value_name = "FILE", conflicts_with = "demo")]
    pub replay: Option<PathBuf>,
}

impl SourceArgs {
    /// These options, each unset one taken from `outer` (given before the subcommand).
    pub fn or(&self, outer: &SourceArgs) -> SourceArgs {
        SourceArgs {
            demo: self.demo.clone().or_else(|| outer.demo.clone()),
            list: self.list || outer.list,
            nvml_lib: self.nvml_lib.clone().or_else(|| outer.nvml_lib.clone()),
            interval: self.interval.or(outer.interval),
            replay: self.replay.clone().or_else(|| outer.replay.clone()),
        }
    }

    pub fn interval(&self) -> Duration {
        self.interval.unwrap_or(DEFAULT_INTERVAL)
    }
}

/// The files gpumeter reads and writes.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Files")]
pub struct ConfigArgs {
    /// Read this config file instead of $XDG_CONFIG_HOME/gpumeter/config.toml.
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,

    /// Keep the spend ledger in this file instead of $XDG_STATE_HOME/gpumeter/ledger.sqlite.
    #[arg(long, value_name = "PATH")]
    pub ledger: Option<PathBuf>,

    /// Do not read or write the spend ledger.
    #[arg(long, conflicts_with = "ledger")]
    pub no_ledger: bool,
}

impl ConfigArgs {
    /// These options, each unset one taken from `outer` (given before the subcommand).
    pub fn or(&self, outer: &ConfigArgs) -> ConfigArgs {
        ConfigArgs {
            config: self.config.clone().or_else(|| outer.config.clone()),
            ledger: self.ledger.clone().or_else(|| outer.ledger.clone()),
            no_ledger: self.no_ledger || outer.no_ledger,
        }
    }
}

/// Recording the readings as they are taken (`--record FILE`).
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Recording")]
pub struct RecordArgs {
    /// Also record every reading to FILE (NDJSON; zstd-compressed when FILE ends in .zst).
    /// FILE must not exist yet.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,

    #[command(flatten)]
    pub caps: RecordCaps,
}

/// Size caps of a recording.
#[derive(Debug, Clone, Default, Args)]
pub struct RecordCaps {
    /// Rotate the recording before a file grows past this size (e.g. 100M, 2G): FILE becomes
    /// FILE.1, and so on.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_size: Option<u64>,

    /// With --max-size: how many files to keep, the current one included.
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_files: u32,
}

/// What the machine costs.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Pricing")]
pub struct PricingArgs {
    /// What the machine costs: 2.49/h (per instance-hour), 3.10/gpu-h (per GPU-hour),
    /// 2000/month (flat monthly). Overrides the config file.
    #[arg(long, value_name = "RATE", value_parser = parse_rate, allow_hyphen_values = true)]
    pub rate: Option<Rate>,

    /// A spend ceiling: 500 (whole run), 500/day, 500/month, 500/run.
    #[arg(long, value_name = "AMOUNT[/PERIOD]", value_parser = parse_budget, allow_hyphen_values = true)]
    pub budget: Option<Budget>,

    /// Currency of the rate and budget (ISO code: USD, EUR, GBP, JPY, …).
    #[arg(long, value_name = "CODE", value_parser = parse_currency)]
    pub currency: Option<Currency>,
}

impl PricingArgs {
    /// These options, each unset one taken from `outer` (given before the subcommand).
    pub fn or(&self, outer: &PricingArgs) -> PricingArgs {
        PricingArgs {
            rate: self.rate.or(outer.rate),
            budget: self.budget.or(outer.budget),
            currency: self.currency.or(outer.currency),
        }
    }
}

/// How the dashboard looks.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Display")]
pub struct UiArgs {
    /// Draw without colours (also honoured: the NO_COLOR environment variable).
    #[arg(long)]
    pub no_color: bool,

    /// The dashboard's colours: a built-in theme (default, light, high-contrast, solarized-dark,
    /// colour-blind, mono), one of yours ($XDG_CONFIG_HOME/gpumeter/themes/NAME.toml) or a theme
    /// file (a path ending in .toml). Overrides [ui] theme in the config file.
    #[arg(long, value_name = "NAME|PATH")]
    pub theme: Option<String>,

    /// With --replay: start the dashboard this far into the recording (90s, 2h) or at this
    /// UTC time of day (HH:MM, the first time it comes).
    #[arg(long, value_name = "DURATION|HH:MM", value_parser = crate::ui::replay::parse_start)]
    pub start: Option<crate::ui::replay::StartAt>,
    /// Look, don't touch (shared boxes, demos): no signals or renice from the process table,
    /// no autostop, no command hooks. Also [ui] readonly = true.
    #[arg(long)]
    pub readonly: bool,

    /// ASCII only: no braille charts, no box-drawing borders (PuTTY, serial consoles, web
    /// terminals). Also [ui] ascii = true.
    #[arg(long)]
    pub ascii: bool,
}

impl Cli {
    /// An option given before the subcommand that the subcommand does not use (`gpumeter
    /// --theme mono report`): named, so it is refused instead of ignored. `--nvml-lib` is left
    /// out: it also comes from `GPUMETER_NVML_LIB`, which may be set for every command.
    pub fn misplaced_option(&self) -> Option<(&'static str, &'static str)> {
        let (name, source, files, pricing, ui) = match &self.command {
            None | Some(Command::Completions { .. } | Command::Man) => return None,
            Some(Command::Snapshot(_)) => ("snapshot", true, true, true, false),
            Some(Command::Watch(_)) => ("watch", true, true, true, false),
            Some(Command::Serve(_)) => ("serve", true, true, true, false),
            Some(Command::Report(_)) => ("report", false, true, false, false),
            Some(Command::Check(_)) => ("check", true, true, true, false),
            Some(Command::Record(_)) => ("record", true, false, false, false),
            Some(Command::Fleet(_)) => ("fleet", false, false, false, true),
            // `config check PATH` names its file itself.
            Some(Command::Config(_)) => ("config", false, false, false, false),
            Some(Command::Eval(_)) => ("eval", false, false, false, false),
        };
        // `check` reads --demo, --list and --config of these groups, not the rest.
        let check = name == "check";
        // `--record` before the subcommand counts for the front-ends that run readings.
        let rec = matches!(self.command, Some(Command::Watch(_) | Command::Serve(_)));
        let r = &self.recording;
        let s = &self.source;
        let f = &self.files;
        let p = &self.pricing;
        let u = &self.ui;
        let given = [
            (source, "--demo", s.demo.is_some()),
            (source, "--list", s.list),
            (source && !check, "--interval", s.interval.is_some()),
            (source && !check, "--replay", s.replay.is_some()),
            (rec, "--record", r.record.is_some()),
            (rec, "--max-size", r.caps.max_size.is_some()),
            // `eval` reads --config (for the rule settings), not the ledger.
            (files || name == "eval", "--config", f.config.is_some()),
            (files && !check, "--ledger", f.ledger.is_some()),
            (files && !check, "--no-ledger", f.no_ledger),
            (pricing, "--rate", p.rate.is_some()),
            (pricing, "--budget", p.budget.is_some()),
            (pricing, "--currency", p.currency.is_some()),
            (ui, "--theme", u.theme.is_some()),
            (ui, "--no-color", u.no_color),
            (ui, "--start", u.start.is_some()),
            (ui, "--readonly", u.readonly),
            (ui, "--ascii", u.ascii),
        ];
        given
            .into_iter()
            .find(|(used, _, set)| *set && !used)
            .map(|(_, flag, _)| (flag, name))
    }
}

/// What to load from the config file and the flags. `ui` is `None` for commands that draw
/// nothing; `demo` is a demo scenario's own prices.
pub fn load_options(
    files: &ConfigArgs,
    pricing: &PricingArgs,
    ui: Option<&UiArgs>,
    demo: Option<DemoPricing>,
) -> LoadOptions {
    LoadOptions {
        config_path: files.config.clone(),
        env: Env::from_process(),
        demo,
        cli: CliPricing {
            rate: pricing.rate,
            budget: pricing.budget,
            currency: pricing.currency,
            ledger: files.ledger.clone(),
            no_ledger: files.no_ledger,
            theme: ui.and_then(|u| u.theme.clone()),
            readonly: ui.is_some_and(|u| u.readonly),
            ascii: ui.is_some_and(|u| u.ascii),
        },
    }
}

/// The subcommands. To add one: a variant here with its own args struct that flattens only the
/// option groups above it reads (plus its own options), its groups in [`Cli::misplaced_option`],
/// a case in `main.rs` (merge each group with the one before the subcommand: `args.source.or(&cli
/// .source)`), and its expected `--help` in `tests/integration/cli_help.rs`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print one reading and exit.
    Snapshot(SnapshotArgs),
    /// Print a shell completion script.
    Completions {
        /// The shell to complete for.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff).
    Man,
    /// Run without a terminal UI: meter and ledger only, one line per minute.
    Watch(WatchArgs),
    /// Spend per day and per session from the ledger.
    Report(ReportArgs),
    /// Pre-flight a rented machine in ~10 s: GPUs, driver and torch, links, host balance,
    /// storage, software hazards, billing. Exit 0 all ok, 4 warnings, 5 failures.
    Check(CheckArgs),
    /// Serve the meter over HTTP: Prometheus /metrics, /api/v1/snapshot, /healthz, /-/ready.
    Serve(ServeArgs),
    /// Record readings to a file, to replay later with --replay.
    Record(RecordCmdArgs),
    /// Watch several `gpumeter serve` machines from one screen (or print them once).
    Fleet(FleetArgs),
    /// The configuration: print the commented defaults, check a file, list the files read.
    Config(ConfigCmdArgs),
    /// Score the alert rules on a labelled corpus of timelines (crates/gpumeter-sim/corpus):
    /// per rule true/false positives/negatives and time to detect. Exit 1 on any false alarm
    /// or miss.
    Eval(EvalArgs),
}

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
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_interval)]
    pub interval: Duration,

    /// How long one request may take before the host is marked slow.
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_interval)]
    pub timeout: Duration,

    /// Requests in flight at once.
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub concurrency: u16,

    #[command(flatten)]
    pub ui: UiArgs,
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

/// A size such as `500K`, `100M`, `2G` (powers of 1024) or a plain number of bytes.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m = match c.to_ascii_uppercase() {
                'K' => 1u64 << 10,
                'M' => 1 << 20,
                'G' => 1 << 30,
                _ => return Err(format!("unknown size unit in '{s}' (use K, M or G)")),
            };
            (&t[..i], m)
        }
        _ => (t, 1),
    };
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a size (examples: 500K, 100M, 2G)"))?;
    let bytes = n
        .checked_mul(mult)
        .ok_or_else(|| format!("'{s}' is too large"))?;
    if bytes < 4096 {
        return Err(format!("'{s}' is too small: at least 4K"));
    }
    Ok(bytes)
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The GPUs that were paid for, e.g. 8xH100, 4xA100, 8 or H100 (a mismatch fails).
    #[arg(long, value_name = "N×MODEL", value_parser = parse_expect)]
    pub expect: Option<crate::check::Expect>,

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
    #[arg(long, value_name = "ADDR:PORT", default_value = crate::serve::DEFAULT_LISTEN, value_parser = crate::serve::parse_listen)]
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

    /// Run the stop command once the machine has been idle this long, as in watch.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub autostop: Option<Duration>,

    /// The command autostop runs (default: [autostop] command in the config file).
    #[arg(long, value_name = "COMMAND", value_parser = parse_command)]
    pub stop_cmd: Option<CommandLine>,

    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub files: ConfigArgs,
    #[command(flatten)]
    pub pricing: PricingArgs,
    #[command(flatten)]
    pub recording: RecordArgs,
}

fn parse_expect(s: &str) -> Result<crate::check::Expect, String> {
    crate::check::Expect::parse(s)
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

    /// Run the stop command once the machine has been idle this long (GPUs idle, host CPU and
    /// network quiet), e.g. 30m; warns 5 and 1 minutes before (also with `wall`).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub autostop: Option<Duration>,

    /// The command autostop runs, split into words like a shell would but run without one,
    /// e.g. 'sudo shutdown -h now' (default: [autostop] command in the config file).
    #[arg(long, value_name = "COMMAND", value_parser = parse_command)]
    pub stop_cmd: Option<CommandLine>,

    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub files: ConfigArgs,
    #[command(flatten)]
    pub pricing: PricingArgs,
    #[command(flatten)]
    pub recording: RecordArgs,
}

/// A command line split into its words (no shell will run it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandLine(pub Vec<String>);

fn parse_command(s: &str) -> Result<CommandLine, String> {
    crate::notify::run::split_command(s)
        .map(CommandLine)
        .ok_or_else(|| format!("'{s}' is not a command (empty, or an unclosed quote)"))
}

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
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    pub at: Duration,

    #[command(flatten)]
    pub source: SourceArgs,
    // With --json: the config and prices the `billing` block is computed from.
    #[command(flatten)]
    pub files: ConfigArgs,
    #[command(flatten)]
    pub pricing: PricingArgs,
}

fn parse_interval(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s)?;
    if d < Duration::from_millis(100) {
        return Err(format!(
            "'{s}' is too short: the interval must be at least 100ms"
        ));
    }
    Ok(d)
}

fn parse_rate(s: &str) -> Result<Rate, String> {
    Rate::parse(s).map_err(|e| e.to_string())
}

fn parse_budget(s: &str) -> Result<Budget, String> {
    Budget::parse(s).map_err(|e| e.to_string())
}

fn parse_currency(s: &str) -> Result<Currency, String> {
    Currency::from_code(s).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn intervals_have_a_floor() {
        assert!(
            parse_interval("10ms")
                .unwrap_err()
                .contains("at least 100ms")
        );
        assert_eq!(SourceArgs::default().interval(), DEFAULT_INTERVAL);
    }

    #[test]
    fn demo_without_value_means_training() {
        let cli = Cli::try_parse_from(["gpumeter", "--demo"]).unwrap();
        assert_eq!(cli.source.demo.as_deref(), Some("training"));
        let cli =
            Cli::try_parse_from(["gpumeter", "snapshot", "--json", "--demo", "idle"]).unwrap();
        let Some(Command::Snapshot(args)) = &cli.command else {
            panic!("{cli:?}")
        };
        assert!(args.json);
        assert_eq!(args.source.demo.as_deref(), Some("idle"));
    }

    #[test]
    fn options_before_the_subcommand_still_count() {
        let cli = Cli::try_parse_from([
            "gpumeter",
            "--demo",
            "idle",
            "--interval",
            "2s",
            "--rate",
            "31/h",
            "watch",
            "--for",
            "2h",
            "--fast",
            "--currency",
            "eur",
        ])
        .unwrap();
        let Some(Command::Watch(w)) = &cli.command else {
            panic!("{cli:?}")
        };
        assert!(w.fast);
        let source = w.source.or(&cli.source);
        assert_eq!(source.demo.as_deref(), Some("idle"));
        assert_eq!(source.interval(), Duration::from_secs(2));
        let pricing = w.pricing.or(&cli.pricing);
        assert_eq!(pricing.rate.unwrap().to_string(), "31/h");
        assert_eq!(pricing.currency.unwrap().code(), "EUR");
        // The subcommand's own value wins over the one before it.
        let cli =
            Cli::try_parse_from(["gpumeter", "--demo", "idle", "snapshot", "--demo", "mixed"])
                .unwrap();
        let Some(Command::Snapshot(s)) = &cli.command else {
            panic!("{cli:?}")
        };
        assert_eq!(s.source.or(&cli.source).demo.as_deref(), Some("mixed"));
    }

    #[test]
    fn pricing_flags_parse_and_bad_values_name_the_flag() {
        let cli = Cli::try_parse_from([
            "gpumeter",
            "--rate",
            "3.10/gpu-h",
            "--budget",
            "500/day",
            "--currency",
            "eur",
            "report",
            "--since",
            "30d",
            "--json",
        ])
        .unwrap();
        assert_eq!(cli.pricing.rate.unwrap().to_string(), "3.1/gpu-h");
        assert_eq!(cli.pricing.currency.unwrap().code(), "EUR");
        assert!(matches!(
            cli.command,
            Some(Command::Report(ReportArgs { json: true, .. }))
        ));
        let err = Cli::try_parse_from(["gpumeter", "--rate", "-1/h"])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("--rate") && err.contains("must not be negative"),
            "{err}"
        );
        let err = Cli::try_parse_from(["gpumeter", "--currency", "XYZ"])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("--currency") && err.contains("unknown currency"),
            "{err}"
        );
        // A subcommand refuses options it does not use, after it or before it.
        let err = Cli::try_parse_from(["gpumeter", "report", "--theme", "mono"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("--theme"), "{err}");
        let before = |args: &[&str]| Cli::try_parse_from(args).unwrap().misplaced_option();
        assert_eq!(
            before(&["gpumeter", "--theme", "mono", "report"]),
            Some(("--theme", "report"))
        );
        assert_eq!(
            before(&["gpumeter", "--no-color", "snapshot"]),
            Some(("--no-color", "snapshot"))
        );
        assert_eq!(before(&["gpumeter", "--demo", "idle", "watch"]), None);
        assert_eq!(before(&["gpumeter", "--theme", "mono"]), None);
    }
}
