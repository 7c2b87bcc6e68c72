//! The `[alerts]` and `[autostop]` tables through the layers: each layer's keys over the one
//! below (the tables are in [`super::raw`]), then resolved ([`super::rules`],
//! [`super::channels`]), with errors that name the file and line of the offending key where it
//! can be found.

use std::path::PathBuf;

use super::error::{ConfigError, Origin};
use super::raw::{RawAlerts, RawAutostop};
use super::values::ValueError;
use super::{DEFAULT_CONFIG_NAME, Layer};
use crate::engine::autostop::AutostopConfig;
use crate::engine::rules::RulesConfig;
use crate::notify::NotifyConfig;

/// Resolved alert, notification and autostop settings.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AlertSettings {
    pub rules: RulesConfig,
    pub notify: NotifyConfig,
    pub autostop: AutostopConfig,
    /// The config file the hooks and the autostop command came from (its permissions are
    /// checked before anything from it runs); `None` for the built-in defaults.
    pub commands_file: Option<PathBuf>,
}

/// Where a key is written: the last layer whose text has `key =` at the start of a line.
fn origin_of(layers: &[Layer], field: &str) -> Origin {
    let key = field.rsplit('.').next().unwrap_or(field);
    for layer in layers.iter().rev() {
        let mut offset = 0;
        for line in layer.text.split_inclusive('\n') {
            let t = line.trim_start();
            if t.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
            {
                return Origin::at(&layer.name, &layer.text, offset + (line.len() - t.len()));
            }
            offset += line.len();
        }
    }
    Origin::at(
        layers
            .last()
            .map_or(DEFAULT_CONFIG_NAME, |l| l.name.as_str()),
        "",
        0,
    )
}

fn invalid(layers: &[Layer], e: ValueError) -> ConfigError {
    ConfigError::Invalid {
        origin: origin_of(layers, &e.field),
        field: e.field,
        message: e.message,
    }
}

/// The layers' `[alerts]` and `[autostop]`, resolved.
pub fn alert_settings(layers: &[Layer]) -> Result<AlertSettings, ConfigError> {
    let mut alerts = RawAlerts::default();
    let mut autostop = RawAutostop::default();
    let mut commands_file = None;
    for layer in layers {
        let from_file = (layer.name != DEFAULT_CONFIG_NAME).then(|| PathBuf::from(&layer.name));
        if let Some(a) = &layer.raw.alerts {
            alerts.overlay(a);
            if a.hooks.is_some() {
                commands_file = from_file.clone();
            }
        }
        if let Some(a) = &layer.raw.autostop {
            autostop.overlay(a);
            if a.command.is_some() {
                commands_file = from_file;
            }
        }
    }
    Ok(AlertSettings {
        rules: super::rules::rules(&alerts).map_err(|e| invalid(layers, e))?,
        notify: super::channels::channels(&alerts).map_err(|e| invalid(layers, e))?,
        autostop: super::channels::autostop(&autostop).map_err(|e| invalid(layers, e))?,
        commands_file,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_defaults_resolve_to_the_design_defaults() {
        let s = alert_settings(&[Layer::defaults().unwrap()]).unwrap();
        assert_eq!(s.rules, RulesConfig::default());
        assert_eq!(s.notify, NotifyConfig::default());
        assert_eq!(s.autostop, AutostopConfig::default());
        assert_eq!(s.commands_file, None);
    }

    #[test]
    fn user_file_overrides_and_errors_point_at_the_line() {
        let user = Layer::parse(
            "/home/u/.config/gpumeter/config.toml",
            "[alerts]\nbell = false\n\n[alerts.idle]\nremind_every = \"soon\"\n",
        )
        .unwrap();
        let e = alert_settings(&[Layer::defaults().unwrap(), user])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("/home/u/.config/gpumeter/config.toml:5:1: alerts.idle.remind_every:"),
            "{e}"
        );
        let user = Layer::parse(
            "/etc/g.toml",
            "[alerts]\nbell = false\n[autostop]\nenabled = true\ncommand = [\"touch\", \"/tmp/x\"]\n",
        )
        .unwrap();
        let s = alert_settings(&[Layer::defaults().unwrap(), user]).unwrap();
        assert!(!s.notify.bell);
        assert!(s.autostop.enabled);
        assert_eq!(s.commands_file, Some(PathBuf::from("/etc/g.toml")));
    }
}
