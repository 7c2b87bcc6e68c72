//! The starved rule end to end inside a container, on a fixture /proc and cgroup tree: NVML
//! (faked here) names a host PID on GPU 0, the local trainer holds `/dev/nvidia0` open, four
//! workers burn the pod's 4-core quota on a 64-core host and the cgroup is throttled in 38 % of
//! its periods. The verdict must name the local process and quote the quota and the share.

use std::collections::BTreeMap;

use gpumeter_model::{GpuProcessKind, GpuReading, GpuUse, Snapshot};

use super::super::{Rules, RulesConfig};
use crate::source::host::fixture::{FakeProc, Fixture};

const HOST_PID: u32 = 2_319_471;

fn evidence<'a>(a: &'a super::super::Alert, key: &str) -> &'a str {
    a.evidence
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no {key} in {:#?}", a.evidence))
}

#[test]
fn the_verdict_quotes_the_quota_and_the_throttled_share() {
    let f = Fixture::new();
    f.write(".dockerenv", "");
    f.write("dev/nvidia0", "");
    f.write("proc/self/cgroup", "0::/\n");
    f.write("sys/fs/cgroup/cgroup.controllers", "cpu memory\n");
    f.write("sys/fs/cgroup/cpu.max", "400000 100000\n");
    let cpu_stat = |s: u64| {
        format!(
            "usage_usec {}\nnr_periods {}\nnr_throttled {}\nthrottled_usec {}\n",
            s * 3_950_000,
            s * 10,
            s * 38 / 10,
            s * 80_000
        )
    };
    let mut trainer = FakeProc::new(12, 1, "python").holding(&[0]);
    trainer.cpus_allowed_list = "0-63".into();
    let workers: Vec<FakeProc> = (13..17)
        .map(|p| {
            let mut w = FakeProc::new(p, 12, "pt_data_worker");
            w.cpus_allowed_list = "0-63".into();
            w
        })
        .collect();
    let tick = |s: u64| {
        f.set_cpu(&vec![[s * 6, 0, s * 94, 0, 0]; 64]);
        f.write("sys/fs/cgroup/cpu.stat", cpu_stat(s));
        let mut t = trainer.clone();
        t.utime = s * 5;
        f.add_process(&t);
        for w in &workers {
            let mut w = w.clone();
            w.state = 'R';
            w.utime = s * 98;
            f.add_process(&w);
        }
    };
    tick(0);
    let mut sampler = f.sampler();
    let nvml: BTreeMap<u32, Vec<GpuUse>> = BTreeMap::from([(
        HOST_PID,
        vec![GpuUse {
            gpu_index: 0,
            kind: GpuProcessKind::Compute,
            memory_bytes: Some(40 << 30),
            sm_util_pct: Some(30),
            memory_util_pct: None,
        }],
    )]);
    let mut rules = Rules::new(RulesConfig::default());
    let t0 = 1_750_000_000_000;
    for s in 0..=90u64 {
        tick(s);
        let now = t0 + (s * 1000) as i64;
        let host = sampler.sample(now, &nvml);
        let mut snap = Snapshot::empty("fixture", now);
        snap.system = host.system;
        snap.host = host.host;
        snap.processes = host.processes;
        snap.gpus = vec![GpuReading {
            index: 0,
            util_gpu_pct: Some(30),
            ..GpuReading::default()
        }];
        rules.evaluate(&snap, now, None);
    }
    let a = rules
        .alerts()
        .iter()
        .find(|a| a.id.starts_with("starved:"))
        .unwrap_or_else(|| panic!("no starved alert: {:#?}", rules.alerts()))
        .clone();
    assert_eq!(evidence(&a, "verdict"), "CPU-bound input", "{a:#?}");
    assert_eq!(
        evidence(&a, "job"),
        "python (pid 12, host pid 2319471), 1 GPU process, 5 processes in all"
    );
    assert!(
        a.detail.contains(
            "the container may use 4 cores and used 4.0; throttled 38 % of the last 60 s"
        ),
        "{}",
        a.detail
    );
    assert!(evidence(&a, "job CPU").contains("of 4.0 cores"), "{a:#?}");
    let step = a.next_step.as_deref().unwrap();
    assert!(
        step.contains("The job may use 4 cores (cgroup CPU quota; the host has 64)"),
        "{step}"
    );
}
