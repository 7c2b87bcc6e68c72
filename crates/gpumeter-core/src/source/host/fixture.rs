//! Test-only builder of small fake proc trees (`<tmp>/proc`, `<tmp>/sys`, `<tmp>/etc`) in the
//! formats the kernel writes, so the sampler can be checked without a real machine.

use std::fs;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use super::HostSampler;

/// Clock ticks per second the fixtures assume.
pub(crate) const HZ: u64 = 100;
/// Page size the fixtures assume.
pub(crate) const PAGE: u64 = 4096;

/// A full `/proc/meminfo` (every line the parser insists on). MemFree 100, Buffers 10 and
/// Cached 90 kB, whatever the totals.
pub(crate) fn meminfo_text(total_kb: u64, available_kb: u64) -> String {
    format!(
        "MemTotal: {total_kb} kB\nMemFree: 100 kB\nMemAvailable: {available_kb} kB\n\
         Buffers: 10 kB\nCached: 90 kB\nSwapCached: 0 kB\nActive: 1 kB\nInactive: 1 kB\n\
         SwapTotal: 0 kB\nSwapFree: 0 kB\nDirty: 0 kB\nWriteback: 0 kB\nMapped: 0 kB\n\
         Slab: 0 kB\nCommitted_AS: 0 kB\nVmallocTotal: 0 kB\nVmallocUsed: 0 kB\n\
         VmallocChunk: 0 kB\n"
    )
}

/// One fake process.
#[derive(Debug, Clone)]
pub(crate) struct FakeProc {
    pub(crate) pid: u32,
    pub(crate) ppid: u32,
    pub(crate) comm: Vec<u8>,
    pub(crate) state: char,
    pub(crate) utime: u64,
    pub(crate) stime: u64,
    pub(crate) threads: u32,
    pub(crate) rss_pages: u64,
    /// Start time in ticks after boot.
    pub(crate) start_ticks: u64,
    pub(crate) cmdline: Vec<u8>,
    pub(crate) uid: u32,
    /// The `NSpid` line's entries; empty means "just the pid".
    pub(crate) nspid: Vec<u32>,
    pub(crate) cgroup: String,
    /// The `Cpus_allowed_list` line (its affinity).
    pub(crate) cpus_allowed_list: String,
    /// Open files: `fd/<3+i>` links to these paths (relative ones are under the fixture root).
    pub(crate) fds: Vec<String>,
    /// Threads as (tid, comm, utime ticks): `task/<tid>/stat`.
    pub(crate) tasks: Vec<(u32, String, u64)>,
}

impl FakeProc {
    pub(crate) fn new(pid: u32, ppid: u32, comm: &str) -> Self {
        Self {
            pid,
            ppid,
            comm: comm.as_bytes().to_vec(),
            state: 'S',
            utime: 0,
            stime: 0,
            threads: 1,
            rss_pages: 256,
            start_ticks: 1000 + u64::from(pid),
            cmdline: format!("{comm}\0").into_bytes(),
            uid: 1000,
            nspid: Vec::new(),
            cgroup: "0::/user.slice/user-1000.slice/session-1.scope\n".to_string(),
            cpus_allowed_list: "0-1".to_string(),
            fds: Vec::new(),
            tasks: Vec::new(),
        }
    }

    /// This process holding `dev/nvidia<N>` of the fixture open for each of `gpus`.
    pub(crate) fn holding(mut self, gpus: &[u32]) -> Self {
        self.fds.push("dev/nvidiactl".into());
        self.fds
            .extend(gpus.iter().map(|g| format!("dev/nvidia{g}")));
        self
    }

    /// The thread count /proc shows: the tasks listed, when there are any.
    fn thread_count(&self) -> u32 {
        u32::try_from(self.tasks.len())
            .ok()
            .filter(|&n| n > 0)
            .unwrap_or(self.threads)
    }

    fn stat_line(&self) -> Vec<u8> {
        let mut line = format!("{} (", self.pid).into_bytes();
        line.extend_from_slice(&self.comm);
        let rest = format!(
            ") {state} {ppid} {pid} {pid} 0 -1 4194304 100 0 0 0 {utime} {stime} 0 0 20 0 \
             {threads} 0 {start} 1000000 {rss} 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 \
             17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
            state = self.state,
            ppid = self.ppid,
            pid = self.pid,
            utime = self.utime,
            stime = self.stime,
            threads = self.thread_count(),
            start = self.start_ticks,
            rss = self.rss_pages,
        );
        line.extend_from_slice(rest.as_bytes());
        line
    }

    fn status_text(&self) -> String {
        let nspid = if self.nspid.is_empty() {
            self.pid.to_string()
        } else {
            let parts: Vec<String> = self.nspid.iter().map(u32::to_string).collect();
            parts.join("\t")
        };
        format!(
            "Name:\tx\nUmask:\t0022\nState:\t{} (sleeping)\nTgid:\t{pid}\nNgid:\t0\nPid:\t{pid}\n\
             PPid:\t{}\nTracerPid:\t0\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\nGid:\t0\t0\t0\t0\n\
             FDSize:\t64\nGroups:\t\nNStgid:\t{nspid}\nNSpid:\t{nspid}\nThreads:\t{}\n\
             Cpus_allowed_list:\t{}\n",
            self.state,
            self.ppid,
            self.thread_count(),
            self.cpus_allowed_list,
            pid = self.pid,
            uid = self.uid,
        )
    }
}

/// A fake machine in a temporary directory.
pub(crate) struct Fixture {
    dir: TempDir,
}

impl Fixture {
    /// Two CPUs, 16 GB of memory, one disk, one NIC, a passwd with `root` and `alice` (1000).
    pub(crate) fn new() -> Self {
        let f = Self {
            dir: TempDir::new().unwrap(),
        };
        f.set_cpu(&[[0, 0, 0, 0, 0], [0, 0, 0, 0, 0]]);
        f.write("proc/meminfo", meminfo_text(16_000_000, 10_000_000));
        f.write("proc/loadavg", "1.50 1.00 0.50 2/300 4242\n");
        f.write("proc/uptime", "3600.25 7000.00\n");
        f.write("proc/sys/kernel/hostname", "gpu-box-1\n");
        f.set_diskstats(&[("vda", 0, 0)]);
        f.set_net_dev(&[("lo", 0, 0), ("eth0", 0, 0)]);
        f.write(
            "etc/passwd",
            "root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000::/home/alice:/bin/sh\n",
        );
        f
    }

    pub(crate) fn root(&self) -> &Path {
        self.dir.path()
    }

    pub(crate) fn proc_root(&self) -> PathBuf {
        self.dir.path().join("proc")
    }

    /// A sampler on this tree, with the fixture's tick rate and page size.
    pub(crate) fn sampler(&self) -> HostSampler {
        HostSampler::with_units(self.proc_root(), HZ, PAGE)
    }

    /// Writes a file relative to the fixture root, creating directories.
    pub(crate) fn write(&self, rel: &str, contents: impl AsRef<[u8]>) {
        let path = self.dir.path().join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        fs::write(path, contents).unwrap();
    }

    /// `/proc/stat` with one line per CPU of `[user, system, idle, iowait, steal]` jiffies; the
    /// total line is their sum. btime is 1 700 000 000.
    pub(crate) fn set_cpu(&self, cpus: &[[u64; 5]]) {
        let line = |name: &str, c: [u64; 5]| {
            format!(
                "{name} {} 0 {} {} {} 0 0 {} 0 0\n",
                c[0], c[1], c[2], c[3], c[4]
            )
        };
        let mut total = [0u64; 5];
        for c in cpus {
            for (t, v) in total.iter_mut().zip(c) {
                *t += v;
            }
        }
        let mut text = line("cpu ", total);
        for (i, c) in cpus.iter().enumerate() {
            text.push_str(&line(&format!("cpu{i}"), *c));
        }
        text.push_str("intr 0\nctxt 100\nbtime 1700000000\nprocesses 50\nprocs_running 1\n");
        text.push_str("procs_blocked 0\nsoftirq 0 0 0 0 0 0 0 0 0 0 0\n");
        self.write("proc/stat", text);
    }

    /// `/proc/diskstats` with `(name, sectors read, sectors written)` per device.
    pub(crate) fn set_diskstats(&self, disks: &[(&str, u64, u64)]) {
        let mut text = String::new();
        for (i, (name, read, written)) in disks.iter().enumerate() {
            text.push_str(&format!(
                " 253 {i} {name} 10 0 {read} 5 10 0 {written} 5 0 10 10 0 0 0 0 0 0\n"
            ));
        }
        self.write("proc/diskstats", text);
    }

    /// `/proc/net/dev` with `(name, rx bytes, tx bytes)` per interface.
    pub(crate) fn set_net_dev(&self, ifaces: &[(&str, u64, u64)]) {
        let mut text = String::from(
            "Inter-|   Receive                                                |  Transmit\n \
             face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets \
             errs drop fifo colls carrier compressed\n",
        );
        for (name, rx, tx) in ifaces {
            text.push_str(&format!(
                "{name:>6}: {rx} 10 0 0 0 0 0 0 {tx} 10 0 0 0 0 0 0\n"
            ));
        }
        self.write("proc/net/dev", text);
    }

    /// Creates or replaces `/proc/<pid>` with stat, status, cmdline and cgroup.
    pub(crate) fn add_process(&self, p: &FakeProc) {
        let dir = format!("proc/{}", p.pid);
        self.write(&format!("{dir}/stat"), p.stat_line());
        self.write(&format!("{dir}/status"), p.status_text());
        self.write(&format!("{dir}/cmdline"), &p.cmdline);
        self.write(&format!("{dir}/cgroup"), &p.cgroup);
        let fd_dir = self.dir.path().join(&dir).join("fd");
        let _ = fs::remove_dir_all(&fd_dir);
        fs::create_dir_all(&fd_dir).unwrap();
        for (i, target) in p.fds.iter().enumerate() {
            let target = self.dir.path().join(target);
            if !target.exists() {
                self.write(
                    target
                        .strip_prefix(self.dir.path())
                        .unwrap()
                        .to_str()
                        .unwrap(),
                    "",
                );
            }
            std::os::unix::fs::symlink(&target, fd_dir.join((i + 3).to_string())).unwrap();
        }
        for (tid, comm, utime) in &p.tasks {
            let mut t = p.clone();
            t.pid = *tid;
            t.comm = comm.as_bytes().to_vec();
            t.utime = *utime;
            t.stime = 0;
            self.write(&format!("{dir}/task/{tid}/stat"), t.stat_line());
        }
    }

    /// `/proc/<pid>/task/<pid>/children`: the children of the main thread, as the kernel
    /// lists them (a fixture without these lists makes the sampler read every process).
    pub(crate) fn set_children(&self, pid: u32, kids: &[u32]) {
        let text: Vec<String> = kids.iter().map(|k| format!("{k} ")).collect();
        self.write(&format!("proc/{pid}/task/{pid}/children"), text.concat());
    }

    /// The process exits.
    pub(crate) fn remove_process(&self, pid: u32) {
        fs::remove_dir_all(self.dir.path().join(format!("proc/{pid}"))).unwrap();
    }
}
