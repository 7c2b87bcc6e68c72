//! GPUs left idle beside busy ones: a job started on one card of eight (a
//! `CUDA_VISIBLE_DEVICES` slip), one user's job ended on half a shared box, a kernel forgotten on
//! a second card. The machine is not idle, so the machine's idle alert says nothing, yet each
//! such card bills. A GPU is left idle when it has done no work at all (probes seen through) for
//! `remind_after` (default 10 min) while another GPU does productive work (not a hung rank
//! spinning); any work on it, even one burst, ends its stretch, so a card serving a request
//! every few minutes is never called idle. One alert
//! names the cards together with what they cost since, reminding every `remind_every`; it
//! stands down once the machine's own idle alert has fired (that one covers every card).
//!
//! A card driving a display (a graphics process such as Xorg or a desktop shell on it: a cloud
//! workstation's remote desktop) is in use, never left idle.
//!
//! Pure: fed by [`super::idle::IdleRule`] each tick with the work verdicts and its per-GPU
//! tallies; touches nothing else.

use std::collections::BTreeMap;

use gpumeter_model::StuckThresholds;

use super::alert::{Alert, AlertKind, Severity};
use super::config::IdleConfig;
use super::idle::IdleTally;
use super::job::gpu_ranges;
use super::window::Window;
use super::work::GpuWork;
use super::{Ctx, RuleOutput};

/// The alert's id (one for the machine; the cards it names change with the readings).
pub const LEFT_IDLE_ID: &str = "idle:gpus";

/// One GPU's stretch without work.
#[derive(Debug, Clone, Copy)]
struct Stretch {
    since_ms: i64,
    /// The GPU's tally (`IdleTally::cost_acc`) when the stretch began.
    base_acc: i128,
}

/// The rule's state: the stretch of each GPU doing no work, whether each GPU works (over the
/// idle window, so a hung rank flickering around the stuck thresholds is not work one tick and
/// none the next), and when the alert is next due.
#[derive(Debug, Clone)]
pub struct LeftIdle {
    stretches: BTreeMap<u32, Stretch>,
    working: BTreeMap<u32, Window>,
    window: (i64, f64, f64),
    /// When the standing alert is next said (`None`: none stands).
    next_notice_ms: Option<i64>,
}

impl LeftIdle {
    /// `window_ms`, `fire_share`, `clear_share`: the hysteresis deciding that a GPU works.
    pub fn new(window_ms: i64, fire_share: f64, clear_share: f64) -> Self {
        Self {
            stretches: BTreeMap::new(),
            working: BTreeMap::new(),
            window: (window_ms, fire_share, clear_share),
            next_notice_ms: None,
        }
    }

    /// One tick. `machine_alerted`: the machine's idle alert has fired and covers every card.
    pub fn evaluate(
        &mut self,
        ctx: &Ctx<'_>,
        cfg: &IdleConfig,
        tallies: &BTreeMap<u32, IdleTally>,
        armed: bool,
        machine_alerted: bool,
    ) -> RuleOutput {
        let now = ctx.now_ms;
        let work = ctx.work().gpus();
        let display = displays(ctx);
        for (index, w) in work {
            match w {
                // A card driving a desktop (a graphics process on it) is in use.
                GpuWork::Idle | GpuWork::Probe if display.contains(index) => {
                    self.stretches.remove(index);
                }
                GpuWork::Idle | GpuWork::Probe => {
                    let base_acc = tallies.get(index).map_or(0, IdleTally::acc);
                    self.stretches.entry(*index).or_insert(Stretch {
                        since_ms: now,
                        base_acc,
                    });
                }
                // Work ends the stretch; a lost card is the lost rule's, an unknown one no
                // evidence either way.
                GpuWork::Work | GpuWork::Lost | GpuWork::Unknown => {
                    self.stretches.remove(index);
                }
            }
        }
        self.stretches
            .retain(|g, _| work.iter().any(|(index, _)| index == g));
        // Productive work: a GPU busy but stuck (a hung collective's spinning ranks) is the
        // hung rule's, and a card idle beside it is part of that story, not left idle.
        let now_productive = productive(ctx);
        let (span, fire, clear) = self.window;
        for (index, _) in work {
            self.working
                .entry(*index)
                .or_insert_with(|| Window::new(span, fire, clear))
                .push(now, Some(now_productive.contains(index)));
        }
        self.working
            .retain(|g, _| work.iter().any(|(index, _)| index == g));
        let busy: Vec<u32> = self
            .working
            .iter()
            .filter(|(_, w)| w.is_active())
            .map(|(g, _)| *g)
            .collect();
        let someone_works = !busy.is_empty();
        let left: Vec<(u32, Stretch)> = self
            .stretches
            .iter()
            .filter(|(_, s)| now - s.since_ms >= cfg.remind_after_ms)
            .map(|(g, s)| (*g, *s))
            .collect();
        let mut out = RuleOutput::default();
        if !cfg.enabled || !armed || machine_alerted || !someone_works || left.is_empty() {
            self.next_notice_ms = None;
            return out;
        }
        match self.next_notice_ms {
            None => self.next_notice_ms = Some(now + cfg.remind_every_ms.max(1)),
            Some(due) if now >= due => {
                out.remind.push(LEFT_IDLE_ID.to_string());
                let mut next = due;
                while next <= now {
                    next += cfg.remind_every_ms.max(1);
                }
                self.next_notice_ms = Some(next);
            }
            Some(_) => {}
        }
        out.alerts.push(alert(ctx, cfg, tallies, &left, &busy));
        out
    }
}

/// The GPUs doing productive work this tick: working, and not busy-but-stuck.
fn productive(ctx: &Ctx<'_>) -> Vec<u32> {
    let stuck = StuckThresholds::default();
    ctx.work()
        .gpus()
        .iter()
        .filter(|(_, w)| *w == GpuWork::Work)
        .filter(|(g, _)| {
            ctx.snap
                .gpu(*g)
                .is_some_and(|r| r.looks_stuck(&stuck) != Some(true))
        })
        .map(|(g, _)| *g)
        .collect()
}

fn alert(
    ctx: &Ctx<'_>,
    cfg: &IdleConfig,
    tallies: &BTreeMap<u32, IdleTally>,
    left: &[(u32, Stretch)],
    busy: &[u32],
) -> Alert {
    let snap = ctx.snap;
    let gpus: Vec<u32> = left.iter().map(|(g, _)| *g).collect();
    let since = left
        .iter()
        .map(|(_, s)| s.since_ms)
        .min()
        .unwrap_or(ctx.now_ms);
    let longest = ctx.now_ms - since;
    let minutes = crate::units::duration(longest, crate::units::DurationStyle::Words);
    let cost_acc: i128 = left
        .iter()
        .map(|(g, s)| tallies.get(g).map_or(0, IdleTally::acc) - s.base_acc)
        .map(|a| a.max(0))
        .sum();
    let cost = i64::try_from(cost_acc / 3_600_000).unwrap_or(i64::MAX);
    let n = i128::try_from(snap.gpus.len().max(1)).unwrap_or(1);
    let idle_rate = ctx.rate_per_hour.map(|r| {
        r.mul_div(i128::try_from(gpus.len()).unwrap_or(1), n)
            .micros()
    });
    let subject = |g: &[u32]| match g {
        [one] => format!("GPU {one}"),
        many => format!("GPUs {}", gpu_ranges(many)),
    };
    let verb = if busy.len() == 1 { "works" } else { "work" };
    let head = format!(
        "{} idle {minutes} while {} {verb}",
        subject(&gpus),
        subject(busy)
    );
    let title = match idle_rate {
        Some(rate) => format!(
            "{head} — {} so far, {}",
            ctx.money(cost),
            ctx.per_hour(rate)
        ),
        None => format!("{head} — no price set, cost unknown"),
    };
    let mut evidence = vec![
        ("GPUs".to_string(), gpu_ranges(&gpus)),
        (
            "GPUs idle".to_string(),
            format!("{}/{}", gpus.len(), snap.gpus.len()),
        ),
        ("busy".to_string(), subject(busy)),
    ];
    for (g, s) in left {
        let holds = snap.gpu(*g).and_then(|r| r.memory_used_bytes).map_or_else(
            || crate::units::NA.to_string(),
            |b| format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64),
        );
        evidence.push((
            format!("GPU {g}"),
            format!(
                "no work for {}, VRAM used {holds}",
                crate::units::duration(ctx.now_ms - s.since_ms, crate::units::DurationStyle::Words)
            ),
        ));
    }
    if let Some(rate) = idle_rate {
        evidence.push(("their share of the rate".into(), ctx.per_hour(rate)));
        evidence.push(("idle cost, this stretch".into(), ctx.money(cost)));
    }
    Alert {
        id: LEFT_IDLE_ID.to_string(),
        kind: AlertKind::IdlePaid,
        severity: if longest >= 60 * 60_000 {
            Severity::High
        } else {
            Severity::Moderate
        },
        gpu: gpus.first().copied().filter(|_| gpus.len() == 1),
        title,
        detail: format!(
            "{} did no work for {minutes} (util ≤ {:.0} %, memory util ≤ {:.0} %; a probe does \
             not count) while the rest of the machine works: the cards bill all the same.",
            subject(&gpus),
            cfg.gpu_util_pct,
            cfg.mem_util_pct,
        ),
        evidence,
        cost_micros: ctx.rate_per_hour.map(|_| cost),
        next_step: Some(
            "If the job was meant to use them, check CUDA_VISIBLE_DEVICES and the launcher's \
             --nproc_per_node; if a job on them ended, start the next one; otherwise rent a \
             smaller box next time."
                .into(),
        ),
        since_unix_ms: since,
        currency: ctx.currency,
    }
}

/// The GPUs a graphics process (a display server, a desktop shell) runs on.
fn displays(ctx: &Ctx<'_>) -> Vec<u32> {
    let mut out: Vec<u32> = ctx
        .snap
        .processes
        .iter()
        .flat_map(|p| &p.gpu)
        .filter(|u| u.kind == gpumeter_model::GpuProcessKind::Graphics)
        .map(|u| u.gpu_index)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::{T0, drive, gpu, machine};
    use super::super::{Rules, Transition};
    use super::LEFT_IDLE_ID;
    use crate::clock::FakeClock;

    fn left(ts: &[Transition]) -> Vec<&Transition> {
        ts.iter().filter(|t| t.alert().id == LEFT_IDLE_ID).collect()
    }

    /// GPUs 0–3: GPU 0 trains, the rest as `others` says (util).
    fn box4(t: i64, others: u32) -> gpumeter_model::Snapshot {
        let mut m = machine(t, [95, others]);
        m.gpus.push(gpu(2, others));
        m.gpus.push(gpu(3, others));
        m
    }

    #[test]
    fn cards_doing_nothing_beside_a_busy_one_are_named_with_their_share_of_the_rate() {
        let clock = FakeClock::new(T0);
        let mut r = Rules::default();
        // $8/h for 4 GPUs: the 3 idle ones are $6/h.
        let ts = drive(&mut r, &clock, 9 * 60, Some(8_000_000), |_, t| box4(t, 0));
        assert!(left(&ts).is_empty(), "not before 10 min: {ts:#?}");
        let ts = drive(&mut r, &clock, 2 * 60, Some(8_000_000), |_, t| box4(t, 0));
        let f = left(&ts);
        assert_eq!(f.len(), 1, "{ts:#?}");
        let a = f[0].alert();
        assert!(
            a.title
                .starts_with("GPUs 1–3 idle 10 min while GPU 0 works — $1.0"),
            "{}",
            a.title
        );
        assert!(a.title.ends_with(", $6.00/h"), "{}", a.title);
        assert!(a.evidence.contains(&("GPUs".into(), "1–3".into())));
        // A reminder 30 min on; work on one of them takes it out, work on all ends it.
        let ts = drive(&mut r, &clock, 30 * 60, Some(8_000_000), |_, t| box4(t, 0));
        assert!(
            ts.iter().any(|t| matches!(t, Transition::Reminded(_))),
            "{ts:#?}"
        );
        let ts = drive(&mut r, &clock, 5, Some(8_000_000), |_, t| box4(t, 90));
        assert!(
            left(&ts)
                .iter()
                .any(|t| matches!(t, Transition::Cleared(_))),
            "{ts:#?}"
        );
    }

    #[test]
    fn a_request_every_few_minutes_or_a_hung_neighbour_is_not_left_idle() {
        // GPU 1 serves a 3 s request every 4 minutes beside a busy GPU 0: never idle 10 min.
        let clock = FakeClock::new(T0);
        let mut r = Rules::default();
        let ts = drive(&mut r, &clock, 40 * 60, None, |s, t| {
            machine(t, [95, if s % 240 < 3 { 60 } else { 0 }])
        });
        assert!(left(&ts).is_empty(), "{ts:#?}");
        // GPU 1's rank died; GPU 0 spins in NCCL (util 100 %, no SM activity, low power):
        // the hung rule's story, not an idle card beside a working one.
        let clock = FakeClock::new(T0);
        let mut r = Rules::default();
        let ts = drive(&mut r, &clock, 20 * 60, None, |_, t| {
            let mut m = machine(t, [100, 0]);
            m.gpus[0].sm_active_pct = Some(0.5);
            m.gpus[0].power_watts = Some(90.0);
            m.gpus[0].power_limit_watts = Some(700.0);
            m
        });
        assert!(left(&ts).is_empty(), "{ts:#?}");
    }

    #[test]
    fn once_the_whole_machine_is_idle_its_own_alert_takes_over() {
        let clock = FakeClock::new(T0);
        let mut r = Rules::default();
        drive(&mut r, &clock, 11 * 60, None, |_, t| machine(t, [95, 0]));
        assert!(r.alerts().iter().any(|a| a.id == LEFT_IDLE_ID));
        drive(&mut r, &clock, 13 * 60, None, |_, t| machine(t, [0, 0]));
        let ids: Vec<&str> = r.alerts().iter().map(|a| a.id.as_str()).collect();
        assert!(ids.contains(&"idle"), "{ids:?}");
        assert!(!ids.contains(&LEFT_IDLE_ID), "{ids:?}");
    }
}
