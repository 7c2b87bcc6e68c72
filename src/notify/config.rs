//! The `[alerts]` and `[autostop]` tables of the config file: raw serde structs (every key
//! optional, unknown keys refused), layering of one file over another key by key, and
//! resolution into the rules' [`RulesConfig`], the channels' [`NotifyConfig`] and autostop's
//! [`AutostopConfig`], with errors that name the key.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use super::webhook::WebhookConfig;
use crate::engine::autostop::AutostopConfig;
use crate::engine::rules::config::{
    RawForgotten, RawIdle, RawRules, RawStarved, RawThrottle, ValueError, duration_ms, number,
};
use crate::engine::rules::{AlertKind, RulesConfig};

/// `[alerts.webhook]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWebhook {
    pub url: Option<String>,
    pub timeout: Option<String>,
    pub max_per_minute: Option<u32>,
    pub max_per_hour: Option<u32>,
}

/// `[alerts]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAlerts {
    pub bell: Option<bool>,
    pub desktop: Option<bool>,
    pub fire_share_pct: Option<f64>,
    pub clear_share_pct: Option<f64>,
    pub history: Option<usize>,
    pub hook_timeout: Option<String>,
    pub idle: Option<RawIdle>,
    pub forgotten: Option<RawForgotten>,
    pub starved: Option<RawStarved>,
    pub throttle: Option<RawThrottle>,
    pub webhook: Option<RawWebhook>,
    /// Alert kind (`idle`, `forgotten`, `starved`, `throttle`, `budget`, or `any`) → argv.
    pub hooks: Option<BTreeMap<String, Vec<String>>>,
}

/// `[autostop]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAutostop {
    pub enabled: Option<bool>,
    pub after: Option<String>,
    pub cpu_pct: Option<f64>,
    pub net_kb_per_s: Option<f64>,
    pub warn: Option<Vec<String>>,
    pub arm_after_boot: Option<String>,
    pub command: Option<Vec<String>>,
    pub wall: Option<bool>,
}

/// Copies every key `top` sets over `base`.
macro_rules! overlay {
    ($base:expr, $top:expr; $($f:ident),* $(,)?) => {
        {
            $( if $top.$f.is_some() { $base.$f = $top.$f.clone(); } )*
        }
    };
}

fn sub<T: Default + Clone>(base: &mut Option<T>, top: &Option<T>, f: impl Fn(&mut T, &T)) {
    if let Some(t) = top {
        f(base.get_or_insert_with(T::default), t);
    }
}

impl RawAlerts {
    /// Layers `top` (a later file) over `self`, key by key.
    pub fn overlay(&mut self, top: &RawAlerts) {
        overlay!(self, top; bell, desktop, fire_share_pct, clear_share_pct, history, hook_timeout, hooks);
        sub(
            &mut self.idle,
            &top.idle,
            |b, t| overlay!(b, t; enabled, gpu_util_pct, mem_util_pct, pcie_mb_per_s, window, remind_after, remind_every, arm_after_boot),
        );
        sub(
            &mut self.forgotten,
            &top.forgotten,
            |b, t| overlay!(b, t; enabled, min_vram_gib, max_sm_pct, after),
        );
        sub(
            &mut self.starved,
            &top.starved,
            |b, t| overlay!(b, t; enabled, window, util_below_pct, cpu_saturated_pct, main_core_pct, iowait_pct, h2d_rx_gb_per_s, moderate_share_pct, high_share_pct),
        );
        sub(
            &mut self.throttle,
            &top.throttle,
            |b, t| overlay!(b, t; enabled, window),
        );
        sub(
            &mut self.webhook,
            &top.webhook,
            |b, t| overlay!(b, t; url, timeout, max_per_minute, max_per_hour),
        );
    }

    /// The rule settings.
    pub fn rules(&self) -> Result<RulesConfig, ValueError> {
        RawRules {
            fire_share_pct: self.fire_share_pct,
            clear_share_pct: self.clear_share_pct,
            history: self.history,
            idle: self.idle.clone(),
            forgotten: self.forgotten.clone(),
            starved: self.starved.clone(),
            throttle: self.throttle.clone(),
        }
        .resolve()
    }

    /// The channel settings.
    pub fn notify(&self) -> Result<NotifyConfig, ValueError> {
        let webhook = match &self.webhook {
            Some(RawWebhook {
                url: Some(url),
                timeout,
                max_per_minute,
                max_per_hour,
            }) => {
                if !(url.starts_with("https://") || url.starts_with("http://")) {
                    return Err(ValueError::new(
                        "alerts.webhook.url",
                        "must start with https:// or http://",
                    ));
                }
                let timeout = duration_ms("alerts.webhook.timeout", timeout, 5_000, 100)?;
                Some(WebhookConfig {
                    url: url.clone(),
                    timeout: Duration::from_millis(u64::try_from(timeout).unwrap_or(5_000)),
                    max_per_minute: max_per_minute.unwrap_or(5).max(1),
                    max_per_hour: max_per_hour.unwrap_or(30).max(1),
                })
            }
            _ => None,
        };
        let mut hooks = BTreeMap::new();
        for (kind, argv) in self.hooks.iter().flatten() {
            let field = format!("alerts.hooks.{kind}");
            let key = match kind.as_str() {
                "any" => None,
                k => Some(AlertKind::parse(k).ok_or_else(|| {
                    ValueError::new(
                        &field,
                        "unknown alert kind (idle, forgotten, starved, throttle, budget or any)",
                    )
                })?),
            };
            if argv.is_empty() || argv[0].trim().is_empty() {
                return Err(ValueError::new(
                    field,
                    "must be a non-empty list: [\"/path/to/program\", \"arg\", …]",
                ));
            }
            hooks.insert(key, argv.clone());
        }
        let hook_timeout = duration_ms("alerts.hook_timeout", &self.hook_timeout, 10_000, 100)?;
        Ok(NotifyConfig {
            bell: self.bell.unwrap_or(true),
            desktop: self.desktop.unwrap_or(true),
            webhook,
            hooks,
            hook_timeout: Duration::from_millis(u64::try_from(hook_timeout).unwrap_or(10_000)),
        })
    }
}

impl RawAutostop {
    pub fn overlay(&mut self, top: &RawAutostop) {
        overlay!(self, top; enabled, after, cpu_pct, net_kb_per_s, warn, arm_after_boot, command, wall);
    }

    pub fn resolve(&self) -> Result<AutostopConfig, ValueError> {
        let d = AutostopConfig::default();
        let after_ms = duration_ms("autostop.after", &self.after, d.after_ms, 60_000)?;
        let warn_before_ms = match &self.warn {
            None => d.warn_before_ms,
            Some(list) => list
                .iter()
                .map(|w| duration_ms("autostop.warn", &Some(w.clone()), 0, 0))
                .collect::<Result<Vec<_>, _>>()?,
        };
        let command = self.command.clone().unwrap_or_default();
        let enabled = self.enabled.unwrap_or(d.enabled);
        if enabled && command.is_empty() {
            return Err(ValueError::new(
                "autostop.command",
                "autostop is enabled but no command is set (e.g. [\"sudo\", \"shutdown\", \"-h\", \"now\"])",
            ));
        }
        Ok(AutostopConfig {
            enabled,
            after_ms,
            cpu_pct: number("autostop.cpu_pct", self.cpu_pct, d.cpu_pct, 0.0, 100.0)?,
            net_bytes_per_s: number(
                "autostop.net_kb_per_s",
                self.net_kb_per_s,
                d.net_bytes_per_s / 1e3,
                0.0,
                1e9,
            )? * 1e3,
            warn_before_ms,
            arm_after_boot_ms: duration_ms(
                "autostop.arm_after_boot",
                &self.arm_after_boot,
                d.arm_after_boot_ms,
                0,
            )?,
            host_blip_ms: d.host_blip_ms,
            command,
            wall: self.wall.unwrap_or(d.wall),
        })
    }
}

/// Resolved channel settings.
#[derive(Debug, Clone, PartialEq)]
pub struct NotifyConfig {
    pub bell: bool,
    pub desktop: bool,
    pub webhook: Option<WebhookConfig>,
    /// Per alert kind (`None`: every kind) the program to run.
    pub hooks: BTreeMap<Option<AlertKind>, Vec<String>>,
    pub hook_timeout: Duration,
}

impl Default for NotifyConfig {
    fn default() -> Self {
        Self {
            bell: true,
            desktop: true,
            webhook: None,
            hooks: BTreeMap::new(),
            hook_timeout: Duration::from_secs(10),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> RawAlerts {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn a_later_file_overrides_key_by_key() {
        let mut base =
            parse("bell = true\n[idle]\nremind_after = \"10m\"\nremind_every = \"30m\"\n");
        base.overlay(&parse("bell = false\n[idle]\nremind_after = \"5m\"\n[webhook]\nurl = \"https://hooks.example/x\"\n"));
        let n = base.notify().unwrap();
        assert!(!n.bell && n.desktop);
        assert_eq!(n.webhook.unwrap().timeout, Duration::from_secs(5));
        let r = base.rules().unwrap();
        assert_eq!(r.idle.remind_after_ms, 300_000);
        assert_eq!(r.idle.remind_every_ms, 1_800_000);
    }

    #[test]
    fn bad_hooks_webhooks_and_unknown_keys_are_named() {
        let e = parse("[hooks]\nidel = [\"x\"]\n").notify().unwrap_err();
        assert_eq!(e.field, "alerts.hooks.idel");
        let e = parse("[hooks]\nany = []\n").notify().unwrap_err();
        assert_eq!(e.field, "alerts.hooks.any");
        let e = parse("[webhook]\nurl = \"ftp://x\"\n")
            .notify()
            .unwrap_err();
        assert_eq!(e.field, "alerts.webhook.url");
        let e = toml::from_str::<RawAlerts>("[idle]\nremind = \"5m\"\n").unwrap_err();
        assert!(e.to_string().contains("unknown field `remind`"), "{e}");
        let ok = parse("[hooks]\nstarved = [\"/usr/local/bin/page\", \"--team\", \"ml\"]\n")
            .notify()
            .unwrap();
        assert_eq!(
            ok.hooks[&Some(AlertKind::Starved)][0],
            "/usr/local/bin/page"
        );
    }

    #[test]
    fn autostop_is_off_by_default_and_needs_a_command_when_on() {
        let d = RawAutostop::default().resolve().unwrap();
        assert_eq!(d, AutostopConfig::default());
        assert!(!d.enabled);
        let on: RawAutostop = toml::from_str("enabled = true\nafter = \"45m\"\n").unwrap();
        assert_eq!(on.resolve().unwrap_err().field, "autostop.command");
        let mut on = on;
        on.overlay(
            &toml::from_str(
                "command = [\"sudo\", \"shutdown\", \"-h\", \"now\"]\nwarn = [\"10m\", \"2m\"]\n",
            )
            .unwrap(),
        );
        let c = on.resolve().unwrap();
        assert_eq!(
            (c.after_ms, c.warn_before_ms.clone()),
            (45 * 60_000, vec![600_000, 120_000])
        );
        assert_eq!(c.command, vec!["sudo", "shutdown", "-h", "now"]);
    }
}
