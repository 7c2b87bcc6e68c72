//! The one global state behind every exported function: the init refcount, the loaded scenario
//! with its clock, the per-(device, function) call counters that `after_calls` faults count,
//! the cached truth of the current instant, and the energy floor that keeps the counter from
//! ever going back. One `Mutex` guards it all; a poisoned lock reads as `UNKNOWN`.
//!
//! Time: the scenario clock starts when the library is loaded and follows the wall clock in
//! 100 ms steps (so the truth is computed once per step, not once per call), unless
//! `GPUMETER_FAKE_NVML_ELAPSED_MS` freezes it (see `load`).

use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use gpumeter_model::Snapshot;
use gpumeter_sim::{Fault, Simulator};

use crate::abi::{ERROR_INVALID_ARGUMENT, ERROR_UNINITIALIZED, ERROR_UNKNOWN, nvmlReturn_t};

/// The wall-clock scenario time advances in steps of this many milliseconds.
const WALL_STEP_MS: u64 = 100;

static STATE: Mutex<State> = Mutex::new(State::new());

/// Threads blocked in an event wait sleep on this (with `STATE`'s lock), until their deadline,
/// their next XID's due time, or a [`wake_waiters`]: no wake-ups in between, as a driver's.
static WAKE: Condvar = Condvar::new();

/// When the library was loaded: a monotonic instant and the Unix time in µs.
static LOADED_AT: OnceLock<(Instant, u64)> = OnceLock::new();

/// The load time, fixed by the load-time constructor in `lib.rs` (or, failing that, on first use).
pub(crate) fn loaded_at() -> (Instant, u64) {
    *LOADED_AT.get_or_init(|| {
        let unix_us = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX));
        (Instant::now(), unix_us)
    })
}

/// Locks the state; a poisoned lock (a panic while it was held) is `UNKNOWN`.
pub(crate) fn lock() -> Result<MutexGuard<'static, State>, nvmlReturn_t> {
    STATE.lock().map_err(|_| ERROR_UNKNOWN)
}

/// Wakes every thread blocked in [`sleep_until`]: what they wait for may have changed (NVML
/// shut down, an event set freed, the test clock moved).
pub(crate) fn wake_waiters() {
    WAKE.notify_all();
}

/// Releases the lock until `until` or a [`wake_waiters`] (or a spurious wake-up: callers look
/// again), then takes it back. A poisoned lock is `UNKNOWN`.
pub(crate) fn sleep_until(
    guard: MutexGuard<'static, State>,
    until: Instant,
) -> Result<MutexGuard<'static, State>, nvmlReturn_t> {
    let left = until.saturating_duration_since(Instant::now());
    #[cfg(test)]
    WAKE_UPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    WAKE.wait_timeout(guard, left)
        .map(|(guard, _)| guard)
        .map_err(|_| ERROR_UNKNOWN)
}

/// Tests: how many times event waits have gone to sleep (each sleep ends in one wake-up).
#[cfg(test)]
pub(crate) static WAKE_UPS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// How scenario time is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScenarioClock {
    /// Wall time since the library was loaded, in 100 ms steps.
    Wall,
    /// Always this many milliseconds into the scenario (tests).
    Frozen(u64),
}

/// One look at an event set.
pub(crate) struct XidPoll {
    /// The XID due now, as (device, XID), already marked delivered.
    pub(crate) due: Option<(u32, u64)>,
    /// When the next one not yet due falls due (`None`: none will, on this clock).
    pub(crate) next: Option<Instant>,
}

/// A loaded scenario and what it has answered so far.
pub(crate) struct World {
    sim: Simulator,
    clock: ScenarioClock,
    /// The truth at one elapsed time, reused until the clock moves.
    truth: Option<(u64, Arc<Snapshot>)>,
    /// Highest energy counter reported per GPU: the counter never goes back.
    energy_floor: BTreeMap<u32, u64>,
    /// GPM samples and event sets handed out.
    pub(crate) objects: crate::objects::Objects,
}

impl World {
    pub(crate) fn new(sim: Simulator, clock: ScenarioClock) -> World {
        World {
            sim,
            clock,
            truth: None,
            energy_floor: BTreeMap::new(),
            objects: crate::objects::Objects::default(),
        }
    }

    pub(crate) fn sim(&self) -> &Simulator {
        &self.sim
    }

    pub(crate) fn gpu_count(&self) -> u32 {
        self.sim.scenario().gpu_count()
    }

    /// Milliseconds into the scenario now.
    pub(crate) fn elapsed_ms(&self) -> u64 {
        match self.clock {
            ScenarioClock::Frozen(ms) => ms,
            ScenarioClock::Wall => {
                let ms = u64::try_from(loaded_at().0.elapsed().as_millis()).unwrap_or(u64::MAX);
                ms - ms % WALL_STEP_MS
            }
        }
    }

    /// The instant scenario time reaches `at_ms` (the first wall step at or past it), or
    /// `None` when it never will (a frozen clock short of it). Already reached: `now`.
    pub(crate) fn instant_of(&self, at_ms: f64) -> Option<Instant> {
        let now = Instant::now();
        if at_ms <= self.elapsed_ms() as f64 {
            return Some(now);
        }
        match self.clock {
            ScenarioClock::Frozen(_) => None,
            ScenarioClock::Wall => {
                let step = WALL_STEP_MS as f64;
                let due_ms = (at_ms / step).ceil() * step;
                // Saturates far in the future: a wait's own deadline comes first.
                let due = Duration::try_from_secs_f64(due_ms / 1000.0).unwrap_or(Duration::MAX);
                Some(loaded_at().0.checked_add(due).unwrap_or(now).max(now))
            }
        }
    }

    /// What event set `set` has now: the XID due (marked delivered) and when the next falls due.
    pub(crate) fn next_xid(
        &mut self,
        set: crate::abi::nvmlEventSet_t,
    ) -> Result<XidPoll, nvmlReturn_t> {
        let elapsed = self.elapsed_ms();
        let xids = &self.sim.scenario().xids;
        let due = self.objects.next_due(set, xids, elapsed)?;
        let next = self.objects.next_at_ms(set, xids);
        Ok(XidPoll {
            due,
            next: next.and_then(|at| self.instant_of(at)),
        })
    }

    /// The driver timestamp (µs since the Unix epoch) of readings taken now: per-process
    /// utilization samples carry it, and the last-seen cursor is compared with it.
    pub(crate) fn timestamp_us(&self) -> u64 {
        loaded_at()
            .1
            .saturating_add(self.elapsed_ms().saturating_mul(1_000))
    }

    /// What the scenario says now, before faults.
    pub(crate) fn truth(&mut self) -> Arc<Snapshot> {
        let elapsed = self.elapsed_ms();
        if let Some((at, snap)) = &self.truth
            && *at == elapsed
        {
            return Arc::clone(snap);
        }
        let unix_ms = i64::try_from(self.timestamp_us() / 1_000).unwrap_or(i64::MAX);
        let snap = Arc::new(self.sim.truth_at(elapsed, unix_ms));
        self.truth = Some((elapsed, Arc::clone(&snap)));
        snap
    }

    /// What the scenario says at another instant (GPM metrics between two samples).
    pub(crate) fn sim_at(&mut self, elapsed_ms: u64, unix_ms: i64) -> Arc<Snapshot> {
        if let Some((at, snap)) = &self.truth
            && *at == elapsed_ms
        {
            return Arc::clone(snap);
        }
        Arc::new(self.sim.truth_at(elapsed_ms, unix_ms))
    }

    /// The energy counter to report for `gpu`: the scenario's, never below what was reported.
    pub(crate) fn energy(&mut self, gpu: u32, mj: u64) -> u64 {
        let floor = self.energy_floor.entry(gpu).or_insert(0);
        *floor = (*floor).max(mj);
        *floor
    }
}

/// Everything the exported functions share.
pub(crate) struct State {
    /// nvmlInit calls not yet matched by nvmlShutdown.
    init_count: u32,
    /// Loaded on the first successful scenario load and kept for the life of the process
    /// (gpustat initialises and shuts down on every refresh).
    world: Option<World>,
    /// Calls so far per (device index, C symbol); device-less calls under `None`.
    calls: BTreeMap<(Option<u32>, &'static str), u64>,
}

impl State {
    const fn new() -> State {
        State {
            init_count: 0,
            world: None,
            calls: BTreeMap::new(),
        }
    }

    pub(crate) fn has_world(&self) -> bool {
        self.world.is_some()
    }

    pub(crate) fn set_world(&mut self, world: World) {
        self.world = Some(world);
    }

    pub(crate) fn add_init(&mut self) {
        self.init_count = self.init_count.saturating_add(1);
    }

    /// One nvmlShutdown: `UNINITIALIZED` when there is nothing to shut down.
    pub(crate) fn release_init(&mut self) -> Result<(), nvmlReturn_t> {
        self.init_count = self.init_count.checked_sub(1).ok_or(ERROR_UNINITIALIZED)?;
        Ok(())
    }

    /// The world, when NVML is initialised.
    pub(crate) fn world(&mut self) -> Result<&mut World, nvmlReturn_t> {
        match (&mut self.world, self.init_count) {
            (Some(world), 1..) => Ok(world),
            _ => Err(ERROR_UNINITIALIZED),
        }
    }

    /// The device index behind a handle (initialised NVML, a handle this library gave out).
    pub(crate) fn device_index(
        &mut self,
        handle: crate::abi::nvmlDevice_t,
    ) -> Result<u32, nvmlReturn_t> {
        let count = self.world()?.gpu_count();
        crate::call::index_of(handle)
            .filter(|&i| i < count)
            .ok_or(ERROR_INVALID_ARGUMENT)
    }

    /// Counts this call and asks the scenario whether it fails or is slow.
    pub(crate) fn fault(&mut self, gpu: Option<u32>, function: &'static str) -> Option<Fault> {
        let calls = self.calls.entry((gpu, function)).or_insert(0);
        *calls = calls.saturating_add(1);
        let call_number = *calls;
        let world = self.world.as_ref()?;
        world
            .sim
            .fault(gpu, function, world.elapsed_ms(), call_number)
    }
}

/// Acts out a scripted fault: sleeps its latency (the caller must not hold the lock, so other
/// threads' calls go on meanwhile), then fails with its error, if any.
pub(crate) fn suffer(fault: Option<Fault>) -> Result<(), nvmlReturn_t> {
    let Some(fault) = fault else { return Ok(()) };
    if fault.latency_ms > 0 {
        std::thread::sleep(Duration::from_millis(fault.latency_ms));
    }
    match fault.error {
        Some(code) => Err(code),
        None => Ok(()),
    }
}

/// Tests: replaces the whole state with `world` loaded and NVML not initialised.
#[cfg(test)]
pub(crate) fn reset_for_test(world: World) {
    let mut st = STATE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    *st = State::new();
    st.world = Some(world);
}

/// Tests: forgets everything, as a freshly loaded library.
#[cfg(test)]
pub(crate) fn clear_for_test() {
    let mut st = STATE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    *st = State::new();
}

/// Tests: moves the frozen scenario clock.
#[cfg(test)]
pub(crate) fn set_clock_for_test(clock: ScenarioClock) {
    let mut st = STATE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(world) = &mut st.world {
        world.clock = clock;
    }
    wake_waiters();
}
