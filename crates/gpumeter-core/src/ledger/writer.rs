//! The ledger's writer thread: the only code that writes minutes to SQLite once a session has
//! begun. The session core hands it each closed minute over a bounded channel and never waits
//! on the disk: a write that fails (a full disk, a locked file past the busy timeout) stays
//! queued here and is tried again with the next minute, in order, and the failure comes back as
//! a note; when the channel is full the minute waits in the recorder's backlog
//! ([`super::recorder`]). [`Writer::finish`] closes the channel and waits a bounded time for the
//! queue to reach the disk. Touches only the ledger it owns.

use std::collections::VecDeque;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::params;

use super::{Ledger, LedgerError};
use crate::billing::BudgetEvent;

/// Minutes the channel holds before the recorder keeps them itself.
pub const CHANNEL_MINUTES: usize = 8;
/// Failed minutes kept for another try (a week); older ones are dropped, and that is said.
const MAX_RETRY: usize = 7 * 1_440;
/// Longest [`Writer::finish`] waits for the queue by default.
pub const FINISH_WAIT: Duration = Duration::from_secs(5);

/// A rule's alert as the ledger's alert log keeps it (budget crossings have their own fields).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlertLog {
    /// When the alert fired, ms since the Unix epoch.
    pub at_unix_ms: i64,
    /// The alert kind's name (`xid`, `hung`, …).
    pub kind: String,
    /// Its one-line title.
    pub message: String,
}

/// One closed minute as the ledger stores it.
#[derive(Debug, Clone, PartialEq)]
pub struct MinuteWrite {
    /// The session's row id in the ledger.
    pub session_id: i64,
    /// Minutes since the epoch (UTC).
    pub minute: i64,
    /// What the minute added to the session's sums.
    pub delta: super::recorder::Recorded,
    /// The last tick's time (the session's `last_ms`).
    pub at_ms: i64,
    /// Per GPU: (index, busy_ms, idle_ms, util_pct_ms, util_known_ms, energy_mj).
    pub gpus: Vec<(u32, i64, i64, i64, i64, Option<i64>)>,
    /// Budget crossings in the minute.
    pub events: Vec<BudgetEvent>,
    /// Rule alerts that fired in the minute.
    pub alerts: Vec<AlertLog>,
    /// The most GPUs the session has seen so far.
    pub max_gpus: u32,
}

/// What became of a minute handed to [`Writer::try_send`].
#[derive(Debug)]
pub enum Handed {
    /// On the writer thread's queue; it will be written.
    Queued,
    /// The channel is full: here it is back, to keep and hand over later.
    Full(MinuteWrite),
    /// The thread is gone: it can never be written.
    Gone,
}

/// Shared between the thread and its owner: notes for the next step.
type Notes = Arc<Mutex<Vec<String>>>;

/// How far the thread got, for [`Writer::wait_written`].
#[derive(Debug, Default)]
struct Progress {
    /// Minutes put on disk.
    written: u64,
    /// Whether the last write failed (the minutes wait for a retry).
    failing: bool,
}

type Written = Arc<(Mutex<Progress>, std::sync::Condvar)>;

/// What [`Writer::wait_written`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waited {
    /// Every minute handed over is on disk.
    Written,
    /// A write failed: the minutes are kept for a retry, and nobody should wait for them.
    Failing,
    /// The wait ran out.
    TimedOut,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

fn push(notes: &Notes, line: String) {
    let mut n = lock(notes);
    if n.len() < 16 {
        n.push(line);
    }
}

/// The handle the recorder holds. See the module docs.
#[derive(Debug)]
pub struct Writer {
    tx: Option<SyncSender<MinuteWrite>>,
    done: Option<Receiver<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    notes: Notes,
    written: Written,
    /// Minutes handed over so far.
    sent: u64,
}

impl Writer {
    /// Starts the thread, which owns `ledger` from now on.
    pub fn spawn(ledger: Ledger) -> std::io::Result<Writer> {
        let (tx, rx) = std::sync::mpsc::sync_channel(CHANNEL_MINUTES);
        let (done_tx, done) = std::sync::mpsc::channel();
        let notes: Notes = Arc::default();
        let written: Written = Arc::default();
        let (thread_notes, thread_written) = (Arc::clone(&notes), Arc::clone(&written));
        let thread = std::thread::Builder::new()
            .name("gpumeter-ledger".into())
            .spawn(move || {
                run(ledger, &rx, &thread_notes, &thread_written);
                let _ = done_tx.send(());
            })?;
        Ok(Writer {
            tx: Some(tx),
            done: Some(done),
            thread: Some(thread),
            notes,
            written,
            sent: 0,
        })
    }

    /// Hands a minute over without waiting; gives it back when the channel is full.
    pub fn try_send(&mut self, w: MinuteWrite) -> Handed {
        let Some(tx) = &self.tx else {
            return Handed::Gone;
        };
        match tx.try_send(w) {
            Ok(()) => {
                self.sent += 1;
                Handed::Queued
            }
            Err(TrySendError::Full(w)) => Handed::Full(w),
            Err(TrySendError::Disconnected(_)) => Handed::Gone,
        }
    }

    /// What the thread had to say since the last call.
    pub fn drain_notes(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.notes))
    }

    /// Waits, `wait` at most, until every minute handed over is on disk, or a write failed
    /// (a full disk: the minutes wait for a retry, the reading does not). Only for runs on a
    /// simulated clock (`watch --fast`), which must not outrun the disk.
    pub fn wait_written(&self, wait: Duration) -> Waited {
        let (progress, cv) = &*self.written;
        let deadline = std::time::Instant::now() + wait;
        let mut p = lock(progress);
        while p.written < self.sent {
            if p.failing {
                return Waited::Failing;
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return Waited::TimedOut;
            }
            p = match cv.wait_timeout(p, left) {
                Ok((g, _)) => g,
                Err(e) => e.into_inner().0,
            };
        }
        Waited::Written
    }

    /// Sends `rest`, closes the channel and waits, `wait` at most in all, for everything to
    /// reach the disk. Returns the notes, a timeout among them.
    pub fn finish(&mut self, rest: Vec<MinuteWrite>, wait: Duration) -> Vec<String> {
        let deadline = std::time::Instant::now() + wait;
        let mut lost = 0;
        if let Some(tx) = self.tx.take() {
            for w in rest {
                let mut w = w;
                // A full channel is waited on, but never past the deadline.
                loop {
                    match tx.try_send(w) {
                        Ok(()) => break,
                        Err(TrySendError::Full(back)) if std::time::Instant::now() < deadline => {
                            w = back;
                            std::thread::sleep(Duration::from_millis(5));
                        }
                        Err(_) => {
                            lost += 1;
                            break;
                        }
                    }
                }
            }
        }
        let mut notes = Vec::new();
        if lost > 0 {
            notes.push(format!(
                "ledger: {lost} minute(s) not written: the writer thread stopped"
            ));
        }
        if let Some(done) = self.done.take() {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match done.recv_timeout(left) {
                Ok(()) | Err(RecvTimeoutError::Disconnected) => {
                    if let Some(t) = self.thread.take() {
                        let _ = t.join();
                    }
                }
                Err(RecvTimeoutError::Timeout) => notes.push(format!(
                    "ledger: the disk did not take the last minutes within {} s; they may be missing",
                    wait.as_secs()
                )),
            }
        }
        let mut all = self.drain_notes();
        all.extend(notes);
        all
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // A writer dropped without `finish` (a panic unwinding, a test) still lets its queue
        // reach the disk and its lock go, within the same bounded wait.
        let _ = self.finish(Vec::new(), FINISH_WAIT);
    }
}

/// The thread: each minute in order, failed ones tried again before the next.
fn run(mut ledger: Ledger, rx: &Receiver<MinuteWrite>, notes: &Notes, written: &Written) {
    let mut queue: VecDeque<MinuteWrite> = VecDeque::new();
    let mut failing = false;
    while let Ok(w) = rx.recv() {
        queue.push_back(w);
        // Whatever else is waiting goes in the same pass.
        while let Ok(more) = rx.try_recv() {
            queue.push_back(more);
        }
        drain(&mut ledger, &mut queue, &mut failing, notes, written);
    }
    // The channel closed: one last try for what failed before.
    if !queue.is_empty() {
        drain(&mut ledger, &mut queue, &mut failing, notes, written);
        if !queue.is_empty() {
            push(
                notes,
                format!("ledger: {} minute(s) could not be written", queue.len()),
            );
        }
    }
}

fn drain(
    ledger: &mut Ledger,
    queue: &mut VecDeque<MinuteWrite>,
    failing: &mut bool,
    notes: &Notes,
    written: &Written,
) {
    while let Some(w) = queue.front() {
        match write(ledger, w) {
            Ok(held) => {
                if held {
                    push(
                        notes,
                        format!(
                            "ledger: the minute {} held more time than a minute; written as at \
                             most 60 s (a clock that repeats itself?)",
                            crate::clock::utc_text(
                                w.minute.saturating_mul(60_000),
                                crate::clock::UtcStyle::Full
                            )
                        ),
                    );
                }
                queue.pop_front();
                let (progress, cv) = &**written;
                let mut p = lock(progress);
                p.written += 1;
                p.failing = false;
                drop(p);
                cv.notify_all();
                if std::mem::replace(failing, false) {
                    push(notes, "ledger writes work again".into());
                }
            }
            Err(e) => {
                if !std::mem::replace(failing, true) {
                    push(
                        notes,
                        format!("ledger write failed (will retry each minute): {e}"),
                    );
                }
                // Said before it is signalled: a released waiter finds the note there.
                let (progress, cv) = &**written;
                lock(progress).failing = true;
                cv.notify_all();
                break;
            }
        }
    }
    let excess = queue.len().saturating_sub(MAX_RETRY);
    if excess > 0 {
        queue.drain(..excess);
        push(
            notes,
            format!("ledger: {excess} old minute(s) dropped after failing for a week"),
        );
    }
}

/// The rows of a minute held to what a minute can hold, in the write's transaction: observed
/// time at most 60 s, idle time at most the observed time, GPU time at most the observed time
/// on every GPU, and each GPU's busy and idle time at most 60 s. The recorder never writes
/// more (see its docs); this is the check at write time that a bug cannot pass.
const HOLD_TO_MINUTE: &str = "
    UPDATE minutes SET
        observed_ms = min(observed_ms, 60000),
        idle_ms = min(idle_ms, min(observed_ms, 60000)),
        gpu_ms = min(gpu_ms, min(observed_ms, 60000) * ?3),
        busy_gpu_ms = min(busy_gpu_ms, gpu_ms, min(observed_ms, 60000) * ?3)
    WHERE session_id = ?1 AND minute = ?2
      AND (observed_ms > 60000 OR idle_ms > observed_ms OR gpu_ms > observed_ms * ?3
           OR busy_gpu_ms > gpu_ms)";
const HOLD_GPU_TO_MINUTE: &str = "
    UPDATE gpu_minutes SET
        busy_ms = min(busy_ms, 60000),
        idle_ms = min(idle_ms, 60000 - min(busy_ms, 60000))
    WHERE session_id = ?1 AND minute = ?2 AND busy_ms + idle_ms > 60000";

/// One minute in one transaction: minute row, per-GPU rows, budget events, session end.
/// Returns whether the minute had to be held to a minute's time ([`HOLD_TO_MINUTE`]).
pub(super) fn write(ledger: &mut Ledger, w: &MinuteWrite) -> Result<bool, LedgerError> {
    let d = &w.delta;
    let energy = w
        .gpus
        .iter()
        .filter_map(|g| g.5)
        .reduce(i64::saturating_add);
    let result = (|| -> rusqlite::Result<bool> {
        let conn = ledger
            .conn_mut()
            .map_err(|_| rusqlite::Error::InvalidQuery)?;
        let tx = conn.transaction()?;
        tx.execute(
            "INSERT INTO minutes (session_id, minute, paid_ms, observed_ms, gpu_ms,
                 busy_gpu_ms, idle_ms, spend_micros, idle_cost_micros, energy_mj, egress_bytes)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
             ON CONFLICT (session_id, minute) DO UPDATE SET
                 paid_ms = paid_ms + excluded.paid_ms,
                 observed_ms = observed_ms + excluded.observed_ms,
                 gpu_ms = gpu_ms + excluded.gpu_ms,
                 busy_gpu_ms = busy_gpu_ms + excluded.busy_gpu_ms,
                 idle_ms = idle_ms + excluded.idle_ms,
                 spend_micros = spend_micros + excluded.spend_micros,
                 idle_cost_micros = idle_cost_micros + excluded.idle_cost_micros,
                 energy_mj = CASE WHEN excluded.energy_mj IS NULL THEN energy_mj
                             ELSE coalesce(energy_mj, 0) + excluded.energy_mj END,
                 egress_bytes = egress_bytes + excluded.egress_bytes",
            params![
                w.session_id,
                w.minute,
                d.paid_ms,
                d.observed_ms,
                d.gpu_ms,
                d.busy_gpu_ms,
                d.idle_ms,
                d.spend_micros,
                d.idle_cost_micros,
                energy,
                d.egress_bytes
            ],
        )?;
        for &(gpu, busy_ms, idle_ms, util_pct_ms, util_known_ms, energy_mj) in &w.gpus {
            tx.execute(
                "INSERT INTO gpu_minutes (session_id, minute, gpu, busy_ms, idle_ms,
                     util_pct_ms, util_known_ms, energy_mj)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                 ON CONFLICT (session_id, minute, gpu) DO UPDATE SET
                     busy_ms = busy_ms + excluded.busy_ms,
                     idle_ms = idle_ms + excluded.idle_ms,
                     util_pct_ms = util_pct_ms + excluded.util_pct_ms,
                     util_known_ms = util_known_ms + excluded.util_known_ms,
                     energy_mj = CASE WHEN excluded.energy_mj IS NULL THEN energy_mj
                                 ELSE coalesce(energy_mj, 0) + excluded.energy_mj END",
                params![
                    w.session_id,
                    w.minute,
                    gpu,
                    busy_ms,
                    idle_ms,
                    util_pct_ms,
                    util_known_ms,
                    energy_mj
                ],
            )?;
        }
        for e in &w.events {
            tx.execute(
                "INSERT INTO alerts (session_id, at_ms, kind, threshold_pct, period_key,
                     spent_micros, budget_micros, message)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    w.session_id,
                    e.at_unix_ms,
                    format!("budget_{}", e.kind.name()),
                    e.threshold,
                    e.period_key,
                    e.spent.micros(),
                    e.budget.micros(),
                    format!(
                        "{} {}% of the {} budget",
                        e.kind.name(),
                        e.threshold,
                        e.period
                    )
                ],
            )?;
        }
        for a in &w.alerts {
            tx.execute(
                "INSERT INTO alerts (session_id, at_ms, kind, message) VALUES (?1, ?2, ?3, ?4)",
                params![w.session_id, a.at_unix_ms, a.kind, a.message],
            )?;
        }
        tx.execute(
            "UPDATE sessions SET last_ms = max(last_ms, ?2), max_gpus = max(max_gpus, ?3)
             WHERE id = ?1",
            params![w.session_id, w.at_ms, w.max_gpus],
        )?;
        // The most GPUs the session has seen (this minute may carry none: paid time only).
        let gpus: i64 = tx.query_row(
            "SELECT max_gpus FROM sessions WHERE id = ?1",
            [w.session_id],
            |r| r.get(0),
        )?;
        let gpus = gpus.max(i64::try_from(w.gpus.len()).unwrap_or(i64::MAX));
        let held = tx.execute(HOLD_TO_MINUTE, params![w.session_id, w.minute, gpus])?
            + tx.execute(HOLD_GPU_TO_MINUTE, params![w.session_id, w.minute])?;
        tx.commit()?;
        Ok(held > 0)
    })();
    result.map_err(|e| ledger.sql_error(e))
}
