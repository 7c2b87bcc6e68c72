//! The configuration: embedded defaults (`config/default.toml`, the documented reference), the
//! user's file layered over them, a demo scenario's prices over that, and command-line flags
//! over everything. Reads files and the environment; nothing else here does I/O.
//!
//! Every raw serde struct of the file is here ([`raw`]), kept apart from the resolved
//! [`Settings`] the program uses ([`resolve`] for pricing, ledger and theme; [`alerts`] with
//! [`rules`], [`channels`] and [`autostop`] for `[alerts]` and `[autostop]`). Settings are
//! handed out as the types their users define (the engine's `RulesConfig` and
//! `AutostopConfig`, notify's `NotifyConfig`); neither of those rooms reads config. Errors name
//! the file, line, column and field, or the flag.

pub mod alerts;
pub mod autostop;
pub mod channels;
pub mod error;
pub mod raw;
pub mod resolve;
pub mod rules;
pub mod show;
pub mod values;

use std::path::{Path, PathBuf};

pub use alerts::AlertSettings;
pub use error::{ConfigError, Origin};
pub use raw::RawConfig;
pub use resolve::{
    CliPricing, CloudSettings, DemoPricing, KeySettings, LedgerSettings, Settings, ThemeSetting,
};

/// The shipped defaults, built in.
pub const DEFAULT_CONFIG: &str = include_str!("../../../../config/default.toml");
/// How the defaults are named in error messages.
pub const DEFAULT_CONFIG_NAME: &str = "<built-in defaults>";

/// The environment variables that locate files (read once, passed in so tests can fake them).
#[derive(Debug, Clone, Default)]
pub struct Env {
    /// `$HOME`; `None` when unset or empty.
    pub home: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME`; `None` when unset or empty.
    pub xdg_config_home: Option<PathBuf>,
    /// `$XDG_STATE_HOME`; `None` when unset or empty.
    pub xdg_state_home: Option<PathBuf>,
}

impl Env {
    /// From this process's environment (empty values count as unset, as XDG says).
    pub fn from_process() -> Env {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Env {
            home: var("HOME"),
            xdg_config_home: var("XDG_CONFIG_HOME"),
            xdg_state_home: var("XDG_STATE_HOME"),
        }
    }

    /// `$XDG_CONFIG_HOME/gpumeter/config.toml`, else `~/.config/gpumeter/config.toml`.
    pub fn user_config_path(&self) -> Option<PathBuf> {
        let base = self
            .xdg_config_home
            .clone()
            .or_else(|| self.home.as_ref().map(|h| h.join(".config")))?;
        Some(base.join("gpumeter").join("config.toml"))
    }

    /// `$XDG_CONFIG_HOME/gpumeter/themes/`, else `~/.config/gpumeter/themes/`: user themes,
    /// named by file stem.
    pub fn user_themes_dir(&self) -> Option<PathBuf> {
        self.user_config_path()?
            .parent()
            .map(|dir| dir.join("themes"))
    }

    /// `$XDG_STATE_HOME/gpumeter/ledger.sqlite`, else `~/.local/state/gpumeter/ledger.sqlite`.
    pub fn default_ledger_path(&self) -> Option<PathBuf> {
        let base = self
            .xdg_state_home
            .clone()
            .or_else(|| self.home.as_ref().map(|h| h.join(".local").join("state")))?;
        Some(base.join("gpumeter").join("ledger.sqlite"))
    }
}

/// What to load.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// `--config PATH`: this file instead of the user's (it must exist).
    pub config_path: Option<PathBuf>,
    /// The environment variables used to locate the user's config and the default ledger.
    pub env: Env,
    /// A demo scenario's prices, layered over the files.
    pub demo: Option<DemoPricing>,
    /// Pricing, ledger, theme and mode flags from the command line; they win over every layer.
    pub cli: CliPricing,
    /// Where to find out what the machine is, for a list price when no rate is set; `None`
    /// looks nothing up (tests, and commands that meter nothing).
    pub probe: Option<crate::cloud::Probe>,
}

/// Parses one layer of TOML text; `name` is how errors refer to it.
pub fn parse_layer(name: &str, text: &str) -> Result<RawConfig, ConfigError> {
    toml::from_str(text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        let table = gpumeter_hint::table_at(text, offset);
        ConfigError::Invalid {
            origin: Origin::at(name, text, offset),
            field: error::field_at(text, offset),
            message: gpumeter_hint::explain(e.message().trim(), "key", table.as_deref()),
        }
    })
}

/// A layer with its name and text, kept so that value errors can point into it.
#[derive(Debug, Clone)]
pub struct Layer {
    /// How errors name this layer: a file path or [`DEFAULT_CONFIG_NAME`].
    pub name: String,
    /// The layer's TOML source, kept so errors can point at a key's line and column.
    pub text: String,
    /// The parsed tables.
    pub raw: RawConfig,
}

impl Layer {
    /// Parses `text` as a layer named `name`; a TOML error names the file, position and key.
    pub fn parse(name: &str, text: &str) -> Result<Layer, ConfigError> {
        Ok(Layer {
            name: name.to_string(),
            text: text.to_string(),
            raw: parse_layer(name, text)?,
        })
    }

    /// The embedded defaults.
    pub fn defaults() -> Result<Layer, ConfigError> {
        Layer::parse(DEFAULT_CONFIG_NAME, DEFAULT_CONFIG)
    }

    fn read(path: &Path) -> Result<Layer, ConfigError> {
        let text =
            crate::textfile::read_text(path, crate::textfile::MAX_TEXT_FILE).map_err(|e| {
                ConfigError::Read {
                    path: path.to_path_buf(),
                    message: e.to_string(),
                }
            })?;
        Layer::parse(&path.display().to_string(), &text)
    }
}

/// Loads the settings: defaults, then the user file (`--config` or the XDG path, when present),
/// then the demo's prices, then the flags.
/// With no rate set on a real machine, the list price of the machine it finds itself on (see
/// [`crate::cloud`]), said to be one, with the user's extras, egress, electricity and budget
/// (a budget with neither is refused); with no
/// extras set, the catalogued storage of its attached volumes as what bills while stopped.
pub fn load(opts: &LoadOptions) -> Result<Settings, ConfigError> {
    let mut settings = resolve::resolve(&layers(opts)?, opts.demo.as_ref(), &opts.cli, &opts.env)?;
    if let Some(probe) = &opts.probe {
        let c = &settings.cloud;
        let mut priced = crate::cloud::list_pricing(probe, c.metadata, c.catalog.as_deref(), None);
        if let Some(l) = c.lifecycle {
            // The user's word on how the box is bought wins, as their rate does.
            priced.whereabouts.lifecycle = Some(l);
            priced.whereabouts.evidence.push("[cloud] lifecycle".into());
        }
        if settings.pricing.is_none() && !opts.cli.simulated {
            settings.pricing = priced.pricing.clone().map(|mut p| {
                settings.beside.apply(&mut p);
                p
            });
            settings.notes.extend(priced.notes.iter().cloned());
        }
        // What bills while stopped: the user's extras when they set them, else the catalogued
        // storage of the attached volumes (a USD list figure, so only beside a USD rate).
        let unpriced = settings.beside.extras_per_hour.is_none() && !opts.cli.simulated;
        if let Some(p) = settings
            .pricing
            .as_mut()
            .filter(|p| unpriced && p.currency == crate::money::Currency::USD)
        {
            p.stopped_storage = priced.storage.clone();
        }
        settings.whereabouts = Some(priced);
    }
    if settings.pricing.is_none() {
        settings.beside.refuse_unpriced_budget()?;
    }
    Ok(settings)
}

/// The file layers [`load`] reads: the defaults, then `--config` or the user's file.
pub fn layers(opts: &LoadOptions) -> Result<Vec<Layer>, ConfigError> {
    let mut layers = vec![Layer::defaults()?];
    match &opts.config_path {
        Some(path) => layers.push(Layer::read(path)?),
        None => {
            if let Some(path) = opts.env.user_config_path().filter(|p| p.exists()) {
                layers.push(Layer::read(&path)?);
            }
        }
    }
    Ok(layers)
}

#[cfg(test)]
mod tests;
