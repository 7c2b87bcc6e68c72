//! NVML's count protocol on the process lists, and the per-process utilization cursor.

use std::ffi::c_uint;

use super::{TWO_GPUS, handle, started};
use crate::abi::{nvmlDevice_t, nvmlProcessInfo_t, nvmlProcessUtilizationSample_t};
use crate::state::{self, ScenarioClock};
use crate::*;

type ListFn = unsafe extern "C" fn(nvmlDevice_t, *mut c_uint, *mut nvmlProcessInfo_t) -> u32;

/// (return code, count) of a NULL-buffer count query.
fn count_query(f: ListFn, h: nvmlDevice_t) -> (u32, c_uint) {
    let mut n: c_uint = 0;
    // SAFETY: valid count pointer, NULL buffer as the protocol allows.
    let rc = unsafe { f(h, &mut n, std::ptr::null_mut()) };
    (rc, n)
}

fn fetch(f: ListFn, h: nvmlDevice_t, room: usize) -> (u32, Vec<nvmlProcessInfo_t>) {
    let mut buf = vec![nvmlProcessInfo_t::default(); room];
    let mut n = c_uint::try_from(room).unwrap();
    // SAFETY: `buf` holds `n` entries.
    let rc = unsafe { f(h, &mut n, buf.as_mut_ptr()) };
    buf.truncate(usize::try_from(n).unwrap().min(room));
    (rc, buf)
}

const GIB: u64 = 1 << 30;

#[test]
fn process_lists_answer_count_queries_then_fill_the_buffer() {
    let _s = started(TWO_GPUS, 0);
    let gpu0 = handle(0);
    let compute: ListFn = nvmlDeviceGetComputeRunningProcesses_v3;
    assert_eq!(
        count_query(compute, gpu0),
        (7, 2),
        "INSUFFICIENT_SIZE + count"
    );
    let (rc, _) = fetch(compute, gpu0, 1);
    assert_eq!(rc, 7, "a buffer too small");
    let (rc, list) = fetch(compute, gpu0, 7);
    assert_eq!(rc, 0);
    assert_eq!(list.len(), 2);
    assert_eq!((list[0].pid, list[0].usedGpuMemory), (1000, 10 * GIB));
    assert_eq!(
        (list[1].pid, list[1].usedGpuMemory),
        (3000, u64::MAX),
        "memory the scenario leaves out is NVML_VALUE_NOT_AVAILABLE"
    );
    assert!(
        list.iter()
            .all(|p| p.gpuInstanceId == u32::MAX && p.computeInstanceId == u32::MAX)
    );

    let graphics: ListFn = nvmlDeviceGetGraphicsRunningProcesses_v3;
    let (rc, list) = fetch(graphics, gpu0, 4);
    assert_eq!(rc, 0);
    let pids: Vec<u32> = list.iter().map(|p| p.pid).collect();
    assert_eq!(pids, [2000, 3000], "graphics and mixed");
    assert_eq!(list[0].usedGpuMemory, GIB / 2);
}

#[test]
fn no_processes_is_success_with_zero() {
    let _s = started(TWO_GPUS, 0);
    let gpu1 = handle(1);
    for f in [
        nvmlDeviceGetComputeRunningProcesses_v3 as ListFn,
        nvmlDeviceGetGraphicsRunningProcesses_v3,
        nvmlDeviceGetComputeRunningProcesses_v2,
        nvmlDeviceGetMPSComputeRunningProcesses_v3,
    ] {
        assert_eq!(count_query(f, gpu1), (0, 0));
    }
    assert_eq!(
        count_query(nvmlDeviceGetMPSComputeRunningProcesses_v3, handle(0)),
        (0, 0),
        "no MPS server is simulated"
    );
}

#[test]
fn thousands_of_processes_are_listed() {
    let many = r#"
[[process]]
pid = 100000
count = 3000
gpu_stride = 0
gpus = [{ gpu = 1, memory_gib = { const = 0.01 } }]
"#;
    let _s = started(&format!("{TWO_GPUS}{many}"), 0);
    let compute: ListFn = nvmlDeviceGetComputeRunningProcesses_v3;
    let (rc, n) = count_query(compute, handle(1));
    assert_eq!((rc, n), (7, 3000));
    let (rc, list) = fetch(compute, handle(1), 3005);
    assert_eq!(rc, 0);
    assert_eq!(list.len(), 3000);
    assert_eq!(list.last().unwrap().pid, 102_999);
}

/// (return code, samples) for one cursor, through the count query then the fetch.
fn utilization(h: nvmlDevice_t, last_seen: u64) -> (u32, Vec<nvmlProcessUtilizationSample_t>) {
    let mut n: c_uint = 0;
    // SAFETY: valid count pointer, NULL buffer.
    let rc = unsafe { nvmlDeviceGetProcessUtilization(h, std::ptr::null_mut(), &mut n, last_seen) };
    if rc != 7 {
        return (rc, Vec::new());
    }
    let mut buf = vec![nvmlProcessUtilizationSample_t::default(); usize::try_from(n).unwrap()];
    // SAFETY: `buf` holds `n` samples.
    let rc = unsafe { nvmlDeviceGetProcessUtilization(h, buf.as_mut_ptr(), &mut n, last_seen) };
    buf.truncate(usize::try_from(n).unwrap());
    (rc, buf)
}

#[test]
fn utilization_samples_follow_the_last_seen_cursor() {
    let _s = started(TWO_GPUS, 10_000);
    let gpu0 = handle(0);
    let (rc, samples) = utilization(gpu0, 0);
    assert_eq!(rc, 0);
    let got: Vec<(u32, u32, u32)> = samples
        .iter()
        .map(|s| (s.pid, s.smUtil, s.memUtil))
        .collect();
    assert_eq!(got, [(1000, 70, 30), (3000, 5, 1)], "busy processes only");
    let stamp = samples[0].timeStamp;
    assert!(samples.iter().all(|s| s.timeStamp == stamp && stamp > 0));

    assert_eq!(utilization(gpu0, stamp).0, 6, "nothing newer: NOT_FOUND");
    state::set_clock_for_test(ScenarioClock::Frozen(10_100));
    let (rc, newer) = utilization(gpu0, stamp);
    assert_eq!(rc, 0);
    assert_eq!(newer[0].timeStamp, stamp + 100_000, "µs, 100 ms later");
    assert_eq!(utilization(handle(1), 0).0, 6, "a GPU without processes");
}

#[test]
fn utilization_is_unsupported_under_mig_and_without_per_process_data() {
    let mig = TWO_GPUS.replace("count = 2\n", "count = 2\nmig_enabled = true\n");
    let _s = started(&mig, 0);
    assert_eq!(utilization(handle(0), 0).0, 3);
    drop(_s);
    let silent = format!(
        "{}\n[[process]]\npid = 9\ngpus = [{{ gpu = 1, memory_gib = {{ const = 1 }} }}]\n",
        TWO_GPUS
    );
    let _s = started(&silent, 0);
    assert_eq!(utilization(handle(1), 0).0, 3);
}
