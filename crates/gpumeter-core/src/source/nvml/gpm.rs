//! GPM (GPU Performance Monitoring, Hopper and newer): SM activity, SM occupancy, tensor
//! activity and DRAM bandwidth per GPU, computed between this tick's sample and the one kept
//! from an earlier tick (at least [`MIN_GAP_MS`] apart, as NVML requires), so the figures cover
//! the whole interval. Runs on the collector's thread with the rest of the NVML reading.
//!
//! Samples, their freeing and the metrics call go through the raw symbols with `nvml_sym` /
//! `nvml_try`: nvml-wrapper's `GpmSample` frees itself on drop through a convenience method
//! that panics on a library without `nvmlGpmSampleFree`; here a missing symbol is an error.

use std::ffi::c_uint;

use nvml_wrapper::error::{NvmlError, nvml_sym, nvml_try};
use nvml_wrapper::{Device, Nvml};
use nvml_wrapper_sys::bindings::{
    NVML_GPM_METRICS_GET_VERSION, nvmlGpmMetricId_t_NVML_GPM_METRIC_ANY_TENSOR_UTIL,
    nvmlGpmMetricId_t_NVML_GPM_METRIC_DRAM_BW_UTIL, nvmlGpmMetricId_t_NVML_GPM_METRIC_SM_OCCUPANCY,
    nvmlGpmMetricId_t_NVML_GPM_METRIC_SM_UTIL, nvmlGpmMetricsGet_t, nvmlGpmSample_t,
};

use super::support::{Ask, Reading};

/// NVML wants GPM samples at least this far apart.
pub(crate) const MIN_GAP_MS: i64 = 100;

/// The four metrics, in the order of [`GpmReading`]'s fields.
const METRICS: [c_uint; 4] = [
    nvmlGpmMetricId_t_NVML_GPM_METRIC_SM_UTIL,
    nvmlGpmMetricId_t_NVML_GPM_METRIC_SM_OCCUPANCY,
    nvmlGpmMetricId_t_NVML_GPM_METRIC_ANY_TENSOR_UTIL,
    nvmlGpmMetricId_t_NVML_GPM_METRIC_DRAM_BW_UTIL,
];

/// The metrics of one interval (percent, 0–100); `None` each when not answered.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct GpmReading {
    pub(crate) sm_active_pct: Option<f64>,
    pub(crate) sm_occupancy_pct: Option<f64>,
    pub(crate) tensor_active_pct: Option<f64>,
    pub(crate) dram_active_pct: Option<f64>,
}

/// A sample handle kept between ticks.
#[derive(Debug)]
struct Held {
    handle: nvmlGpmSample_t,
    at_ms: i64,
}

// SAFETY: a GPM sample handle is an opaque token the driver owns; it is used only by the
// thread that owns the `NvmlSource` (samples are not shared), moving it between threads is fine.
unsafe impl Send for Held {}

/// One GPU's GPM state: whether it is supported (asked once) and the sample kept.
#[derive(Debug, Default)]
pub(crate) struct GpmSlot {
    supported: Option<bool>,
    held: Option<Held>,
}

impl GpmSlot {
    /// Takes this tick's sample; with one kept from at least [`MIN_GAP_MS`] before, the
    /// metrics between them. The newer sample is kept for the next tick.
    pub(crate) fn read(
        &mut self,
        nvml: &Nvml,
        dev: &Device<'_>,
        ask: &mut Ask<'_>,
        now_ms: i64,
    ) -> GpmReading {
        if self.supported.is_none() {
            self.supported = ask.get(Reading::GpmSupport, || dev.gpm_support());
        }
        if self.supported != Some(true) {
            return GpmReading::default();
        }
        if let Some(held) = &self.held
            && now_ms.saturating_sub(held.at_ms) < MIN_GAP_MS
        {
            return GpmReading::default();
        }
        let Some(new) = ask.get(Reading::GpmSample, || sample(nvml, dev)) else {
            return GpmReading::default();
        };
        let out = match self.held.take() {
            Some(old) => {
                let r = ask
                    .get(Reading::GpmMetrics, || metrics(nvml, old.handle, new))
                    .unwrap_or_default();
                free(nvml, old.handle);
                r
            }
            None => GpmReading::default(),
        };
        self.held = Some(Held {
            handle: new,
            at_ms: now_ms,
        });
        out
    }

    /// Frees the kept sample (before the library it came from goes).
    pub(crate) fn release(&mut self, nvml: &Nvml) {
        if let Some(old) = self.held.take() {
            free(nvml, old.handle);
        }
    }
}

/// A new sample of `dev`, freed again when filling it fails.
fn sample(nvml: &Nvml, dev: &Device<'_>) -> Result<nvmlGpmSample_t, NvmlError> {
    let lib = nvml.lib();
    let alloc = nvml_sym(lib.nvmlGpmSampleAlloc.as_ref())?;
    let get = nvml_sym(lib.nvmlGpmSampleGet.as_ref())?;
    // Without a way to free samples, do not take any.
    nvml_sym(lib.nvmlGpmSampleFree.as_ref())?;
    let mut handle: nvmlGpmSample_t = std::ptr::null_mut();
    // SAFETY: the output is our own local.
    nvml_try(unsafe { alloc(&mut handle) })?;
    // SAFETY: the device handle belongs to this live `Nvml`; `handle` was just allocated.
    if let Err(e) = nvml_try(unsafe { get(dev.handle(), handle) }) {
        free(nvml, handle);
        return Err(e);
    }
    Ok(handle)
}

fn free(nvml: &Nvml, handle: nvmlGpmSample_t) {
    if let Ok(f) = nvml_sym(nvml.lib().nvmlGpmSampleFree.as_ref()) {
        // SAFETY: `handle` came from nvmlGpmSampleAlloc of this library and is freed once.
        let _ = unsafe { f(handle) };
    }
}

/// The four metrics between two samples of one GPU.
fn metrics(
    nvml: &Nvml,
    older: nvmlGpmSample_t,
    newer: nvmlGpmSample_t,
) -> Result<GpmReading, NvmlError> {
    let sym = nvml_sym(nvml.lib().nvmlGpmMetricsGet.as_ref())?;
    // SAFETY: an all-zero struct is valid plain data (integers, floats, null pointers).
    let mut req: Box<nvmlGpmMetricsGet_t> = Box::new(unsafe { std::mem::zeroed() });
    req.version = NVML_GPM_METRICS_GET_VERSION;
    req.numMetrics = METRICS.len() as c_uint;
    req.sample1 = older;
    req.sample2 = newer;
    for (slot, id) in req.metrics.iter_mut().zip(METRICS) {
        slot.metricId = id;
    }
    // SAFETY: `req` is a whole, initialised request that lives through the call.
    nvml_try(unsafe { sym(&mut *req) })?;
    let value = |i: usize| {
        req.metrics
            .get(i)
            .filter(|m| m.nvmlReturn == 0 && m.value.is_finite())
            .map(|m| m.value.clamp(0.0, 100.0))
    };
    Ok(GpmReading {
        sm_active_pct: value(0),
        sm_occupancy_pct: value(1),
        tensor_active_pct: value(2),
        dram_active_pct: value(3),
    })
}
