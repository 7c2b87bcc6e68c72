//! What the kubelet said, as a look-up from GPU device id to the pods given it ([`PodTable`]),
//! and how a snapshot's GPUs and processes are labelled from it or, without it, from the GPU
//! processes' cgroup paths ([`attribute`]).
//!
//! The NVIDIA device plugin names a whole GPU by its UUID (`GPU-…`), a MIG slice by its MIG
//! device's UUID (`MIG-…`), a time-sliced replica as `<uuid>::<n>`, and with
//! `deviceIDStrategy=index` a GPU by its index; all four are matched.

use std::collections::{BTreeMap, BTreeSet};

use gpumeter_model::{GpuReading, PodRef, ProcessReading, SharedStr, Snapshot};

use super::proto::{AllocatableResourcesResponse, ContainerDevices, ListPodResourcesResponse};
use gpumeter_core::sanitize::sanitize;

/// Longest pod, namespace or container name kept (Kubernetes allows 253 for a pod).
const MAX_KUBE_NAME_CHARS: usize = 253;

/// GPU device id → the containers it was given to; and the GPU ids the kubelet hands out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PodTable {
    given: BTreeMap<String, BTreeSet<PodRef>>,
    /// `None` when the kubelet did not say (no `GetAllocatableResources`).
    allocatable: Option<BTreeSet<String>>,
}

impl PodTable {
    /// The table from a `List` answer and, where the kubelet gave one, a
    /// `GetAllocatableResources` answer. Devices of other resources than NVIDIA's are ignored.
    pub(super) fn from_answers(
        listed: &ListPodResourcesResponse,
        allocatable: Option<&AllocatableResourcesResponse>,
    ) -> PodTable {
        let mut given: BTreeMap<String, BTreeSet<PodRef>> = BTreeMap::new();
        for pod in &listed.pod_resources {
            for container in &pod.containers {
                let who = PodRef {
                    namespace: kube_name(&pod.namespace),
                    pod: kube_name(&pod.name),
                    container: kube_name(&container.name),
                    pod_uid: None,
                };
                for id in gpu_ids(&container.devices) {
                    given.entry(id).or_default().insert(who.clone());
                }
            }
        }
        let allocatable = allocatable.map(|a| gpu_ids(&a.devices).collect());
        PodTable { given, allocatable }
    }

    /// The pods given any of `ids`, and whether the kubelet knows any of them at all.
    fn look_up(&self, ids: &[&str]) -> (Vec<PodRef>, bool) {
        let mut pods = BTreeSet::new();
        let mut known = false;
        for id in ids {
            if let Some(given) = self.given.get(*id) {
                pods.extend(given.iter().cloned());
                known = true;
            }
            known |= self.allocatable.as_ref().is_some_and(|a| a.contains(*id));
        }
        (pods.into_iter().collect(), known)
    }

    /// How many GPU device ids the kubelet has given out.
    pub fn given_count(&self) -> usize {
        self.given.len()
    }
}

/// The NVIDIA device ids among `devices`, a time-slicing replica's `::<n>` cut off.
fn gpu_ids(devices: &[ContainerDevices]) -> impl Iterator<Item = String> + '_ {
    devices
        .iter()
        .filter(|d| d.resource_name.starts_with("nvidia.com/"))
        .flat_map(|d| d.device_ids.iter())
        .map(|id| id.split("::").next().unwrap_or(id).to_string())
        .filter(|id| !id.is_empty())
}

fn kube_name(raw: &str) -> Option<SharedStr> {
    let clean = sanitize(raw, MAX_KUBE_NAME_CHARS);
    (!clean.is_empty()).then(|| clean.into())
}

/// Labels `snap`'s GPUs with their pods: from `table` where the kubelet names the GPU (or its
/// MIG devices), else from the pods of the processes on it (their cgroup paths). A GPU the
/// kubelet knows and gave to no one stays unlabelled. A process in a pod on a GPU given to
/// exactly one pod gets that pod's names beside the UID its cgroup gave; a process with no GPU
/// (a dataloader worker) in a pod so named gets its pod's name and namespace too.
pub fn attribute(table: Option<&PodTable>, snap: &mut Snapshot) {
    let Snapshot {
        gpus, processes, ..
    } = snap;
    for gpu in gpus.iter_mut() {
        gpu.pods = pods_of(table, gpu, processes);
    }
    for process in processes.iter_mut() {
        name_from_gpus(process, gpus);
    }
    name_from_pod_mates(processes);
}

/// Names the pods of processes known only by their pod's UID where another process of the same
/// pod was named (a UID is one pod). The container stays the cgroup's id: a process without a
/// GPU may be in another container of the pod (a sidecar).
fn name_from_pod_mates(processes: &mut [ProcessReading]) {
    let named: BTreeMap<SharedStr, (Option<SharedStr>, SharedStr)> = processes
        .iter()
        .filter_map(|p| p.pod.as_ref())
        .filter_map(|p| Some((p.pod_uid.clone()?, (p.namespace.clone(), p.pod.clone()?))))
        .collect();
    if named.is_empty() {
        return;
    }
    for pod in processes.iter_mut().filter_map(|p| p.pod.as_mut()) {
        if pod.pod.is_some() {
            continue;
        }
        if let Some((namespace, name)) = pod.pod_uid.as_ref().and_then(|u| named.get(u)) {
            pod.namespace = namespace.clone();
            pod.pod = Some(name.clone());
        }
    }
}

fn pods_of(
    table: Option<&PodTable>,
    gpu: &GpuReading,
    processes: &[ProcessReading],
) -> Vec<PodRef> {
    if let Some(table) = table {
        let index = gpu.index.to_string();
        let mut ids: Vec<&str> = gpu.uuid.as_deref().into_iter().collect();
        ids.extend(gpu.mig_uuids.iter().map(|u| &**u));
        ids.push(&index);
        let (pods, known) = table.look_up(&ids);
        if known {
            return pods;
        }
    }
    let from_cgroups: BTreeSet<PodRef> = processes
        .iter()
        .filter(|p| p.gpu.iter().any(|u| u.gpu_index == gpu.index))
        .filter_map(|p| p.pod.clone())
        .collect();
    from_cgroups.into_iter().collect()
}

fn name_from_gpus(process: &mut ProcessReading, gpus: &[GpuReading]) {
    let Some(pod) = process.pod.as_mut() else {
        return;
    };
    if pod.pod.is_some() {
        return;
    }
    let named: BTreeSet<&PodRef> = process
        .gpu
        .iter()
        .filter_map(|u| gpus.iter().find(|g| g.index == u.gpu_index))
        .flat_map(|g| g.pods.iter())
        .filter(|p| p.pod.is_some())
        .collect();
    if let [only] = named.into_iter().collect::<Vec<_>>()[..] {
        pod.namespace = only.namespace.clone();
        pod.pod = only.pod.clone();
        pod.container = only.container.clone().or(pod.container.take());
    }
}
