//! From layers of raw config to the [`Settings`] the program runs on: the last layer that sets a
//! key wins, then the demo's prices, then the flags. Every value is checked here, and an error
//! names where the offending value came from.

use std::path::PathBuf;

use toml::Spanned;

use super::error::{ConfigError, Origin};
use super::raw::RawPricing;
use super::{Env, Layer};
use crate::billing::RateSource;
use crate::billing::pricing::{Budget, ClockStart, Granularity, Pricing, Rate, non_negative};
use crate::money::{Currency, Money};

/// Pricing given on the command line, already parsed by clap.
#[derive(Debug, Clone, Default)]
pub struct CliPricing {
    /// `--rate`: overrides every layer's `pricing.rate`.
    pub rate: Option<Rate>,
    /// `--budget`: overrides every layer's `pricing.budget`.
    pub budget: Option<Budget>,
    /// `--currency`: overrides every layer's `pricing.currency`.
    pub currency: Option<Currency>,
    /// `--ledger PATH`.
    pub ledger: Option<PathBuf>,
    /// `--no-ledger`.
    pub no_ledger: bool,
    /// The readings are simulated or replayed (`--demo`, `--replay`): the ledger is the user's
    /// bill, so such a run writes none unless `--ledger PATH` names one.
    pub simulated: bool,
    /// `--theme NAME|PATH`.
    pub theme: Option<String>,
    /// `--readonly` (it can only turn read-only on).
    pub readonly: bool,
    /// `--ascii` (it can only turn ASCII mode on).
    pub ascii: bool,
}

/// A demo scenario's `[pricing]` table, as the simulator parsed it.
#[derive(Debug, Clone)]
pub struct DemoPricing {
    /// The scenario's name, used in errors (`demo scenario NAME [pricing]`).
    pub scenario: String,
    /// The rate as written (`31.00/h`).
    pub rate: String,
    /// ISO 4217 code; `None` keeps the configured currency.
    pub currency: Option<String>,
    /// A per-run budget in micro-units of the currency; `None` keeps the configured budget.
    pub budget_micros: Option<u64>,
}

/// Where the ledger lives, or that there is none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerSettings {
    /// `[ledger] enabled`; off with `--no-ledger`, and for a simulated run unless `--ledger` names
    /// a file.
    pub enabled: bool,
    /// `None` when enabled but no location is known (no HOME): the caller says so and runs without.
    pub path: Option<PathBuf>,
}

/// The dashboard's theme as chosen (a built-in name or a path, `~/` expanded) and where it was
/// chosen; the UI loads it (see `ui::theme::file`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThemeSetting {
    /// A built-in theme name or a theme file path (`~/` expanded).
    pub name: String,
    /// Where the choice was made: `--theme`, a file's `ui.theme`, or the built-in default.
    pub origin: Origin,
}

/// `[keys]` as the layers set it: each action's keys (the last layer naming an action wins)
/// and where they were set; `ui::keys` checks them against its table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeySettings {
    /// Action name (`quit`, `next_gpu`, …) → its keys as written (`"q"`, `"Ctrl-C"`).
    pub bindings: std::collections::BTreeMap<String, Vec<String>>,
    /// Action name → where its keys were set, for errors.
    pub origins: std::collections::BTreeMap<String, Origin>,
}

/// The resolved configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// `None` when no rate is configured: no meter runs.
    pub pricing: Option<Pricing>,
    /// `[ledger]`, with `--ledger` / `--no-ledger` applied.
    pub ledger: LedgerSettings,
    /// `[alerts]` and `[autostop]`.
    pub alerts: super::AlertSettings,
    /// `[ui] theme` or `--theme`.
    pub theme: ThemeSetting,
    /// `[keys]`.
    pub keys: KeySettings,
    /// `[ui] readonly` or `--readonly`: no signals, no autostop, no command hooks.
    pub readonly: bool,
    /// `[ui] ascii` or `--ascii`: no braille, no box-drawing.
    pub ascii: bool,
    /// `[cloud]`.
    pub cloud: CloudSettings,
    /// What the machine was found to be and its list price, when the loader looked.
    pub whereabouts: Option<crate::cloud::Priced>,
    /// `[pricing]`'s costs beside the rate, kept when no rate is set so that a list price
    /// carries them too.
    pub beside: Beside,
    /// Things worth a line on stderr (a clock start that fell back, …).
    pub notes: Vec<String>,
}

/// The user's `[pricing]` costs beside the rate.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Beside {
    /// `extras_per_hour`; `None` when only the defaults set it (then the catalogued storage
    /// of the attached volumes may stand in for what bills while stopped).
    pub extras_per_hour: Option<Money>,
    /// `egress_per_gb`: what a GB sent costs (0: not priced).
    pub egress_per_gb: Money,
    /// `electricity_per_kwh`; `None`: power is not priced.
    pub electricity_per_kwh: Option<Money>,
    /// `budget` and where it was set, when no rate was: it holds on a list price, and with
    /// none the load is refused.
    pub budget: Option<(Budget, Origin)>,
}

impl Beside {
    /// Onto a list price, which knows none of them.
    pub fn apply(&self, p: &mut Pricing) {
        p.extras_per_hour = self.extras_per_hour.unwrap_or(Money::ZERO);
        p.egress_per_gb = self.egress_per_gb;
        p.electricity_per_kwh = self.electricity_per_kwh;
        p.budget = self.budget.as_ref().map(|(b, _)| *b);
    }

    /// A budget set with nothing to price it is a mistake in the config.
    pub fn refuse_unpriced_budget(&self) -> Result<(), ConfigError> {
        match &self.budget {
            Some((_, origin)) => Err(invalid(
                origin.clone(),
                "pricing.budget",
                "a budget needs a rate (pricing.rate or --rate; no list price was found for this machine)",
            )),
            None => Ok(()),
        }
    }
}

/// `[cloud]` as resolved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CloudSettings {
    /// Ask the instance metadata service (off unless the user turns it on).
    pub metadata: bool,
    /// The user's own price catalog (`~/` expanded).
    pub catalog: Option<PathBuf>,
    /// `lifecycle`: how the box is bought, as the user declares it (wins over metadata).
    pub lifecycle: Option<crate::cloud::Lifecycle>,
}

/// A value and where it came from.
struct Found {
    text: String,
    origin: Origin,
}

fn pick(layers: &[Layer], get: fn(&RawPricing) -> Option<&Spanned<String>>) -> Option<Found> {
    layers.iter().rev().find_map(|layer| {
        let value = get(layer.raw.pricing.as_ref()?)?;
        Some(Found {
            text: value.get_ref().clone(),
            origin: Origin::at(&layer.name, &layer.text, value.span().start),
        })
    })
}

fn invalid(origin: Origin, field: &str, message: impl ToString) -> ConfigError {
    ConfigError::Invalid {
        origin,
        field: field.to_string(),
        message: message.to_string(),
    }
}

fn parse_found<T, E: ToString>(
    found: Option<Found>,
    field: &str,
    parse: impl Fn(&str) -> Result<T, E>,
) -> Result<Option<(T, Origin)>, ConfigError> {
    found
        .map(|f| match parse(&f.text) {
            Ok(v) => Ok((v, f.origin)),
            Err(e) => Err(invalid(f.origin, field, e)),
        })
        .transpose()
}

/// Resolves the layers (lowest first), the demo's prices and the flags.
pub fn resolve(
    layers: &[Layer],
    demo: Option<&DemoPricing>,
    cli: &CliPricing,
    env: &Env,
) -> Result<Settings, ConfigError> {
    let mut notes = Vec::new();
    let mut rate = parse_found(
        pick(layers, |p| p.rate.as_ref()),
        "pricing.rate",
        Rate::parse,
    )?;
    let mut currency = parse_found(
        pick(layers, |p| p.currency.as_ref()),
        "pricing.currency",
        Currency::from_code,
    )?;
    let mut budget = parse_found(
        pick(layers, |p| p.budget.as_ref()),
        "pricing.budget",
        Budget::parse,
    )?;
    let granularity = parse_found(
        pick(layers, |p| p.granularity.as_ref()),
        "pricing.granularity",
        Granularity::parse,
    )?;
    let clock_start = parse_found(
        pick(layers, |p| p.clock_start.as_ref()),
        "pricing.clock_start",
        ClockStart::parse,
    )?;
    let amount = |field: &'static str, get| parse_found(pick(layers, get), field, non_negative);
    let extras = amount("pricing.extras_per_hour", |p| p.extras_per_hour.as_ref())?;
    let egress = amount("pricing.egress_per_gb", |p| p.egress_per_gb.as_ref())?;
    let power = amount("pricing.electricity_per_kwh", |p| {
        p.electricity_per_kwh.as_ref()
    })?;
    let beside = Beside {
        extras_per_hour: extras.as_ref().and_then(|(m, origin)| {
            let defaults =
                matches!(origin, Origin::File { name, .. } if name == super::DEFAULT_CONFIG_NAME);
            (!defaults).then_some(*m)
        }),
        egress_per_gb: egress.as_ref().map_or(Money::ZERO, |(m, _)| *m),
        electricity_per_kwh: power.as_ref().map(|(m, _)| *m),
        budget: None,
    };

    if let Some(d) = demo {
        let origin = Origin::Scenario(d.scenario.clone());
        let r = Rate::parse(&d.rate).map_err(|e| invalid(origin.clone(), "rate", e))?;
        rate = Some((r, origin.clone()));
        if let Some(code) = &d.currency {
            let c =
                Currency::from_code(code).map_err(|e| invalid(origin.clone(), "currency", e))?;
            currency = Some((c, origin.clone()));
        }
        if let Some(micros) = d.budget_micros {
            let amount = Money::from_micros(i64::try_from(micros).unwrap_or(i64::MAX));
            let period = crate::billing::BudgetPeriod::Run;
            budget = Some((Budget { amount, period }, origin));
        }
    }
    if let Some(r) = cli.rate {
        rate = Some((r, Origin::Flag("--rate")));
    }
    if let Some(c) = cli.currency {
        currency = Some((c, Origin::Flag("--currency")));
    }
    if let Some(b) = cli.budget {
        budget = Some((b, Origin::Flag("--budget")));
    }

    // With no rate, a budget waits for a list price ([`super::load`] refuses it if none comes).
    let mut beside = beside;
    let pricing = match rate {
        None => {
            beside.budget = budget.take();
            None
        }
        Some((rate, origin)) => {
            let mut p = Pricing::simple(rate);
            p.source = RateSource::Yours(where_set(&origin));
            if let Some((g, _)) = &granularity {
                p.granularity = *g;
            }
            p.currency = currency.map_or(Currency::USD, |(c, _)| c);
            p.clock_start = match clock_start.map(|(c, _)| c) {
                Some(ClockStart::Container) => container_start(&mut notes),
                Some(c) => c,
                None => ClockStart::Boot,
            };
            p.extras_per_hour = extras.map_or(Money::ZERO, |(m, _)| m);
            p.egress_per_gb = egress.map_or(Money::ZERO, |(m, _)| m);
            p.budget = budget.map(|(b, _)| b);
            p.electricity_per_kwh = power.map(|(m, _)| m);
            if let Err(e) = p.check() {
                let origin = granularity.map_or(Origin::Flag("--rate"), |(_, o)| o);
                return Err(invalid(origin, "pricing.granularity", e));
            }
            Some(p)
        }
    };
    Ok(Settings {
        pricing,
        ledger: ledger_settings(layers, cli, env)?,
        alerts: super::alerts::alert_settings(layers)?,
        theme: theme_setting(layers, cli, env)?,
        keys: key_settings(layers),
        readonly: cli.readonly || ui_flag(layers, |u| u.readonly),
        ascii: cli.ascii || ui_flag(layers, |u| u.ascii),
        cloud: cloud_settings(layers, env)?,
        whereabouts: None,
        beside,
        notes,
    })
}

/// How a rate's origin is named beside it: the file's name, the flag, the demo.
fn where_set(origin: &Origin) -> String {
    match origin {
        Origin::File { name, .. } => std::path::Path::new(name)
            .file_name()
            .map_or(name.clone(), |n| n.to_string_lossy().into_owned()),
        Origin::Flag(f) => f.to_string(),
        Origin::Scenario(s) => format!("demo scenario {s}"),
    }
}

/// The last layer's `[cloud]` keys.
fn cloud_settings(layers: &[Layer], env: &Env) -> Result<CloudSettings, ConfigError> {
    let metadata = layers
        .iter()
        .rev()
        .find_map(|l| l.raw.cloud.as_ref()?.metadata)
        .unwrap_or(false);
    let catalog = layers.iter().rev().find_map(|l| {
        let c = l.raw.cloud.as_ref()?.catalog.as_ref()?;
        Some((
            c.get_ref().trim().to_string(),
            Origin::at(&l.name, &l.text, c.span().start),
        ))
    });
    let catalog = match catalog {
        None => None,
        Some((text, origin)) if text.is_empty() => {
            return Err(invalid(origin, "cloud.catalog", "must not be empty"));
        }
        Some((text, _)) => Some(match (text.strip_prefix("~/"), &env.home) {
            (Some(rest), Some(home)) => home.join(rest),
            _ => PathBuf::from(text),
        }),
    };
    let lifecycle = layers.iter().rev().find_map(|l| {
        let c = l.raw.cloud.as_ref()?.lifecycle.as_ref()?;
        Some((
            c.get_ref().trim().to_ascii_lowercase(),
            Origin::at(&l.name, &l.text, c.span().start),
        ))
    });
    let lifecycle = match lifecycle {
        None => None,
        Some((t, _)) if t == "spot" => Some(crate::cloud::Lifecycle::Spot),
        Some((t, _)) if t == "on-demand" => Some(crate::cloud::Lifecycle::OnDemand),
        Some((t, origin)) => {
            return Err(invalid(
                origin,
                "cloud.lifecycle",
                format!("must be \"spot\" or \"on-demand\", not {t:?}"),
            ));
        }
    };
    Ok(CloudSettings {
        metadata,
        catalog,
        lifecycle,
    })
}

/// Each layer's `[keys]` over the one below, action by action.
fn key_settings(layers: &[Layer]) -> KeySettings {
    let mut out = KeySettings::default();
    for l in layers {
        for (action, v) in l.raw.keys.iter().flatten() {
            let keys = match v.get_ref() {
                super::raw::RawKeys::One(k) => vec![k.clone()],
                super::raw::RawKeys::Many(ks) => ks.clone(),
            };
            out.bindings.insert(action.clone(), keys);
            out.origins
                .insert(action.clone(), Origin::at(&l.name, &l.text, v.span().start));
        }
    }
    out
}

/// The last layer's value of a `[ui]` switch (false when none sets it).
fn ui_flag(layers: &[Layer], get: impl Fn(&super::raw::RawUi) -> Option<bool>) -> bool {
    layers
        .iter()
        .rev()
        .find_map(|l| l.raw.ui.as_ref().and_then(&get))
        .unwrap_or(false)
}

/// `--theme`, else the last layer's `ui.theme`, else `default`.
fn theme_setting(
    layers: &[Layer],
    cli: &CliPricing,
    env: &Env,
) -> Result<ThemeSetting, ConfigError> {
    if let Some(name) = &cli.theme {
        return Ok(ThemeSetting {
            name: name.clone(),
            origin: Origin::Flag("--theme"),
        });
    }
    let found = layers.iter().rev().find_map(|l| {
        let t = l.raw.ui.as_ref()?.theme.as_ref()?;
        Some((
            t.get_ref().trim().to_string(),
            Origin::at(&l.name, &l.text, t.span().start),
        ))
    });
    let Some((text, origin)) = found else {
        return Ok(ThemeSetting {
            name: "default".into(),
            origin: Origin::at(super::DEFAULT_CONFIG_NAME, "", 0),
        });
    };
    if text.is_empty() {
        return Err(invalid(origin, "ui.theme", "must not be empty"));
    }
    let name = match (text.strip_prefix("~/"), &env.home) {
        (Some(rest), Some(home)) => home.join(rest).display().to_string(),
        _ => text,
    };
    Ok(ThemeSetting { name, origin })
}

fn ledger_settings(
    layers: &[Layer],
    cli: &CliPricing,
    env: &Env,
) -> Result<LedgerSettings, ConfigError> {
    let enabled = layers
        .iter()
        .rev()
        .find_map(|l| l.raw.ledger.as_ref()?.enabled)
        .unwrap_or(true)
        && !cli.no_ledger
        && (cli.ledger.is_some() || !cli.simulated);
    let from_file = layers.iter().rev().find_map(|l| {
        let p = l.raw.ledger.as_ref()?.path.as_ref()?;
        Some((
            p.get_ref().clone(),
            Origin::at(&l.name, &l.text, p.span().start),
        ))
    });
    let path = match (&cli.ledger, from_file) {
        (Some(p), _) => Some(p.clone()),
        (None, Some((text, origin))) => {
            let expanded = match (text.strip_prefix("~/"), &env.home) {
                (Some(rest), Some(home)) => home.join(rest),
                _ => PathBuf::from(&text),
            };
            if text.trim().is_empty() {
                return Err(invalid(origin, "ledger.path", "must not be empty"));
            }
            Some(expanded)
        }
        (None, None) => env.default_ledger_path(),
    };
    Ok(LedgerSettings { enabled, path })
}

/// This container's start: PID 1's start time after boot. Falls back to the first reading.
fn container_start(notes: &mut Vec<String>) -> ClockStart {
    let start = procfs::process::Process::new(1)
        .and_then(|p| p.stat())
        .and_then(|stat| {
            let boot = procfs::boot_time_secs()?;
            let ticks = procfs::ticks_per_second().max(1);
            let ms = i64::try_from(boot.saturating_mul(1_000) + stat.starttime * 1_000 / ticks)
                .unwrap_or(i64::MAX);
            Ok(ms)
        });
    match start {
        Ok(ms) => ClockStart::At(ms),
        Err(e) => {
            notes.push(format!(
                "pricing.clock_start = \"container\": cannot read the container start ({e}); \
                 the billing clock starts at the first reading"
            ));
            ClockStart::FirstSample
        }
    }
}
