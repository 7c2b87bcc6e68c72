//! The process table's rows, built from a snapshot and the view state: the GPU filter (a process
//! on that GPU, or feeding one that is), the user filter (`u`), the text filter, the sort, and
//! the tree (children under their parent by `ppid`, with tree glyphs; a folded subtree, `-`,
//! shows only its top row). Pure: no drawing, so the order is unit-tested.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};

use gpumeter_model::{PidMatch, PlaceKind, ProcessReading, Snapshot};

use super::app::App;
use super::sort::SortColumn;

/// Shown in place of the command for a PID the driver reports but /proc cannot see.
pub const INVISIBLE_LABEL: &str = "(not visible in /proc)";

/// One table row.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcRow<'a> {
    pub proc: &'a ProcessReading,
    /// Tree glyphs drawn before the command (`├─ `, `│  └─ `); empty in flat view and for roots.
    pub tree_prefix: String,
    /// gpumeter runs in a container: an invisible PID is the host's, outside it.
    pub in_container: bool,
    /// In tree view, for a root with descendants: its whole job summed.
    pub job: Option<Totals>,
    /// In tree view, the descendants folded under this row (`-`); 0 when none are.
    pub folded: usize,
}

/// CPU, RSS and threads summed over a process and its descendants shown.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Totals {
    pub processes: usize,
    pub cpu_pct: f64,
    pub rss_bytes: u64,
    pub threads: u32,
}

/// The command column's width from which a job's root shows its whole summary (processes,
/// CPU, memory, threads) and still has room for most of its command.
pub const FULL_JOB_SUMMARY: usize = 72;

impl ProcRow<'_> {
    /// What the command column shows: the command line, led by the job's totals on a tree root
    /// (`[job 3 procs 295% CPU 17.2GiB 44 thr] …`) and by the host PID when the driver's PID
    /// differs (`[host 4000012] …`, `[host 4000012?] …` for a guessed match).
    pub fn command_text(&self) -> Cow<'_, str> {
        self.command_text_for(usize::MAX)
    }

    /// [`Self::command_text`] for a column `room` cells wide: below [`FULL_JOB_SUMMARY`] the
    /// job's totals shrink to `[job 3 · 295%] ` so the command itself still shows.
    pub fn command_text_for(&self, room: usize) -> Cow<'_, str> {
        let p = self.proc;
        if !p.visible {
            return if self.in_container {
                Cow::Owned(format!("host pid {} (not in this container)", p.pid))
            } else {
                Cow::Borrowed(INVISIBLE_LABEL)
            };
        }
        let cmd = p
            .command
            .as_deref()
            .filter(|c| !c.is_empty())
            .or(p.name.as_deref())
            .unwrap_or("");
        let host = p.host_pid.map(|h| {
            let guess = if p.pid_match == Some(PidMatch::Guess) {
                "?"
            } else {
                ""
            };
            format!("[host {h}{guess}] ")
        });
        let job = self.job.map(|t| {
            if room < FULL_JOB_SUMMARY {
                format!("[job {} · {:.0}%] ", t.processes, t.cpu_pct)
            } else {
                format!(
                    "[job {} procs {:.0}% CPU {} {} thr] ",
                    t.processes,
                    t.cpu_pct,
                    gpumeter_core::units::bytes(t.rss_bytes),
                    t.threads
                )
            }
        });
        // A folded subtree says how much it hides (`+` unfolds it).
        let folded = (self.folded > 0).then(|| format!("[+{}] ", self.folded));
        let renamed = renamed(p.name.as_deref(), cmd);
        if host.is_none() && job.is_none() && folded.is_none() && renamed.is_none() {
            return Cow::Borrowed(cmd);
        }
        Cow::Owned(format!(
            "{}{}{}{}{cmd}",
            folded.unwrap_or_default(),
            job.unwrap_or_default(),
            host.unwrap_or_default(),
            renamed.map(|n| format!("{n}: ")).unwrap_or_default()
        ))
    }
}

/// The process's own name where it renamed itself away from its command line's program
/// (PyTorch's dataloader workers are `pt_data_worker` with their trainer's command line): the
/// name the alerts' evidence uses, so a worker reads the same in the table and the evidence.
fn renamed<'a>(name: Option<&'a str>, cmd: &str) -> Option<&'a str> {
    let name = name.filter(|n| !n.is_empty())?;
    // A process without a command line shows `[comm]` (the host source's convention).
    if cmd.strip_prefix('[').and_then(|c| c.strip_suffix(']')) == Some(name) {
        return None;
    }
    let program = cmd.split_whitespace().next()?;
    let base = program.rsplit('/').next().unwrap_or(program);
    // comm is the program's first 15 bytes: a prefix either way is the same program.
    (!base.starts_with(name) && !name.starts_with(base)).then_some(name)
}

/// The rows to show, in display order.
pub fn build_rows<'a>(snap: &'a Snapshot, app: &App, now_unix_ms: i64) -> Vec<ProcRow<'a>> {
    let procs = &snap.processes;
    let mut by_pid: HashMap<u32, usize> = HashMap::with_capacity(procs.len());
    for (i, p) in procs.iter().enumerate() {
        by_pid.entry(p.pid).or_insert(i);
    }
    let parent: Vec<Option<usize>> = procs
        .iter()
        .enumerate()
        .map(|(i, p)| {
            p.ppid
                .and_then(|pp| by_pid.get(&pp).copied())
                .filter(|&j| j != i)
        })
        .collect();

    let in_container = snap
        .system
        .runs_in
        .as_ref()
        .is_some_and(|r| r.kind == PlaceKind::Container);
    let needle = app.filter.trim().to_lowercase();
    let mut included: Vec<bool> = procs
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let on_gpu = app
                .gpu_filter
                .is_none_or(|g| lineage(i, &parent).any(|a| uses_gpu(&procs[a], g)));
            let of_user = app
                .users
                .user()
                .is_none_or(|u| p.user.as_deref() == Some(u));
            on_gpu && of_user && (needle.is_empty() || matches_text(p, &needle))
        })
        .collect();
    if app.tree {
        // Keep the parents of what matched, so the tree still reads as a tree.
        for i in 0..procs.len() {
            if included[i] {
                for a in lineage(i, &parent).skip(1) {
                    included[a] = true;
                }
            }
        }
    }

    let cmp = |a: &usize, b: &usize| {
        compare(&procs[*a], &procs[*b], app.sort, app.sort_desc, now_unix_ms)
    };
    let mut chosen: Vec<usize> = (0..procs.len()).filter(|&i| included[i]).collect();
    if !app.tree {
        chosen.sort_by(cmp);
        return chosen
            .into_iter()
            .map(|i| ProcRow {
                proc: &procs[i],
                tree_prefix: String::new(),
                in_container,
                job: None,
                folded: 0,
            })
            .collect();
    }

    // A parent outside the shown set (or a cycle) makes the process a root.
    let mut children: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    let mut roots = Vec::new();
    for &i in &chosen {
        match parent[i].filter(|&p| included[p] && !in_cycle(i, &parent)) {
            Some(p) => children.entry(p).or_default().push(i),
            None => roots.push(i),
        }
    }
    // By CPU or memory, a tree is ordered by what each job uses in all (a trainer at 6 % whose
    // workers peg their cores is the busiest job, not the last); within a job, as asked.
    // Each job's totals, walked once: the sort below and the roots' summaries both read them.
    let totals: HashMap<usize, Totals> = roots
        .iter()
        .filter(|r| children.contains_key(r))
        .map(|&r| (r, subtree_totals(r, procs, &children)))
        .collect();
    match app.sort {
        SortColumn::Cpu | SortColumn::Rss => {
            let job = |i: usize| {
                let own = &procs[i];
                match (totals.get(&i), app.sort) {
                    (Some(t), SortColumn::Cpu) => t.cpu_pct,
                    (Some(t), _) => t.rss_bytes as f64,
                    (None, SortColumn::Cpu) => own.cpu_pct.unwrap_or(0.0),
                    (None, _) => own.rss_bytes.unwrap_or(0) as f64,
                }
            };
            let mut keyed: Vec<(f64, usize)> = roots.iter().map(|&r| (job(r), r)).collect();
            keyed.sort_by(|(ka, a), (kb, b)| {
                let ord = ka.total_cmp(kb);
                let ord = if app.sort_desc { ord.reverse() } else { ord };
                ord.then_with(|| cmp(a, b))
            });
            roots = keyed.into_iter().map(|(_, r)| r).collect();
        }
        _ => roots.sort_by(cmp),
    }
    for list in children.values_mut() {
        list.sort_by(cmp);
    }
    let mut out = Vec::with_capacity(chosen.len());
    let mut stack: Vec<(usize, String, bool, bool)> = roots
        .iter()
        .rev()
        .map(|&r| (r, String::new(), true, true))
        .collect();
    // (process, glyphs of its ancestors, is last sibling, is root)
    while let Some((i, lead, last, root)) = stack.pop() {
        let tree_prefix = if root {
            String::new()
        } else {
            format!("{lead}{}", if last { "└─ " } else { "├─ " })
        };
        let job = if root { totals.get(&i).copied() } else { None };
        let fold = app.folded.contains(&procs[i].pid) && children.contains_key(&i);
        out.push(ProcRow {
            proc: &procs[i],
            tree_prefix,
            in_container,
            job,
            folded: if fold { descendants(i, &children) } else { 0 },
        });
        if fold {
            continue;
        }
        if let Some(kids) = children.get(&i) {
            let child_lead = if root {
                String::new()
            } else {
                format!("{lead}{}", if last { "   " } else { "│  " })
            };
            for (k, &c) in kids.iter().enumerate().rev() {
                stack.push((c, child_lead.clone(), k + 1 == kids.len(), false));
            }
        }
    }
    out
}

/// How many processes are under `i` in the tree.
fn descendants(i: usize, children: &BTreeMap<usize, Vec<usize>>) -> usize {
    let mut stack = vec![i];
    let mut n = 0usize;
    while let Some(j) = stack.pop() {
        if let Some(kids) = children.get(&j) {
            n += kids.len();
            stack.extend(kids);
        }
        // A malformed tree cannot make this loop forever: each process is one list's child.
        if n > children.len() * 64 {
            break;
        }
    }
    n
}

/// `i`, its parent, its grandparent … stopping at a repeat (bad data can hold a ppid cycle).
fn lineage(i: usize, parent: &[Option<usize>]) -> impl Iterator<Item = usize> + '_ {
    let mut next = Some(i);
    let mut steps = 0usize;
    std::iter::from_fn(move || {
        let cur = next?;
        steps += 1;
        next = if steps > parent.len() {
            None
        } else {
            parent.get(cur).copied().flatten()
        };
        Some(cur)
    })
}

fn in_cycle(i: usize, parent: &[Option<usize>]) -> bool {
    lineage(i, parent).skip(1).any(|a| a == i)
}

fn uses_gpu(p: &ProcessReading, gpu: u32) -> bool {
    p.gpu.iter().any(|u| u.gpu_index == gpu)
}

fn matches_text(p: &ProcessReading, needle: &str) -> bool {
    let hit = |s: Option<&str>| s.is_some_and(|s| s.to_lowercase().contains(needle));
    p.pid.to_string().contains(needle)
        || hit(p.user.as_deref())
        || hit(p.container.as_deref())
        // On Kubernetes, a pod's name (or UID) and namespace: `/trainer-7f9c`, `/ml`.
        || p.pod.as_ref().is_some_and(|pod| {
            hit(pod.pod_or_uid()) || hit(pod.namespace.as_deref()) || hit(pod.container.as_deref())
        })
        || hit(p.name.as_deref())
        || hit(p.command.as_deref())
        || (!p.visible && INVISIBLE_LABEL.contains(needle))
}

/// Orders two processes by a column; unknown values go last in either direction; ties by PID.
fn compare(
    a: &ProcessReading,
    b: &ProcessReading,
    col: SortColumn,
    desc: bool,
    now_ms: i64,
) -> Ordering {
    let runtime = |p: &ProcessReading| p.start_time_unix_s.map(|s| now_ms / 1000 - s);
    let command = |p: &ProcessReading| p.command.clone().or_else(|| p.name.clone());
    let ord = match col {
        SortColumn::Pid => directed(a.pid.cmp(&b.pid), desc),
        SortColumn::User => by_option(a.user.as_ref(), b.user.as_ref(), desc),
        // What the POD cell shows: the pod's name, else its UID's start.
        SortColumn::Pod => by_option(pod_name(a), pod_name(b), desc),
        SortColumn::Gpu => by_option(first_gpu(a), first_gpu(b), desc),
        SortColumn::Vram => by_option(a.gpu_memory_bytes(), b.gpu_memory_bytes(), desc),
        SortColumn::Sm => by_option(a.sm_util_pct(), b.sm_util_pct(), desc),
        SortColumn::Cpu => by_f64(a.cpu_pct, b.cpu_pct, desc),
        SortColumn::Rss => by_option(a.rss_bytes, b.rss_bytes, desc),
        SortColumn::Runtime => by_option(runtime(a), runtime(b), desc),
        SortColumn::Command => by_option(command(a), command(b), desc),
    };
    ord.then(a.pid.cmp(&b.pid))
}

fn pod_name(p: &ProcessReading) -> Option<&str> {
    p.pod.as_ref().and_then(|pod| pod.short_name())
}

fn first_gpu(p: &ProcessReading) -> Option<u32> {
    p.gpu.iter().map(|u| u.gpu_index).min()
}

fn directed(ord: Ordering, desc: bool) -> Ordering {
    if desc { ord.reverse() } else { ord }
}

fn by_option<T: Ord>(a: Option<T>, b: Option<T>, desc: bool) -> Ordering {
    match (a, b) {
        (Some(a), Some(b)) => directed(a.cmp(&b), desc),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}

fn by_f64(a: Option<f64>, b: Option<f64>, desc: bool) -> Ordering {
    match (a, b) {
        (Some(a), Some(b)) => directed(a.total_cmp(&b), desc),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}

pub(crate) mod job;

#[cfg(test)]
mod tests;

/// A root's process and all its descendants in the tree, summed.
fn subtree_totals(
    root: usize,
    procs: &[ProcessReading],
    children: &BTreeMap<usize, Vec<usize>>,
) -> Totals {
    let mut t = Totals::default();
    let mut stack = vec![root];
    while let Some(i) = stack.pop() {
        let p = &procs[i];
        t.processes += 1;
        t.cpu_pct += p.cpu_pct.unwrap_or(0.0);
        t.rss_bytes = t.rss_bytes.saturating_add(p.rss_bytes.unwrap_or(0));
        t.threads = t.threads.saturating_add(p.threads.unwrap_or(0));
        if let Some(kids) = children.get(&i) {
            stack.extend(kids.iter().copied());
        }
    }
    t
}
