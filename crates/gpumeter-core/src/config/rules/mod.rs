//! The rule tables of `[alerts]` (`fire_share_pct`, `[alerts.idle]`, `[alerts.starved]` …)
//! resolved into the engine's [`RulesConfig`], every unset key taking the rules' default: the
//! shared keys here, one file and function per rule's table beside it (`idle.rs` resolves
//! `[alerts.idle]`, and so on).

mod checkpoint;
mod forgotten;
mod hung;
mod idle;
mod job_done;
mod lost;
mod shared;
mod spot;
mod starved;
mod throttle;
mod vram;
mod xid;

use super::raw::RawAlerts;
use super::values::{ValueError, number};
use crate::engine::rules::config::RulesConfig;

/// The rule settings: the defaults overlaid with the keys that are set.
pub fn rules(raw: &RawAlerts) -> Result<RulesConfig, ValueError> {
    let d = RulesConfig::default();
    let fire = number(
        "alerts.fire_share_pct",
        raw.fire_share_pct,
        d.fire_share * 100.0,
        1.0,
        100.0,
    )? / 100.0;
    let clear = number(
        "alerts.clear_share_pct",
        raw.clear_share_pct,
        d.clear_share * 100.0,
        0.0,
        99.0,
    )? / 100.0;
    if clear >= fire {
        return Err(ValueError::new(
            "alerts.clear_share_pct",
            "must be below alerts.fire_share_pct (otherwise alerts flap)",
        ));
    }
    let history = raw.history.unwrap_or(d.history_len);
    if !(1..=10_000).contains(&history) {
        return Err(ValueError::new("alerts.history", "must be 1–10000"));
    }

    Ok(RulesConfig {
        fire_share: fire,
        clear_share: clear,
        history_len: history,
        idle: idle::resolve(raw.idle.as_ref(), &d.idle)?,
        forgotten: forgotten::resolve(raw.forgotten.as_ref(), &d.forgotten)?,
        starved: starved::resolve(raw.starved.as_ref(), &d.starved)?,
        checkpoint: checkpoint::resolve(raw.checkpoint.as_ref(), &d.checkpoint)?,
        throttle: throttle::resolve(raw.throttle.as_ref(), &d.throttle)?,
        hung: hung::resolve(raw.hung.as_ref(), &d.hung)?,
        xid: xid::resolve(raw.xid.as_ref(), &d.xid)?,
        lost: lost::resolve(raw.lost.as_ref(), &d.lost)?,
        vram: vram::resolve(raw.vram.as_ref(), &d.vram)?,
        shared: shared::resolve(raw.shared.as_ref(), &d.shared)?,
        job_done: job_done::resolve(raw.job_done.as_ref(), &d.job_done)?,
        spot: spot::resolve(raw.spot.as_ref(), &d.spot)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::raw::{RawIdle, RawStarved};

    #[test]
    fn empty_tables_give_the_design_defaults() {
        let c = rules(&RawAlerts::default()).unwrap();
        assert_eq!(c, RulesConfig::default());
        assert_eq!(c.idle.remind_after_ms, 600_000);
        assert_eq!(c.forgotten.min_vram_bytes, 1 << 30);
        assert_eq!(c.starved.h2d_rx_bytes_per_s, 1e9);
    }

    #[test]
    fn keys_override_and_bad_values_name_the_key() {
        let raw = RawAlerts {
            idle: Some(RawIdle {
                remind_after: Some("5m".into()),
                pcie_mb_per_s: Some(2.0),
                ..RawIdle::default()
            }),
            ..RawAlerts::default()
        };
        let c = rules(&raw).unwrap();
        assert_eq!(c.idle.remind_after_ms, 300_000);
        assert_eq!(c.idle.pcie_bytes_per_s, 2e6);

        let bad = RawAlerts {
            idle: Some(RawIdle {
                remind_every: Some("soon".into()),
                ..RawIdle::default()
            }),
            ..RawAlerts::default()
        };
        let e = rules(&bad).unwrap_err();
        assert_eq!(e.field, "alerts.idle.remind_every");
        assert!(e.message.contains("not a duration"), "{e}");

        let flappy = RawAlerts {
            fire_share_pct: Some(50.0),
            clear_share_pct: Some(60.0),
            ..RawAlerts::default()
        };
        assert_eq!(rules(&flappy).unwrap_err().field, "alerts.clear_share_pct");
        let e = rules(&RawAlerts {
            starved: Some(RawStarved {
                util_below_pct: Some(130.0),
                ..RawStarved::default()
            }),
            ..RawAlerts::default()
        })
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "alerts.starved.util_below_pct: 130 is out of range (0–100)"
        );
    }

    #[test]
    fn the_tuned_starved_and_checkpoint_keys_resolve_and_are_checked() {
        let text = "[starved]\nwarmup = \"2m\"\nsm_active_below_pct = 40\ndisk_busy_pct = 80\n\
                    disk_queue_depth = 4\nphase_drop_pct = 50\ndisk_min_mb_per_s = 100\n\
                    [checkpoint]\nmin_pause = \"10s\"\nmin_write_mb_per_s = 500\n";
        let raw: RawAlerts = toml::from_str(text).unwrap();
        let c = rules(&raw).unwrap();
        assert_eq!(c.starved.warmup_ms, 120_000);
        assert_eq!(c.starved.sm_active_below_pct, 40.0);
        assert_eq!(c.starved.disk_busy_pct, 80.0);
        assert_eq!(c.starved.disk_queue_depth, 4.0);
        assert_eq!(c.starved.phase_drop_share, 0.5);
        assert_eq!(c.starved.disk_min_bytes_per_s, 100e6);
        assert_eq!(c.checkpoint.min_pause_ms, 10_000);
        assert_eq!(c.checkpoint.min_write_bytes_per_s, 500e6);
        assert_eq!(
            c.checkpoint.max_pause_ms, 600_000,
            "unset keys keep their default"
        );

        let bad: RawAlerts = toml::from_str("[checkpoint]\nbusy_util_pct = 5\n").unwrap();
        assert_eq!(
            rules(&bad).unwrap_err().field,
            "alerts.checkpoint.busy_util_pct"
        );
        let bad: RawAlerts = toml::from_str("[starved]\ndisk_busy_pct = 120\n").unwrap();
        assert_eq!(
            rules(&bad).unwrap_err().field,
            "alerts.starved.disk_busy_pct"
        );
    }
}

#[cfg(test)]
mod signal_tests {
    use super::*;
    use crate::config::raw::{RawVram, RawWindowed};

    #[test]
    fn unset_tables_are_the_defaults_and_set_keys_apply_with_named_errors() {
        let d = RulesConfig::default();
        let c = rules(&RawAlerts::default()).unwrap();
        assert_eq!(
            (c.hung, c.xid, c.vram, c.shared, c.job_done, c.lost),
            (
                d.hung.clone(),
                d.xid.clone(),
                d.vram.clone(),
                d.shared.clone(),
                d.job_done.clone(),
                d.lost.clone()
            )
        );
        let raw = RawAlerts {
            hung: Some(RawWindowed {
                enabled: Some(true),
                window: Some("10s".into()),
            }),
            vram: Some(RawVram {
                high_pct: Some(90.0),
                ..RawVram::default()
            }),
            ..RawAlerts::default()
        };
        let c = rules(&raw).unwrap();
        assert_eq!((c.hung.window_ms, c.vram.high_pct), (10_000, 90.0));
        let bad = RawAlerts {
            vram: Some(RawVram {
                high_pct: Some(120.0),
                ..RawVram::default()
            }),
            ..RawAlerts::default()
        };
        let e = rules(&bad).unwrap_err().to_string();
        assert!(e.contains("alerts.vram.high_pct"), "{e}");
    }

    #[test]
    fn lost_takes_its_hold_and_names_a_bad_one() {
        let raw: RawAlerts = toml::from_str("[lost]\nclear_after = \"10m\"\n").unwrap();
        assert_eq!(rules(&raw).unwrap().lost.clear_after_ms, 600_000);
        let bad: RawAlerts = toml::from_str("[lost]\nclear_after = \"soon\"\n").unwrap();
        let e = rules(&bad).unwrap_err();
        assert_eq!(e.field, "alerts.lost.clear_after");
        assert!(e.message.contains("not a duration"), "{e}");
        let typo = toml::from_str::<RawAlerts>("[lost]\nclear_afer = \"5m\"\n").unwrap_err();
        assert!(typo.to_string().contains("clear_afer"), "{typo}");
    }

    #[test]
    fn idle_takes_its_probe_limits_and_names_a_bad_one() {
        let raw: RawAlerts =
            toml::from_str("[idle]\nprobe_memory_gib = 1.5\nprobe_max = \"5s\"\n").unwrap();
        let idle = rules(&raw).unwrap().idle;
        assert_eq!(
            (idle.probe_memory_bytes, idle.probe_max_ms),
            (3 << 29, 5_000)
        );
        let bad: RawAlerts = toml::from_str("[idle]\nprobe_max = \"soon\"\n").unwrap();
        assert_eq!(rules(&bad).unwrap_err().field, "alerts.idle.probe_max");
        let bad: RawAlerts = toml::from_str("[idle]\nprobe_memory_gib = -1\n").unwrap();
        assert_eq!(
            rules(&bad).unwrap_err().field,
            "alerts.idle.probe_memory_gib"
        );
    }
}
