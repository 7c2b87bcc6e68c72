//! Fixture-based tests of the whole sampler: fake proc trees, two samples, checked readings.

mod container;
pub(in crate::source::host) mod live;

use std::collections::BTreeMap;

use gpumeter_model::{GpuProcessKind, GpuUse, ProcessReading};

use super::HostSampler;
use super::fixture::{FakeProc, Fixture};
use crate::sanitize::MAX_COMMAND_CHARS;

const DOCKER_ID: &str = "3f4e5d6c7b8a99887766554433221100ffeeddccbbaa00112233445566778899";

fn gpu_use(gpu_index: u32) -> GpuUse {
    GpuUse {
        gpu_index,
        kind: GpuProcessKind::Compute,
        memory_bytes: Some(1 << 30),
        sm_util_pct: Some(80),
        memory_util_pct: None,
    }
}

fn gpu_procs(pids: &[u32]) -> BTreeMap<u32, Vec<GpuUse>> {
    pids.iter().map(|&p| (p, vec![gpu_use(0)])).collect()
}

fn find(processes: &[ProcessReading], pid: u32) -> &ProcessReading {
    processes
        .iter()
        .find(|p| p.pid == pid)
        .unwrap_or_else(|| panic!("pid {pid} missing from {processes:#?}"))
}

#[test]
fn first_sample_has_no_rates_then_cpu_and_iowait_over_the_interval() {
    let f = Fixture::new();
    let mut s = f.sampler();
    let first = s.sample(0, &BTreeMap::new());
    assert_eq!(first.host.cpu_count, Some(2));
    assert_eq!(first.host.cpu_util_pct, None);
    assert_eq!(first.host.iowait_pct, None);
    assert!(first.host.per_cpu_util_pct.is_empty());
    assert_eq!(first.host.disk_read_bytes_per_s, None);
    assert_eq!(first.host.net_rx_bytes_per_s, None);

    // cpu0: 50 user, 30 idle, 20 iowait; cpu1: 100 system. 200 jiffies in all.
    f.set_cpu(&[[50, 0, 30, 20, 0], [0, 100, 0, 0, 0]]);
    let second = s.sample(1_000, &BTreeMap::new());
    assert_eq!(second.host.cpu_util_pct, Some(75.0));
    assert_eq!(second.host.iowait_pct, Some(10.0));
    assert_eq!(second.host.per_cpu_util_pct, vec![50.0, 100.0]);
    assert_eq!(second.host.load_avg_1m, Some(1.5));
    assert_eq!(second.host.mem_total_bytes, Some(16_000_000 * 1024));
    assert_eq!(second.host.mem_used_bytes, Some(6_000_000 * 1024));
    assert!(second.warnings.is_empty(), "{:?}", second.warnings);
}

#[test]
fn system_facts_and_process_start_time() {
    let f = Fixture::new();
    let mut p = FakeProc::new(100, 1, "python");
    p.start_ticks = 12_345; // 123.45 s after boot
    p.rss_pages = 1000;
    p.threads = 9;
    f.add_process(&p);
    let sample = f.sampler().sample(0, &gpu_procs(&[100]));
    assert_eq!(sample.system.hostname.as_deref(), Some("gpu-box-1"));
    assert_eq!(sample.system.uptime_s, Some(3600));
    assert_eq!(sample.system.boot_time_unix_s, Some(1_700_000_000));
    let r = find(&sample.processes, 100);
    assert_eq!(r.start_time_unix_s, Some(1_700_000_123));
    assert_eq!(r.rss_bytes, Some(1000 * 4096));
    assert_eq!(r.threads, Some(9));
    assert_eq!(r.state, Some('S'));
    assert_eq!(r.user.as_deref(), Some("alice"));
    assert_eq!(r.command.as_deref(), Some("python"));
    assert_eq!(r.gpu, vec![gpu_use(0)]);
    assert_eq!(r.cpu_pct, None);
}

#[test]
fn per_process_cpu_is_over_the_interval_not_lifetime() {
    let f = Fixture::new();
    let mut p = FakeProc::new(100, 1, "python");
    p.utime = 100_000; // a long life already
    f.add_process(&p);
    let mut s = f.sampler();
    assert_eq!(
        find(&s.sample(10_000, &gpu_procs(&[100])).processes, 100).cpu_pct,
        None
    );
    // 30 user + 20 system jiffies in one second at 100 Hz: half a core.
    p.utime += 30;
    p.stime += 20;
    f.add_process(&p);
    let r = s.sample(11_000, &gpu_procs(&[100]));
    assert_eq!(find(&r.processes, 100).cpu_pct, Some(50.0));
    // 400 jiffies over two seconds: two cores.
    p.utime += 400;
    f.add_process(&p);
    let r = s.sample(13_000, &gpu_procs(&[100]));
    assert_eq!(find(&r.processes, 100).cpu_pct, Some(200.0));
}

#[test]
fn a_reused_pid_gets_no_cpu_rate_and_fresh_details() {
    let f = Fixture::new();
    let mut old = FakeProc::new(100, 1, "python");
    old.utime = 500;
    f.add_process(&old);
    let mut s = f.sampler();
    s.sample(0, &gpu_procs(&[100]));

    // The process exits and another takes its pid: later start, new command. Its counter
    // happens to be higher, so only the start time tells the two apart.
    let mut new = FakeProc::new(100, 1, "python");
    new.start_ticks = old.start_ticks + 50_000;
    new.utime = 600;
    new.cmdline = b"python\0serve.py\0".to_vec();
    f.add_process(&new);
    let r = s.sample(1_000, &gpu_procs(&[100]));
    let p = find(&r.processes, 100);
    assert_eq!(p.cpu_pct, None);
    assert_eq!(p.command.as_deref(), Some("python serve.py"));

    new.utime = 700;
    f.add_process(&new);
    let r = s.sample(2_000, &gpu_procs(&[100]));
    assert_eq!(find(&r.processes, 100).cpu_pct, Some(100.0));
}

#[test]
fn an_exec_with_the_same_pid_and_start_refreshes_the_command() {
    let f = Fixture::new();
    let mut p = FakeProc::new(100, 1, "bash");
    f.add_process(&p);
    let mut s = f.sampler();
    s.sample(0, &gpu_procs(&[100]));
    p.comm = b"python".to_vec();
    p.cmdline = b"python\0train.py\0".to_vec();
    f.add_process(&p);
    let r = s.sample(1_000, &gpu_procs(&[100]));
    assert_eq!(
        find(&r.processes, 100).command.as_deref(),
        Some("python train.py")
    );
}

#[test]
fn invisible_gpu_process_is_kept_with_its_gpu_use() {
    let f = Fixture::new();
    f.add_process(&FakeProc::new(100, 1, "python"));
    let mut procs = gpu_procs(&[100]);
    procs.insert(4242, vec![gpu_use(1), gpu_use(3)]);
    let sample = f.sampler().sample(0, &procs);
    let ghost = find(&sample.processes, 4242);
    let mut expected = ProcessReading::invisible(4242);
    expected.gpu = vec![gpu_use(1), gpu_use(3)];
    assert_eq!(ghost, &expected);
    assert!(find(&sample.processes, 100).visible);
    assert_eq!(sample.warnings.len(), 1, "{:?}", sample.warnings);
    assert!(sample.warnings[0].contains("1 GPU process"));
}

#[test]
fn descendants_come_with_their_parents_and_strangers_do_not() {
    let f = Fixture::new();
    f.add_process(&FakeProc::new(1, 0, "systemd"));
    f.add_process(&FakeProc::new(100, 1, "python"));
    f.add_process(&FakeProc::new(101, 100, "pt_data_worker"));
    f.add_process(&FakeProc::new(102, 100, "pt_data_worker"));
    f.add_process(&FakeProc::new(103, 101, "sh"));
    f.add_process(&FakeProc::new(200, 1, "sshd"));
    let sample = f.sampler().sample(0, &gpu_procs(&[100]));
    let pids: Vec<u32> = sample.processes.iter().map(|p| p.pid).collect();
    assert_eq!(pids, vec![100, 101, 102, 103]);
    assert_eq!(find(&sample.processes, 100).ppid, Some(1));
    assert_eq!(find(&sample.processes, 101).ppid, Some(100));
    assert_eq!(find(&sample.processes, 103).ppid, Some(101));
    assert!(find(&sample.processes, 101).gpu.is_empty());
    assert!(find(&sample.processes, 100).is_gpu_process());
    // Descendants of an invisible GPU process cannot be known; a GPU process that is also a
    // descendant of another is listed once, with its GPU use.
    let sample = f.sampler().sample(0, &gpu_procs(&[100, 101, 999]));
    let pids: Vec<u32> = sample.processes.iter().map(|p| p.pid).collect();
    assert_eq!(pids, vec![100, 101, 102, 103, 999]);
    assert!(find(&sample.processes, 101).is_gpu_process());
}

#[test]
fn hostile_names_and_command_lines_are_sanitized_and_capped() {
    let f = Fixture::new();
    let mut p = FakeProc::new(100, 1, "x");
    p.comm = b"\x1b]0;owned\x07ev\x1b[31mil\xff\x08".to_vec();
    let mut cmd = b"python\0\x1b[2J\x1b]52;c;aGk=\x07train.py\0\xff\xfe\0".to_vec();
    cmd.extend(std::iter::repeat_n(b'A', 1 << 20));
    p.cmdline = cmd;
    f.add_process(&p);
    let mut k = FakeProc::new(2, 0, "kthreadd");
    k.cmdline = Vec::new();
    f.add_process(&k);
    let sample = f.sampler().sample(0, &gpu_procs(&[100, 2]));
    let r = find(&sample.processes, 100);
    let name = r.name.as_deref().unwrap();
    assert_eq!(name, "evil\u{fffd}");
    let command = r.command.as_deref().unwrap();
    assert!(
        command.starts_with("python train.py \u{fffd}\u{fffd} AAAA"),
        "{command:.60}"
    );
    assert!(command.chars().count() <= MAX_COMMAND_CHARS + 1);
    assert!(command.ends_with('…'));
    assert!(!command.chars().any(char::is_control));
    assert_eq!(
        find(&sample.processes, 2).command.as_deref(),
        Some("[kthreadd]")
    );
}

#[test]
fn container_user_and_namespace_pid_of_a_container_process() {
    let f = Fixture::new();
    let mut p = FakeProc::new(48_213, 1, "python");
    p.cgroup = format!("0::/system.slice/docker-{DOCKER_ID}.scope\n");
    p.nspid = vec![48_213, 7];
    p.uid = 0;
    f.add_process(&p);
    f.add_process(&FakeProc::new(100, 1, "python"));
    let sample = f.sampler().sample(0, &gpu_procs(&[100, 48_213]));
    let c = find(&sample.processes, 48_213);
    assert_eq!(c.container.as_deref(), Some("3f4e5d6c7b8a"));
    assert_eq!(c.ns_pid, Some(7));
    assert_eq!(c.user.as_deref(), Some("root"));
    let h = find(&sample.processes, 100);
    assert_eq!(h.container, None);
    assert_eq!(h.ns_pid, None);
}

#[test]
fn unknown_uid_shows_as_a_number() {
    let f = Fixture::new();
    let mut p = FakeProc::new(100, 1, "python");
    p.uid = 4321;
    f.add_process(&p);
    let sample = f.sampler().sample(0, &gpu_procs(&[100]));
    assert_eq!(find(&sample.processes, 100).user.as_deref(), Some("4321"));
}

#[test]
fn missing_gpu_pid_is_mapped_through_the_outermost_nspid_entry() {
    let f = Fixture::new();
    // A tree whose directory numbering differs from the numbering NSpid starts with.
    let mut p = FakeProc::new(300, 1, "python");
    p.nspid = vec![48_213, 300, 7];
    f.add_process(&p);
    f.add_process(&FakeProc::new(301, 300, "pt_data_worker"));
    let sample = f.sampler().sample(0, &gpu_procs(&[48_213]));
    let pids: Vec<u32> = sample.processes.iter().map(|p| p.pid).collect();
    assert_eq!(pids, vec![300, 301], "listed by their pids here");
    let mapped = find(&sample.processes, 300);
    assert!(mapped.visible);
    assert_eq!(mapped.host_pid, Some(48_213));
    assert_eq!(mapped.pid_match, Some(gpumeter_model::PidMatch::Nspid));
    assert_eq!(mapped.ns_pid, Some(7));
    assert_eq!(mapped.gpu, vec![gpu_use(0)]);
    assert_eq!(find(&sample.processes, 301).ppid, Some(300));
    assert!(sample.warnings.is_empty(), "{:?}", sample.warnings);
}

#[test]
fn exited_processes_drop_out_and_leave_no_state() {
    let f = Fixture::new();
    f.add_process(&FakeProc::new(100, 1, "python"));
    f.add_process(&FakeProc::new(101, 100, "worker"));
    let mut s = f.sampler();
    assert_eq!(s.sample(0, &gpu_procs(&[100])).processes.len(), 2);
    assert_eq!(s.processes.tracked(), (2, 2));
    f.remove_process(101);
    let sample = s.sample(1_000, &gpu_procs(&[100]));
    assert_eq!(sample.processes.len(), 1);
    assert_eq!(s.processes.tracked(), (1, 1));
    // No GPU process: nothing to list, no process is read, nothing is kept.
    assert!(s.sample(2_000, &BTreeMap::new()).processes.is_empty());
    assert_eq!(s.processes.tracked(), (0, 0));
}

#[test]
fn whole_disks_and_physical_nics_only() {
    let f = Fixture::new();
    let mut s = f.sampler();
    // No sysfs: names decide. vda counts; its partition, loop and dm devices do not.
    f.set_diskstats(&[
        ("vda", 0, 0),
        ("vda1", 0, 0),
        ("loop0", 0, 0),
        ("dm-0", 0, 0),
    ]);
    f.set_net_dev(&[("lo", 0, 0), ("eth0", 0, 0), ("docker0", 0, 0)]);
    s.sample(0, &BTreeMap::new());
    f.set_diskstats(&[
        ("vda", 2000, 4000),
        ("vda1", 2000, 4000),
        ("loop0", 99, 99),
        ("dm-0", 2000, 4000),
    ]);
    f.set_net_dev(&[
        ("lo", 1 << 30, 1 << 30),
        ("eth0", 3000, 1000),
        ("docker0", 500, 500),
    ]);
    let r = s.sample(2_000, &BTreeMap::new()).host;
    assert_eq!(r.disk_read_bytes_per_s, Some(2000.0 * 512.0 / 2.0));
    assert_eq!(r.disk_write_bytes_per_s, Some(4000.0 * 512.0 / 2.0));
    assert_eq!(r.net_rx_bytes_per_s, Some(1500.0));
    assert_eq!(r.net_tx_bytes_per_s, Some(500.0));
}

#[test]
fn sysfs_decides_disks_and_nics_when_present() {
    let f = Fixture::new();
    f.write("sys/block/nvme0n1/device/model", "x");
    f.write("sys/block/md0/md/level", "raid0");
    f.write("sys/class/net/ens5/device/vendor", "x");
    f.write("sys/class/net/veth12/ifindex", "9");
    let mut s = f.sampler();
    f.set_diskstats(&[("nvme0n1", 0, 0), ("md0", 0, 0)]);
    f.set_net_dev(&[("lo", 0, 0), ("ens5", 0, 0), ("veth12", 0, 0)]);
    s.sample(0, &BTreeMap::new());
    f.set_diskstats(&[("nvme0n1", 10, 20), ("md0", 10, 20)]);
    f.set_net_dev(&[("lo", 9, 9), ("ens5", 100, 200), ("veth12", 100, 200)]);
    let r = s.sample(1_000, &BTreeMap::new()).host;
    assert_eq!(r.disk_read_bytes_per_s, Some(5120.0));
    assert_eq!(r.net_rx_bytes_per_s, Some(100.0));
    assert_eq!(r.net_tx_bytes_per_s, Some(200.0));

    // A container's network namespace has only virtual interfaces: they all count.
    let f = Fixture::new();
    f.write("sys/class/net/eth0/ifindex", "2");
    let mut s = f.sampler();
    f.set_net_dev(&[("lo", 0, 0), ("eth0", 0, 0)]);
    s.sample(0, &BTreeMap::new());
    f.set_net_dev(&[("lo", 0, 0), ("eth0", 700, 70)]);
    assert_eq!(
        s.sample(1_000, &BTreeMap::new()).host.net_rx_bytes_per_s,
        Some(700.0)
    );
}

#[test]
fn unreadable_files_leave_fields_empty_with_one_warning_each() {
    let f = Fixture::new();
    std::fs::remove_file(f.proc_root().join("meminfo")).unwrap();
    std::fs::remove_file(f.proc_root().join("stat")).unwrap();
    std::fs::remove_file(f.proc_root().join("sys/kernel/hostname")).unwrap();
    f.add_process(&FakeProc::new(100, 1, "python"));
    let sample = f.sampler().sample(0, &gpu_procs(&[100]));
    assert_eq!(sample.host.mem_total_bytes, None);
    assert_eq!(sample.host.cpu_count, None);
    assert_eq!(sample.system.boot_time_unix_s, None);
    assert_eq!(sample.system.hostname, None);
    // Without btime there is no start time, but the rest of the process is there.
    let p = find(&sample.processes, 100);
    assert_eq!(p.start_time_unix_s, None);
    assert_eq!(p.command.as_deref(), Some("python"));
    assert_eq!(sample.warnings.len(), 2, "{:?}", sample.warnings);
    assert!(
        sample
            .warnings
            .iter()
            .all(|w| w.starts_with("host: cannot read"))
    );

    // The hostname falls back to etc/hostname beside the proc root.
    f.write("etc/hostname", "box\u{1b}[2J-2\n");
    let sample = f.sampler().sample(0, &BTreeMap::new());
    assert_eq!(sample.system.hostname.as_deref(), Some("box-2"));
}

#[test]
fn proc_root_siblings_are_sys_and_etc() {
    let f = Fixture::new();
    let s = HostSampler::with_proc_root(f.proc_root());
    assert_eq!(s.roots.sys, f.root().join("sys"));
    assert_eq!(s.roots.etc, f.root().join("etc"));
    let live = HostSampler::new();
    assert_eq!(live.roots.sys, std::path::Path::new("/sys"));
    assert_eq!(live.roots.etc, std::path::Path::new("/etc"));
}

#[test]
fn affinity_and_cgroup_quota_reach_the_reading() {
    let f = Fixture::new();
    let mut p = FakeProc::new(100, 1, "python");
    p.cpus_allowed_list = "1".to_string();
    f.add_process(&p);
    f.add_process(&FakeProc::new(101, 100, "pt_data_worker"));
    f.write("proc/self/cgroup", "0::/job\n");
    f.write("sys/fs/cgroup/cgroup.controllers", "cpu\n");
    f.write("sys/fs/cgroup/job/cpu.max", "150000 100000\n");
    let mut sampler = f.sampler();
    let sample = sampler.sample(0, &gpu_procs(&[100]));
    assert_eq!(find(&sample.processes, 100).cpus_allowed, Some(1));
    // A worker's statics (its affinity among them) come on its second tick.
    let sample = sampler.sample(1_000, &gpu_procs(&[100]));
    assert_eq!(find(&sample.processes, 100).cpus_allowed, Some(1));
    assert_eq!(find(&sample.processes, 101).cpus_allowed, Some(2));
    assert_eq!(sample.host.cpu_quota_cores, Some(1.5));
}

#[test]
fn the_hostname_and_uptime_are_read_once_a_minute_the_uptime_counted_on_between() {
    let f = Fixture::new();
    let mut s = f.sampler();
    let first = s.sample(0, &BTreeMap::new()).system;
    assert_eq!(
        (first.hostname.as_deref(), first.uptime_s),
        (Some("gpu-box-1"), Some(3600))
    );
    f.write("proc/uptime", "9000.00 1.00\n");
    f.write("proc/sys/kernel/hostname", "renamed\n");
    let later = s.sample(30_900, &BTreeMap::new()).system;
    // 3 600.25 s and 30.9 s on: the files are not read again yet.
    assert_eq!(
        (later.hostname.as_deref(), later.uptime_s),
        (Some("gpu-box-1"), Some(3631))
    );
    let reread = s.sample(super::system::REREAD_MS, &BTreeMap::new()).system;
    assert_eq!(
        (reread.hostname.as_deref(), reread.uptime_s),
        (Some("renamed"), Some(9000))
    );
    // A clock that steps back reads them again.
    f.write("proc/uptime", "9500.00 1.00\n");
    let back = s.sample(1_000, &BTreeMap::new()).system;
    assert_eq!(back.uptime_s, Some(9500));
}

#[test]
fn whole_disks_are_read_from_their_own_files_between_listings() {
    let f = Fixture::new();
    f.write("sys/block/vda/device/model", "x");
    let own = |read: u64, written: u64| {
        f.write(
            "sys/block/vda/stat",
            format!("10 0 {read} 5 10 0 {written} 5 0 10 10 0 0 0 0 0 0\n"),
        );
    };
    own(0, 0);
    f.set_diskstats(&[("vda", 0, 0), ("loop0", 0, 0)]);
    let mut s = f.sampler();
    let read_rate = |s: &mut HostSampler, at: i64| {
        s.sample(at, &BTreeMap::new())
            .host
            .disk_read_bytes_per_s
            .unwrap()
    };
    s.sample(0, &BTreeMap::new());
    // Between listings only vda's own file is read: a change in the listing shows nothing.
    own(2_000, 4_000);
    f.set_diskstats(&[("vda", 90_000, 90_000), ("loop0", 0, 0)]);
    assert_eq!(read_rate(&mut s, 1_000), 2_000.0 * 512.0);
    own(2_000, 4_000);
    assert_eq!(read_rate(&mut s, 2_000), 0.0);
    // A file that does not read as one means the listing at once.
    f.write("sys/block/vda/stat", "gone\n");
    assert_eq!(read_rate(&mut s, 3_000), 88_000.0 * 512.0);
    // The listing every LIST_MS shows a disk added since.
    own(90_000, 90_000);
    f.write("sys/block/vdb/device/model", "x");
    f.write(
        "sys/block/vdb/stat",
        "10 0 0 5 10 0 0 5 0 10 10 0 0 0 0 0 0\n",
    );
    f.set_diskstats(&[("vda", 90_000, 90_000), ("vdb", 0, 0)]);
    s.sample(4_000, &BTreeMap::new());
    f.write(
        "sys/block/vdb/stat",
        "10 0 1000 5 10 0 0 5 0 10 10 0 0 0 0 0 0\n",
    );
    assert_eq!(read_rate(&mut s, 5_000), 0.0, "vdb not listed yet");
    let listing = 3_000 + super::device_files::LIST_MS;
    f.set_diskstats(&[("vda", 90_000, 90_000), ("vdb", 1_000, 0)]);
    s.sample(listing, &BTreeMap::new());
    f.write(
        "sys/block/vdb/stat",
        "10 0 3000 5 10 0 0 5 0 10 10 0 0 0 0 0 0\n",
    );
    assert_eq!(read_rate(&mut s, listing + 1_000), 2_000.0 * 512.0);
}

#[test]
fn counted_interfaces_are_read_from_their_own_files_between_listings() {
    let f = Fixture::new();
    f.write("sys/class/net/ens5/device/vendor", "x");
    f.write("sys/class/net/veth12/ifindex", "9");
    let own = |rx: u64, tx: u64| {
        f.write("sys/class/net/ens5/statistics/rx_bytes", format!("{rx}\n"));
        f.write("sys/class/net/ens5/statistics/tx_bytes", format!("{tx}\n"));
    };
    own(0, 0);
    f.set_net_dev(&[("lo", 0, 0), ("ens5", 0, 0), ("veth12", 0, 0)]);
    let mut s = f.sampler();
    let rates = |s: &mut HostSampler, at: i64| {
        let h = s.sample(at, &BTreeMap::new()).host;
        (h.net_rx_bytes_per_s.unwrap(), h.net_tx_bytes_per_s.unwrap())
    };
    s.sample(0, &BTreeMap::new());
    // Between listings only the physical NIC's own files are read.
    own(3_000, 1_000);
    f.set_net_dev(&[("lo", 9, 9), ("ens5", 70_000, 70_000), ("veth12", 5, 5)]);
    assert_eq!(rates(&mut s, 1_000), (3_000.0, 1_000.0));
    // A file that does not read as a count means the listing at once.
    f.write("sys/class/net/ens5/statistics/tx_bytes", "x\n");
    assert_eq!(rates(&mut s, 2_000), (67_000.0, 69_000.0));
}
