//! XID errors from NVML's event API, on a thread of their own: it loads its own NVML handle,
//! registers every GPU that supports critical-XID events in one event set, then waits on it and
//! sends each event over a channel. The source drains the channel each tick and keeps counts per
//! GPU and XID since it started, which go into the snapshot (`xid_errors`; `None` for a GPU
//! whose events are unsupported, said once in the warnings).
//!
//! Registration goes through the raw `nvmlDeviceRegisterEvents` (nvml-wrapper's
//! `register_events` frees the whole set when one device refuses); a library without
//! `nvmlEventSetFree` is not asked for events at all (the set's drop would panic).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant};

use gpumeter_model::XidCount;
use nvml_wrapper::bitmasks::event::EventTypes;
use nvml_wrapper::enums::event::XidError;
use nvml_wrapper::error::{NvmlError, nvml_sym, nvml_try};

use super::errors::{ErrorKind, classify, describe};
use super::open;
use super::support::line;

/// How long one wait lasts: the thread notices a stop this often. A driver's wait blocks, so
/// this is the thread's only idle wake-up (was 250 ms: 4 a second for nothing); a stopped
/// watch's thread lingers at most this long, holding only its own NVML handle.
const WAIT_MS: u32 = 5_000;
/// How long opening waits for the registrations.
const READY_WAIT: Duration = Duration::from_secs(2);

enum Msg {
    /// A GPU's registration: `Ok` when its XID events will come.
    Registered(u32, Result<(), String>),
    /// Registration finished, and the events already queued were sent.
    Ready,
    Xid(u32, u64),
    /// The thread stopped waiting (the reason).
    Ended(String),
}

/// The receiving end, owned by the source.
#[derive(Debug)]
pub(crate) struct XidWatch {
    rx: Receiver<Msg>,
    stop: Arc<AtomicBool>,
    /// Per GPU: registered, or why not.
    registered: BTreeMap<u32, Result<(), String>>,
    counts: BTreeMap<u32, BTreeMap<u64, u64>>,
    /// Lines for the next sample's warnings.
    news: Vec<String>,
}

impl Drop for XidWatch {
    fn drop(&mut self) {
        // The thread sees it at its next wait (≤ 5 s) and ends; nobody waits for it.
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl XidWatch {
    /// Starts the thread on its own NVML handle from `lib_path` and waits (bounded) until the
    /// GPUs are registered and already queued events are in.
    pub(crate) fn start(lib_path: Option<&Path>) -> XidWatch {
        let (tx, rx) = channel();
        let stop = Arc::new(AtomicBool::new(false));
        let mut watch = XidWatch {
            rx,
            stop: Arc::clone(&stop),
            registered: BTreeMap::new(),
            counts: BTreeMap::new(),
            news: Vec::new(),
        };
        let path: Option<PathBuf> = lib_path.map(Path::to_path_buf);
        let spawned = std::thread::Builder::new()
            .name("gpumeter-xid".into())
            .spawn(move || run(path.as_deref(), &tx, &stop));
        if let Err(e) = spawned {
            watch
                .news
                .push(line(&format!("XID events not watched: no thread ({e})")));
            return watch;
        }
        let deadline = Instant::now() + READY_WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match watch.rx.recv_timeout(left) {
                Ok(Msg::Ready) => break,
                Ok(msg) => watch.take(msg),
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => break,
            }
        }
        // Unsupported is said once, here (N/A says it in every sample after).
        let unsupported: Vec<String> = watch
            .registered
            .iter()
            .filter(|(_, r)| {
                matches!(r, Err(why) if why == "not supported" || why == "function not in this driver")
            })
            .map(|(gpu, _)| gpu.to_string())
            .collect();
        if !unsupported.is_empty() {
            let word = if unsupported.len() == 1 {
                "GPU"
            } else {
                "GPUs"
            };
            watch.news.push(line(&format!(
                "XID events not supported on {word} {}: their hardware errors are not reported \
                 (xid_errors N/A)",
                unsupported.join(", ")
            )));
        }
        watch
    }

    fn take(&mut self, msg: Msg) {
        match msg {
            Msg::Registered(gpu, result) => {
                self.registered.insert(gpu, result);
            }
            Msg::Xid(gpu, xid) => {
                *self.counts.entry(gpu).or_default().entry(xid).or_insert(0) += 1;
            }
            Msg::Ended(why) => {
                self.registered
                    .values_mut()
                    .for_each(|r| *r = Err("the event thread stopped".into()));
                self.news
                    .push(line(&format!("XID events no longer watched: {why}")));
            }
            Msg::Ready => {}
        }
    }

    /// Takes in what arrived; returns this sample's lines: news once, and for every GPU whose
    /// events were refused (not merely unsupported, which N/A says) a standing line, so any one
    /// snapshot explains its `null`.
    pub(crate) fn drain(&mut self) -> Vec<String> {
        while let Ok(msg) = self.rx.try_recv() {
            self.take(msg);
        }
        let mut out = std::mem::take(&mut self.news);
        out.extend(self.registered.iter().filter_map(|(gpu, r)| match r {
            Err(why) if why != "not supported" && why != "function not in this driver" => {
                Some(line(&format!(
                    "GPU {gpu}: XID events refused ({why}); xid_errors shown as N/A"
                )))
            }
            _ => None,
        }));
        out
    }

    /// This GPU's XID counts since the watch started; `None` when its events are not watched.
    pub(crate) fn counts(&self, gpu: u32) -> Option<Vec<XidCount>> {
        if !matches!(self.registered.get(&gpu), Some(Ok(()))) {
            return None;
        }
        Some(
            self.counts
                .get(&gpu)
                .map(|m| {
                    m.iter()
                        .map(|(&xid, &count)| XidCount { xid, count })
                        .collect()
                })
                .unwrap_or_default(),
        )
    }
}

/// The thread: register, send what is queued, then wait until told to stop.
fn run(lib_path: Option<&Path>, tx: &Sender<Msg>, stop: &AtomicBool) {
    let ended = |why: String| {
        let _ = tx.send(Msg::Ended(why));
        let _ = tx.send(Msg::Ready);
    };
    let lib = match open::load(lib_path) {
        Ok(lib) => lib,
        Err(e) => return ended(e.to_string()),
    };
    if lib.lib().nvmlEventSetFree.is_err() {
        return ended("the library cannot free event sets".into());
    }
    let set = match lib.create_event_set() {
        Ok(set) => set,
        Err(e) => return ended(describe(&e)),
    };
    let count = match lib.device_count() {
        Ok(n) => n,
        Err(e) => return ended(describe(&e)),
    };
    for gpu in 0..count {
        let result = lib.device_by_index(gpu).and_then(|dev| {
            let types = dev.supported_event_types()?;
            if !types.contains(EventTypes::CRITICAL_XID_ERROR) {
                return Err(NvmlError::NotSupported);
            }
            let sym = nvml_sym(lib.lib().nvmlDeviceRegisterEvents.as_ref())?;
            // SAFETY: device and set handles belong to this live library.
            nvml_try(unsafe {
                sym(
                    dev.handle(),
                    EventTypes::CRITICAL_XID_ERROR.bits(),
                    set.handle(),
                )
            })
        });
        // Unsupported (or missing from the library) is one word: N/A says the rest.
        let result = result.map_err(|e| match classify(&e) {
            ErrorKind::Unsupported => "not supported".to_string(),
            _ => describe(&e),
        });
        let _ = tx.send(Msg::Registered(gpu, result));
    }
    // What is already queued arrives before the source reads its first sample.
    let mut ready_sent = false;
    while !stop.load(Ordering::Relaxed) {
        let timeout = if ready_sent { WAIT_MS } else { 0 };
        match set.wait(timeout) {
            Ok(event) => {
                let xid = match event.event_data {
                    Some(XidError::Value(v)) => v,
                    _ => 999,
                };
                let Ok(gpu) = event.device.index() else {
                    continue;
                };
                if tx.send(Msg::Xid(gpu, xid)).is_err() {
                    return;
                }
            }
            Err(NvmlError::Timeout) => {
                if !ready_sent {
                    ready_sent = true;
                    let _ = tx.send(Msg::Ready);
                }
            }
            Err(e) => return ended(describe(&e)),
        }
    }
}
