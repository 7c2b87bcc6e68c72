//! The job cache against the reference path: on long runs of varied snapshots — readings
//! moving every tick, processes coming and going, reparented, moving GPUs, memory leaders
//! swapping, GPUs failing, pids listed twice — the cached jobs, samples, start times and held
//! GPUs equal [`job::jobs`], [`job::sample_in`] and [`job::held`] on every tick, and the
//! cache rebuilds only when the shape moved.

use gpumeter_model::{GpuReading, GpuUse, ThreadReading};

use super::*;

/// A small deterministic generator (xorshift), so the cases are varied but repeatable.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }
}

const LISTS: [&str; 5] = ["0-7", "0-15", "8-15", "0-3,8-11", "bogus"];

fn process(rng: &mut Rng, pid: u32, ppid: Option<u32>, gpus: u32) -> ProcessReading {
    let mut p = ProcessReading::invisible(pid);
    p.visible = !rng.chance(8);
    p.ppid = ppid;
    p.cpu_pct = (!rng.chance(10)).then(|| rng.below(3_000) as f64 / 10.0);
    p.state = (!rng.chance(10)).then(|| ['R', 'S', 'D', 'S'][rng.below(4) as usize]);
    p.start_time_unix_s = (!rng.chance(6)).then(|| 1_700_000_000 + rng.below(10_000) as i64);
    p.cpus_allowed = (!rng.chance(3)).then(|| 1 + rng.below(32) as u32);
    p.cpus_allowed_list = (!rng.chance(4)).then(|| LISTS[rng.below(5) as usize].into());
    if rng.chance(2) {
        for _ in 0..1 + rng.below(2) {
            p.gpu.push(GpuUse {
                gpu_index: rng.below(u64::from(gpus) + 1) as u32,
                kind: match rng.below(6) {
                    0 => GpuProcessKind::Graphics,
                    _ => GpuProcessKind::Compute,
                },
                memory_bytes: (!rng.chance(8)).then(|| rng.below(4) << 30),
                sm_util_pct: None,
                memory_util_pct: None,
            });
        }
        p.busiest_thread = (!rng.chance(4)).then(|| ThreadReading {
            tid: pid + 1,
            name: None,
            cpu_pct: (!rng.chance(5)).then(|| rng.below(4) as f64 * 25.0),
        });
    }
    p
}

fn machine(rng: &mut Rng, gpus: u32, procs: u32) -> Snapshot {
    let mut s = Snapshot::empty("t", 0);
    s.gpus = (0..gpus)
        .map(|i| GpuReading {
            index: i,
            pcie_rx_bytes_per_s: (!rng.chance(3)).then(|| rng.below(1 << 30)),
            ..GpuReading::default()
        })
        .collect();
    s.host.cpu_count = (!rng.chance(10)).then_some(16);
    s.host.cpu_quota_cores = rng.chance(3).then(|| 2.0 + rng.below(20) as f64);
    for i in 0..procs {
        let pid = 100 + i;
        // Parents among the earlier processes (launchers, workers), or none, or init.
        let ppid = match rng.below(5) {
            0 => None,
            1 => Some(1),
            _ if i > 0 => Some(100 + rng.below(u64::from(i)) as u32),
            _ => Some(1),
        };
        s.processes.push(process(rng, pid, ppid, gpus));
    }
    s
}

/// One tick's change: readings always; now and then the shape.
fn step(rng: &mut Rng, s: &mut Snapshot, gpus: u32) {
    for p in &mut s.processes {
        p.cpu_pct = p
            .cpu_pct
            .map(|c| (c + rng.below(200) as f64 / 10.0 - 10.0).max(0.0));
        if rng.chance(5) {
            p.state = Some(['R', 'S', 'D'][rng.below(3) as usize]);
        }
        if let Some(t) = &mut p.busiest_thread {
            t.cpu_pct = Some(rng.below(100) as f64);
        }
    }
    for g in &mut s.gpus {
        g.pcie_rx_bytes_per_s = g.pcie_rx_bytes_per_s.map(|_| rng.below(1 << 30));
    }
    let n = s.processes.len() as u64;
    match rng.below(12) {
        0 => {
            let pid = 1_000 + rng.below(9_000) as u32;
            let ppid = s.processes.get(rng.below(n) as usize).map(|p| p.pid);
            let p = process(rng, pid, ppid, gpus);
            s.processes.push(p);
        }
        1 if n > 0 => {
            s.processes.remove(rng.below(n) as usize);
        }
        2 if n > 1 => {
            let to = s.processes[rng.below(n) as usize].pid;
            s.processes[rng.below(n) as usize].ppid = Some(to);
        }
        3 if n > 0 => {
            // Memory moves: the main process of a GPU may change.
            let p = &mut s.processes[rng.below(n) as usize];
            for u in &mut p.gpu {
                u.memory_bytes = Some(rng.below(4) << 30);
            }
        }
        4 if n > 0 => {
            let p = &mut s.processes[rng.below(n) as usize];
            if let Some(u) = p.gpu.first_mut() {
                u.gpu_index = rng.below(u64::from(gpus)) as u32;
            }
        }
        5 if !s.gpus.is_empty() => {
            let g = rng.below(s.gpus.len() as u64) as usize;
            s.gpus[g].state = if s.gpus[g].state == GpuState::Ok {
                GpuState::Lost
            } else {
                GpuState::Ok
            };
        }
        6 if n > 0 && rng.chance(4) => {
            // A pid listed twice (a hostile recording).
            let mut twin = s.processes[rng.below(n) as usize].clone();
            twin.ppid = Some(1);
            s.processes.push(twin);
        }
        7 if n > 1 => {
            // Same processes, another order.
            let (a, b) = (rng.below(n) as usize, rng.below(n) as usize);
            s.processes.swap(a, b);
        }
        _ => {}
    }
}

fn check(cache: &JobCache, s: &Snapshot, gpus: u32) {
    let reference = job::jobs(s);
    assert_eq!(cache.jobs(), reference.as_slice());
    let by_pid = job::by_pid(s);
    for (i, j) in reference.iter().enumerate() {
        assert_eq!(
            cache.sample(s, i),
            Some(job::sample_in(s, j, &by_pid)),
            "{j:?}"
        );
        let started = j
            .roots
            .iter()
            .filter_map(|pid| s.processes.iter().find(|p| p.pid == *pid))
            .filter_map(|p| p.start_time_unix_s)
            .min();
        assert_eq!(cache.roots_started(s, i), started);
    }
    assert_eq!(cache.sample(s, reference.len()), None);
    for g in 0..=gpus {
        assert_eq!(cache.held(g), job::held(s, g), "GPU {g}");
    }
}

#[test]
fn the_cache_equals_the_reference_tick_after_tick() {
    let mut rebuilt_share = 0.0;
    for seed in 1..=60u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let gpus = 1 + rng.below(8) as u32;
        let procs = rng.below(60) as u32;
        let mut s = machine(&mut rng, gpus, procs);
        let mut cache = JobCache::default();
        let ticks = 150;
        for _ in 0..ticks {
            cache.update(&s);
            check(&cache, &s, gpus);
            step(&mut rng, &mut s, gpus);
        }
        rebuilt_share += cache.rebuilds() as f64 / ticks as f64 / 60.0;
    }
    // About half the steps move the shape; the rest must be served from the cache.
    assert!(
        rebuilt_share < 0.75,
        "rebuilt on {rebuilt_share:.2} of ticks"
    );
}

#[test]
fn readings_alone_never_rebuild() {
    let mut rng = Rng(7);
    let mut s = machine(&mut rng, 8, 120);
    let mut cache = JobCache::default();
    cache.update(&s);
    for t in 0..100 {
        for p in &mut s.processes {
            p.cpu_pct = Some(f64::from(t % 7) * 10.0);
            p.state = Some(if t % 2 == 0 { 'R' } else { 'S' });
        }
        cache.update(&s);
        check(&cache, &s, 8);
    }
    assert_eq!(cache.rebuilds(), 1);
    // A process that goes is seen at once.
    s.processes.retain(|p| !p.gpu.is_empty() || p.pid % 2 == 0);
    cache.update(&s);
    check(&cache, &s, 8);
    assert_eq!(cache.rebuilds(), 2);
}
