//! On Kubernetes, an alert names the pods it concerns: a one-GPU alert's title says whose GPU
//! it is ("GPU 3 (pod trainer-7f9c, namespace ml) …"), and a machine-wide one (idle) lists
//! each GPU's pods in its evidence. Off Kubernetes (no GPU has pods) alerts are unchanged.

use gpumeter_model::{PodRef, Snapshot};

use super::Alert;

/// Most GPUs listed in a machine-wide alert's evidence.
const MAX_LISTED: usize = 8;

/// Adds the pods of `snap`'s GPUs to `alert`.
pub(super) fn name_pods(alert: &mut Alert, snap: &Snapshot) {
    match alert.gpu {
        Some(index) => {
            let Some(words) = snap.gpu(index).and_then(|g| PodRef::describe(&g.pods)) else {
                return;
            };
            let tag = format!("GPU {index}");
            if let Some(at) = tag_at(&alert.title, &tag) {
                alert
                    .title
                    .insert_str(at + tag.len(), &format!(" ({words})"));
            }
        }
        None => {
            let listed: Vec<String> = snap
                .gpus
                .iter()
                .filter_map(|g| Some(format!("GPU {}: {}", g.index, PodRef::describe(&g.pods)?)))
                .take(MAX_LISTED)
                .collect();
            if !listed.is_empty() {
                alert.evidence.push(("pods".into(), listed.join("; ")));
            }
        }
    }
}

/// Where `tag` stands in `title` as a whole word (`GPU 1` is not the start of `GPU 12`).
fn tag_at(title: &str, tag: &str) -> Option<usize> {
    title.match_indices(tag).map(|(at, _)| at).find(|&at| {
        !title[at + tag.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit())
    })
}

#[cfg(test)]
mod tests {
    use gpumeter_model::testing::SnapshotBuilder;
    use gpumeter_model::{GpuReading, PodRef};

    use super::*;
    use crate::engine::rules::{AlertKind, Severity};
    use crate::money::Currency;

    fn alert(gpu: Option<u32>, title: &str) -> Alert {
        Alert {
            id: "x".into(),
            kind: AlertKind::IdlePaid,
            severity: Severity::Moderate,
            gpu,
            title: title.into(),
            detail: String::new(),
            evidence: Vec::new(),
            cost_micros: None,
            next_step: None,
            since_unix_ms: 0,
            currency: Currency::default(),
        }
    }

    fn snap_with_pods() -> Snapshot {
        let mut snap = SnapshotBuilder::new("test", 0).build();
        for index in [1, 12] {
            snap.gpus.push(GpuReading {
                index,
                ..GpuReading::default()
            });
        }
        snap.gpus[1].pods = vec![PodRef {
            namespace: Some("ml".into()),
            pod: Some("trainer-7f9c".into()),
            container: Some("trainer".into()),
            pod_uid: None,
        }];
        snap
    }

    #[test]
    fn a_gpu_alert_says_whose_gpu_it_is() {
        let snap = snap_with_pods();
        let mut a = alert(Some(12), "GPU 12 idle at $3.10/h");
        name_pods(&mut a, &snap);
        assert_eq!(
            a.title,
            "GPU 12 (pod trainer-7f9c, namespace ml) idle at $3.10/h"
        );
        // GPU 1 has no pod: unchanged.
        let mut b = alert(Some(1), "GPU 1 hung");
        name_pods(&mut b, &snap);
        assert_eq!(b.title, "GPU 1 hung");
    }

    #[test]
    fn a_machine_alert_lists_the_gpus_pods() {
        let snap = snap_with_pods();
        let mut a = alert(None, "GPUs idle 20 min");
        name_pods(&mut a, &snap);
        assert_eq!(
            a.evidence,
            vec![(
                "pods".to_string(),
                "GPU 12: pod trainer-7f9c, namespace ml".to_string()
            )]
        );
        let mut plain = alert(None, "GPUs idle 20 min");
        name_pods(&mut plain, &SnapshotBuilder::new("test", 0).build());
        assert!(plain.evidence.is_empty());
    }
}
