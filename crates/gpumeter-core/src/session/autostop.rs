//! The one autostop guard: the `[autostop]` settings with the command-line overrides laid over
//! them (`watch --autostop 30m --stop-cmd '…'`), checked before anything can run. Autostop on
//! needs a command, and a command read from a config file that others can write is refused, as
//! hooks are. What a refusal means is the front-end's choice ([`Refusal`]): `watch` exits with
//! the error, the dashboard turns autostop off and says why. Touches the config's resolved
//! alert settings and the hooks' permission check; nothing else.

use crate::config::AlertSettings;
use crate::engine::autostop::AutostopConfig;

/// Overrides from the command line (`None`: the config file's value stands).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AutostopFlags {
    /// Idle this long, then stop; turns autostop on.
    pub after_ms: Option<i64>,
    /// The stop command (argv); a command given here is the user's own, not a file's.
    pub command: Option<Vec<String>>,
}

/// What to do when the settings cannot be honoured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Refusal {
    /// Refuse to start (`watch`: the user asked for autostop on the command line).
    #[default]
    Fail,
    /// Run with autostop off, and say so in the first step's notes (the dashboard).
    TurnOff,
}

/// Why autostop cannot be set up as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AutostopSetupError {
    /// Autostop is on but no stop command is set (`--stop-cmd` or `[autostop] command`).
    #[error("autostop needs a command: --stop-cmd '…' or [autostop] command in the config file")]
    NoCommand,
    /// The config file with the stop command may be changed by others (see
    /// [`check_config_file`](crate::notify::hook::check_config_file)); holds why.
    #[error("autostop: {0}")]
    Refused(String),
    /// `--autostop` asked for less than one minute.
    #[error("--autostop must be at least 1m")]
    TooShort,
}

/// The autostop settings to run with: `settings.autostop` with `flags` over it, checked.
pub fn resolve(
    settings: &AlertSettings,
    flags: &AutostopFlags,
) -> Result<AutostopConfig, AutostopSetupError> {
    let mut autostop = settings.autostop.clone();
    if let Some(after) = flags.after_ms {
        if after < 60_000 {
            return Err(AutostopSetupError::TooShort);
        }
        autostop.enabled = true;
        autostop.after_ms = after;
    }
    if let Some(cmd) = &flags.command {
        autostop.command = cmd.clone();
    }
    if autostop.enabled {
        if autostop.command.is_empty() {
            return Err(AutostopSetupError::NoCommand);
        }
        if flags.command.is_none()
            && let Some(file) = &settings.commands_file
        {
            crate::notify::hook::check_config_file(file)
                .map_err(|e| AutostopSetupError::Refused(e.to_string()))?;
        }
    }
    Ok(autostop)
}

/// [`resolve`] under a refusal policy: the settings, and the note when autostop was turned off.
pub fn resolve_with(
    settings: &AlertSettings,
    flags: &AutostopFlags,
    refusal: Refusal,
) -> Result<(AutostopConfig, Option<String>), AutostopSetupError> {
    match (resolve(settings, flags), refusal) {
        (Ok(cfg), _) => Ok((cfg, None)),
        (Err(e), Refusal::Fail) => Err(e),
        (Err(e), Refusal::TurnOff) => {
            let off = AutostopConfig {
                enabled: false,
                ..settings.autostop.clone()
            };
            Ok((off, Some(format!("autostop is off: {e}"))))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn flags(after_ms: Option<i64>, cmd: Option<&str>) -> AutostopFlags {
        AutostopFlags {
            after_ms,
            command: cmd.map(|c| vec![c.to_string()]),
        }
    }

    #[test]
    fn flags_need_a_command_and_at_least_a_minute() {
        let s = AlertSettings::default();
        assert_eq!(
            resolve(&s, &flags(Some(30 * 60_000), None)).unwrap_err(),
            AutostopSetupError::NoCommand
        );
        assert_eq!(
            resolve(&s, &flags(Some(5_000), Some("true"))).unwrap_err(),
            AutostopSetupError::TooShort
        );
        let on = resolve(&s, &flags(Some(30 * 60_000), Some("true"))).unwrap();
        assert!(on.enabled && on.after_ms == 30 * 60_000);
        assert!(!resolve(&s, &AutostopFlags::default()).unwrap().enabled);
    }

    /// A config file others can write, holding an enabled autostop with a command.
    fn writable_config() -> (tempfile::TempDir, AlertSettings) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        let mut s = AlertSettings::default();
        s.autostop.enabled = true;
        s.autostop.command = vec!["true".into()];
        s.commands_file = Some(path);
        (dir, s)
    }

    #[test]
    fn a_command_from_a_file_others_can_write_is_refused_one_flag_command_is_not() {
        let (_dir, s) = writable_config();
        let e = resolve(&s, &AutostopFlags::default()).unwrap_err();
        assert!(matches!(e, AutostopSetupError::Refused(_)), "{e:?}");
        // The same refusal under the dashboard's policy: off, with a note naming the cause.
        let (cfg, note) = resolve_with(&s, &AutostopFlags::default(), Refusal::TurnOff).unwrap();
        assert!(!cfg.enabled);
        assert!(
            note.as_deref()
                .is_some_and(|n| n.starts_with("autostop is off: autostop:")),
            "{note:?}"
        );
        // A command typed on the command line is the user's own.
        assert!(resolve(&s, &flags(None, Some("true"))).unwrap().enabled);
    }

    #[test]
    fn the_dashboard_policy_turns_a_commandless_autostop_off() {
        let mut s = AlertSettings::default();
        s.autostop.enabled = true;
        let (cfg, note) = resolve_with(&s, &AutostopFlags::default(), Refusal::TurnOff).unwrap();
        assert!(!cfg.enabled);
        assert!(note.unwrap().contains("needs a command"));
        assert!(resolve_with(&s, &AutostopFlags::default(), Refusal::Fail).is_err());
    }
}
