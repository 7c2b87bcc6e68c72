//! The `[alerts]` and `[autostop]` tables through the layers: each layer's keys over the one
//! below (the tables are in [`super::raw`]), then resolved ([`super::rules`],
//! [`super::channels`], [`super::autostop`]), with errors that name the file and line of the
//! offending key where it can be found.

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
    /// Alert rules: thresholds and windows from `[alerts.*]`.
    pub rules: RulesConfig,
    /// Channels: bell, desktop notifications, webhook, command hooks.
    pub notify: NotifyConfig,
    /// `[autostop]`.
    pub autostop: AutostopConfig,
    /// The config file the hooks and the autostop command came from (its permissions are
    /// checked before anything from it runs); `None` for the built-in defaults.
    pub commands_file: Option<PathBuf>,
}

impl AlertSettings {
    /// The same alerts, but nothing acts on the machine: autostop off, no command hooks
    /// (`--readonly`, and one-shot readings). Alerts still show and notify the terminal.
    pub fn without_actions(mut self) -> Self {
        self.autostop.enabled = false;
        self.notify.hooks.clear();
        self
    }
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

/// `top` laid over `base` key by key: tables merge, anything else is replaced (a value, a list,
/// and the hooks table as a whole: a file's hooks are all from that file).
pub(super) fn merge(base: &mut toml::Table, top: &toml::Table) {
    for (key, value) in top {
        match (base.get_mut(key), value) {
            (Some(toml::Value::Table(b)), toml::Value::Table(t)) if key != "hooks" => merge(b, t),
            _ => {
                base.insert(key.clone(), value.clone());
            }
        }
    }
}

/// The table `name` of every layer merged, lowest first, then read as `T`. Done on the TOML
/// itself, so every key the structs accept layers without a list of keys to keep.
fn layered<T: serde::de::DeserializeOwned>(layers: &[Layer], name: &str) -> Result<T, ConfigError> {
    let mut merged = toml::Table::new();
    for layer in layers {
        let doc: toml::Table = toml::from_str(&layer.text).map_err(|e| ConfigError::Invalid {
            origin: Origin::at(&layer.name, &layer.text, e.span().map_or(0, |s| s.start)),
            field: name.to_string(),
            message: e.message().trim().to_string(),
        })?;
        if let Some(toml::Value::Table(t)) = doc.get(name) {
            merge(&mut merged, t);
        }
    }
    // Each layer alone already parsed as the raw structs, so the merge parses too; if it did
    // not, say so rather than guess.
    toml::Value::Table(merged)
        .try_into()
        .map_err(|e: toml::de::Error| ConfigError::Invalid {
            origin: origin_of(layers, name),
            field: name.to_string(),
            message: e.message().trim().to_string(),
        })
}

/// The layers' `[alerts]` and `[autostop]`, resolved.
pub fn alert_settings(layers: &[Layer]) -> Result<AlertSettings, ConfigError> {
    let alerts: RawAlerts = layered(layers, "alerts")?;
    let autostop: RawAutostop = layered(layers, "autostop")?;
    let mut commands_file = None;
    for layer in layers {
        let from_file = (layer.name != DEFAULT_CONFIG_NAME).then(|| PathBuf::from(&layer.name));
        if layer.raw.alerts.as_ref().is_some_and(|a| a.hooks.is_some()) {
            commands_file = from_file.clone();
        }
        if layer
            .raw
            .autostop
            .as_ref()
            .is_some_and(|a| a.command.is_some())
        {
            commands_file = from_file;
        }
    }
    Ok(AlertSettings {
        rules: super::rules::rules(&alerts).map_err(|e| invalid(layers, e))?,
        notify: super::channels::channels(&alerts).map_err(|e| invalid(layers, e))?,
        autostop: super::autostop::autostop(&autostop).map_err(|e| invalid(layers, e))?,
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

    #[test]
    fn a_later_file_overrides_key_by_key_and_hooks_whole() {
        let first = Layer::parse(
            "/a.toml",
            "[alerts]\nbell = true\n[alerts.idle]\nremind_after = \"10m\"\nremind_every = \"45m\"\n\
             [alerts.hooks]\nidle = [\"/bin/a\"]\n[autostop]\nwarn = [\"9m\", \"3m\"]\n",
        )
        .unwrap();
        let second = Layer::parse(
            "/b.toml",
            "[alerts]\nbell = false\n[alerts.idle]\nremind_after = \"5m\"\n\
             [alerts.webhook]\nurl = \"https://hooks.example/x\"\n[alerts.hooks]\nstarved = [\"/bin/b\"]\n\
             [autostop]\nwarn = [\"2m\"]\n",
        )
        .unwrap();
        let s = alert_settings(&[Layer::defaults().unwrap(), first, second]).unwrap();
        assert!(!s.notify.bell && s.notify.desktop);
        assert_eq!(s.notify.webhook.unwrap().timeout.as_secs(), 5);
        assert_eq!(s.rules.idle.remind_after_ms, 5 * 60_000);
        assert_eq!(
            s.rules.idle.remind_every_ms,
            45 * 60_000,
            "kept from the first file"
        );
        // Lists and the hooks table are replaced, not merged.
        assert_eq!(s.autostop.warn_before_ms, vec![120_000]);
        assert_eq!(s.notify.hooks.len(), 1, "{:?}", s.notify.hooks);
        assert_eq!(s.commands_file, Some(PathBuf::from("/b.toml")));
    }
}
