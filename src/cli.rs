//! The command line: what a user can ask for, parsed by clap. Parsing only; `main.rs` acts on it.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::billing::{Budget, Rate};
use crate::money::Currency;

/// Watch rented GPUs: utilization, memory, power and processes, with the bill beside them.
#[derive(Debug, Parser)]
#[command(name = "gpumeter", version, about, long_about = None)]
#[command(
    after_help = "Exit codes: 0 ok, 1 error, 2 bad arguments, 3 NVML unavailable (no driver or library).\n\
Try it without a GPU: gpumeter --demo   (list scenarios: gpumeter --demo --list)"
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,

    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Options shared by the dashboard and the subcommands.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Run on a built-in simulated machine instead of the local GPUs (default scenario:
    /// training), or on a scenario file (a path ending in .toml).
    #[arg(long, global = true, value_name = "SCENARIO", num_args = 0..=1, default_missing_value = "training")]
    pub demo: Option<String>,

    /// With --demo: list the built-in scenarios and exit.
    #[arg(long, global = true, requires = "demo")]
    pub list: bool,

    /// Load NVML from this file instead of the system's libnvidia-ml.so.1.
    #[arg(long, global = true, value_name = "PATH", env = "GPUMETER_NVML_LIB")]
    pub nvml_lib: Option<PathBuf>,

    /// Time between readings, e.g. 1s, 500ms, 2s (at least 100ms).
    #[arg(long, global = true, value_name = "DURATION", default_value = "1s", value_parser = parse_interval)]
    pub interval: Duration,

    /// Draw without colours (also honoured: the NO_COLOR environment variable).
    #[arg(long, global = true)]
    pub no_color: bool,

    /// Read this config file instead of $XDG_CONFIG_HOME/gpumeter/config.toml.
    #[arg(long, global = true, value_name = "PATH")]
    pub config: Option<PathBuf>,

    /// What the machine costs: 2.49/h (per instance-hour), 3.10/gpu-h (per GPU-hour),
    /// 2000/month (flat monthly). Overrides the config file.
    #[arg(long, global = true, value_name = "RATE", value_parser = parse_rate, allow_hyphen_values = true)]
    pub rate: Option<Rate>,

    /// A spend ceiling: 500 (whole run), 500/day, 500/month, 500/run.
    #[arg(long, global = true, value_name = "AMOUNT[/PERIOD]", value_parser = parse_budget, allow_hyphen_values = true)]
    pub budget: Option<Budget>,

    /// Currency of the rate and budget (ISO code: USD, EUR, GBP, JPY, …).
    #[arg(long, global = true, value_name = "CODE", value_parser = parse_currency)]
    pub currency: Option<Currency>,

    /// Keep the spend ledger in this file instead of $XDG_STATE_HOME/gpumeter/ledger.sqlite.
    #[arg(long, global = true, value_name = "PATH")]
    pub ledger: Option<PathBuf>,

    /// Do not read or write the spend ledger.
    #[arg(long, global = true, conflicts_with = "ledger")]
    pub no_ledger: bool,

    /// The dashboard's colours: a built-in theme (default, high-contrast, solarized-dark, mono)
    /// or a theme file (a path ending in .toml). Overrides [ui] theme in the config file.
    #[arg(long, global = true, value_name = "NAME|PATH")]
    pub theme: Option<String>,
}

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
}

fn parse_expect(s: &str) -> Result<crate::check::Expect, String> {
    crate::check::Expect::parse(s)
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
}

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// Print the versioned JSON schema instead of a table.
    #[arg(long)]
    pub json: bool,

    /// With --demo: how far into the scenario to read, e.g. 90s, 5m (default 60s).
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    pub at: Duration,
}

/// A duration such as `250ms`, `90s`, `5m`, `2h`, `1d` (a bare number means seconds).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a duration (examples: 500ms, 90s, 5m, 2h)"))?;
    let factor_ms = match unit.trim() {
        "ms" => 1.0,
        "" | "s" => 1_000.0,
        "m" | "min" => 60_000.0,
        "h" => 3_600_000.0,
        "d" => 86_400_000.0,
        other => {
            return Err(format!(
                "unknown unit '{other}' in '{s}' (use ms, s, m, h or d)"
            ));
        }
    };
    let ms = value * factor_ms;
    if !ms.is_finite() || ms > 1e15 {
        return Err(format!("'{s}' is too long"));
    }
    Ok(Duration::from_millis(ms.round() as u64))
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
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("1.5m").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("2h").unwrap(), Duration::from_secs(7200));
        assert!(
            parse_duration("5 fortnights")
                .unwrap_err()
                .contains("unknown unit")
        );
        assert!(
            parse_duration("abc")
                .unwrap_err()
                .contains("not a duration")
        );
        assert!(
            parse_interval("10ms")
                .unwrap_err()
                .contains("at least 100ms")
        );
    }

    #[test]
    fn demo_without_value_means_training() {
        let cli = Cli::try_parse_from(["gpumeter", "--demo"]).unwrap();
        assert_eq!(cli.global.demo.as_deref(), Some("training"));
        let cli =
            Cli::try_parse_from(["gpumeter", "snapshot", "--json", "--demo", "idle"]).unwrap();
        assert_eq!(cli.global.demo.as_deref(), Some("idle"));
        assert!(matches!(
            cli.command,
            Some(Command::Snapshot(SnapshotArgs { json: true, .. }))
        ));
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
        assert_eq!(cli.global.rate.unwrap().to_string(), "3.1/gpu-h");
        assert_eq!(cli.global.currency.unwrap().code(), "EUR");
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
        let cli = Cli::try_parse_from([
            "gpumeter", "--demo", "idle", "watch", "--for", "2h", "--fast",
        ])
        .unwrap();
        assert!(matches!(
            cli.command,
            Some(Command::Watch(WatchArgs { fast: true, .. }))
        ));
    }
}
