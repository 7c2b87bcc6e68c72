use super::*;

fn info(pid: u32, memory: Option<u64>) -> ProcessInfo {
    ProcessInfo {
        pid,
        used_gpu_memory: memory.map_or(UsedGpuMemory::Unavailable, UsedGpuMemory::Used),
        gpu_instance_id: None,
        compute_instance_id: None,
    }
}

fn sample(pid: u32, timestamp: u64, sm: u32, mem: u32) -> ProcessUtilizationSample {
    ProcessUtilizationSample {
        pid,
        timestamp,
        sm_util: sm,
        mem_util: mem,
        enc_util: 0,
        dec_util: 0,
    }
}

#[test]
fn compute_and_graphics_merge_per_pid_with_mixed_kind() {
    let compute = [info(10, Some(1_000)), info(11, Some(2_000))];
    let graphics = [info(11, Some(1_500)), info(12, None)];
    let merged = merge_processes(3, Some(&compute), Some(&graphics));
    assert_eq!(merged.len(), 3);
    assert_eq!(merged[&10].kind, GpuProcessKind::Compute);
    assert_eq!(merged[&10].memory_bytes, Some(1_000));
    assert_eq!(merged[&11].kind, GpuProcessKind::Mixed);
    assert_eq!(
        merged[&11].memory_bytes,
        Some(2_000),
        "same process: larger, not the sum"
    );
    assert_eq!(merged[&12].kind, GpuProcessKind::Graphics);
    assert_eq!(
        merged[&12].memory_bytes, None,
        "Unavailable is N/A, never 0"
    );
    assert!(merged.values().all(|u| u.gpu_index == 3));
    assert!(merged.values().all(|u| u.sm_util_pct.is_none()));
}

#[test]
fn unavailable_memory_in_one_list_takes_the_known_one() {
    let compute = [info(5, None)];
    let graphics = [info(5, Some(64))];
    let merged = merge_processes(0, Some(&compute), Some(&graphics));
    assert_eq!(merged[&5].kind, GpuProcessKind::Mixed);
    assert_eq!(merged[&5].memory_bytes, Some(64));
}

#[test]
fn repeated_pid_in_one_list_adds_up_mig_instances() {
    let compute = [info(7, Some(100)), info(7, Some(50)), info(7, None)];
    let merged = merge_processes(0, Some(&compute), None);
    assert_eq!(merged[&7].memory_bytes, Some(150));
    assert_eq!(merged[&7].kind, GpuProcessKind::Compute);
}

#[test]
fn a_missing_list_contributes_nothing() {
    let graphics = [info(9, Some(1))];
    let merged = merge_processes(1, None, Some(&graphics));
    assert_eq!(merged.len(), 1);
    assert_eq!(merged[&9].kind, GpuProcessKind::Graphics);
    assert!(merge_processes(1, None, None).is_empty());
}

#[test]
fn cursor_starts_empty_and_moves_to_the_newest_sample() {
    let mut t = ProcessUtilTracker::new(5_000);
    assert_eq!(t.cursor(), None);
    t.record(
        &[
            sample(1, 300, 50, 10),
            sample(2, 500, 20, 5),
            sample(1, 400, 60, 12),
        ],
        1_000,
    );
    assert_eq!(t.cursor(), Some(500));
    assert_eq!(
        t.lookup(1, 1_000),
        (Some(60), Some(12)),
        "newest sample per pid"
    );
    assert_eq!(t.lookup(2, 1_000), (Some(20), Some(5)));
    // An empty answer (count 0) leaves the cursor where it was.
    t.record(&[], 2_000);
    assert_eq!(t.cursor(), Some(500));
}

#[test]
fn not_found_keeps_recent_values_for_the_hold_then_idle_reads_zero() {
    let mut t = ProcessUtilTracker::new(5_000);
    t.record(&[sample(1, 100, 80, 30)], 10_000);
    t.nothing_new(14_000);
    assert_eq!(t.lookup(1, 14_000), (Some(80), Some(30)));
    t.nothing_new(15_000);
    assert_eq!(t.lookup(1, 15_000), (Some(80), Some(30)));
    t.nothing_new(15_001);
    assert_eq!(
        t.lookup(1, 15_001),
        (Some(0), Some(0)),
        "answered, no sample: idle"
    );
    assert_eq!(t.cursor(), Some(100));
}

#[test]
fn unanswered_query_keeps_fresh_values_and_then_reads_na() {
    let mut t = ProcessUtilTracker::new(5_000);
    assert_eq!(t.lookup(4, 0), (None, None), "never asked: unknown");
    t.record(&[sample(4, 100, 40, 4)], 1_000);
    t.unanswered(3_000);
    assert_eq!(t.lookup(4, 3_000), (Some(40), Some(4)));
    assert_eq!(
        t.lookup(5, 3_000),
        (None, None),
        "no answer this tick: unknown"
    );
    t.unanswered(7_000);
    assert_eq!(t.lookup(4, 7_000), (None, None));
}

#[test]
fn newer_batch_replaces_and_backwards_clock_expires() {
    let mut t = ProcessUtilTracker::new(5_000);
    t.record(&[sample(1, 100, 90, 9)], 1_000);
    t.record(&[sample(1, 200, 10, 1)], 2_000);
    assert_eq!(t.lookup(1, 2_000), (Some(10), Some(1)));
    t.unanswered(500);
    assert_eq!(t.lookup(1, 500), (None, None));
}

#[test]
fn values_are_capped_at_100_and_reset_forgets() {
    let mut t = ProcessUtilTracker::new(5_000);
    t.record(&[sample(1, 100, 250, 101)], 1_000);
    assert_eq!(t.lookup(1, 1_000), (Some(100), Some(100)));
    t.reset();
    assert_eq!(t.cursor(), None);
    assert_eq!(t.lookup(1, 1_000), (None, None));
}

#[test]
fn apply_util_fills_each_process() {
    let compute = [info(1, Some(10)), info(2, Some(20))];
    let mut merged = merge_processes(0, Some(&compute), None);
    let mut t = ProcessUtilTracker::new(5_000);
    t.record(&[sample(1, 100, 70, 7)], 1_000);
    apply_util(&mut merged, &t, 1_000);
    assert_eq!(merged[&1].sm_util_pct, Some(70));
    assert_eq!(merged[&1].memory_util_pct, Some(7));
    assert_eq!(merged[&2].sm_util_pct, Some(0));
}
