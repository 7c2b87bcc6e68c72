//! From the command line to a printed report and an exit code: the live machine or a demo
//! scenario, the pricing as the config layers resolve it, text or JSON.

use std::io::Write;
use std::path::PathBuf;

use super::facts::BillingFacts;
use super::gather::LiveOptions;
use crate::cli::{self, CheckArgs, Cli, ConfigArgs, PricingArgs};
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

/// Runs the check and prints the report; returns the exit code (0, 4 or 5).
pub fn run(
    cli: &Cli,
    args: &CheckArgs,
    now_unix_ms: i64,
    out: &mut impl Write,
) -> Result<u8, CheckError> {
    // Options given before the subcommand count too (`gpumeter --demo idle check`). The check
    // reads the config for pricing only; it never touches the ledger.
    let files = ConfigArgs {
        config: args.config.clone().or_else(|| cli.files.config.clone()),
        ledger: None,
        no_ledger: true,
    };
    let pricing = args.pricing.or(&cli.pricing);
    let demo = args.demo.clone().or_else(|| cli.source.demo.clone());
    let nvml_lib = args
        .nvml_lib
        .clone()
        .or_else(|| cli.source.nvml_lib.clone());
    let facts = match demo.as_deref() {
        Some(name) => {
            let scenario = launch::load_scenario(name)?;
            let billing = billing(&files, &pricing, launch::demo_pricing(&scenario));
            super::demo::gather(
                scenario,
                args.expect.clone(),
                args.data.clone(),
                billing,
                now_unix_ms,
            )
        }
        None => super::gather::gather(&LiveOptions {
            nvml_lib,
            expect: args.expect.clone(),
            python: args.python.clone(),
            path_env: std::env::var_os("PATH"),
            data: args.data.clone(),
            root: std::env::var_os(ROOT_ENV).map_or_else(|| PathBuf::from("/"), PathBuf::from),
            libcuda: std::env::var(LIBCUDA_ENV).unwrap_or_else(|_| "libcuda.so.1".into()),
            env: std::env::vars_os()
                .filter_map(|(k, v)| {
                    Some((k.into_string().ok()?, v.to_string_lossy().into_owned()))
                })
                .collect(),
            billing: billing(&files, &pricing, None),
            probe_limits: super::probe::Limits::default(),
        }),
    };
    let report = super::judge(&facts);
    let text = if args.json {
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
fn billing(
    files: &ConfigArgs,
    pricing: &PricingArgs,
    demo: Option<crate::config::DemoPricing>,
) -> BillingFacts {
    let from_demo = demo.is_some();
    match crate::config::load(&cli::load_options(files, pricing, None, demo)) {
        Err(e) => BillingFacts {
            config_error: Some(e.to_string()),
            ..BillingFacts::default()
        },
        Ok(settings) => {
            let Some(p) = settings.pricing else {
                return BillingFacts::default();
            };
            let origin = if pricing.rate.is_some() {
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
                config_error: None,
                instance: None,
            }
        }
    }
}
