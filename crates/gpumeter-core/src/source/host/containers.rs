//! Which container a process runs in, from its `/proc/<pid>/cgroup` paths: the short (12-char)
//! id of docker, containerd/CRI, CRI-O, podman and Kubernetes containers, or the name of an LXC
//! container. A plain host process (user session, system service) has none.
//!
//! Recognised path components (the innermost match wins, so docker-in-docker names the inner
//! one): `docker-<id>.scope`, `cri-containerd-<id>.scope`, `crio-<id>.scope`,
//! `libpod-<id>.scope`, `nerdctl-<id>.scope`, and a bare `<id>` under `/docker/` or `/kubepods/`
//! (cgroupfs driver), where `<id>` is 64 hex digits; `lxc.payload.<name>` and `/lxc/<name>`.
//! conmon and LXC monitor scopes belong to the host-side helpers, not to the container.
//!
//! A Kubernetes pod's UID is read from the same paths ([`pod_uid_of`]): `pod<uid>` under
//! `/kubepods/` (cgroupfs driver) or `kubepods-<qos>-pod<uid>.slice` (systemd driver, which
//! writes the UID's dashes as underscores).

use procfs::ProcessCGroups;

use crate::sanitize::{MAX_NAME_CHARS, sanitize};

/// Characters kept of a container id (the length `docker ps` shows).
pub(super) const SHORT_ID_CHARS: usize = 12;

/// The container named by a process's cgroups: the unified (v2) hierarchy first, then v1.
pub(super) fn container_of(groups: &ProcessCGroups) -> Option<String> {
    let unified = groups.0.iter().filter(|g| g.hierarchy == 0);
    let legacy = groups.0.iter().filter(|g| g.hierarchy != 0);
    unified
        .chain(legacy)
        .find_map(|g| container_in_path(&g.pathname))
}

/// The container named by one cgroup path.
pub(super) fn container_in_path(path: &str) -> Option<String> {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    for (i, part) in parts.iter().enumerate().rev() {
        if part.contains("conmon") || part.starts_with("lxc.monitor") {
            continue;
        }
        let unit = part.strip_suffix(".scope").unwrap_or(part);
        let candidate = unit.rsplit('-').next().unwrap_or(unit);
        if is_container_id(candidate) {
            let short: String = candidate.chars().take(SHORT_ID_CHARS).collect();
            return Some(short.to_ascii_lowercase());
        }
        let lxc_name = part
            .strip_prefix("lxc.payload.")
            .or_else(|| (i > 0 && parts[i - 1] == "lxc").then_some(*part));
        if let Some(name) = lxc_name {
            let name = sanitize(name, MAX_NAME_CHARS);
            if !name.is_empty() {
                return Some(name);
            }
        }
    }
    None
}

/// The Kubernetes pod UID named by a process's cgroups (unified hierarchy first), lowercase
/// with dashes.
pub(super) fn pod_uid_of(groups: &ProcessCGroups) -> Option<String> {
    let unified = groups.0.iter().filter(|g| g.hierarchy == 0);
    let legacy = groups.0.iter().filter(|g| g.hierarchy != 0);
    unified
        .chain(legacy)
        .find_map(|g| pod_uid_in_path(&g.pathname))
}

/// The pod UID in one cgroup path: only under a `kubepods` component.
pub(super) fn pod_uid_in_path(path: &str) -> Option<String> {
    let parts = path.split('/').filter(|p| !p.is_empty());
    let mut under_kubepods = false;
    for part in parts {
        let unit = part.strip_suffix(".slice").unwrap_or(part);
        if unit.starts_with("kubepods") {
            under_kubepods = true;
        }
        if !under_kubepods {
            continue;
        }
        // cgroupfs: `pod<uid>` (dashes kept); systemd: `kubepods-<qos>-pod<uid_>.slice`.
        let tail = if unit.starts_with("pod") {
            unit
        } else {
            unit.rsplit('-').next().unwrap_or(unit)
        };
        if let Some(uid) = tail.strip_prefix("pod") {
            let uid = uid.replace('_', "-").to_ascii_lowercase();
            if is_pod_uid(&uid) {
                return Some(uid);
            }
        }
    }
    None
}

/// A pod UID is an RFC 4122 UUID: 8-4-4-4-12 hex digits.
fn is_pod_uid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Docker, containerd, CRI-O and podman ids are 64 hex digits.
fn is_container_id(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use procfs::prelude::*;

    const ID: &str = "3f4e5d6c7b8a99887766554433221100ffeeddccbbaa00112233445566778899";
    const SHORT: &str = "3f4e5d6c7b8a";

    fn groups(text: &str) -> ProcessCGroups {
        ProcessCGroups::from_read(text.as_bytes()).unwrap()
    }

    #[test]
    fn docker_cgroup_v1_and_v2_forms() {
        assert_eq!(
            container_in_path(&format!("/docker/{ID}")).as_deref(),
            Some(SHORT)
        );
        assert_eq!(
            container_in_path(&format!("/system.slice/docker-{ID}.scope")).as_deref(),
            Some(SHORT)
        );
        // systemd running inside the container adds its own units below.
        assert_eq!(
            container_in_path(&format!("/docker/{ID}/init.scope")).as_deref(),
            Some(SHORT)
        );
    }

    #[test]
    fn containerd_crio_and_kubepods_forms() {
        let systemd = format!(
            "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1a2b3c4d_5e6f_7a8b_9c0d_112233445566.slice/cri-containerd-{ID}.scope"
        );
        assert_eq!(container_in_path(&systemd).as_deref(), Some(SHORT));
        let cgroupfs = format!("/kubepods/besteffort/pod1a2b3c4d-5e6f-7a8b-9c0d-112233445566/{ID}");
        assert_eq!(container_in_path(&cgroupfs).as_deref(), Some(SHORT));
        let crio = format!("/kubepods.slice/kubepods-pod1.slice/crio-{ID}.scope");
        assert_eq!(container_in_path(&crio).as_deref(), Some(SHORT));
        // A pod-level cgroup names no container.
        assert_eq!(
            container_in_path(
                "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1a2b.slice"
            ),
            None
        );
    }

    #[test]
    fn pod_uid_from_systemd_and_cgroupfs_paths() {
        const UID: &str = "1a2b3c4d-5e6f-7a8b-9c0d-112233445566";
        let systemd = format!(
            "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1a2b3c4d_5e6f_7a8b_9c0d_112233445566.slice/cri-containerd-{ID}.scope"
        );
        assert_eq!(pod_uid_in_path(&systemd).as_deref(), Some(UID));
        let guaranteed =
            "/kubepods.slice/kubepods-pod1A2B3C4D_5E6F_7A8B_9C0D_112233445566.slice".to_string();
        assert_eq!(pod_uid_in_path(&guaranteed).as_deref(), Some(UID));
        let cgroupfs = format!("/kubepods/besteffort/pod{UID}/{ID}");
        assert_eq!(pod_uid_in_path(&cgroupfs).as_deref(), Some(UID));
        let v1 = groups(&format!("11:memory:/kubepods/pod{UID}/{ID}\n0::/\n"));
        assert_eq!(pod_uid_of(&v1).as_deref(), Some(UID));
        // Not under kubepods, or not a UUID: no pod.
        assert_eq!(pod_uid_in_path(&format!("/system.slice/pod{UID}")), None);
        assert_eq!(pod_uid_in_path("/kubepods/besteffort/pod1234/abc"), None);
        assert_eq!(pod_uid_in_path(&format!("/docker/{ID}")), None);
    }

    #[test]
    fn podman_container_but_not_its_conmon() {
        let rootless = format!(
            "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-{ID}.scope/container"
        );
        assert_eq!(container_in_path(&rootless).as_deref(), Some(SHORT));
        assert_eq!(
            container_in_path(&format!("/machine.slice/libpod-{ID}.scope")).as_deref(),
            Some(SHORT)
        );
        assert_eq!(
            container_in_path(&format!("/machine.slice/libpod-conmon-{ID}.scope")),
            None
        );
    }

    #[test]
    fn lxc_names_are_sanitized() {
        assert_eq!(
            container_in_path("/lxc.payload.web1").as_deref(),
            Some("web1")
        );
        assert_eq!(container_in_path("/lxc/db\u{1b}[2J").as_deref(), Some("db"));
        assert_eq!(container_in_path("/lxc.monitor.web1"), None);
    }

    #[test]
    fn plain_host_processes_have_no_container() {
        for path in [
            "/",
            "/user.slice/user-1000.slice/session-4.scope",
            "/system.slice/sshd.service",
            "/init.scope",
            // 63 hex digits is not an id.
            &format!("/docker/{}", &ID[1..]),
        ] {
            assert_eq!(container_in_path(path), None, "{path}");
        }
    }

    #[test]
    fn unified_hierarchy_wins_then_v1_lines_are_searched() {
        let v2 = groups(&format!("0::/system.slice/docker-{ID}.scope\n"));
        assert_eq!(container_of(&v2).as_deref(), Some(SHORT));
        let v1 = groups(&format!(
            "12:pids:/docker/{ID}\n11:memory:/docker/{ID}\n1:name=systemd:/docker/{ID}\n0::/\n"
        ));
        assert_eq!(container_of(&v1).as_deref(), Some(SHORT));
        let host = groups("0::/user.slice/user-1000.slice/session-1.scope\n");
        assert_eq!(container_of(&host), None);
    }
}
