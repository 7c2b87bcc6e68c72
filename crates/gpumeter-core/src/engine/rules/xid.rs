//! XID alerts: the driver's critical XID errors (the snapshot's `xid_errors`, counted per GPU
//! and XID since the source started) each raise an alert naming the GPU, the XID and what it
//! usually means ([`super::xid_catalog`]). An XID is an event, not a state: its alert stands
//! for the rest of the run (acknowledge dismisses it) and reminds when the count grows. Its
//! cost is what the GPU has been paid for since the first error (a GPU that fell off the bus
//! does no work from then on). A GPU whose events are unsupported (`None`) is no evidence; the
//! source says so once in the snapshot's warnings. XID 79 on a GPU that is lost is left to the
//! lost rule, whose alert names it.

use std::cmp::Reverse;
use std::collections::BTreeMap;

use gpumeter_model::{GpuState, ProcessReading, SharedStr, Snapshot};

use super::alert::{Alert, AlertKind};
use super::config::XidConfig;
use super::label::process_label;
use super::xid_catalog::info;
use super::{Ctx, RuleOutput};
use crate::clock::{UtcStyle, utc_text};

/// The XID of a GPU fallen off the bus: while the GPU answers `GPU_IS_LOST`, the lost alert
/// says it (naming the XID), not a second alert here.
const XID_FELL_OFF_BUS: u64 = 79;

/// One (GPU, XID) seen.
#[derive(Debug, Clone, Copy)]
struct Seen {
    count: u64,
    first_ms: i64,
}

/// The XID rule's state across ticks: each (GPU, XID) seen and the job last on each GPU (see
/// the module docs).
#[derive(Debug, Clone)]
pub struct XidRule {
    cfg: XidConfig,
    seen: BTreeMap<(u32, u64), Seen>,
    /// The process last seen holding the most memory on each GPU (a lost GPU lists none).
    last_job: BTreeMap<u32, LastJob>,
}

/// A GPU's last holder and its label, remade only when the process or its names change (it
/// was a `format!` per GPU every tick).
#[derive(Debug, Clone)]
struct LastJob {
    pid: u32,
    command: Option<SharedStr>,
    name: Option<SharedStr>,
    label: String,
}

impl LastJob {
    fn of(p: &ProcessReading) -> LastJob {
        LastJob {
            pid: p.pid,
            command: p.command.clone(),
            name: p.name.clone(),
            label: process_label(p),
        }
    }

    fn is(&self, p: &ProcessReading) -> bool {
        self.pid == p.pid && self.command == p.command && self.name == p.name
    }
}

impl XidRule {
    /// A rule with these settings.
    pub fn new(cfg: XidConfig) -> Self {
        Self {
            cfg,
            seen: BTreeMap::new(),
            last_job: BTreeMap::new(),
        }
    }

    /// One tick: folds `ctx` in and returns the alerts that stand now (and any due a reminder).
    pub fn evaluate(&mut self, ctx: &Ctx<'_>) -> RuleOutput {
        let snap = ctx.snap;
        let now = ctx.now_ms;
        let mut out = RuleOutput::default();
        let holders = holders(snap);
        for g in &snap.gpus {
            let holder = holders.iter().find(|h| h.0 == g.index).map(|h| (h.1, h.2));
            if let Some((_, p)) = holder
                && !self.last_job.get(&g.index).is_some_and(|j| j.is(p))
            {
                self.last_job.insert(g.index, LastJob::of(p));
            }
        }
        for g in &snap.gpus {
            for x in g.xid_errors.iter().flatten() {
                let key = (g.index, x.xid);
                match self.seen.get_mut(&key) {
                    Some(s) if x.count > s.count => {
                        s.count = x.count;
                        out.remind.push(id(key));
                    }
                    Some(_) => {}
                    None if x.count > 0 => {
                        self.seen.insert(
                            key,
                            Seen {
                                count: x.count,
                                first_ms: now,
                            },
                        );
                    }
                    None => {}
                }
            }
        }
        if !self.cfg.enabled {
            out.remind.clear();
            return out;
        }
        for (&key, s) in &self.seen {
            // XID 79 on a GPU now lost is the lost rule's one alert (one event, one alert).
            if key.1 == XID_FELL_OFF_BUS
                && snap.gpu(key.0).is_some_and(|g| g.state == GpuState::Lost)
            {
                continue;
            }
            out.alerts.push(alert(
                ctx,
                key,
                *s,
                self.last_job.get(&key.0).map(|j| &j.label),
            ));
        }
        out
    }
}

/// Per GPU index, the process holding the most memory there (by its first use of the GPU; of
/// equals the lowest pid, then the last listed): one pass over the processes, not one per GPU.
fn holders(snap: &Snapshot) -> Vec<(u32, u64, &ProcessReading)> {
    let mut out: Vec<(u32, u64, &ProcessReading)> = Vec::with_capacity(snap.gpus.len());
    for p in &snap.processes {
        for (k, u) in p.gpu.iter().enumerate() {
            if p.gpu[..k].iter().any(|v| v.gpu_index == u.gpu_index) {
                continue;
            }
            let mem = u.memory_bytes.unwrap_or(0);
            match out.iter_mut().find(|h| h.0 == u.gpu_index) {
                Some(h) => {
                    if (mem, Reverse(p.pid)) >= (h.1, Reverse(h.2.pid)) {
                        (h.1, h.2) = (mem, p);
                    }
                }
                None => out.push((u.gpu_index, mem, p)),
            }
        }
    }
    out
}

fn id((gpu, xid): (u32, u64)) -> String {
    format!("xid:{gpu}:{xid}")
}

fn alert(ctx: &Ctx<'_>, key: (u32, u64), s: Seen, job: Option<&String>) -> Alert {
    let snap = ctx.snap;
    let (gpu, xid) = key;
    let i = info(xid);
    let times = if s.count > 1 {
        format!(" ({}×)", s.count)
    } else {
        String::new()
    };
    let reading = snap.gpu(gpu);
    let state = match reading.map(|g| g.state) {
        Some(GpuState::Ok) => "answering",
        Some(GpuState::Lost) => "lost (fell off the bus)",
        Some(GpuState::ResetRequired) => "needs a reset",
        Some(GpuState::Error) => "failing to answer",
        None => "gone from the readings",
    };
    let mut evidence = vec![
        ("GPU".to_string(), gpu.to_string()),
        ("XID".to_string(), xid.to_string()),
        ("meaning".to_string(), i.meaning.to_string()),
        ("count".to_string(), s.count.to_string()),
        (
            "first seen".to_string(),
            utc_text(s.first_ms, UtcStyle::Full),
        ),
        ("GPU now".to_string(), state.to_string()),
    ];
    if let Some(bus) = reading.and_then(|g| g.pci_bus_id.as_deref()) {
        evidence.push(("bus id".into(), bus.to_string()));
    }
    if let Some(job) = job {
        evidence.push(("process on it".into(), job.clone()));
    }
    let per_gpu_rate = ctx
        .rate_per_hour
        .map(|r| r.mul_div(1, i128::try_from(snap.gpus.len().max(1)).unwrap_or(1)));
    let cost = per_gpu_rate.map(|r| r.cost_for_ms(ctx.now_ms - s.first_ms).micros());
    if let (Some(c), Some(r)) = (cost, per_gpu_rate) {
        evidence.push((
            "paid for this GPU since".into(),
            format!("{} at {}/GPU-h", ctx.money(c), ctx.money(r.micros())),
        ));
    }
    Alert {
        id: id(key),
        kind: AlertKind::Xid,
        severity: i.severity,
        gpu: Some(gpu),
        title: format!("GPU {gpu}: XID {xid}{times} — {}", i.meaning),
        detail: format!(
            "The driver reported XID {xid} on GPU {gpu} ({}). The GPU is {state} now.",
            i.meaning
        ),
        evidence,
        cost_micros: cost,
        next_step: Some(i.next_step.to_string()),
        since_unix_ms: s.first_ms,
        currency: ctx.currency,
    }
}

#[cfg(test)]
mod tests {
    use gpumeter_model::XidCount;

    use super::super::tests::{T0, drive, machine};
    use super::super::{AlertKind, Rules, Severity, Transition};
    use crate::clock::FakeClock;

    #[test]
    fn an_xid_fires_once_names_its_meaning_reminds_on_more_and_stands() {
        let clock = FakeClock::new(T0);
        let mut r = Rules::default();
        let with = |t: i64, xids: Vec<XidCount>| {
            let mut s = machine(t, [95, 95]);
            s.gpus[0].xid_errors = Some(Vec::new());
            s.gpus[1].xid_errors = Some(xids);
            s
        };
        let ts = drive(&mut r, &clock, 30, Some(20_000_000), |_, t| with(t, vec![]));
        assert!(ts.is_empty(), "{ts:#?}");
        let one = vec![XidCount { xid: 79, count: 1 }];
        // An XID 79 whose GPU still answers (the driver's event came first): the XID alert.
        // (Once the GPU answers GPU_IS_LOST, the lost alert says it: see the lost tests.)
        let ts = drive(&mut r, &clock, 60, Some(20_000_000), |_, t| {
            with(t, one.clone())
        });
        let fired: Vec<_> = ts
            .iter()
            .filter(|t| matches!(t, Transition::Fired(_)))
            .collect();
        assert_eq!(fired.len(), 1, "{ts:#?}");
        let a = fired[0].alert();
        assert_eq!(a.kind, AlertKind::Xid);
        assert_eq!(a.severity, Severity::High);
        assert_eq!(a.gpu, Some(1));
        assert_eq!(
            a.title,
            "GPU 1: XID 79 — GPU fell off the bus (no longer reachable over PCIe)"
        );
        // Standing a minute later: $10/GPU-h over ~59 s.
        let now = r
            .alerts()
            .iter()
            .find(|a| a.kind == AlertKind::Xid)
            .unwrap();
        let ev = |k: &str| now.evidence.iter().find(|(l, _)| l == k).unwrap().1.clone();
        assert!(ev("paid for this GPU since").starts_with("$0.16 at $10.00/GPU-h"));
        // A second one of the same XID: a reminder, the count in the title.
        let two = vec![XidCount { xid: 79, count: 2 }];
        let ts = drive(&mut r, &clock, 5, None, |_, t| with(t, two.clone()));
        assert!(
            ts.iter()
                .any(|t| matches!(t, Transition::Reminded(a) if a.title.contains("XID 79 (2×)"))),
            "{ts:#?}"
        );
        // It stands while the driver keeps counting, and acknowledging hides it.
        let ts = drive(&mut r, &clock, 600, None, |_, t| with(t, two.clone()));
        assert!(ts.is_empty(), "{ts:#?}");
        assert!(r.acknowledge("xid:1:79", T0));
        assert!(r.visible(T0).iter().all(|a| a.kind != AlertKind::Xid));
    }

    #[test]
    fn unsupported_events_or_zero_counts_say_nothing() {
        let clock = FakeClock::new(T0);
        let mut r = Rules::default();
        let ts = drive(&mut r, &clock, 120, None, |_, t| {
            let mut s = machine(t, [95, 95]);
            s.gpus[0].xid_errors = None;
            s.gpus[1].xid_errors = Some(vec![XidCount { xid: 48, count: 0 }]);
            s
        });
        assert!(ts.is_empty(), "{ts:#?}");
    }

    /// The one-pass holders against a scan of the processes per GPU (first use of the GPU,
    /// most memory, then the lowest pid, the last listed of equals), on varied processes.
    #[test]
    fn one_pass_holders_match_a_scan_per_gpu() {
        use gpumeter_model::{GpuProcessKind, GpuUse, ProcessReading};
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut rnd = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for _ in 0..2_000 {
            let mut s = machine(T0, [50, 50]);
            for i in 0..rnd(12) {
                // Few pids, so equal pids (a hostile listing) and ties in memory occur.
                let mut p = ProcessReading::invisible(100 + rnd(6) as u32);
                p.command = Some(format!("job {i}").into());
                for _ in 0..rnd(3) {
                    p.gpu.push(GpuUse {
                        gpu_index: rnd(3) as u32,
                        kind: GpuProcessKind::Compute,
                        memory_bytes: (rnd(4) != 0).then(|| rnd(3) << 30),
                        sm_util_pct: None,
                        memory_util_pct: None,
                    });
                }
                s.processes.push(p);
            }
            let fast = super::holders(&s);
            for g in 0..3u32 {
                let scan = s
                    .processes
                    .iter()
                    .filter_map(|p| {
                        let u = p.gpu.iter().find(|u| u.gpu_index == g)?;
                        Some((u.memory_bytes.unwrap_or(0), p))
                    })
                    .max_by_key(|(mem, p)| (*mem, std::cmp::Reverse(p.pid)));
                let got = fast.iter().find(|h| h.0 == g).map(|h| (h.1, h.2));
                assert_eq!(
                    got.map(|(m, p)| (m, std::ptr::from_ref(p))),
                    scan.map(|(m, p)| (m, std::ptr::from_ref(p)))
                );
            }
        }
    }
}
