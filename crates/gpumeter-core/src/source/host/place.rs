//! Where gpumeter runs: on a host, in a container (and which runtime), or in a VM. Decided
//! once per sampler, from marker files and cgroup paths — what runtimes leave behind:
//! - docker: `/.dockerenv`; podman: `/run/.containerenv`; Kubernetes: a service-account
//!   token under `/var/run/secrets/kubernetes.io`; any: `container=` in PID 1's environment
//!   (systemd's convention, set by podman, LXC and systemd-nspawn);
//! - our own cgroup path naming `kubepods`, `docker`, `cri-containerd`, `crio`, `libpod`,
//!   `lxc` (without a cgroup namespace it shows the host's path);
//! - a VM: the DMI vendor/product in sysfs (QEMU/KVM, VMware, Xen, Hyper-V, cloud names), or
//!   the `hypervisor` CPU flag in `<proc>/cpuinfo`.
//!
//! A container inside a VM says container: that is what changes how the machine is read.

use gpumeter_model::{PlaceKind, RunsIn};

use super::Roots;
use super::cgroup::read_text;
use super::system::read_capped;

/// Where we run; never fails (no evidence of a container or a hypervisor reads as host).
pub(super) fn detect(roots: &Roots) -> RunsIn {
    if let Some(runtime) = container_runtime(roots) {
        return RunsIn {
            kind: PlaceKind::Container,
            runtime,
        };
    }
    if let Some(hypervisor) = hypervisor(roots) {
        return RunsIn {
            kind: PlaceKind::Vm,
            runtime: hypervisor,
        };
    }
    RunsIn {
        kind: PlaceKind::Host,
        runtime: None,
    }
}

/// `Some(runtime)` when in a container (`Some(None)`: a container of unknown kind).
fn container_runtime(roots: &Roots) -> Option<Option<String>> {
    let named = |s: &str| Some(Some(s.to_string()));
    let cgroup = read_text(&roots.proc.join("self/cgroup")).unwrap_or_default();
    let in_path = |needle: &str| cgroup.lines().any(|l| l.contains(needle));
    let k8s = roots
        .root
        .join("var/run/secrets/kubernetes.io/serviceaccount")
        .exists()
        || in_path("kubepods");
    if k8s {
        return named("kubernetes");
    }
    if roots.root.join("run/.containerenv").exists() || in_path("libpod") {
        return named("podman");
    }
    if roots.root.join(".dockerenv").exists() || in_path("/docker") {
        return named("docker");
    }
    if in_path("containerd") || in_path("crio-") {
        return named("containerd");
    }
    if in_path("lxc") {
        return named("lxc");
    }
    let environ = read_capped(&roots.proc.join("1/environ"), 64 << 10).unwrap_or_default();
    let marker = environ
        .split(|&b| b == 0)
        .find_map(|kv| kv.strip_prefix(b"container="))
        .map(|v| String::from_utf8_lossy(v).trim().to_string());
    match marker.as_deref() {
        Some("") | None => None,
        Some(v) => {
            let v: String = v
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
                .take(32)
                .collect();
            Some(Some(v))
        }
    }
}

/// `Some(hypervisor)` when in a VM (`Some(None)`: a hypervisor of unknown kind).
fn hypervisor(roots: &Roots) -> Option<Option<String>> {
    let dmi = |f: &str| {
        read_text(&roots.sys.join("class/dmi/id").join(f))
            .unwrap_or_default()
            .to_lowercase()
    };
    let (vendor, product) = (dmi("sys_vendor"), dmi("product_name"));
    let both = format!("{vendor} {product}");
    let known = [
        ("qemu", "kvm"),
        ("kvm", "kvm"),
        ("amazon ec2", "kvm"),
        ("google compute engine", "kvm"),
        ("vmware", "vmware"),
        ("virtualbox", "virtualbox"),
        ("xen", "xen"),
        ("virtual machine", "hyperv"),
        ("openstack", "kvm"),
    ];
    if let Some((_, name)) = known.iter().find(|(k, _)| both.contains(k)) {
        return Some(Some((*name).to_string()));
    }
    let cpuinfo = read_capped(&roots.proc.join("cpuinfo"), 256 << 10).unwrap_or_default();
    let flagged = String::from_utf8_lossy(&cpuinfo)
        .lines()
        .filter(|l| l.starts_with("flags"))
        .any(|l| l.split_whitespace().any(|f| f == "hypervisor"));
    flagged.then_some(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::host::fixture::Fixture;

    fn place(f: &Fixture) -> RunsIn {
        detect(&Roots::new(f.proc_root()))
    }

    fn container(runtime: &str) -> RunsIn {
        RunsIn {
            kind: PlaceKind::Container,
            runtime: Some(runtime.into()),
        }
    }

    #[test]
    fn bare_host_is_host() {
        let f = Fixture::new();
        f.write("proc/self/cgroup", "0::/user.slice/user-1000.slice\n");
        f.write("proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu vme sse\n");
        assert_eq!(place(&f).kind, PlaceKind::Host);
    }

    #[test]
    fn runtimes_from_marker_files() {
        let f = Fixture::new();
        f.write(".dockerenv", "");
        assert_eq!(place(&f), container("docker"));
        f.write("run/.containerenv", "engine=\"podman-4.9\"\n");
        assert_eq!(place(&f), container("podman"));
        f.write("var/run/secrets/kubernetes.io/serviceaccount/token", "x");
        assert_eq!(place(&f), container("kubernetes"));
    }

    #[test]
    fn runtimes_from_cgroup_paths_and_pid1_environment() {
        let f = Fixture::new();
        f.write(
            "proc/self/cgroup",
            "0::/system.slice/cri-containerd-0123.scope\n",
        );
        assert_eq!(place(&f), container("containerd"));
        f.write("proc/self/cgroup", "0::/\n");
        f.write("proc/1/environ", b"PATH=/bin\0container=lxc\0".as_slice());
        assert_eq!(place(&f), container("lxc"));
        f.write(
            "proc/self/cgroup",
            "4:memory:/kubepods/burstable/pod1/abc\n",
        );
        assert_eq!(place(&f), container("kubernetes"));
    }

    #[test]
    fn vms_from_dmi_or_the_cpu_flag() {
        let f = Fixture::new();
        f.write("sys/class/dmi/id/sys_vendor", "QEMU\n");
        f.write("sys/class/dmi/id/product_name", "Standard PC (Q35)\n");
        assert_eq!(
            place(&f),
            RunsIn {
                kind: PlaceKind::Vm,
                runtime: Some("kvm".into())
            }
        );
        let g = Fixture::new();
        g.write("proc/cpuinfo", "flags\t\t: fpu hypervisor sse\n");
        assert_eq!(
            place(&g),
            RunsIn {
                kind: PlaceKind::Vm,
                runtime: None
            }
        );
        // A container in a VM is a container.
        g.write(".dockerenv", "");
        assert_eq!(place(&g), container("docker"));
    }
}
