//! The channel keys of `[alerts]` (bell, desktop, webhook, hooks, hook timeout) resolved into
//! notify's [`NotifyConfig`], with errors that name the key.

use std::collections::BTreeMap;
use std::time::Duration;

use super::raw::{RawAlerts, RawWebhook};
use super::values::{ValueError, duration_ms};
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
                    "unknown alert kind (idle, forgotten, starved, throttle, budget, checkpoint, hung, xid, lost, vram, shared, job_done or any)",
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> RawAlerts {
        toml::from_str(text).unwrap()
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
}
