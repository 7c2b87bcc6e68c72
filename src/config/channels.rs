//! The channel and autostop keys of `[alerts]` and `[autostop]` resolved into notify's
//! [`NotifyConfig`] and the engine's [`AutostopConfig`], with errors that name the key.

use std::collections::BTreeMap;
use std::time::Duration;

use super::raw::{RawAlerts, RawAutostop, RawWebhook};
use super::values::{ValueError, duration_ms, number};
use crate::engine::autostop::AutostopConfig;
use crate::engine::rules::AlertKind;
use crate::notify::NotifyConfig;
use crate::notify::webhook::WebhookConfig;

/// The channel settings: bell, desktop, webhook and hooks.
pub fn channels(raw: &RawAlerts) -> Result<NotifyConfig, ValueError> {
    let webhook = match &raw.webhook {
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
    for (kind, argv) in raw.hooks.iter().flatten() {
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
    let hook_timeout = duration_ms("alerts.hook_timeout", &raw.hook_timeout, 10_000, 100)?;
    Ok(NotifyConfig {
        bell: raw.bell.unwrap_or(true),
        desktop: raw.desktop.unwrap_or(true),
        webhook,
        hooks,
        hook_timeout: Duration::from_millis(u64::try_from(hook_timeout).unwrap_or(10_000)),
    })
}

/// The autostop settings: the defaults overlaid with the keys that are set.
pub fn autostop(raw: &RawAutostop) -> Result<AutostopConfig, ValueError> {
    let d = AutostopConfig::default();
    let after_ms = duration_ms("autostop.after", &raw.after, d.after_ms, 60_000)?;
    let warn_before_ms = match &raw.warn {
        None => d.warn_before_ms,
        Some(list) => list
            .iter()
            .map(|w| duration_ms("autostop.warn", &Some(w.clone()), 0, 0))
            .collect::<Result<Vec<_>, _>>()?,
    };
    let command = raw.command.clone().unwrap_or_default();
    let enabled = raw.enabled.unwrap_or(d.enabled);
    if enabled && command.is_empty() {
        return Err(ValueError::new(
            "autostop.command",
            "autostop is enabled but no command is set (e.g. [\"sudo\", \"shutdown\", \"-h\", \"now\"])",
        ));
    }
    Ok(AutostopConfig {
        enabled,
        after_ms,
        cpu_pct: number("autostop.cpu_pct", raw.cpu_pct, d.cpu_pct, 0.0, 100.0)?,
        net_bytes_per_s: number(
            "autostop.net_kb_per_s",
            raw.net_kb_per_s,
            d.net_bytes_per_s / 1e3,
            0.0,
            1e9,
        )? * 1e3,
        warn_before_ms,
        arm_after_boot_ms: duration_ms(
            "autostop.arm_after_boot",
            &raw.arm_after_boot,
            d.arm_after_boot_ms,
            0,
        )?,
        host_blip_ms: d.host_blip_ms,
        command,
        wall: raw.wall.unwrap_or(d.wall),
    })
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
        let n = channels(&base).unwrap();
        assert!(!n.bell && n.desktop);
        assert_eq!(n.webhook.unwrap().timeout, Duration::from_secs(5));
        let r = super::super::rules::rules(&base).unwrap();
        assert_eq!(r.idle.remind_after_ms, 300_000);
        assert_eq!(r.idle.remind_every_ms, 1_800_000);
    }

    #[test]
    fn bad_hooks_webhooks_and_unknown_keys_are_named() {
        let e = channels(&parse("[hooks]\nidel = [\"x\"]\n")).unwrap_err();
        assert_eq!(e.field, "alerts.hooks.idel");
        let e = channels(&parse("[hooks]\nany = []\n")).unwrap_err();
        assert_eq!(e.field, "alerts.hooks.any");
        let e = channels(&parse("[webhook]\nurl = \"ftp://x\"\n")).unwrap_err();
        assert_eq!(e.field, "alerts.webhook.url");
        let e = toml::from_str::<RawAlerts>("[idle]\nremind = \"5m\"\n").unwrap_err();
        assert!(e.to_string().contains("unknown field `remind`"), "{e}");
        let ok = channels(&parse(
            "[hooks]\nstarved = [\"/usr/local/bin/page\", \"--team\", \"ml\"]\n",
        ))
        .unwrap();
        assert_eq!(
            ok.hooks[&Some(AlertKind::Starved)][0],
            "/usr/local/bin/page"
        );
    }

    #[test]
    fn autostop_is_off_by_default_and_needs_a_command_when_on() {
        let d = autostop(&RawAutostop::default()).unwrap();
        assert_eq!(d, AutostopConfig::default());
        assert!(!d.enabled);
        let on: RawAutostop = toml::from_str("enabled = true\nafter = \"45m\"\n").unwrap();
        assert_eq!(autostop(&on).unwrap_err().field, "autostop.command");
        let mut on = on;
        on.overlay(
            &toml::from_str(
                "command = [\"sudo\", \"shutdown\", \"-h\", \"now\"]\nwarn = [\"10m\", \"2m\"]\n",
            )
            .unwrap(),
        );
        let c = autostop(&on).unwrap();
        assert_eq!(
            (c.after_ms, c.warn_before_ms.clone()),
            (45 * 60_000, vec![600_000, 120_000])
        );
        assert_eq!(c.command, vec!["sudo", "shutdown", "-h", "now"]);
    }
}
