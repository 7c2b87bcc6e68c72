//! The busiest thread of each GPU process, from `/proc/<pid>/task/<tid>/stat` over the interval
//! between two reads of the process (every tick, or at its slower cadence: see `scan`; between
//! reads the last answer is kept): a data pipeline stuck on one thread (num_workers = 0, a GIL-bound
//! loader) shows as one thread at ~100 % of a core, which the process's total CPU hides when
//! other threads add to it. Read only for GPU processes (a few, with tens of threads each),
//! at most [`MAX_THREADS`] threads each; a process with one thread is its own busiest thread,
//! read from the process's stat the tick already has.

use std::path::Path;

use foldhash::HashMap;
use gpumeter_model::{SharedStr, ThreadReading};

use super::kept::read_into;
use super::stat::{ProcStat, parse_stat_fields};
use crate::sanitize::{MAX_NAME_CHARS, sanitize};

/// Threads read per process.
const MAX_THREADS: usize = 1024;

/// Per-thread counters at a read: tid → (start ticks, cpu ticks).
type Counters = HashMap<u32, (u64, u64)>;

/// What is kept of one GPU process between its reads.
#[derive(Debug, Default)]
struct Kept {
    /// When its threads were last read.
    at_ms: Option<i64>,
    /// Per-thread counters then.
    counters: Counters,
    /// The answer then (given again while the process's stat is carried).
    best: Option<ThreadReading>,
    /// The busiest thread's comm as read, beside its sanitized name in `best`: the same
    /// thread under the same comm next time reuses that name (sanitized once, shared).
    best_comm: String,
    /// The tick it was last looked at.
    seen: u64,
}

/// Per-process thread counters at each GPU process's last read.
#[derive(Debug, Default)]
pub(super) struct ThreadTracker {
    procs: HashMap<u32, Kept>,
    tick: u64,
    /// The counters map a read gave up, cleared and filled by the next read (no map is built
    /// per read).
    spare: Counters,
    /// The read buffer for the threads' stat files.
    buf: Vec<u8>,
}

/// The busiest thread found so far in one read: its tid, raw comm and rate.
struct Best<'a> {
    tid: u32,
    comm: &'a str,
    cpu_pct: Option<f64>,
}

impl ThreadTracker {
    /// The busiest thread of process `pid` (directory pid, whose stat is `stat`) since its
    /// previous read; when its stat was not read this tick (`fresh` false), what that read
    /// found, reading nothing.
    pub(super) fn busiest(
        &mut self,
        proc: &Path,
        pid: u32,
        stat: &ProcStat,
        now_ms: i64,
        ticks_per_s: u64,
        fresh: bool,
    ) -> Option<ThreadReading> {
        let kept = self.procs.entry(pid).or_default();
        kept.seen = self.tick;
        if !fresh && kept.at_ms.is_some() {
            return kept.best.clone();
        }
        let dt_s = kept
            .at_ms
            .filter(|&p| now_ms > p)
            .map(|p| (now_ms - p) as f64 / 1000.0);
        let mut next = std::mem::take(&mut self.spare);
        next.clear();
        let prev = &kept.counters;
        let mut rate = |tid: u32, start: u64, ticks: u64| {
            next.insert(tid, (start, ticks));
            match (prev.get(&tid), dt_s) {
                (Some(&(s, before)), Some(dt)) if s == start && ticks >= before => {
                    Some((ticks - before) as f64 / ticks_per_s as f64 / dt * 100.0)
                }
                _ => None,
            }
        };
        let found = if stat.threads == Some(1) {
            let cpu_pct = rate(pid, stat.start_ticks, stat.cpu_ticks);
            let best = Best {
                tid: pid,
                comm: &stat.comm,
                cpu_pct,
            };
            Some(kept.reading(&best))
        } else {
            read_threads(proc, pid, &mut self.buf, &mut rate).map(|(tid, comm, cpu_pct)| {
                kept.reading(&Best {
                    tid,
                    comm: &comm,
                    cpu_pct,
                })
            })
        };
        let best = found.filter(|b| b.cpu_pct.is_some() || dt_s.is_none());
        self.spare = std::mem::replace(&mut kept.counters, next);
        kept.at_ms = Some(now_ms);
        kept.best = best.clone();
        best
    }

    /// Ends a tick: processes not looked at are forgotten.
    pub(super) fn end_tick(&mut self) {
        let tick = self.tick;
        self.procs.retain(|_, k| k.seen == tick);
        self.tick = tick.wrapping_add(1);
    }
}

impl Kept {
    /// The reading of this read's busiest thread, its name shared with the last answer's when
    /// it is the same thread under the same comm.
    fn reading(&mut self, best: &Best<'_>) -> ThreadReading {
        let same = self
            .best
            .as_ref()
            .is_some_and(|b| b.tid == best.tid && b.name.is_some())
            && self.best_comm == best.comm;
        let name = match self.best.as_ref().and_then(|b| b.name.clone()) {
            Some(name) if same => name,
            _ => {
                self.best_comm.clear();
                self.best_comm.push_str(best.comm);
                SharedStr::from(sanitize(best.comm, MAX_NAME_CHARS))
            }
        };
        ThreadReading {
            tid: best.tid,
            name: Some(name),
            cpu_pct: best.cpu_pct,
        }
    }
}

/// The busiest of `pid`'s threads by `rate` (which notes each thread's counters): its tid,
/// comm and rate.
fn read_threads(
    proc: &Path,
    pid: u32,
    buf: &mut Vec<u8>,
    rate: &mut impl FnMut(u32, u64, u64) -> Option<f64>,
) -> Option<(u32, String, Option<f64>)> {
    let task = proc.join(pid.to_string()).join("task");
    let rd = std::fs::read_dir(&task).ok()?;
    let mut best: Option<(u32, String, Option<f64>)> = None;
    let mut path = task.clone();
    for entry in rd.take(MAX_THREADS) {
        let Ok(entry) = entry else { continue };
        let name = entry.file_name();
        let Some(tid) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        path.push(&name);
        path.push("stat");
        let read = read_into(&path, buf);
        path.pop();
        path.pop();
        if read.is_err() {
            continue;
        }
        let Some(stat) = parse_stat_fields(buf) else {
            continue;
        };
        let cpu_pct = rate(tid, stat.start_ticks, stat.cpu_ticks);
        let better = match (&best, cpu_pct) {
            (None, _) => true,
            (Some((_, _, b)), Some(c)) => b.is_none_or(|bc| c > bc),
            (Some(_), None) => false,
        };
        if better {
            let comm = String::from_utf8_lossy(stat.comm);
            match &mut best {
                Some((t, kept, c)) => {
                    *t = tid;
                    kept.clear();
                    kept.push_str(&comm);
                    *c = cpu_pct;
                }
                None => best = Some((tid, comm.into_owned(), cpu_pct)),
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread_stat(tid: u32, comm: &str, utime: u64) -> String {
        format!(
            "{tid} ({comm}) R 1 1 1 0 -1 0 0 0 0 0 {utime} 0 0 0 20 0 1 0 500 1000 10 \
             18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
        )
    }

    #[test]
    fn the_busiest_thread_over_the_interval() {
        let tmp = tempfile::tempdir().unwrap();
        let write = |tid: u32, comm: &str, utime: u64| {
            let dir = tmp.path().join(format!("proc/42/task/{tid}"));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("stat"), thread_stat(tid, comm, utime)).unwrap();
        };
        write(42, "python", 1000);
        write(43, "pt_main_thread", 5000);
        write(44, "cuda-EvtHandlr", 10);
        let proc = tmp.path().join("proc");
        let mut t = ThreadTracker::default();
        let own = process(3, 0);
        let first = t.busiest(&proc, 42, &own, 0, 100, true).unwrap();
        assert_eq!(first.cpu_pct, None, "no interval yet");
        t.end_tick();
        // 10 s: the main loop thread burns 9.9 s, the process's first thread 2 s.
        write(42, "python", 1200);
        write(43, "pt_main_thread", 5990);
        write(44, "cuda-EvtHandlr", 20);
        let b = t.busiest(&proc, 42, &own, 10_000, 100, true).unwrap();
        assert_eq!(b.tid, 43);
        assert_eq!(b.name.as_deref(), Some("pt_main_thread"));
        assert!((b.cpu_pct.unwrap() - 99.0).abs() < 1e-9);
        t.end_tick();
        assert_eq!(t.busiest(&proc, 99, &own, 11_000, 100, true), None);
    }

    fn process(threads: u32, cpu_ticks: u64) -> ProcStat {
        ProcStat {
            ppid: 1,
            comm: "python".into(),
            state: 'R',
            threads: Some(threads),
            rss_pages: 0,
            start_ticks: 500,
            cpu_ticks,
        }
    }

    #[test]
    fn a_single_threaded_process_is_its_own_busiest_thread_without_reading_its_tasks() {
        // No task directory at all: nothing is read for it.
        let tmp = tempfile::tempdir().unwrap();
        let mut t = ThreadTracker::default();
        let first = t
            .busiest(tmp.path(), 42, &process(1, 100), 0, 100, true)
            .unwrap();
        assert_eq!((first.tid, first.cpu_pct), (42, None));
        t.end_tick();
        let b = t
            .busiest(tmp.path(), 42, &process(1, 150), 1_000, 100, true)
            .unwrap();
        assert_eq!(b.name.as_deref(), Some("python"));
        assert!((b.cpu_pct.unwrap() - 50.0).abs() < 1e-9);
    }
}
