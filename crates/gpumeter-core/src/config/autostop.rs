//! The `[autostop]` table resolved into the engine's [`AutostopConfig`], with errors that name
//! the key.

use super::raw::RawAutostop;
use super::values::{ValueError, duration_ms, number};
use crate::engine::autostop::AutostopConfig;

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

    #[test]
    fn autostop_is_off_by_default_and_needs_a_command_when_on() {
        let d = autostop(&RawAutostop::default()).unwrap();
        assert_eq!(d, AutostopConfig::default());
        assert!(!d.enabled);
        let on: RawAutostop = toml::from_str("enabled = true\nafter = \"45m\"\n").unwrap();
        assert_eq!(autostop(&on).unwrap_err().field, "autostop.command");
        let on: RawAutostop = toml::from_str(
            "enabled = true\nafter = \"45m\"\ncommand = [\"sudo\", \"shutdown\", \"-h\", \"now\"]\n\
             warn = [\"10m\", \"2m\"]\n",
        )
        .unwrap();
        let c = autostop(&on).unwrap();
        assert_eq!(
            (c.after_ms, c.warn_before_ms.clone()),
            (45 * 60_000, vec![600_000, 120_000])
        );
        assert_eq!(c.command, vec!["sudo", "shutdown", "-h", "now"]);
    }
}
