//! The channels' resolved settings: which are on, the webhook, the hooks. Read from the config
//! file by `config` (which depends on this room, never the other way round).

use std::collections::BTreeMap;
use std::time::Duration;

use super::webhook::WebhookConfig;
use crate::engine::rules::AlertKind;

/// Resolved channel settings.
#[derive(Debug, Clone, PartialEq)]
pub struct NotifyConfig {
    /// Ring the terminal bell on an alert (`[alerts] bell`).
    pub bell: bool,
    /// Send a desktop notification through the terminal on an alert (`[alerts] desktop`).
    pub desktop: bool,
    /// Where to POST alerts (`[alerts.webhook]`); `None` when no URL is set.
    pub webhook: Option<WebhookConfig>,
    /// Per alert kind (`None`: every kind) the program to run.
    pub hooks: BTreeMap<Option<AlertKind>, Vec<String>>,
    /// How long a hook command may run before it is killed (`[alerts] hook_timeout`).
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
