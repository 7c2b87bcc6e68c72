//! Autostop: stop a paid machine nobody uses. Off by default. The machine is idle when every
//! GPU is idle, runs only a short probe (a monitoring agent's health check: seen through, and
//! named in the warnings and the stop) or is lost (all lost is a spot reclaim or a host fault),
//! as the rules judged the tick ([`WorkTracker`]); host CPU ≤ 10 % and network ≤ 100 KB/s; after that has
//! lasted `after` (default 30 min) this state machine says "stop" once. It warns 5 min and
//! 1 min before, arms only after the first real GPU activity or 15 min after boot, and
//! [`Autostop::cancel`] (any key in the dashboard) starts the countdown over.
//!
//! Pure: it returns [`AutostopEvent`]s; running the stop command, `wall` and notifications is
//! the caller's (notify/ or `gpumeter watch`). Any GPU work resets the countdown at once;
//! host CPU or network activity resets it only when it lasts longer than `host_blip_ms`
//! (a cron job should not keep a forgotten box alive, a real workload should). Unknown readings
//! never count as idle: stopping a machine is not undone.

use gpumeter_model::Snapshot;
use serde::Serialize;

use super::rules::work::{GpuWork, WorkTracker};

/// " (ignored: 3 short probes by pid 812)" when the countdown ignored some GPU activity: the
/// words every channel adds to a warning and the stop.
pub fn ignored_note(tolerated: Option<&str>) -> String {
    tolerated.map_or_else(String::new, |t| format!(" (ignored: {t})"))
}

/// Resolved `[autostop]` settings.
#[derive(Debug, Clone, PartialEq)]
pub struct AutostopConfig {
    /// Whether autostop runs at all (`[autostop] enabled`, default off); off, [`Autostop::observe`]
    /// returns nothing.
    pub enabled: bool,
    /// Idle this long, then stop.
    pub after_ms: i64,
    /// Host CPU at most this counts as quiet, percent 0–100 (`[autostop] cpu_pct`, default 10).
    pub cpu_pct: f64,
    /// Network RX + TX at most this (bytes/s).
    pub net_bytes_per_s: f64,
    /// Warnings this long before the stop, largest first.
    pub warn_before_ms: Vec<i64>,
    /// The countdown arms this long after boot even without GPU activity, ms (`[autostop]
    /// arm_after_boot`, default 15 min).
    pub arm_after_boot_ms: i64,
    /// Host activity shorter than this does not reset the countdown.
    pub host_blip_ms: i64,
    /// The stop command, as an argv list (no shell).
    pub command: Vec<String>,
    /// Also `wall` the warnings to logged-in users.
    pub wall: bool,
}

impl Default for AutostopConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            after_ms: 30 * 60_000,
            cpu_pct: 10.0,
            net_bytes_per_s: 100e3,
            warn_before_ms: vec![5 * 60_000, 60_000],
            arm_after_boot_ms: 15 * 60_000,
            host_blip_ms: 30_000,
            command: Vec::new(),
            wall: true,
        }
    }
}

/// What the caller should do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum AutostopEvent {
    /// The countdown may run from now on (first GPU activity, or long enough after boot).
    Armed {
        /// When it armed, ms since the Unix epoch.
        at_unix_ms: i64,
    },
    /// The machine stops in `remaining_ms` unless something happens.
    Warning {
        /// When the warning was given, ms since the Unix epoch.
        at_unix_ms: i64,
        /// Time left before the stop, ms.
        remaining_ms: i64,
        /// How long the machine has been idle so far, ms.
        idle_ms: i64,
        /// GPU activity the countdown ignored (short probes), in words; `None`: none.
        #[serde(skip_serializing_if = "Option::is_none")]
        tolerated: Option<String>,
    },
    /// A warned countdown was cancelled (a key in the dashboard).
    Cancelled {
        /// When the countdown was cancelled, ms since the Unix epoch.
        at_unix_ms: i64,
    },
    /// Run the stop command now.
    Stop {
        /// When the stop was decided, ms since the Unix epoch.
        at_unix_ms: i64,
        /// How long the machine had been idle, ms (at least `after_ms`).
        idle_ms: i64,
        /// As in the warnings.
        #[serde(skip_serializing_if = "Option::is_none")]
        tolerated: Option<String>,
    },
}

/// Where the countdown stands, for the dashboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AutostopStatus {
    /// Autostop is configured on (`[autostop] enabled`).
    pub enabled: bool,
    /// The countdown may run (first GPU activity seen, or `arm_after_boot_ms` after boot).
    pub armed: bool,
    /// How long the machine has been idle (None: not idle).
    pub idle_ms: Option<i64>,
    /// Time left before the stop (None: not counting).
    pub remaining_ms: Option<i64>,
    /// The stop was issued for this idle stretch.
    pub fired: bool,
}

/// The autostop state machine: fed one snapshot per tick, says when to warn and when to stop.
#[derive(Debug, Clone)]
pub struct Autostop {
    cfg: AutostopConfig,
    armed: bool,
    idle_since: Option<i64>,
    host_busy_since: Option<i64>,
    /// Which warnings were given in this countdown (parallel to `warn_before_ms`).
    warned: Vec<bool>,
    fired: bool,
    last_now: Option<i64>,
}

impl Autostop {
    /// A countdown with these settings, not armed yet; the warnings are sorted largest first.
    pub fn new(mut cfg: AutostopConfig) -> Self {
        cfg.warn_before_ms.sort_unstable_by(|a, b| b.cmp(a));
        Self {
            warned: vec![false; cfg.warn_before_ms.len()],
            cfg,
            armed: false,
            idle_since: None,
            host_busy_since: None,
            fired: false,
            last_now: None,
        }
    }

    /// The settings it runs with (warnings sorted largest first).
    pub fn config(&self) -> &AutostopConfig {
        &self.cfg
    }

    fn reset(&mut self) {
        self.idle_since = None;
        self.host_busy_since = None;
        self.warned.iter_mut().for_each(|w| *w = false);
        self.fired = false;
    }

    /// One tick.
    /// One tick: `work` is the rules' judgement of the same snapshot.
    pub fn observe(&mut self, snap: &Snapshot, now: i64, work: &WorkTracker) -> Vec<AutostopEvent> {
        self.last_now = Some(now);
        let mut events = Vec::new();
        if !self.cfg.enabled {
            return events;
        }
        if !self.armed {
            let active = work.gpus().iter().any(|(_, w)| *w == GpuWork::Work);
            let booted_long_ago = snap.system.uptime_s.is_some_and(|u| {
                i64::try_from(u).unwrap_or(i64::MAX).saturating_mul(1000)
                    >= self.cfg.arm_after_boot_ms
            });
            if active || booted_long_ago {
                self.armed = true;
                events.push(AutostopEvent::Armed { at_unix_ms: now });
            } else {
                return events;
            }
        }
        // Paid for nothing: every GPU idle, probing or lost (all lost: a spot reclaim or a
        // host fault; the box bills for nothing).
        if work.no_work(true) != Some(true) {
            self.reset();
            return events;
        }
        let h = &snap.host;
        let net = match (h.net_rx_bytes_per_s, h.net_tx_bytes_per_s) {
            (Some(rx), Some(tx)) => Some(rx + tx),
            _ => None,
        };
        let host_quiet = h.cpu_util_pct.is_some_and(|c| c <= self.cfg.cpu_pct)
            && net.is_some_and(|n| n <= self.cfg.net_bytes_per_s);
        if host_quiet {
            self.host_busy_since = None;
        } else {
            let since = *self.host_busy_since.get_or_insert(now);
            if now - since > self.cfg.host_blip_ms || self.idle_since.is_none() {
                let keep = self.host_busy_since;
                self.reset();
                self.host_busy_since = keep;
                return events;
            }
        }
        let since = *self.idle_since.get_or_insert(now);
        if self.fired {
            return events;
        }
        let idle_ms = now - since;
        let remaining = self.cfg.after_ms - idle_ms;
        if remaining <= 0 {
            self.fired = true;
            events.push(AutostopEvent::Stop {
                at_unix_ms: now,
                idle_ms,
                tolerated: work.probes_text(since),
            });
            return events;
        }
        // Only the nearest warning when a long tick crosses several.
        let due: Vec<usize> = (0..self.warned.len())
            .filter(|&i| !self.warned[i] && remaining <= self.cfg.warn_before_ms[i])
            .collect();
        if !due.is_empty() {
            for i in due {
                self.warned[i] = true;
            }
            events.push(AutostopEvent::Warning {
                at_unix_ms: now,
                remaining_ms: remaining,
                idle_ms,
                tolerated: work.probes_text(since),
            });
        }
        events
    }

    /// Someone is here (a key in the dashboard): the countdown starts over. Returns
    /// [`AutostopEvent::Cancelled`] when a warning had been given (so it can be announced).
    pub fn cancel(&mut self, now: i64) -> Option<AutostopEvent> {
        if !self.cfg.enabled {
            return None;
        }
        let warned = self.warned.iter().any(|w| *w) || self.fired;
        self.reset();
        warned.then_some(AutostopEvent::Cancelled { at_unix_ms: now })
    }

    /// The countdown at the last tick.
    pub fn status(&self) -> AutostopStatus {
        let idle_ms = match (self.idle_since, self.last_now) {
            (Some(s), Some(n)) => Some(n - s),
            _ => None,
        };
        AutostopStatus {
            enabled: self.cfg.enabled,
            armed: self.armed,
            idle_ms,
            remaining_ms: idle_ms
                .filter(|_| self.cfg.enabled)
                .map(|i| (self.cfg.after_ms - i).max(0)),
            fired: self.fired,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::{Clock, FakeClock};
    use crate::engine::rules::RulesConfig;
    use gpumeter_model::{GpuReading, GpuState};

    const T0: i64 = 1_750_000_000_000;

    fn snap(t: i64, gpu_util: u32, cpu: f64, uptime_s: u64) -> Snapshot {
        let mut s = Snapshot::empty("t", t);
        s.system.uptime_s = Some(uptime_s);
        s.host.cpu_util_pct = Some(cpu);
        s.host.net_rx_bytes_per_s = Some(1_000.0);
        s.host.net_tx_bytes_per_s = Some(1_000.0);
        s.gpus = (0..2)
            .map(|i| GpuReading {
                index: i,
                util_gpu_pct: Some(gpu_util),
                ..GpuReading::default()
            })
            .collect();
        s
    }

    fn on() -> AutostopConfig {
        AutostopConfig {
            enabled: true,
            command: vec!["true".into()],
            ..AutostopConfig::default()
        }
    }

    /// Steps the fake clock a second at a time for `secs`, returning events with their times
    /// (in whole seconds since T0).
    fn run(
        a: &mut Autostop,
        clock: &FakeClock,
        secs: i64,
        f: impl Fn(i64) -> Snapshot,
    ) -> Vec<(i64, AutostopEvent)> {
        let idle = RulesConfig::default().idle;
        let mut work = WorkTracker::default();
        let mut out = Vec::new();
        for _ in 0..secs {
            let now = clock.now_unix_ms();
            let s = f(now);
            work.update(&s, now, &idle);
            for e in a.observe(&s, now, &work) {
                out.push(((now - T0) / 1000, e));
            }
            clock.advance_ms(1000);
        }
        out
    }

    fn kinds(ev: &[(i64, AutostopEvent)]) -> Vec<(i64, &'static str)> {
        ev.iter()
            .map(|(t, e)| {
                let k = match e {
                    AutostopEvent::Armed { .. } => "armed",
                    AutostopEvent::Warning { .. } => "warning",
                    AutostopEvent::Cancelled { .. } => "cancelled",
                    AutostopEvent::Stop { .. } => "stop",
                };
                (*t, k)
            })
            .collect()
    }

    #[test]
    fn warns_at_five_and_one_minute_then_stops_once() {
        let clock = FakeClock::new(T0);
        let mut a = Autostop::new(on());
        let ev = run(&mut a, &clock, 40 * 60, |t| snap(t, 0, 1.0, 86_400));
        assert_eq!(
            kinds(&ev),
            vec![
                (0, "armed"),
                (25 * 60, "warning"),
                (29 * 60, "warning"),
                (30 * 60, "stop")
            ]
        );
        assert!(a.status().fired);
    }

    /// Every GPU lost (a spot reclaim): the box bills for nothing, so it counts as idle, with
    /// the usual warnings and cancel; one GPU lost beside a working one does not.
    #[test]
    fn all_gpus_lost_counts_as_idle_with_the_usual_warnings_and_cancel() {
        let lost = |mut s: Snapshot, which: &[u32]| {
            for g in s.gpus.iter_mut().filter(|g| which.contains(&g.index)) {
                *g = GpuReading {
                    index: g.index,
                    state: GpuState::Lost,
                    ..GpuReading::default()
                };
            }
            s
        };
        let clock = FakeClock::new(T0);
        let mut a = Autostop::new(on());
        let ev = run(&mut a, &clock, 60, |t| lost(snap(t, 90, 1.0, 86_400), &[1]));
        assert_eq!(kinds(&ev), vec![(0, "armed")]);
        assert_eq!(a.status().idle_ms, None);
        let ev = run(&mut a, &clock, 26 * 60, |t| {
            lost(snap(t, 90, 1.0, 86_400), &[0, 1])
        });
        assert_eq!(kinds(&ev), vec![(1560, "warning")]);
        assert!(a.cancel(clock.now_unix_ms()).is_some());
        let ev = run(&mut a, &clock, 31 * 60, |t| {
            lost(snap(t, 0, 1.0, 86_400), &[0, 1])
        });
        assert_eq!(
            kinds(&ev),
            vec![(3120, "warning"), (3360, "warning"), (3420, "stop")]
        );
    }

    #[test]
    fn cancel_starts_the_countdown_over_and_gpu_work_resets_it() {
        let clock = FakeClock::new(T0);
        let mut a = Autostop::new(on());
        run(&mut a, &clock, 26 * 60, |t| snap(t, 0, 1.0, 86_400));
        assert_eq!(
            a.cancel(clock.now_unix_ms()),
            Some(AutostopEvent::Cancelled {
                at_unix_ms: clock.now_unix_ms()
            })
        );
        let ev = run(&mut a, &clock, 20 * 60, |t| snap(t, 0, 1.0, 86_400));
        assert!(ev.is_empty(), "{ev:?}");
        assert_eq!(a.status().remaining_ms, Some(10 * 60_000 + 1000));
        // One busy GPU sample resets everything; a cancel with no warning given is silent.
        run(&mut a, &clock, 1, |t| snap(t, 90, 1.0, 86_400));
        assert_eq!(a.status().idle_ms, None);
        assert_eq!(a.cancel(clock.now_unix_ms()), None);
    }

    #[test]
    fn never_fires_when_disabled() {
        let clock = FakeClock::new(T0);
        let mut a = Autostop::new(AutostopConfig::default());
        assert!(run(&mut a, &clock, 3 * 3600, |t| snap(t, 0, 0.0, 86_400)).is_empty());
        assert_eq!(a.cancel(clock.now_unix_ms()), None);
        assert!(!a.status().enabled);
    }

    #[test]
    fn arms_after_gpu_activity_or_fifteen_minutes_of_uptime() {
        let clock = FakeClock::new(T0);
        let mut a = Autostop::new(on());
        // Booted 1 minute ago, never busy: arms when uptime reaches 15 minutes.
        let ev = run(&mut a, &clock, 50 * 60, |t| {
            snap(t, 0, 1.0, 60 + ((t - T0) / 1000) as u64)
        });
        assert_eq!(kinds(&ev)[0], (14 * 60, "armed"));
        assert_eq!(kinds(&ev).last().copied(), Some((44 * 60, "stop")));
        let mut b = Autostop::new(on());
        let ev = run(&mut b, &clock, 5, |t| snap(t, 50, 1.0, 60));
        assert_eq!(kinds(&ev), vec![(50 * 60, "armed")]);
    }

    #[test]
    fn short_host_blips_are_tolerated_long_host_work_resets() {
        let clock = FakeClock::new(T0);
        let mut a = Autostop::new(on());
        // A 20-second CPU burst every 10 minutes (cron) does not keep the box alive.
        let ev = run(&mut a, &clock, 31 * 60, |t| {
            let s = (t - T0) / 1000;
            snap(
                t,
                0,
                if s % 600 > 300 && s % 600 <= 320 {
                    60.0
                } else {
                    1.0
                },
                86_400,
            )
        });
        assert_eq!(kinds(&ev).last().copied(), Some((30 * 60, "stop")));
        // CPU work lasting minutes (a CPU-only job) restarts the countdown.
        let mut b = Autostop::new(on());
        let ev = run(&mut b, &clock, 40 * 60, |t| {
            let s = (t - T0) / 1000 - 31 * 60;
            snap(
                t,
                0,
                if (600..900).contains(&s) { 60.0 } else { 1.0 },
                86_400,
            )
        });
        assert!(kinds(&ev).iter().all(|(_, k)| *k != "stop"), "{ev:?}");
    }
}
