//! From the check's options to a printed report and an exit code: the live machine or a demo
//! scenario, the pricing as the config layers resolve it, text or JSON. The options come
//! built (`main.rs` makes them from the command line); this room parses no arguments.

use std::io::Write;
use std::path::PathBuf;

use gpumeter_core::config::LoadOptions;

use super::facts::{BillingFacts, Expect};
use super::gather::LiveOptions;
use crate::launch::{self, LaunchError};

/// Reads `/proc`, `/sys`, `/dev` and `/etc` under this directory instead of `/` (tests).
pub const ROOT_ENV: &str = "GPUMETER_CHECK_ROOT";
/// Tries to load this library instead of `libcuda.so.1` (tests).
pub const LIBCUDA_ENV: &str = "GPUMETER_CHECK_LIBCUDA";

#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error(transparent)]
    Launch(#[from] LaunchError),
    #[error("writing the report: {0}")]
    Io(#[from] std::io::Error),
    #[error("encoding the report: {0}")]
    Json(#[from] serde_json::Error),
}

/// What the check is asked: the command line's choices, merged and resolved by the caller.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// The GPUs that were paid for (`--expect 8xH100`).
    pub expect: Option<Expect>,
    /// The Python whose torch build is read.
    pub python: Option<PathBuf>,
    /// The dataset's directory, probed.
    pub data: Option<PathBuf>,
    /// The versioned JSON report instead of text.
    pub json: bool,
    /// A demo scenario (a name or a `.toml` path) instead of this machine.
    pub demo: Option<String>,
    /// The NVML library to load instead of the system's.
    pub nvml_lib: Option<PathBuf>,
    /// How the config layers load (for pricing only: the check never opens the ledger); a demo
    /// scenario's prices are layered in here.
    pub config: LoadOptions,
    /// `--rate` was given (so the rate's origin is the command line).
    pub rate_given: bool,
}

/// Runs the check and prints the report; returns the exit code (0, 4 or 5).
pub fn run(opts: &CheckOptions, now_unix_ms: i64, out: &mut impl Write) -> Result<u8, CheckError> {
    let (demo, nvml_lib) = (&opts.demo, opts.nvml_lib.clone());
    let facts = match demo.as_deref() {
        Some(name) => {
            let scenario = launch::load_scenario(name)?;
            let billing = billing(opts, launch::demo_pricing(&scenario));
            super::demo::gather(
                scenario,
                opts.expect.clone(),
                opts.data.clone(),
                billing,
                now_unix_ms,
            )
        }
        None => super::gather::gather(&LiveOptions {
            nvml_lib,
            expect: opts.expect.clone(),
            python: opts.python.clone(),
            path_env: std::env::var_os("PATH"),
            data: opts.data.clone(),
            root: std::env::var_os(ROOT_ENV).map_or_else(|| PathBuf::from("/"), PathBuf::from),
            libcuda: std::env::var(LIBCUDA_ENV).unwrap_or_else(|_| "libcuda.so.1".into()),
            env: std::env::vars_os()
                .filter_map(|(k, v)| {
                    Some((k.into_string().ok()?, v.to_string_lossy().into_owned()))
                })
                .collect(),
            billing: billing(opts, None),
            probe_limits: super::probe::Limits::default(),
        }),
    };
    let report = super::judge(&facts);
    let text = if opts.json {
        report.to_json()?
    } else {
        super::render::text(&report)
    };
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        // A closed pipe (`| head`) is not an error worth a message.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other?,
    }
    Ok(report.exit_code())
}

/// The rate and budget the config layers resolve to, and where the rate comes from.
fn billing(opts: &CheckOptions, demo: Option<gpumeter_core::config::DemoPricing>) -> BillingFacts {
    let from_demo = demo.is_some();
    let load = LoadOptions {
        demo,
        ..opts.config.clone()
    };
    match gpumeter_core::config::load(&load) {
        Err(e) => BillingFacts {
            config_error: Some(e.to_string()),
            ..BillingFacts::default()
        },
        Ok(settings) => {
            let found = settings.whereabouts.as_ref();
            let w = found.map(|f| &f.whereabouts);
            let cloud_facts = BillingFacts {
                cloud: w
                    .filter(|w| w.provider.is_some())
                    .map(|w| format!("{} (from {})", w.describe(), w.evidence.join(", "))),
                spot: w
                    .and_then(|w| w.lifecycle)
                    .map(|l| l == gpumeter_core::cloud::Lifecycle::Spot),
                spot_declared: settings.cloud.lifecycle.is_some(),
                metadata_asked: found.is_some_and(|f| f.asked_metadata),
                ..BillingFacts::default()
            };
            let Some(p) = settings.pricing else {
                return cloud_facts;
            };
            if p.source.is_list_price() {
                return BillingFacts {
                    rate: Some(format!("{} {}", p.rate, p.currency.code())),
                    list_price: Some(p.source.describe()),
                    ..cloud_facts
                };
            }
            let origin = if opts.rate_given {
                "--rate"
            } else if from_demo {
                "the demo scenario"
            } else {
                "the config file"
            };
            BillingFacts {
                rate: Some(format!("{} {}", p.rate, p.currency.code())),
                budget: p
                    .budget
                    .map(|b| format!("{}/{}", p.currency.format(b.amount), b.period.name())),
                origin: Some(origin.into()),
                ..cloud_facts
            }
        }
    }
}
