//! Which Kubernetes pod a GPU or a process belongs to ([`PodRef`]): from the kubelet's
//! pod-resources API (names) or, without it, from a process's cgroup path (the pod's UID and
//! the container's id). Plain data; absent off Kubernetes.

use serde::{Deserialize, Serialize};

use crate::SharedStr;

/// How much of a pod's UID names it where there is no room for all of it (as a short
/// container id does: the UID is random, so 8 hex digits tell a node's pods apart).
pub const SHORT_UID_CHARS: usize = 8;

/// A pod, and the container in it, as far as it is known: every part may be missing.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PodRef {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<SharedStr>,
    /// The pod's name (pod-resources API).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<SharedStr>,
    /// The container's name (pod-resources API) or short id (cgroup path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<SharedStr>,
    /// The pod's UID, from the cgroup path (`kubepods…/pod<uid>/…`), when its name is not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_uid: Option<SharedStr>,
}

impl PodRef {
    /// What names the pod: its name, else its UID.
    pub fn pod_or_uid(&self) -> Option<&str> {
        self.pod.as_deref().or(self.pod_uid.as_deref())
    }

    /// What names the pod in a narrow place (a table cell): its name, else the first
    /// [`SHORT_UID_CHARS`] characters of its UID.
    pub fn short_name(&self) -> Option<&str> {
        if let Some(name) = self.pod.as_deref() {
            return Some(name);
        }
        let uid = self.pod_uid.as_deref()?;
        let end = uid
            .char_indices()
            .nth(SHORT_UID_CHARS)
            .map_or(uid.len(), |(i, _)| i);
        Some(&uid[..end])
    }

    /// Words for alerts and the dashboard: `pod trainer-7f9c, namespace ml` (several pods on
    /// one GPU, as with MIG: `pods a, b, namespace ml`); `None` when nothing is known.
    pub fn describe(pods: &[PodRef]) -> Option<String> {
        let mut names: Vec<&str> = pods.iter().filter_map(PodRef::pod_or_uid).collect();
        names.sort_unstable();
        names.dedup();
        if names.is_empty() {
            return None;
        }
        let mut spaces: Vec<&str> = pods.iter().filter_map(|p| p.namespace.as_deref()).collect();
        spaces.sort_unstable();
        spaces.dedup();
        let word = if names.len() == 1 { "pod" } else { "pods" };
        let mut out = format!("{word} {}", names.join(", "));
        if !spaces.is_empty() {
            let word = if spaces.len() == 1 {
                "namespace"
            } else {
                "namespaces"
            };
            out.push_str(&format!(", {word} {}", spaces.join(", ")));
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(ns: &str, name: &str) -> PodRef {
        PodRef {
            namespace: Some(ns.into()),
            pod: Some(name.into()),
            container: Some("main".into()),
            pod_uid: None,
        }
    }

    #[test]
    fn describe_names_one_pod_or_several() {
        assert_eq!(
            PodRef::describe(&[pod("ml", "trainer-7f9c")]).as_deref(),
            Some("pod trainer-7f9c, namespace ml")
        );
        assert_eq!(
            PodRef::describe(&[pod("ml", "a"), pod("ml", "b")]).as_deref(),
            Some("pods a, b, namespace ml")
        );
        let by_uid = PodRef {
            pod_uid: Some("0d9a".into()),
            ..PodRef::default()
        };
        assert_eq!(PodRef::describe(&[by_uid]).as_deref(), Some("pod 0d9a"));
        assert_eq!(PodRef::describe(&[PodRef::default()]), None);
        assert_eq!(PodRef::describe(&[]), None);
    }

    #[test]
    fn short_name_is_the_name_else_the_uid_cut_short() {
        assert_eq!(pod("ml", "trainer-7f9c").short_name(), Some("trainer-7f9c"));
        let by_uid = |uid: &str| PodRef {
            pod_uid: Some(uid.into()),
            ..PodRef::default()
        };
        assert_eq!(
            by_uid("0d9a1c2e-5b7f-4c11-9e2a-6f0b3c8d1a22").short_name(),
            Some("0d9a1c2e")
        );
        assert_eq!(by_uid("0d9a").short_name(), Some("0d9a"));
        assert_eq!(by_uid("ééééééééé").short_name(), Some("éééééééé"));
        assert_eq!(PodRef::default().short_name(), None);
    }

    #[test]
    fn absent_parts_are_left_out_of_json() {
        let json = serde_json::to_string(&PodRef {
            pod_uid: Some("u".into()),
            ..PodRef::default()
        })
        .unwrap();
        assert_eq!(json, r#"{"pod_uid":"u"}"#);
    }
}
