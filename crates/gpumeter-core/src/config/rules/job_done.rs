//! `[alerts.job_done]` resolved over the job-finished notice's defaults: every unset key takes the default,
//! every set one is checked (an error names the key).

use crate::config::raw::RawJobDone;
use crate::config::values::{ValueError, duration_ms};
use crate::engine::rules::config::JobDoneConfig;

/// `[alerts.job_done]` (absent: the defaults).
pub(super) fn resolve(
    raw: Option<&RawJobDone>,
    d: &JobDoneConfig,
) -> Result<JobDoneConfig, ValueError> {
    let j = raw.cloned().unwrap_or_default();
    let job_done = JobDoneConfig {
        enabled: j.enabled.unwrap_or(d.enabled),
        min_busy_ms: duration_ms("alerts.job_done.min_busy", &j.min_busy, d.min_busy_ms, 0)?,
        went_idle_ms: duration_ms(
            "alerts.job_done.went_idle",
            &j.went_idle,
            d.went_idle_ms,
            60_000,
        )?,
        ..d.clone()
    };
    Ok(job_done)
}
