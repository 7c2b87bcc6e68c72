//! The raw `[alerts.<rule>]` tables of the config file (every key optional, unknown keys
//! refused) and [`RawRules::resolve`], which lays them over the defaults of [`RulesConfig`] with
//! errors that name the key.

use serde::Deserialize;

use super::config::{
    ForgottenConfig, IdleConfig, RulesConfig, StarvedConfig, ThrottleConfig, ValueError,
};
use crate::cli::parse_duration;

const MIN: i64 = 60_000;

/// `[alerts.idle]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawIdle {
    pub enabled: Option<bool>,
    pub gpu_util_pct: Option<f64>,
    pub mem_util_pct: Option<f64>,
    pub pcie_mb_per_s: Option<f64>,
    pub window: Option<String>,
    pub remind_after: Option<String>,
    pub remind_every: Option<String>,
    pub arm_after_boot: Option<String>,
}

/// `[alerts.forgotten]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawForgotten {
    pub enabled: Option<bool>,
    pub min_vram_gib: Option<f64>,
    pub max_sm_pct: Option<f64>,
    pub after: Option<String>,
}

/// `[alerts.starved]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawStarved {
    pub enabled: Option<bool>,
    pub window: Option<String>,
    pub util_below_pct: Option<f64>,
    pub cpu_saturated_pct: Option<f64>,
    pub main_core_pct: Option<f64>,
    pub iowait_pct: Option<f64>,
    pub h2d_rx_gb_per_s: Option<f64>,
    pub moderate_share_pct: Option<f64>,
    pub high_share_pct: Option<f64>,
}

/// `[alerts.throttle]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawThrottle {
    pub enabled: Option<bool>,
    pub window: Option<String>,
}

/// The rule tables of `[alerts]` (the channel keys live in `notify::config`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RawRules {
    pub fire_share_pct: Option<f64>,
    pub clear_share_pct: Option<f64>,
    pub history: Option<usize>,
    pub idle: Option<RawIdle>,
    pub forgotten: Option<RawForgotten>,
    pub starved: Option<RawStarved>,
    pub throttle: Option<RawThrottle>,
}

/// A duration key: `"10m"`, at least `min_ms`.
pub fn duration_ms(
    field: &str,
    text: &Option<String>,
    default: i64,
    min_ms: i64,
) -> Result<i64, ValueError> {
    let Some(text) = text else { return Ok(default) };
    let d = parse_duration(text).map_err(|e| ValueError::new(field, e))?;
    let ms = i64::try_from(d.as_millis()).map_err(|_| ValueError::new(field, "too long"))?;
    if ms < min_ms {
        return Err(ValueError::new(
            field,
            format!("'{text}' is too short (at least {} s)", min_ms / 1000),
        ));
    }
    Ok(ms)
}

/// A number key within `lo..=hi`.
pub fn number(
    field: &str,
    v: Option<f64>,
    default: f64,
    lo: f64,
    hi: f64,
) -> Result<f64, ValueError> {
    match v {
        None => Ok(default),
        Some(x) if x.is_finite() && (lo..=hi).contains(&x) => Ok(x),
        Some(x) => Err(ValueError::new(
            field,
            format!("{x} is out of range ({lo}–{hi})"),
        )),
    }
}

impl RawRules {
    /// Defaults overlaid with the keys that are set.
    pub fn resolve(&self) -> Result<RulesConfig, ValueError> {
        let d = RulesConfig::default();
        let fire = number(
            "alerts.fire_share_pct",
            self.fire_share_pct,
            d.fire_share * 100.0,
            1.0,
            100.0,
        )? / 100.0;
        let clear = number(
            "alerts.clear_share_pct",
            self.clear_share_pct,
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
        let history = self.history.unwrap_or(d.history_len);
        if !(1..=10_000).contains(&history) {
            return Err(ValueError::new("alerts.history", "must be 1–10000"));
        }

        let i = self.idle.clone().unwrap_or_default();
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

        let f = self.forgotten.clone().unwrap_or_default();
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

        let s = self.starved.clone().unwrap_or_default();
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
            ..ds.clone()
        };

        let t = self.throttle.clone().unwrap_or_default();
        let throttle = ThrottleConfig {
            enabled: t.enabled.unwrap_or(d.throttle.enabled),
            window_ms: duration_ms(
                "alerts.throttle.window",
                &t.window,
                d.throttle.window_ms,
                5_000,
            )?,
        };
        Ok(RulesConfig {
            fire_share: fire,
            clear_share: clear,
            history_len: history,
            idle,
            forgotten,
            starved,
            throttle,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_tables_give_the_design_defaults() {
        let c = RawRules::default().resolve().unwrap();
        assert_eq!(c, RulesConfig::default());
        assert_eq!(c.idle.remind_after_ms, 600_000);
        assert_eq!(c.forgotten.min_vram_bytes, 1 << 30);
        assert_eq!(c.starved.h2d_rx_bytes_per_s, 1e9);
    }

    #[test]
    fn keys_override_and_bad_values_name_the_key() {
        let raw = RawRules {
            idle: Some(RawIdle {
                remind_after: Some("5m".into()),
                pcie_mb_per_s: Some(2.0),
                ..RawIdle::default()
            }),
            ..RawRules::default()
        };
        let c = raw.resolve().unwrap();
        assert_eq!(c.idle.remind_after_ms, 300_000);
        assert_eq!(c.idle.pcie_bytes_per_s, 2e6);

        let bad = RawRules {
            idle: Some(RawIdle {
                remind_every: Some("soon".into()),
                ..RawIdle::default()
            }),
            ..RawRules::default()
        };
        let e = bad.resolve().unwrap_err();
        assert_eq!(e.field, "alerts.idle.remind_every");
        assert!(e.message.contains("not a duration"), "{e}");

        let flappy = RawRules {
            fire_share_pct: Some(50.0),
            clear_share_pct: Some(60.0),
            ..RawRules::default()
        };
        assert_eq!(
            flappy.resolve().unwrap_err().field,
            "alerts.clear_share_pct"
        );
        let e = RawRules {
            starved: Some(RawStarved {
                util_below_pct: Some(130.0),
                ..RawStarved::default()
            }),
            ..RawRules::default()
        }
        .resolve()
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "alerts.starved.util_below_pct: 130 is out of range (0–100)"
        );
    }
}
