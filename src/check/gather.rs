//! Gathering the facts on this machine. Everything is read under one root (`/`, or a fixture
//! tree in tests: `<root>/proc`, `<root>/sys`, `<root>/dev`, `<root>/etc/passwd`), NVML through
//! `source::nvml::inspect`, the torch build through `python`, the data directory through the
//! bounded `probe`. Nothing is written except the probe's temporary file, never as root.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::facts::{
    BillingFacts, Expect, Facts, HostFacts, NumaNode, Owner, SoftwareFacts, StorageFacts, Torch,
};
use super::{probe, python, software, storage};
use gpumeter_core::sanitize::sanitize;
use gpumeter_core::source::host::{HostLimits, parse_cpu_list};

/// Where and how to look.
#[derive(Debug, Clone)]
pub struct LiveOptions {
    pub nvml_lib: Option<PathBuf>,
    pub expect: Option<Expect>,
    /// `--python`; else `python3` / `python` on `path_env`.
    pub python: Option<PathBuf>,
    pub path_env: Option<OsString>,
    pub data: Option<PathBuf>,
    /// `/` normally.
    pub root: PathBuf,
    /// The CUDA driver library to try loading (`libcuda.so.1`).
    pub libcuda: String,
    /// The process environment.
    pub env: Vec<(String, String)>,
    pub billing: BillingFacts,
    pub probe_limits: probe::Limits,
}

/// Small files read whole (status, passwd, mountinfo).
const MAX_SMALL_BYTES: u64 = 1 << 20;

fn read(path: &Path) -> Option<String> {
    use std::io::Read;
    let f = std::fs::File::open(path).ok()?;
    let mut buf = Vec::new();
    f.take(MAX_SMALL_BYTES).read_to_end(&mut buf).ok()?;
    Some(String::from_utf8_lossy(&buf).into_owned())
}

pub fn gather(opts: &LiveOptions) -> Facts {
    let root = &opts.root;
    let (proc, sys) = (root.join("proc"), root.join("sys"));
    let nvml =
        gpumeter_core::source::nvml::inspect(opts.nvml_lib.as_deref()).map_err(|e| e.to_string());
    let pids: Vec<u32> = nvml
        .as_ref()
        .map(|i| {
            i.gpus
                .iter()
                .filter_map(|g| g.processes.as_ref().ok())
                .flatten()
                .map(|p| p.pid)
                .collect()
        })
        .unwrap_or_default();
    let passwd = read(&root.join("etc/passwd")).unwrap_or_default();
    let owners = pids
        .into_iter()
        .map(|pid| (pid, owner(&proc, pid, &passwd)))
        .collect::<BTreeMap<_, _>>();
    let my_uid = read(&proc.join("self/status")).as_deref().and_then(uid_of);
    let torch = match opts
        .python
        .clone()
        .or_else(|| python::find_on_path(opts.path_env.as_deref()))
    {
        Some(py) => python::probe(&py, python::PROBE_TIMEOUT),
        None => Torch::NoPython,
    };
    let host = HostFacts {
        limits: HostLimits::read(&proc, &sys),
        numa: numa_nodes(&sys),
    };
    let storage = opts.data.as_ref().map(|path| {
        let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        StorageFacts {
            path: path.clone(),
            mount: read(&proc.join("self/mountinfo"))
                .and_then(|m| storage::mount_of(&m, &canonical)),
            probe: probe::probe(path, opts.probe_limits),
        }
    });
    let mut billing = opts.billing.clone();
    billing.instance = dmi(&sys);
    Facts {
        source: "nvml".into(),
        expect: opts.expect.clone(),
        nvml,
        owners,
        my_uid,
        torch,
        host,
        storage,
        software: software_facts(root, &opts.libcuda, &opts.env),
        billing,
    }
}

/// The real uid from a status file's `Uid:` line.
fn uid_of(status: &str) -> Option<u32> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

fn owner(proc: &Path, pid: u32, passwd: &str) -> Owner {
    let Some(status) = read(&proc.join(pid.to_string()).join("status")) else {
        return Owner {
            visible: false,
            uid: None,
            user: None,
            name: None,
        };
    };
    let uid = uid_of(&status);
    let user = uid.and_then(|u| {
        passwd.lines().find_map(|l| {
            let mut f = l.split(':');
            let name = f.next()?;
            (f.nth(1)?.parse::<u32>().ok()? == u).then(|| sanitize(name, 32))
        })
    });
    Owner {
        visible: true,
        uid,
        user,
        name: status
            .lines()
            .find_map(|l| l.strip_prefix("Name:"))
            .map(|n| sanitize(n.trim(), 32)),
    }
}

fn numa_nodes(sys: &Path) -> Vec<NumaNode> {
    let Ok(entries) = std::fs::read_dir(sys.join("devices/system/node")) else {
        return Vec::new();
    };
    let mut nodes: Vec<NumaNode> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let id = name.strip_prefix("node")?.parse::<u32>().ok()?;
            let cpus = read(&e.path().join("cpulist")).and_then(|c| parse_cpu_list(c.trim()))?;
            Some(NumaNode { id, cpus })
        })
        .collect();
    nodes.sort_by_key(|n| n.id);
    nodes
}

/// `Amazon EC2 p5.48xlarge` from DMI's vendor and product name.
fn dmi(sys: &Path) -> Option<String> {
    let id = sys.join("class/dmi/id");
    let part = |f: &str| {
        read(&id.join(f))
            .map(|s| sanitize(s.trim(), 64))
            .filter(|s| !s.is_empty())
    };
    match (part("sys_vendor"), part("product_name")) {
        (Some(v), Some(p)) if p.starts_with(&v) => Some(p),
        (Some(v), Some(p)) => Some(format!("{v} {p}")),
        (v, p) => v.or(p),
    }
}

fn software_facts(root: &Path, libcuda: &str, env: &[(String, String)]) -> SoftwareFacts {
    let dev = root.join("dev");
    let mut present = 0;
    let mut usable = 0;
    if let Ok(entries) = std::fs::read_dir(&dev) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let is_gpu = name
                .strip_prefix("nvidia")
                .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
            if !is_gpu {
                continue;
            }
            present += 1;
            // Permission bits only: opening a GPU node would initialise the GPU.
            if rustix::fs::access(
                e.path(),
                rustix::fs::Access::READ_OK | rustix::fs::Access::WRITE_OK,
            )
            .is_ok()
            {
                usable += 1;
            }
        }
    }
    SoftwareFacts {
        nouveau: root.join("sys/module/nouveau").exists(),
        dev_gpus_present: present,
        dev_gpus_usable: usable,
        dev_ctl: dev.join("nvidiactl").exists(),
        dev_uvm: dev.join("nvidia-uvm").exists(),
        libcuda: load_library(libcuda),
        env: env
            .iter()
            .filter(|(k, _)| software::watched(k))
            .map(|(k, v)| (k.clone(), sanitize(v, 120)))
            .collect(),
    }
}

/// Loads and unloads a library, as a CUDA program would load it.
fn load_library(name: &str) -> Result<(), String> {
    // SAFETY: loading runs the library's initialisers. This is the CUDA driver library that
    // every CUDA program loads the same way; nothing in it is called, and it is unloaded at once.
    match unsafe { libloading::Library::new(name) } {
        Ok(lib) => {
            drop(lib);
            Ok(())
        }
        Err(e) => Err(sanitize(&e.to_string(), 200)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn owners_numa_dmi_and_devices_come_from_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        write(
            r,
            "etc/passwd",
            "root:x:0:0::/root:/bin/sh\nbob:x:1001:1001::/home/bob:/bin/sh\n",
        );
        write(
            r,
            "proc/4242/status",
            "Name:\tpython\nUid:\t1001\t1001\t1001\t1001\n",
        );
        let o = owner(&r.join("proc"), 4242, &read(&r.join("etc/passwd")).unwrap());
        assert_eq!(
            (o.visible, o.uid, o.user.as_deref(), o.name.as_deref()),
            (true, Some(1001), Some("bob"), Some("python"))
        );
        assert!(!owner(&r.join("proc"), 5, "").visible);
        write(r, "sys/devices/system/node/node1/cpulist", "8-15\n");
        write(r, "sys/devices/system/node/node0/cpulist", "0-7\n");
        write(r, "sys/devices/system/node/possible", "0-1\n");
        let nodes = numa_nodes(&r.join("sys"));
        assert_eq!(
            nodes
                .iter()
                .map(|n| (n.id, n.cpus.len()))
                .collect::<Vec<_>>(),
            [(0, 8), (1, 8)]
        );
        write(r, "sys/class/dmi/id/sys_vendor", "Amazon EC2\n");
        write(r, "sys/class/dmi/id/product_name", "p5.48xlarge\n");
        assert_eq!(
            dmi(&r.join("sys")).as_deref(),
            Some("Amazon EC2 p5.48xlarge")
        );
        write(r, "dev/nvidia0", "");
        write(r, "dev/nvidia1", "");
        write(r, "dev/nvidiactl", "");
        write(r, "dev/nvidia-modeset", "");
        write(r, "sys/module/nouveau/refcnt", "1\n");
        let env = vec![
            ("CUDA_LAUNCH_BLOCKING".to_string(), "1".to_string()),
            ("HOME".to_string(), "/root".to_string()),
        ];
        let s = software_facts(r, "libdoes-not-exist.so.9", &env);
        assert_eq!(
            (s.dev_gpus_present, s.dev_ctl, s.dev_uvm, s.nouveau),
            (2, true, false, true)
        );
        assert!(s.libcuda.unwrap_err().contains("libdoes-not-exist"));
        assert_eq!(
            s.env,
            vec![("CUDA_LAUNCH_BLOCKING".to_string(), "1".to_string())]
        );
    }
}
