//! The command line: what a user can ask for, parsed by clap. Parsing only; `main.rs` acts on it.
//!
//! Options come in groups, one struct per concern ([`SourceArgs`], [`ConfigArgs`],
//! [`PricingArgs`], [`UiArgs`]); the dashboard (no subcommand) takes them all, and each
//! subcommand flattens only the groups it reads, so its `--help` lists only what it uses.
//! A group given before the subcommand (`gpumeter --demo idle watch`) still counts: see
//! [`SourceArgs::or`] and friends.
//!
//! Here: [`Cli`] and [`Command`]; `options.rs` holds the shared groups, `commands.rs` each
//! subcommand's arguments, `parse.rs` the value parsers.

mod commands;
mod options;
mod parse;

pub use commands::*;
pub use options::*;
pub use parse::parse_size;

use std::time::Duration;

use clap::{Parser, Subcommand};

use gpumeter_core::config::{CliPricing, DemoPricing, Env, LoadOptions};

/// The interval when none is given (the session core's: `eval` runs the rules at it too).
pub const DEFAULT_INTERVAL: Duration = gpumeter_core::session::DEFAULT_INTERVAL;

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
    #[command(flatten)]
    pub kube: KubeArgs,

    #[command(subcommand)]
    pub command: Option<Command>,
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
        let fleet = name == "fleet";
        // `--record` before the subcommand counts for the front-ends that run readings.
        let rec = matches!(self.command, Some(Command::Watch(_) | Command::Serve(_)));
        // So do `--kubernetes` and `--pod-resources`, for `snapshot` too (one reading of a node).
        let kube = rec || matches!(self.command, Some(Command::Snapshot(_)));
        let k = &self.kube;
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
            (pricing, "--cloud-metadata", p.cloud_metadata),
            (ui, "--theme", u.look.theme.is_some()),
            (ui, "--no-color", u.look.no_color),
            (ui && !fleet, "--start", u.start.is_some()),
            (ui && !fleet, "--readonly", u.readonly),
            (ui, "--ascii", u.look.ascii),
            (kube, "--kubernetes", k.kubernetes.is_some()),
            (kube, "--pod-resources", k.pod_resources.is_some()),
        ];
        given
            .into_iter()
            .find(|(used, _, set)| *set && !used)
            .map(|(_, flag, _)| (flag, name))
    }
}

/// What to load from the config file and the flags. `ui` is `None` for commands that draw
/// nothing; `demo` is a demo scenario's own prices; `simulated` says the readings come from a
/// demo or a replay (no ledger then, unless `--ledger` names one).
pub fn load_options(
    files: &ConfigArgs,
    pricing: &PricingArgs,
    ui: Option<&UiArgs>,
    demo: Option<DemoPricing>,
    simulated: bool,
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
            simulated,
            theme: ui.and_then(|u| u.look.theme.clone()),
            readonly: ui.is_some_and(|u| u.readonly),
            ascii: ui.is_some_and(|u| u.look.ascii),
        },
        // A simulated or replayed run is priced as its scenario is, never as this machine.
        probe: (!simulated)
            .then(|| gpumeter_core::cloud::Probe::from_process(pricing.cloud_metadata)),
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

#[cfg(test)]
mod tests;
