//! When a tree process's files are read: the periods of the listings, the members' stats and
//! the children lists (see the module doc of [`super`] for what each is for), and what is kept
//! per process between reads ([`Cadence`]: its last read times, its phase, its last stat and
//! whether it was quiet). Pure: times in, decisions out; the scanner does the reading.

use super::super::stat::ProcStat;

/// Longest time between two listings of /proc.
pub(in crate::source::host) const LISTING_MS: i64 = 10_000;

/// Longest time between two whole listings of /proc (the others resume at the last one's end).
pub(in crate::source::host) const WHOLE_LISTING_MS: i64 = 60_000;

/// Longest time between two reads of a tree member's stat (the GPU processes: every tick).
pub(in crate::source::host) const MEMBER_STAT_MS: i64 = 5_000;

/// Longest time between two reads of a quiet process's stat (see [`quiet`]).
pub(in crate::source::host) const QUIET_STAT_MS: i64 = 15_000;

/// Longest time between two reads of a tree process's `children` list.
pub(in crate::source::host) const CHILDREN_MS: i64 = 5_000;

/// A read is due this much before its period is over, so that ticks a little early (timer
/// jitter) do not push it a whole tick later: at a 1 s interval a 5 s period is 5 ticks.
pub(super) const EARLY_MS: i64 = 500;

/// When a tree process's files were last read (or, for one just found, its phase: an earlier
/// time, so that members found together are read at different ticks).
#[derive(Debug, Clone)]
pub(super) struct Cadence {
    pub(super) stat_ms: i64,
    pub(super) children_ms: i64,
    /// A GPU process just found: read again on the next tick (its first CPU %), then at its
    /// phase.
    pub(super) rephase: bool,
    /// The last stat read (carried between reads of a member).
    pub(super) stat: ProcStat,
    /// Its last read found it asleep with no CPU time since the read before: it waits
    /// [`QUIET_STAT_MS`] for the next.
    pub(super) quiet: bool,
}

impl Cadence {
    /// How long its stat waits between reads.
    pub(super) fn stat_period(&self) -> i64 {
        if self.quiet {
            QUIET_STAT_MS
        } else {
            MEMBER_STAT_MS
        }
    }
}

/// Whether a stat read after `before` shows a process that did nothing in between: asleep
/// (interruptible, or an idle kernel thread), the same process, no CPU time. One in `D` waits
/// on I/O, which is what the starved rule looks for: not quiet.
pub(super) fn quiet(before: &ProcStat, now: &ProcStat) -> bool {
    matches!(now.state, 'S' | 'I')
        && before.start_ticks == now.start_ticks
        && before.cpu_ticks == now.cpu_ticks
}

/// Whether a read last done at `at_ms` is due at `now_ms` (a clock that stepped back: yes).
pub(super) fn due(now_ms: i64, at_ms: i64, period_ms: i64) -> bool {
    now_ms < at_ms || now_ms - at_ms + EARLY_MS >= period_ms
}

/// A pid's phase in `[0, period)`: spreads the members' reads over the period.
pub(super) fn phase(pid: u32, period_ms: i64) -> i64 {
    (i64::from(pid).wrapping_mul(7_919)).rem_euclid(period_ms.max(1))
}
