//! `--compat dcgm`: the families the widely used DCGM exporter dashboard reads, under the DCGM
//! names and units (percent, MiB, MHz, millijoules) with the `gpu`, `UUID`, `device`,
//! `modelName` and `Hostname` labels, so an existing dashboard works unchanged. These names do
//! not follow Prometheus conventions and do not pass `promtool check metrics`; that is the
//! point of a compatibility mode. On Kubernetes the series carry dcgm-exporter's pod labels
//! too: `pod`, `namespace`, `container` (its default names since 2.x).

use gpumeter_model::{GpuReading, GpuState, Snapshot};

use super::gpu::pod_labels;
use super::out::{Labels, Out, Samples, opt_label};

const MIB: f64 = 1024.0 * 1024.0;

fn labels(g: &GpuReading, host: &str, pods: bool) -> Labels {
    let mut labels = vec![
        ("gpu", g.index.to_string()),
        ("UUID", opt_label(g.uuid.as_deref())),
        ("device", format!("nvidia{}", g.index)),
        ("modelName", opt_label(g.name.as_deref())),
        ("Hostname", host.to_string()),
    ];
    if pods {
        let [pod, namespace, container] = pod_labels(&g.pods);
        labels.extend([
            ("pod", pod),
            ("namespace", namespace),
            ("container", container),
        ]);
    }
    labels
}

/// The DCGM-named families of one reading (`pods`: with the pod labels).
pub fn render(out: &mut Out, snap: &Snapshot, pods: bool) {
    let host = opt_label(snap.system.hostname.as_deref());
    let each = |f: fn(&GpuReading) -> Option<f64>| -> Samples {
        snap.gpus
            .iter()
            .filter(|g| g.state == GpuState::Ok)
            .filter_map(|g| Some((labels(g, &host, pods), f(g)?)))
            .collect()
    };
    out.gauge(
        "DCGM_FI_DEV_GPU_UTIL",
        "GPU utilization (in %).",
        each(|g| g.util_gpu_pct.map(f64::from)),
    );
    out.gauge(
        "DCGM_FI_DEV_MEM_COPY_UTIL",
        "Memory utilization (in %).",
        each(|g| g.util_memory_pct.map(f64::from)),
    );
    out.gauge(
        "DCGM_FI_DEV_FB_USED",
        "Framebuffer memory used (in MiB).",
        each(|g| g.memory_used_bytes.map(|b| b as f64 / MIB)),
    );
    out.gauge(
        "DCGM_FI_DEV_FB_FREE",
        "Framebuffer memory free (in MiB).",
        each(|g| {
            let (used, total) = (g.memory_used_bytes?, g.memory_total_bytes?);
            Some(total.saturating_sub(used) as f64 / MIB)
        }),
    );
    out.gauge(
        "DCGM_FI_DEV_POWER_USAGE",
        "Power draw (in W).",
        each(|g| g.power_watts),
    );
    out.gauge(
        "DCGM_FI_DEV_GPU_TEMP",
        "GPU temperature (in C).",
        each(|g| g.temperature_celsius.map(f64::from)),
    );
    out.gauge(
        "DCGM_FI_DEV_SM_CLOCK",
        "SM clock frequency (in MHz).",
        each(|g| g.clock_sm_mhz.map(f64::from)),
    );
    out.gauge(
        "DCGM_FI_DEV_MEM_CLOCK",
        "Memory clock frequency (in MHz).",
        each(|g| g.clock_memory_mhz.map(f64::from)),
    );
    // DCGM types this one a counter without the `_total` suffix; a gauge keeps the name.
    out.gauge(
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
        "Total energy consumption since boot (in mJ).",
        each(|g| g.energy_millijoules.map(|mj| mj as f64)),
    );
}
