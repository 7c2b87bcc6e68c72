//! Per-GPU families (`gpu` index and `uuid` labels, and on Kubernetes `pod`, `namespace` and
//! `container`, empty while unknown; the model, PCI bus id and anything else go on
//! `gpumeter_gpu_info`). A reading the driver does not support is absent from its
//! family, never 0; an idle GPU reads 0 and stays in every family. A GPU seen once and missing
//! now, or reported lost, keeps its info, counters and `gpumeter_gpu_lost 1`.

use std::collections::BTreeMap;

use gpumeter_model::{GpuReading, GpuState, PodRef, Snapshot, ThrottleReason};

use super::out::{Labels, Out, Samples, opt_label};
use gpumeter_core::engine::rules::idle::gpu_idle;
use gpumeter_core::engine::rules::starved::Cause;
use gpumeter_core::engine::rules::{IdleTotals, RulesConfig};

/// What identifies a GPU once seen (kept when it is lost).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Ident {
    uuid: String,
    name: String,
    pci_bus_id: String,
}

/// Every GPU seen since start, so that one that falls off the bus keeps its series.
#[derive(Debug, Clone, Default)]
pub struct Roster {
    seen: BTreeMap<u32, Ident>,
    /// On Kubernetes: each GPU's pod labels now (a lost GPU keeps its last); `None` off it.
    pods: Option<BTreeMap<u32, [String; 3]>>,
}

/// The `pod`, `namespace` and `container` label values of a GPU's pods: several (MIG slices,
/// time-sliced replicas) are joined with commas, sorted; `""` while unknown. A pod known only
/// by its cgroup path is named by its UID.
pub fn pod_labels(pods: &[PodRef]) -> [String; 3] {
    fn joined<'a>(parts: impl Iterator<Item = &'a str>) -> String {
        let parts: std::collections::BTreeSet<&str> = parts.collect();
        let parts: Vec<&str> = parts.into_iter().collect();
        opt_label(Some(&parts.join(",")))
    }
    [
        joined(pods.iter().filter_map(PodRef::pod_or_uid)),
        joined(pods.iter().filter_map(|p| p.namespace.as_deref())),
        joined(pods.iter().filter_map(|p| p.container.as_deref())),
    ]
}

/// Most GPUs remembered (a runaway source cannot grow the scrape without bound).
const MAX_GPUS: usize = 1024;

impl Roster {
    /// A roster whose GPU series carry `pod`, `namespace` and `container` labels.
    pub fn with_pods() -> Self {
        Self {
            pods: Some(BTreeMap::new()),
            ..Self::default()
        }
    }

    /// Notes the GPUs of a reading (identity fields fill in once known).
    pub fn observe(&mut self, snap: &Snapshot) {
        if let Some(pods) = &mut self.pods {
            for g in snap.gpus.iter().filter(|g| !lost(Some(g))) {
                if pods.len() < MAX_GPUS || pods.contains_key(&g.index) {
                    pods.insert(g.index, pod_labels(&g.pods));
                }
            }
        }
        for g in &snap.gpus {
            if self.seen.len() >= MAX_GPUS && !self.seen.contains_key(&g.index) {
                continue;
            }
            let e = self.seen.entry(g.index).or_insert_with(|| Ident {
                uuid: String::new(),
                name: String::new(),
                pci_bus_id: String::new(),
            });
            let keep = |old: &mut String, new: Option<&str>| {
                if let Some(v) = new.filter(|v| !v.is_empty()) {
                    *old = opt_label(Some(v));
                }
            };
            keep(&mut e.uuid, g.uuid.as_deref());
            keep(&mut e.name, g.name.as_deref());
            keep(&mut e.pci_bus_id, g.pci_bus_id.as_deref());
        }
    }

    /// Every GPU seen, with the labels of its series.
    pub fn gpus(&self) -> Vec<(u32, Labels)> {
        self.seen.keys().map(|&i| (i, self.labels(i))).collect()
    }

    fn labels(&self, index: u32) -> Labels {
        let uuid = self
            .seen
            .get(&index)
            .map_or_else(String::new, |i| i.uuid.clone());
        let mut labels = vec![("gpu", index.to_string()), ("uuid", uuid)];
        if let Some(pods) = &self.pods {
            let [pod, namespace, container] = pods.get(&index).cloned().unwrap_or_default();
            labels.extend([
                ("pod", pod),
                ("namespace", namespace),
                ("container", container),
            ]);
        }
        labels
    }
}

/// A GPM percentage as a ratio; `None` when unsupported (or not a number).
fn gpm(v: Option<f64>) -> Option<f64> {
    v.filter(|v| v.is_finite()).map(|p| p / 100.0)
}

/// Whether a GPU is gone: lost, needing a reset, or missing from the reading.
fn lost(g: Option<&GpuReading>) -> bool {
    g.is_none_or(|g| matches!(g.state, GpuState::Lost | GpuState::ResetRequired))
}

/// The per-GPU families of one reading.
pub fn render(
    out: &mut Out,
    snap: &Snapshot,
    roster: &Roster,
    idle: &IdleTotals,
    starved: &BTreeMap<(u32, Cause), i64>,
    rules: &RulesConfig,
) {
    let live = |f: fn(&GpuReading) -> Option<f64>| -> Samples {
        snap.gpus
            .iter()
            .filter(|g| !lost(Some(g)))
            .filter_map(|g| Some((roster.labels(g.index), f(g)?)))
            .collect()
    };
    out.gauge(
        "gpumeter_gpu_utilization_ratio",
        "Share of the last sample period in which a kernel ran on the GPU (0-1).",
        live(|g| g.util_gpu_pct.map(|p| f64::from(p) / 100.0)),
    );
    out.gauge(
        "gpumeter_gpu_memory_utilization_ratio",
        "Share of the last sample period in which device memory was read or written (0-1).",
        live(|g| g.util_memory_pct.map(|p| f64::from(p) / 100.0)),
    );
    out.gauge(
        "gpumeter_gpu_memory_used_bytes",
        "GPU memory in use.",
        live(|g| g.memory_used_bytes.map(|b| b as f64)),
    );
    out.gauge(
        "gpumeter_gpu_memory_total_bytes",
        "GPU memory installed.",
        live(|g| g.memory_total_bytes.map(|b| b as f64)),
    );
    out.gauge(
        "gpumeter_gpu_power_watts",
        "GPU power draw.",
        live(|g| g.power_watts),
    );
    out.gauge(
        "gpumeter_gpu_power_limit_watts",
        "GPU power limit.",
        live(|g| g.power_limit_watts),
    );
    out.counter(
        "gpumeter_gpu_energy_joules_total",
        "GPU energy used since the driver loaded.",
        live(|g| g.energy_millijoules.map(|mj| mj as f64 / 1000.0)),
    );
    out.gauge(
        "gpumeter_gpu_temperature_celsius",
        "GPU core temperature.",
        live(|g| g.temperature_celsius.map(f64::from)),
    );
    out.gauge(
        "gpumeter_gpu_sm_clock_hertz",
        "GPU SM clock.",
        live(|g| g.clock_sm_mhz.map(|m| f64::from(m) * 1e6)),
    );
    out.gauge(
        "gpumeter_gpu_pcie_rx_bytes_per_second",
        "PCIe traffic into the GPU.",
        live(|g| g.pcie_rx_bytes_per_s.map(|b| b as f64)),
    );
    out.gauge(
        "gpumeter_gpu_pcie_tx_bytes_per_second",
        "PCIe traffic out of the GPU.",
        live(|g| g.pcie_tx_bytes_per_s.map(|b| b as f64)),
    );
    // GPM (Hopper and newer): absent where unsupported, like every optional reading.
    out.gauge(
        "gpumeter_gpu_sm_active_ratio",
        "GPM: share of SM time with a warp resident (0-1); absent without GPM.",
        live(|g| gpm(g.sm_active_pct)),
    );
    out.gauge(
        "gpumeter_gpu_sm_occupancy_ratio",
        "GPM: resident warps as a share of the maximum (0-1); absent without GPM.",
        live(|g| gpm(g.sm_occupancy_pct)),
    );
    out.gauge(
        "gpumeter_gpu_tensor_active_ratio",
        "GPM: share of time a tensor pipe was busy (0-1); absent without GPM.",
        live(|g| gpm(g.tensor_active_pct)),
    );
    out.gauge(
        "gpumeter_gpu_dram_active_ratio",
        "GPM: DRAM bandwidth in use as a share of the peak (0-1); absent without GPM.",
        live(|g| gpm(g.dram_active_pct)),
    );
    out.gauge(
        "gpumeter_gpu_throttle_reason",
        "1 while this clock throttle reason is active, else 0 (absent when the driver cannot say).",
        throttle(snap, roster),
    );

    let idle_cfg = &rules.idle;
    let all: Vec<u32> = roster.seen.keys().copied().collect();
    let per_gpu = |f: &dyn Fn(u32) -> f64| -> Samples {
        all.iter().map(|&i| (roster.labels(i), f(i))).collect()
    };
    out.gauge(
        "gpumeter_gpu_lost",
        "1 when the GPU fell off the bus, needs a reset or stopped answering, else 0.",
        per_gpu(&|i| f64::from(u8::from(lost(snap.gpu(i))))),
    );
    out.gauge(
        "gpumeter_gpu_idle",
        "1 when the GPU's latest sample is idle (util, memory and PCIe under the idle levels).",
        per_gpu(&|i| {
            let idle = snap.gpu(i).and_then(|g| gpu_idle(g, idle_cfg));
            f64::from(u8::from(idle == Some(true)))
        }),
    );
    out.counter(
        "gpumeter_gpu_idle_seconds_total",
        "Time the GPU was idle since gpumeter started.",
        per_gpu(&|i| idle.gpus.get(&i).map_or(0.0, |t| t.idle_ms as f64 / 1000.0)),
    );
    let starved_samples: Samples = all
        .iter()
        .flat_map(|&i| {
            Cause::ALL.iter().map(move |&c| {
                let mut l = roster.labels(i);
                l.push(("cause", c.name().to_string()));
                let ms = starved.get(&(i, c)).copied().unwrap_or(0);
                (l, ms as f64 / 1000.0)
            })
        })
        .collect();
    out.counter(
        "gpumeter_gpu_starved_seconds_total",
        "Time the GPU stood starved by its input pipeline, by the cause the evidence is consistent with.",
        starved_samples,
    );
    // XID counts survive a lost GPU (XID 79 is why it is lost); absent where events are
    // unsupported.
    let xids: Samples = all
        .iter()
        .filter_map(|&i| Some((i, snap.gpu(i)?.xid_errors.as_ref()?)))
        .flat_map(|(i, counts)| {
            counts.iter().map(move |x| {
                let mut l = roster.labels(i);
                l.push(("xid", x.xid.to_string()));
                (l, x.count as f64)
            })
        })
        .collect();
    out.counter(
        "gpumeter_gpu_xid_errors_total",
        "Critical XID errors the driver reported for the GPU since gpumeter started, by XID.",
        xids,
    );
    let info: Samples = all
        .iter()
        .filter_map(|&i| {
            let id = roster.seen.get(&i)?;
            Some((
                vec![
                    ("gpu", i.to_string()),
                    ("uuid", id.uuid.clone()),
                    ("name", id.name.clone()),
                    ("pci_bus_id", id.pci_bus_id.clone()),
                ],
                1.0,
            ))
        })
        .collect();
    out.gauge(
        "gpumeter_gpu_info",
        "The GPU's model and PCI bus id (value 1).",
        info,
    );
}

fn throttle(snap: &Snapshot, roster: &Roster) -> Samples {
    let mut s = Samples::new();
    for g in snap.gpus.iter().filter(|g| !lost(Some(g))) {
        let Some(active) = &g.throttle_reasons else {
            continue;
        };
        for (reason, _) in ThrottleReason::ALL {
            let mut l = roster.labels(g.index);
            l.push(("reason", reason.label().replace('-', "_")));
            s.push((l, f64::from(u8::from(active.contains(&reason)))));
        }
    }
    s
}
