//! The rule tables of `[alerts]` (`fire_share_pct`, `[alerts.idle]`, `[alerts.starved]` …)
//! resolved into the engine's [`RulesConfig`], every unset key taking the rules' default.

use super::raw::RawAlerts;
use super::values::{ValueError, duration_ms, number};
use crate::engine::rules::config::{
    CheckpointConfig, ForgottenConfig, IdleConfig, LostConfig, RulesConfig, StarvedConfig,
    ThrottleConfig,
};

const MIN: i64 = 60_000;

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

    let i = raw.idle.clone().unwrap_or_default();
    let di = &d.idle;
    let idle = IdleConfig {
        enabled: i.enabled.unwrap_or(di.enabled),
        gpu_util_pct: number(
            "alerts.idle.gpu_util_pct",
            i.gpu_util_pct,
            di.gpu_util_pct,
            0.0,
            100.0,
        )?,
        mem_util_pct: number(
            "alerts.idle.mem_util_pct",
            i.mem_util_pct,
            di.mem_util_pct,
            0.0,
            100.0,
        )?,
        pcie_bytes_per_s: number(
            "alerts.idle.pcie_mb_per_s",
            i.pcie_mb_per_s,
            di.pcie_bytes_per_s / 1e6,
            0.0,
            1e6,
        )? * 1e6,
        window_ms: duration_ms("alerts.idle.window", &i.window, di.window_ms, 1_000)?,
        remind_after_ms: duration_ms(
            "alerts.idle.remind_after",
            &i.remind_after,
            di.remind_after_ms,
            0,
        )?,
        remind_every_ms: duration_ms(
            "alerts.idle.remind_every",
            &i.remind_every,
            di.remind_every_ms,
            MIN,
        )?,
        arm_after_boot_ms: duration_ms(
            "alerts.idle.arm_after_boot",
            &i.arm_after_boot,
            di.arm_after_boot_ms,
            0,
        )?,
    };

    let f = raw.forgotten.clone().unwrap_or_default();
    let df = &d.forgotten;
    let forgotten = ForgottenConfig {
        enabled: f.enabled.unwrap_or(df.enabled),
        min_vram_bytes: (number(
            "alerts.forgotten.min_vram_gib",
            f.min_vram_gib,
            1.0,
            0.0,
            1e6,
        )? * (1u64 << 30) as f64) as u64,
        max_sm_pct: number(
            "alerts.forgotten.max_sm_pct",
            f.max_sm_pct,
            df.max_sm_pct,
            0.0,
            100.0,
        )?,
        after_ms: duration_ms("alerts.forgotten.after", &f.after, df.after_ms, 0)?,
        window_ms: df.window_ms,
    };

    let s = raw.starved.clone().unwrap_or_default();
    let ds = &d.starved;
    let moderate = number(
        "alerts.starved.moderate_share_pct",
        s.moderate_share_pct,
        ds.moderate_share * 100.0,
        0.0,
        100.0,
    )? / 100.0;
    let high = number(
        "alerts.starved.high_share_pct",
        s.high_share_pct,
        ds.high_share * 100.0,
        0.0,
        100.0,
    )? / 100.0;
    if high < moderate {
        return Err(ValueError::new(
            "alerts.starved.high_share_pct",
            "must be at least moderate_share_pct",
        ));
    }
    let starved = StarvedConfig {
        enabled: s.enabled.unwrap_or(ds.enabled),
        window_ms: duration_ms("alerts.starved.window", &s.window, ds.window_ms, 5_000)?,
        warmup_ms: duration_ms("alerts.starved.warmup", &s.warmup, ds.warmup_ms, 0)?,
        util_below_pct: number(
            "alerts.starved.util_below_pct",
            s.util_below_pct,
            ds.util_below_pct,
            0.0,
            100.0,
        )?,
        cpu_saturated_pct: number(
            "alerts.starved.cpu_saturated_pct",
            s.cpu_saturated_pct,
            ds.cpu_saturated_pct,
            1.0,
            100.0,
        )?,
        main_core_pct: number(
            "alerts.starved.main_core_pct",
            s.main_core_pct,
            ds.main_core_pct,
            1.0,
            100.0,
        )?,
        iowait_pct: number(
            "alerts.starved.iowait_pct",
            s.iowait_pct,
            ds.iowait_pct,
            0.0,
            100.0,
        )?,
        h2d_rx_bytes_per_s: number(
            "alerts.starved.h2d_rx_gb_per_s",
            s.h2d_rx_gb_per_s,
            ds.h2d_rx_bytes_per_s / 1e9,
            0.0,
            1e4,
        )? * 1e9,
        moderate_share: moderate,
        high_share: high,
        sm_active_below_pct: number(
            "alerts.starved.sm_active_below_pct",
            s.sm_active_below_pct,
            ds.sm_active_below_pct,
            0.0,
            100.0,
        )?,
        h2d_util_below_pct: number(
            "alerts.starved.h2d_util_below_pct",
            s.h2d_util_below_pct,
            ds.h2d_util_below_pct,
            0.0,
            100.0,
        )?,
        disk_min_bytes_per_s: number(
            "alerts.starved.disk_min_mb_per_s",
            s.disk_min_mb_per_s,
            ds.disk_min_bytes_per_s / 1e6,
            0.0,
            1e6,
        )? * 1e6,
        disk_busy_pct: number(
            "alerts.starved.disk_busy_pct",
            s.disk_busy_pct,
            ds.disk_busy_pct,
            0.0,
            100.0,
        )?,
        disk_queue_depth: number(
            "alerts.starved.disk_queue_depth",
            s.disk_queue_depth,
            ds.disk_queue_depth,
            0.0,
            1e4,
        )?,
        phase_drop_share: number(
            "alerts.starved.phase_drop_pct",
            s.phase_drop_pct,
            ds.phase_drop_share * 100.0,
            0.0,
            100.0,
        )? / 100.0,
        ..ds.clone()
    };

    let k = raw.checkpoint.clone().unwrap_or_default();
    let dk = &d.checkpoint;
    let checkpoint = CheckpointConfig {
        pause_util_pct: number(
            "alerts.checkpoint.pause_util_pct",
            k.pause_util_pct,
            dk.pause_util_pct,
            0.0,
            100.0,
        )?,
        busy_util_pct: number(
            "alerts.checkpoint.busy_util_pct",
            k.busy_util_pct,
            dk.busy_util_pct,
            0.0,
            100.0,
        )?,
        min_pause_ms: duration_ms(
            "alerts.checkpoint.min_pause",
            &k.min_pause,
            dk.min_pause_ms,
            1_000,
        )?,
        max_pause_ms: duration_ms(
            "alerts.checkpoint.max_pause",
            &k.max_pause,
            dk.max_pause_ms,
            1_000,
        )?,
        min_write_bytes_per_s: number(
            "alerts.checkpoint.min_write_mb_per_s",
            k.min_write_mb_per_s,
            dk.min_write_bytes_per_s / 1e6,
            0.0,
            1e6,
        )? * 1e6,
        write_ratio: number(
            "alerts.checkpoint.write_ratio",
            k.write_ratio,
            dk.write_ratio,
            0.0,
            1e4,
        )?,
        periodic_tolerance: number(
            "alerts.checkpoint.periodic_tolerance_pct",
            k.periodic_tolerance_pct,
            dk.periodic_tolerance * 100.0,
            0.0,
            100.0,
        )? / 100.0,
    };
    if checkpoint.busy_util_pct <= checkpoint.pause_util_pct {
        return Err(ValueError::new(
            "alerts.checkpoint.busy_util_pct",
            "must be above pause_util_pct",
        ));
    }
    if checkpoint.max_pause_ms < checkpoint.min_pause_ms {
        return Err(ValueError::new(
            "alerts.checkpoint.max_pause",
            "must be at least min_pause",
        ));
    }

    let t = raw.throttle.clone().unwrap_or_default();
    let throttle = ThrottleConfig {
        enabled: t.enabled.unwrap_or(d.throttle.enabled),
        window_ms: duration_ms(
            "alerts.throttle.window",
            &t.window,
            d.throttle.window_ms,
            5_000,
        )?,
    };
    let (hung, xid, vram, shared, job_done) = super::signal_rules::signals(raw, &d)?;
    let l = raw.lost.clone().unwrap_or_default();
    let lost = LostConfig {
        enabled: l.enabled.unwrap_or(d.lost.enabled),
        clear_after_ms: duration_ms(
            "alerts.lost.clear_after",
            &l.clear_after,
            d.lost.clear_after_ms,
            0,
        )?,
    };
    Ok(RulesConfig {
        fire_share: fire,
        clear_share: clear,
        history_len: history,
        idle,
        forgotten,
        starved,
        checkpoint,
        throttle,
        hung,
        xid,
        lost,
        vram,
        shared,
        job_done,
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
