//! Shared or foreign cards: what on a GPU is not the user's — VRAM that no process this
//! gpumeter can see accounts for (another container or tenant: the driver cannot name PIDs
//! across PID namespaces), processes of other users on a card the user renting runs on too (a
//! card only others use is theirs, not shared; a display server is the machine's), a slice of a
//! card in MIG mode (one instance seen: the rest of the card is out of view, and its
//! whole-card readings are not one job's). One notice for the machine, with the figures per GPU,
//! once it held for most of the window. It is information, never idle-time blame: it carries no
//! cost and says the time is not counted against the user.

use std::collections::{BTreeMap, BTreeSet};

use gpumeter_model::{GpuProcessKind, GpuState, ProcessReading, Snapshot};

use super::alert::{Alert, AlertKind, Severity};
use super::config::SharedConfig;
use super::job::gpu_ranges;
use super::window::Window;
use super::{Ctx, RuleOutput};

const GIB: f64 = (1u64 << 30) as f64;

/// Whether gpumeter sees a slice of a card in MIG mode: one MIG instance (a container given one
/// slice sees only its own), so the rest of the card and whoever uses it are out of view. A
/// card whose instances are all listed is the renter's partitioned card (seven replicas on
/// seven slices): any other user on it shows as their processes.
fn mig_slice(g: &gpumeter_model::GpuReading) -> bool {
    g.mig_enabled == Some(true) && g.mig_uuids.len() <= 1
}

/// Whether this gpumeter can see the process as its own (in /proc, or tied to a PID here).
fn ours(p: &ProcessReading) -> bool {
    p.visible || p.pid_match.is_some()
}

/// VRAM on `gpu` that no process visible here accounts for, in bytes; `None` when the GPU's
/// use or a visible process's share is unknown.
pub fn hidden_bytes(snap: &Snapshot, gpu: u32) -> Option<u64> {
    let g = snap.gpu(gpu).filter(|g| g.state == GpuState::Ok)?;
    let used = g.memory_used_bytes?;
    let mut seen: u64 = 0;
    for p in snap.processes.iter().filter(|p| ours(p)) {
        for u in p.gpu.iter().filter(|u| u.gpu_index == gpu) {
            seen = seen.saturating_add(u.memory_bytes?);
        }
    }
    Some(used.saturating_sub(seen))
}

/// The user holding the most GPU memory machine-wide (the one renting, most likely).
fn main_user(snap: &Snapshot) -> Option<&str> {
    // Few users: a list beats a map; the greatest (memory, reverse name) is one user whatever
    // the order.
    let mut by_user: Vec<(&str, u64)> = Vec::new();
    for p in &snap.processes {
        if let Some(u) = p.user.as_deref() {
            let mem = p.gpu_memory_bytes().unwrap_or(0);
            // Shared names are mostly one allocation: the address settles it before the bytes.
            match by_user
                .iter_mut()
                .find(|(name, _)| std::ptr::eq(*name, u) || *name == u)
            {
                Some((_, total)) => *total += mem,
                None => by_user.push((u, mem)),
            }
        }
    }
    by_user
        .into_iter()
        .max_by_key(|(u, mem)| (*mem, std::cmp::Reverse(*u)))
        .map(|(u, _)| u)
}

/// Per GPU of the snapshot (index, whether anything on it is foreign), as
/// [`SharedRule::foreign`]`(..).any()` says, in one pass over the processes and without the
/// words: the notice's text is built only for the GPUs it names.
fn any_foreign(snap: &Snapshot, me: Option<&str>, min_hidden: u64) -> Vec<(u32, bool)> {
    // Per GPU index: memory our processes account for (None: one of them is unknown),
    // whether another user's process is on it
    // and whether the user renting runs on it too.
    let mut acc: Vec<(u32, Option<u64>, bool, bool)> = Vec::with_capacity(snap.gpus.len());
    for g in &snap.gpus {
        if !acc.iter().any(|a| a.0 == g.index) {
            acc.push((g.index, Some(0), false, false));
        }
    }
    for p in &snap.processes {
        let mine = ours(p);
        let other = p.user.as_deref().is_some_and(|u| Some(u) != me);
        let renter = me.is_some() && p.user.as_deref() == me;
        if !mine && !other && !renter {
            continue;
        }
        for u in &p.gpu {
            let Some(a) = acc.iter_mut().find(|a| a.0 == u.gpu_index) else {
                continue;
            };
            if mine {
                a.1 =
                    a.1.and_then(|seen| Some(seen.saturating_add(u.memory_bytes?)));
            }
            // A display server (graphics only) is the machine's, not another tenant's work.
            a.2 |= other && u.kind != GpuProcessKind::Graphics;
            a.3 |= renter;
        }
    }
    snap.gpus
        .iter()
        .map(|g| {
            let (_, seen, other, renter) = acc
                .iter()
                .find(|a| a.0 == g.index)
                .copied()
                .unwrap_or((g.index, None, false, false));
            let first = snap.gpu(g.index);
            let hidden = first
                .filter(|f| f.state == GpuState::Ok)
                .and_then(|f| f.memory_used_bytes)
                .zip(seen)
                .map(|(used, seen)| used.saturating_sub(seen))
                .filter(|b| *b >= min_hidden);
            let mig = first.is_some_and(mig_slice);
            (g.index, hidden.is_some() || (other && renter) || mig)
        })
        .collect()
}

/// Other users' processes on `gpu`: "bob (pid 5120, 3.0 GiB)".
fn others_on(snap: &Snapshot, gpu: u32, me: Option<&str>) -> Vec<String> {
    snap.processes
        .iter()
        .filter(|p| p.user.as_deref().is_some_and(|u| Some(u) != me))
        .filter_map(|p| {
            let u = p
                .gpu
                .iter()
                .find(|u| u.gpu_index == gpu && u.kind != GpuProcessKind::Graphics)?;
            let mem = u.memory_bytes.map_or_else(
                || crate::units::NA.to_string(),
                |b| format!("{:.1} GiB", b as f64 / GIB),
            );
            Some(format!(
                "{} (pid {}, {mem})",
                p.user.as_deref().unwrap_or("?"),
                p.pid
            ))
        })
        .collect()
}

/// The names of other users with a process on `gpu`, sorted, each once.
fn users_on(snap: &Snapshot, gpu: u32, me: Option<&str>) -> Vec<String> {
    let names: BTreeSet<&str> = snap
        .processes
        .iter()
        .filter(|p| {
            p.gpu
                .iter()
                .any(|u| u.gpu_index == gpu && u.kind != GpuProcessKind::Graphics)
        })
        .filter_map(|p| p.user.as_deref())
        .filter(|u| Some(*u) != me)
        .collect();
    names.into_iter().map(str::to_string).collect()
}

/// "bob", "bob and carol", "bob, carol and 2 more".
fn names_text(names: &BTreeSet<&str>) -> String {
    let v: Vec<&str> = names.iter().copied().collect();
    match v.as_slice() {
        [] => "other users".into(),
        [one] => (*one).into(),
        [a, b] => format!("{a} and {b}"),
        [a, b, rest @ ..] => format!("{a}, {b} and {} more", rest.len()),
    }
}

/// What is foreign on one GPU this tick.
#[derive(Debug, Clone, Default, PartialEq)]
struct Foreign {
    hidden: Option<u64>,
    others: Vec<String>,
    /// The other users on the GPU, by name, sorted.
    other_users: Vec<String>,
    mig: bool,
}

impl Foreign {
    /// Whether anything on the GPU is foreign ([`any_foreign`] says the same in one pass).
    fn any(&self) -> bool {
        self.hidden.is_some() || !self.others.is_empty() || self.mig
    }
}

/// The shared-card rule's state across ticks: a window per GPU, what was last foreign there and the
/// renting user (see the module docs).
#[derive(Debug, Clone)]
pub struct SharedRule {
    cfg: SharedConfig,
    fire_share: f64,
    clear_share: f64,
    windows: BTreeMap<u32, Window>,
    /// The user renting, kept while they hold GPU memory: two users' jobs of similar size
    /// must not trade places (and the notice its GPUs) with every reading.
    me: Option<String>,
    /// What was last foreign on each GPU: a standing notice keeps saying it through a reading
    /// that shows nothing (it ends with its window, not with one sample).
    last: BTreeMap<u32, Foreign>,
}

/// Whether `user` holds any GPU memory in `snap`.
fn holds_memory(snap: &Snapshot, user: &str) -> bool {
    snap.processes
        .iter()
        .any(|p| p.user.as_deref() == Some(user) && p.gpu_memory_bytes().unwrap_or(0) > 0)
}

impl SharedRule {
    /// A rule with these settings; it fires when its condition held for `fire_share` of its window
    /// and clears at or below `clear_share` (0–1, `RulesConfig`).
    pub fn new(cfg: SharedConfig, fire_share: f64, clear_share: f64) -> Self {
        Self {
            cfg,
            fire_share,
            clear_share,
            windows: BTreeMap::new(),
            me: None,
            last: BTreeMap::new(),
        }
    }

    fn foreign(&self, snap: &Snapshot, gpu: u32, me: Option<&str>) -> Foreign {
        // Another user's processes make a card shared only when the user renting runs on it
        // too: a card only others use is theirs (a colleague's on a lab box), not shared.
        let renter_too = me.is_some_and(|me| {
            snap.processes
                .iter()
                .any(|p| p.user.as_deref() == Some(me) && p.gpu.iter().any(|u| u.gpu_index == gpu))
        });
        let (others, other_users) = if renter_too {
            (others_on(snap, gpu, me), users_on(snap, gpu, me))
        } else {
            (Vec::new(), Vec::new())
        };
        Foreign {
            hidden: hidden_bytes(snap, gpu).filter(|b| *b >= self.cfg.min_hidden_bytes),
            others,
            other_users,
            mig: snap.gpu(gpu).is_some_and(mig_slice),
        }
    }

    /// One tick: folds `ctx` in and returns the alerts that stand now (and any due a reminder).
    pub fn evaluate(&mut self, ctx: &Ctx<'_>) -> RuleOutput {
        let snap = ctx.snap;
        let now = ctx.now_ms;
        if !self.me.as_deref().is_some_and(|u| holds_memory(snap, u)) {
            self.me = main_user(snap).map(str::to_string);
        }
        let me = self.me.as_deref();
        let foreign = any_foreign(snap, me, self.cfg.min_hidden_bytes);
        for (g, (_, any)) in snap.gpus.iter().zip(&foreign) {
            let known = g.state == GpuState::Ok && g.memory_used_bytes.is_some();
            let (span, fire, clear) = (self.cfg.window_ms, self.fire_share, self.clear_share);
            self.windows
                .entry(g.index)
                .or_insert_with(|| Window::new(span, fire, clear))
                .push(now, known.then_some(*any));
        }
        self.windows.retain(|gpu, _| snap.gpu(*gpu).is_some());

        let mut out = RuleOutput::default();
        if !self.cfg.enabled {
            return out;
        }
        let mut standing: BTreeMap<u32, Foreign> = BTreeMap::new();
        for &(g, any) in &foreign {
            if !self.windows.get(&g).is_some_and(Window::is_active) {
                self.last.remove(&g);
                continue;
            }
            if any {
                self.last.insert(g, self.foreign(snap, g, me));
            }
            if let Some(f) = self.last.get(&g).filter(|f| f.any()) {
                standing.insert(g, f.clone());
            }
        }
        self.last.retain(|g, _| snap.gpu(*g).is_some());
        if !standing.is_empty() {
            let since = standing
                .keys()
                .filter_map(|g| self.windows.get(g)?.active_since())
                .min()
                .unwrap_or(now);
            out.alerts.push(alert(ctx, &standing, since));
        }
        out
    }
}

fn subject(gpus: &[u32]) -> String {
    let word = if gpus.len() == 1 { "GPU" } else { "GPUs" };
    format!("{word} {}", gpu_ranges(gpus))
}

fn alert(ctx: &Ctx<'_>, standing: &BTreeMap<u32, Foreign>, since: i64) -> Alert {
    let snap = ctx.snap;
    let pick = |f: fn(&Foreign) -> bool| -> Vec<u32> {
        standing
            .iter()
            .filter(|(_, x)| f(x))
            .map(|(g, _)| *g)
            .collect()
    };
    let hidden_gpus = pick(|f| f.hidden.is_some());
    let other_gpus = pick(|f| !f.others.is_empty());
    let mig_gpus = pick(|f| f.mig);
    let mut parts = Vec::new();
    let mut evidence = Vec::new();
    if !hidden_gpus.is_empty() {
        let total: u64 = standing.values().filter_map(|f| f.hidden).sum();
        parts.push(format!(
            "{}: {:.1} GiB held by processes this container can't see",
            subject(&hidden_gpus),
            total as f64 / GIB
        ));
        for g in &hidden_gpus {
            let hidden = standing.get(g).and_then(|f| f.hidden).unwrap_or(0);
            let used = snap.gpu(*g).and_then(|r| r.memory_used_bytes).unwrap_or(0);
            evidence.push((
                format!("GPU {g}"),
                format!(
                    "{:.1} GiB of {:.1} GiB used is no visible process's",
                    hidden as f64 / GIB,
                    used as f64 / GIB
                ),
            ));
        }
    }
    if !other_gpus.is_empty() {
        let names: BTreeSet<&str> = other_gpus
            .iter()
            .filter_map(|g| standing.get(g))
            .flat_map(|f| f.other_users.iter().map(String::as_str))
            .collect();
        parts.push(format!(
            "{} shared with {}",
            subject(&other_gpus),
            names_text(&names)
        ));
        for g in &other_gpus {
            if let Some(f) = standing.get(g) {
                evidence.push((format!("GPU {g}, other users"), f.others.join(", ")));
            }
        }
    }
    if !mig_gpus.is_empty() {
        parts.push(format!("{} in MIG mode", subject(&mig_gpus)));
        evidence.push((
            "MIG".into(),
            format!(
                "{}: the card is split into instances; whole-card readings are not one job's",
                gpu_ranges(&mig_gpus)
            ),
        ));
    }
    let gpus: BTreeSet<u32> = standing.keys().copied().collect();
    Alert {
        id: "shared".into(),
        kind: AlertKind::Shared,
        severity: Severity::Info,
        gpu: (gpus.len() == 1)
            .then(|| gpus.iter().next().copied())
            .flatten(),
        title: parts.join("; "),
        detail: "Someone else uses part of these cards. This is a notice, not idle-time blame: \
                 it carries no cost, and their memory is not your waste."
            .into(),
        evidence,
        cost_micros: None,
        next_step: Some(
            "If you rented the cards exclusively, ask the provider who else runs on them \
             (nvidia-smi on the host shows every PID); otherwise plan for the memory left."
                .into(),
        ),
        since_unix_ms: since,
        currency: ctx.currency,
    }
}

#[cfg(test)]
mod tests;
