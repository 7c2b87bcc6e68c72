//! Which Kubernetes pod, namespace and container each GPU serves. The kubelet's pod-resources
//! API (gRPC v1 `List` and `GetAllocatableResources` on its unix socket, [`ask`]) names the
//! pods a GPU — whole, or a MIG slice — was given to; where there is no socket, each GPU
//! process's cgroup path gives its pod's UID and container id (read by `source::host`).
//!
//! The socket is asked on a thread of its own ([`PodAttribution::start`]) at a modest cadence,
//! each exchange bounded by a short timeout, and the answer cached: a tick only reads the cache
//! ([`Attributed`] wraps any source), so a slow kubelet never delays a reading. A missing,
//! slow or garbled socket leaves the pods unknown (a warning says why, except for a missing
//! one: most machines are not Kubernetes nodes). Uses the core's `Source` and the snapshot
//! model; a crate of its own because its gRPC stack (tonic, hyper) is HTTP, which the core
//! does not hold (tests/integration/layering.rs).

mod ask;
mod proto;
#[cfg(any(test, feature = "stand-in"))]
pub mod stand_in;
mod table;
#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use gpumeter_model::Snapshot;

pub use ask::{AskError, ask, ask_blocking};
pub use table::{PodTable, attribute};

use gpumeter_core::source::{Source, SourceError, focus::ProcessFocus};

/// Where the kubelet serves the pod-resources API.
pub const DEFAULT_SOCKET: &str = "/var/lib/kubelet/pod-resources/kubelet.sock";

/// How the kubelet is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubeOptions {
    pub socket: PathBuf,
    /// The bound on one exchange (connect and both calls).
    pub timeout: Duration,
    /// How often it is asked again: pods come and go in seconds to minutes.
    pub refresh: Duration,
}

impl Default for KubeOptions {
    fn default() -> Self {
        Self {
            socket: PathBuf::from(DEFAULT_SOCKET),
            timeout: Duration::from_secs(2),
            refresh: Duration::from_secs(15),
        }
    }
}

/// A failed ask keeps the last table through this many asks (a kubelet restart), then drops it:
/// an old table would name pods that are gone.
const KEPT_THROUGH_FAILURES: u32 = 3;

#[derive(Debug, Default)]
struct Latest {
    table: Option<PodTable>,
    failures: u32,
    problem: Option<AskError>,
}

impl Latest {
    fn record(&mut self, answer: Result<PodTable, AskError>) {
        match answer {
            Ok(table) => {
                *self = Latest {
                    table: Some(table),
                    failures: 0,
                    problem: None,
                }
            }
            Err(e) => {
                self.failures = self.failures.saturating_add(1);
                if self.failures >= KEPT_THROUGH_FAILURES || matches!(e, AskError::Missing(_)) {
                    self.table = None;
                }
                self.problem = Some(e);
            }
        }
    }
}

/// The cached answer and the thread that refreshes it; dropping it stops the thread.
pub struct PodAttribution {
    latest: Arc<Mutex<Latest>>,
    _stop: Sender<()>,
}

impl PodAttribution {
    /// Starts asking the kubelet now and every `options.refresh` after.
    pub fn start(options: KubeOptions) -> PodAttribution {
        let latest = Arc::new(Mutex::new(Latest::default()));
        let (stop, stopped) = std::sync::mpsc::channel();
        let shared = Arc::clone(&latest);
        let spawned = std::thread::Builder::new()
            .name("pod-resources".into())
            .spawn(move || refresh_loop(&options, &shared, &stopped));
        if let Err(e) = spawned {
            lock(&latest).problem = Some(AskError::Failed(format!("no thread to ask it: {e}")));
        }
        PodAttribution {
            latest,
            _stop: stop,
        }
    }

    /// Labels `snap` from the cached answer (or the processes' cgroups); adds a warning while
    /// the socket is there but does not answer well.
    pub fn apply(&self, snap: &mut Snapshot) {
        let latest = lock(&self.latest);
        attribute(latest.table.as_ref(), snap);
        if let Some(problem) = &latest.problem
            && !matches!(problem, AskError::Missing(_))
        {
            snap.warnings.push(format!("pods unknown: {problem}"));
        }
    }

    /// Waits until the first ask has been answered or failed (tests, and a one-shot reading
    /// that should carry pods); at most `limit`.
    pub fn wait_first(&self, limit: Duration) {
        let step = Duration::from_millis(10);
        let mut waited = Duration::ZERO;
        while waited < limit {
            {
                let latest = lock(&self.latest);
                if latest.table.is_some() || latest.problem.is_some() {
                    return;
                }
            }
            std::thread::sleep(step);
            waited += step;
        }
    }
}

fn lock(latest: &Mutex<Latest>) -> std::sync::MutexGuard<'_, Latest> {
    latest.lock().unwrap_or_else(PoisonError::into_inner)
}

fn refresh_loop(options: &KubeOptions, latest: &Mutex<Latest>, stopped: &Receiver<()>) {
    loop {
        let answer = ask_blocking(&options.socket, options.timeout);
        lock(latest).record(answer);
        match stopped.recv_timeout(options.refresh) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}

/// Any source whose readings carry pods.
pub struct Attributed {
    inner: Box<dyn Source>,
    pods: PodAttribution,
}

impl Attributed {
    pub fn new(inner: Box<dyn Source>, pods: PodAttribution) -> Self {
        Self { inner, pods }
    }
}

impl Source for Attributed {
    fn sample(&mut self) -> Result<Snapshot, SourceError> {
        let mut snap = self.inner.sample()?;
        self.pods.apply(&mut snap);
        Ok(snap)
    }

    fn label(&self) -> String {
        self.inner.label()
    }

    fn set_focus(&mut self, focus: ProcessFocus) {
        self.inner.set_focus(focus);
    }

    fn catching_up(&self) -> bool {
        self.inner.catching_up()
    }
}
