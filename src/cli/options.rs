//! The option groups the dashboard and the subcommands share (source, config, recording,
//! pricing, display); each subcommand flattens the groups it reads.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::DEFAULT_INTERVAL;
use super::parse::*;
use gpumeter_core::billing::{Budget, Rate};
use gpumeter_core::money::Currency;

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
    #[arg(long, value_name = "DURATION", value_parser = parse_interval, allow_hyphen_values = true)]
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

    /// The readings are a demo's or a replay's, not this machine's now.
    pub fn simulated(&self) -> bool {
        self.demo.is_some() || self.replay.is_some()
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

    /// With no rate set: also ask the cloud's instance metadata service (169.254.169.254) what
    /// the machine is, for its list price. Off by default; also [cloud] metadata = true.
    #[arg(long)]
    pub cloud_metadata: bool,
}

impl PricingArgs {
    /// These options, each unset one taken from `outer` (given before the subcommand).
    pub fn or(&self, outer: &PricingArgs) -> PricingArgs {
        PricingArgs {
            rate: self.rate.or(outer.rate),
            budget: self.budget.or(outer.budget),
            currency: self.currency.or(outer.currency),
            cloud_metadata: self.cloud_metadata || outer.cloud_metadata,
        }
    }
}

/// How a screen looks: the dashboard's and the fleet's.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Display")]
pub struct LookArgs {
    /// Draw without colours (also honoured: the NO_COLOR environment variable).
    #[arg(long)]
    pub no_color: bool,

    /// The dashboard's colours: a built-in theme (default, light, high-contrast, solarized-dark,
    /// colour-blind, mono), one of yours ($XDG_CONFIG_HOME/gpumeter/themes/NAME.toml) or a theme
    /// file (a path ending in .toml). Overrides [ui] theme in the config file.
    #[arg(long, value_name = "NAME|PATH")]
    pub theme: Option<String>,

    /// ASCII only: no braille charts, no box-drawing borders (PuTTY, serial consoles, web
    /// terminals). Also [ui] ascii = true.
    #[arg(long)]
    pub ascii: bool,
}

/// How the dashboard looks and what it may do (the fleet screen takes only [`LookArgs`]: it
/// plays no recording and acts on no process).
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Display")]
pub struct UiArgs {
    #[command(flatten)]
    pub look: LookArgs,

    /// With --replay: start the dashboard this far into the recording (90s, 2h) or at this
    /// UTC time of day (HH:MM, the first time it comes). With --demo: this far into the
    /// scenario (at most 24h), the moments before played at once so verdicts have their history.
    #[arg(long, value_name = "DURATION|HH:MM", value_parser = gpumeter_core::recording::parse_start)]
    pub start: Option<gpumeter_core::recording::StartAt>,
    /// Look, don't touch (shared boxes, demos): no signals or renice from the process table,
    /// no autostop, no command hooks. Also [ui] readonly = true.
    #[arg(long)]
    pub readonly: bool,
}

/// Each GPU's Kubernetes pod, namespace and container, from the kubelet (the dashboard,
/// `watch`, `serve` and `snapshot`).
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Kubernetes")]
pub struct KubeArgs {
    /// Name each GPU's and process's Kubernetes pod, namespace and container (the dashboard's
    /// POD column, alerts, serve's labels): auto (when the pod-resources socket is there or
    /// gpumeter runs in a pod), on, off [default: auto].
    #[arg(long, value_name = "WHEN")]
    pub kubernetes: Option<KubeMode>,

    /// The kubelet's pod-resources socket (gRPC v1), asked every 15 s with a 2 s bound.
    /// Without it each GPU process's cgroup path gives its pod's UID and container id
    /// [default: /var/lib/kubelet/pod-resources/kubelet.sock].
    #[arg(long, value_name = "PATH")]
    pub pod_resources: Option<PathBuf>,
}

impl KubeArgs {
    /// These options, each unset one taken from `outer` (given before the subcommand).
    pub fn or(&self, outer: &KubeArgs) -> KubeArgs {
        KubeArgs {
            kubernetes: self.kubernetes.or(outer.kubernetes),
            pod_resources: self
                .pod_resources
                .clone()
                .or_else(|| outer.pod_resources.clone()),
        }
    }

    /// The socket to ask when pods are to be named (`in_pod`: the Kubernetes service
    /// environment says gpumeter runs in a pod); `None` when they are not.
    pub fn socket(&self, in_pod: bool) -> Option<PathBuf> {
        let socket = self
            .pod_resources
            .clone()
            .unwrap_or_else(|| PathBuf::from(gpumeter_kube::DEFAULT_SOCKET));
        let mode = self.kubernetes.unwrap_or(KubeMode::Auto);
        mode.enabled(&socket, in_pod).then_some(socket)
    }
}

/// Whether pods are named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum KubeMode {
    Auto,
    On,
    Off,
}

impl KubeMode {
    /// Whether pods are named: `auto` when the socket exists or the Kubernetes service
    /// environment (`KUBERNETES_SERVICE_HOST`) says gpumeter runs in a pod.
    pub fn enabled(self, socket: &std::path::Path, in_pod: bool) -> bool {
        match self {
            KubeMode::On => true,
            KubeMode::Off => false,
            KubeMode::Auto => in_pod || socket.exists(),
        }
    }
}
