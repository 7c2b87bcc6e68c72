//! The tables of the sharper signals — `[alerts.hung]`, `[alerts.xid]`, `[alerts.vram]`,
//! `[alerts.shared]`, `[alerts.job_done]` — resolved over the rules' defaults (see
//! docs/alerts.md). Called by [`super::rules::rules`]; reads nothing but the raw tables.

use super::raw::RawAlerts;
use super::values::{ValueError, duration_ms, number};
use crate::engine::rules::config::{
    HungConfig, JobDoneConfig, RulesConfig, SharedConfig, VramConfig, XidConfig,
};

/// The five rules' settings, in that order.
pub type Signals = (
    HungConfig,
    XidConfig,
    VramConfig,
    SharedConfig,
    JobDoneConfig,
);

pub fn signals(raw: &RawAlerts, d: &RulesConfig) -> Result<Signals, ValueError> {
    let h = raw.hung.clone().unwrap_or_default();
    let hung = HungConfig {
        enabled: h.enabled.unwrap_or(d.hung.enabled),
        window_ms: duration_ms("alerts.hung.window", &h.window, d.hung.window_ms, 5_000)?,
        ..d.hung.clone()
    };
    let xid = XidConfig {
        enabled: raw
            .xid
            .as_ref()
            .and_then(|x| x.enabled)
            .unwrap_or(d.xid.enabled),
    };
    let v = raw.vram.clone().unwrap_or_default();
    let trend_ms = duration_ms("alerts.vram.trend", &v.trend, d.vram.trend_ms, 30_000)?;
    let vram = VramConfig {
        enabled: v.enabled.unwrap_or(d.vram.enabled),
        trend_ms,
        horizon_ms: duration_ms("alerts.vram.horizon", &v.horizon, d.vram.horizon_ms, 60_000)?,
        high_pct: number(
            "alerts.vram.high_pct",
            v.high_pct,
            d.vram.high_pct,
            50.0,
            100.0,
        )?,
        ..d.vram.clone()
    };
    let s = raw.shared.clone().unwrap_or_default();
    let shared = SharedConfig {
        enabled: s.enabled.unwrap_or(d.shared.enabled),
        window_ms: duration_ms("alerts.shared.window", &s.window, d.shared.window_ms, 5_000)?,
        ..d.shared.clone()
    };
    let j = raw.job_done.clone().unwrap_or_default();
    let job_done = JobDoneConfig {
        enabled: j.enabled.unwrap_or(d.job_done.enabled),
        min_busy_ms: duration_ms(
            "alerts.job_done.min_busy",
            &j.min_busy,
            d.job_done.min_busy_ms,
            0,
        )?,
        ..d.job_done.clone()
    };
    Ok((hung, xid, vram, shared, job_done))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::raw::{RawVram, RawWindowed};

    #[test]
    fn unset_tables_are_the_defaults_and_set_keys_apply_with_named_errors() {
        let d = RulesConfig::default();
        let (hung, xid, vram, shared, job_done) = signals(&RawAlerts::default(), &d).unwrap();
        assert_eq!(
            (hung, xid, vram, shared, job_done),
            (
                d.hung.clone(),
                d.xid.clone(),
                d.vram.clone(),
                d.shared.clone(),
                d.job_done.clone()
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
        let (hung, _, vram, ..) = signals(&raw, &d).unwrap();
        assert_eq!((hung.window_ms, vram.high_pct), (10_000, 90.0));
        let bad = RawAlerts {
            vram: Some(RawVram {
                high_pct: Some(120.0),
                ..RawVram::default()
            }),
            ..RawAlerts::default()
        };
        let e = signals(&bad, &d).unwrap_err().to_string();
        assert!(e.contains("alerts.vram.high_pct"), "{e}");
    }
}
