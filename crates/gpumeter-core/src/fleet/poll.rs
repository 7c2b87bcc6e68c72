//! Asking the servers: one `GET /api/v1/snapshot` per host ([`fetch`]), each with its own
//! timeout and a capped body, decoded with the model's [`Document`] and refused when its schema
//! is not this build's ([`Failure::WrongSchema`]). [`poll_once`] asks every host once,
//! concurrently under a cap, for `fleet --once`; [`spawn`] keeps asking on worker threads and
//! sends each answer as a [`PollEvent`] to the screen's task, which owns the fleet's state: the
//! screen never waits on the network. A failing host is asked again later and later
//! ([`Backoff`], exponential up to a minute), so a dead box costs almost nothing.
//!
//! HTTP client: `ureq` (blocking, with a global per-request timeout; already the webhook's), on
//! plain threads; the fleet needs no async HTTP stack.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gpumeter_model::{Document, SCHEMA_VERSION};

use super::hosts::Host;
use crate::clock::SharedClock;
use crate::sanitize::sanitize;

/// Largest snapshot document read (a 3000-process machine is ~2 MiB).
pub const MAX_BODY_BYTES: u64 = 16 * 1024 * 1024;
/// Longest error text kept.
const MAX_ERROR_CHARS: usize = 160;
/// A failing host is asked at most this rarely.
pub const MAX_BACKOFF_MS: i64 = 60_000;

/// How the fleet polls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PollConfig {
    /// Between two polls of a healthy host.
    pub interval: Duration,
    /// One request's whole time: connect, send, headers and body.
    pub timeout: Duration,
    /// Requests in flight at once.
    pub concurrency: usize,
}

impl Default for PollConfig {
    fn default() -> Self {
        Self {
            interval: Duration::from_secs(2),
            timeout: Duration::from_secs(2),
            concurrency: 8,
        }
    }
}

/// Why a host gave no usable snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// No connection (refused, no route, name not found, reset).
    Unreachable(String),
    /// No whole answer within the timeout.
    Timeout,
    /// An HTTP status other than 200 (401: the token; 503: no reading yet).
    Http(u16),
    /// An answer that is not a snapshot document.
    Garbage(String),
    /// A snapshot document of another schema version.
    WrongSchema(u32),
}

impl Failure {
    /// One word for the state column.
    pub fn state(&self) -> &'static str {
        match self {
            Failure::Unreachable(_) => "down",
            Failure::Timeout => "timeout",
            Failure::Http(_) => "http error",
            Failure::Garbage(_) => "garbage",
            Failure::WrongSchema(_) => "wrong schema",
        }
    }

    /// What went wrong, for people.
    pub fn message(&self) -> String {
        match self {
            Failure::Unreachable(m) | Failure::Garbage(m) => m.clone(),
            Failure::Timeout => "no answer within the timeout".into(),
            Failure::Http(401) => "HTTP 401: the server wants a token (token_file=)".into(),
            Failure::Http(503) => "HTTP 503: the server has no reading yet".into(),
            Failure::Http(s) => format!("HTTP {s}"),
            Failure::WrongSchema(n) => {
                format!("snapshot schema {n}, this gpumeter reads {SCHEMA_VERSION}")
            }
        }
    }
}

/// The agent every request goes through: a whole-request timeout, no redirects, statuses as
/// values (401 and 503 say something).
pub fn agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .max_redirects(0)
        .http_status_as_error(false)
        .user_agent(concat!("gpumeter-fleet/", env!("CARGO_PKG_VERSION")))
        .build()
        .into()
}

/// One poll of one host.
pub fn fetch(agent: &ureq::Agent, host: &Host) -> Result<Document, Failure> {
    let mut req = agent.get(host.snapshot_url());
    if let Some(t) = &host.token {
        req = req.header("Authorization", t.bearer());
    }
    let mut resp = req.call().map_err(transport)?;
    let status = resp.status().as_u16();
    if status != 200 {
        return Err(Failure::Http(status));
    }
    let body = resp
        .body_mut()
        .with_config()
        .limit(MAX_BODY_BYTES)
        .read_to_vec()
        .map_err(transport)?;
    decode(&body)
}

fn transport(e: ureq::Error) -> Failure {
    match e {
        ureq::Error::Timeout(_) => Failure::Timeout,
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => Failure::Timeout,
        ureq::Error::Protocol(p) => Failure::Garbage(sanitize(
            &format!("not an HTTP answer: {p}"),
            MAX_ERROR_CHARS,
        )),
        ureq::Error::BodyExceedsLimit(_) => {
            Failure::Garbage(format!("answer larger than {} MiB", MAX_BODY_BYTES >> 20))
        }
        ureq::Error::HostNotFound => Failure::Unreachable("host name not found".into()),
        // `Connection refused (os error 111)`, without ureq's `io:` in front.
        ureq::Error::Io(io) => Failure::Unreachable(sanitize(&io.to_string(), MAX_ERROR_CHARS)),
        other => Failure::Unreachable(sanitize(&other.to_string(), MAX_ERROR_CHARS)),
    }
}

/// A body as a snapshot document of this build's schema.
pub fn decode(body: &[u8]) -> Result<Document, Failure> {
    // The schema number first, so a newer server is named as such, not as garbage.
    #[derive(serde::Deserialize)]
    struct Probe {
        schema: Option<u32>,
    }
    let garbage = |e: serde_json::Error| {
        Failure::Garbage(sanitize(
            &format!("not a snapshot document: {e}"),
            MAX_ERROR_CHARS,
        ))
    };
    let probe: Probe = serde_json::from_slice(body).map_err(garbage)?;
    match probe.schema {
        Some(SCHEMA_VERSION) => serde_json::from_slice(body).map_err(garbage),
        Some(n) => Err(Failure::WrongSchema(n)),
        None => Err(Failure::Garbage(
            "not a snapshot document: no \"schema\" field".into(),
        )),
    }
}

/// One answer (or failure) from one host.
#[derive(Debug, Clone)]
pub struct PollEvent {
    /// Index into the host list.
    pub host: usize,
    /// When the answer came (the fleet's clock).
    pub at_unix_ms: i64,
    /// The host's snapshot document, or why it gave none (unreachable, timeout, HTTP status,
    /// garbage, schema).
    pub result: Result<Box<Document>, Failure>,
}

/// Every host once, `concurrency` at a time; each request ends within the timeout, so the
/// whole poll ends within about ⌈hosts ÷ concurrency⌉ timeouts. Results in host order.
pub fn poll_once(hosts: &[Host], cfg: &PollConfig, clock: &SharedClock) -> Vec<PollEvent> {
    let agent = agent(cfg.timeout);
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<PollEvent>> = Mutex::new(Vec::with_capacity(hosts.len()));
    std::thread::scope(|s| {
        for _ in 0..cfg.concurrency.clamp(1, hosts.len().max(1)) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(host) = hosts.get(i) else { break };
                    let result = fetch(&agent, host).map(Box::new);
                    let ev = PollEvent {
                        host: i,
                        at_unix_ms: clock.now_unix_ms(),
                        result,
                    };
                    lock(&results).push(ev);
                }
            });
        }
    });
    let mut out = match results.into_inner() {
        Ok(v) => v,
        Err(poisoned) => poisoned.into_inner(),
    };
    out.sort_by_key(|e| e.host);
    out
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// When to ask one host next: every interval while it answers; after `n` failures in a row,
/// interval × 2ⁿ, at most [`MAX_BACKOFF_MS`]. Pure: time comes in as an argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    interval_ms: i64,
    failures: u32,
    next_at_ms: i64,
}

impl Backoff {
    /// Due at once.
    pub fn new(interval_ms: i64, now_ms: i64) -> Backoff {
        Backoff {
            interval_ms: interval_ms.max(1),
            failures: 0,
            next_at_ms: now_ms,
        }
    }

    /// Whether the host should be asked now (`now_ms` at or past [`Backoff::next_at_ms`]), ms since
    /// the Unix epoch.
    pub fn is_due(&self, now_ms: i64) -> bool {
        now_ms >= self.next_at_ms
    }

    /// When the host is to be asked next, ms since the Unix epoch.
    pub fn next_at_ms(&self) -> i64 {
        self.next_at_ms
    }

    /// Failures in a row so far.
    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// The host answered at `now_ms`.
    pub fn succeeded(&mut self, now_ms: i64) {
        self.failures = 0;
        self.next_at_ms = now_ms.saturating_add(self.interval_ms);
    }

    /// The host failed at `now_ms`.
    pub fn failed(&mut self, now_ms: i64) {
        self.failures = self.failures.saturating_add(1);
        let factor = 1_i64 << self.failures.min(20);
        let delay = self.interval_ms.saturating_mul(factor).min(MAX_BACKOFF_MS);
        self.next_at_ms = now_ms.saturating_add(delay.max(self.interval_ms));
    }
}

/// Polls `hosts` until `tx`'s receiver is gone: a scheduler thread hands due hosts to
/// `concurrency` worker threads (a host is never asked twice at once) and forwards each answer.
pub fn spawn(
    hosts: Vec<Host>,
    cfg: PollConfig,
    clock: SharedClock,
    tx: tokio::sync::mpsc::Sender<PollEvent>,
) -> std::io::Result<()> {
    let hosts = Arc::new(hosts);
    let (job_tx, job_rx) = mpsc::channel::<usize>();
    let job_rx = Arc::new(Mutex::new(job_rx));
    let (done_tx, done_rx) = mpsc::channel::<PollEvent>();
    let agent = agent(cfg.timeout);
    for n in 0..cfg.concurrency.clamp(1, hosts.len().max(1)) {
        let (hosts, job_rx, done_tx, agent, clock) = (
            Arc::clone(&hosts),
            Arc::clone(&job_rx),
            done_tx.clone(),
            agent.clone(),
            Arc::clone(&clock),
        );
        std::thread::Builder::new()
            .name(format!("gpumeter-fleet-{n}"))
            .spawn(move || {
                // Ends when the scheduler (the job sender) is gone.
                loop {
                    let job = lock(&job_rx).recv();
                    let Ok(i) = job else { break };
                    let Some(host) = hosts.get(i) else { continue };
                    let result = fetch(&agent, host).map(Box::new);
                    let ev = PollEvent {
                        host: i,
                        at_unix_ms: clock.now_unix_ms(),
                        result,
                    };
                    if done_tx.send(ev).is_err() {
                        break;
                    }
                }
            })?;
    }
    drop(done_tx);
    let interval_ms = i64::try_from(cfg.interval.as_millis()).unwrap_or(i64::MAX);
    let count = hosts.len();
    std::thread::Builder::new()
        .name("gpumeter-fleet".into())
        .spawn(move || {
            let now = clock.now_unix_ms();
            let mut plan: Vec<Backoff> =
                (0..count).map(|_| Backoff::new(interval_ms, now)).collect();
            let mut busy = vec![false; count];
            loop {
                let now = clock.now_unix_ms();
                for (i, b) in plan.iter().enumerate() {
                    if !busy[i] && b.is_due(now) {
                        busy[i] = true;
                        if job_tx.send(i).is_err() {
                            return;
                        }
                    }
                }
                let next = plan
                    .iter()
                    .zip(&busy)
                    .filter(|(_, b)| !**b)
                    .map(|(p, _)| p.next_at_ms())
                    .min()
                    .unwrap_or(now.saturating_add(interval_ms));
                let wait =
                    Duration::from_millis(u64::try_from((next - now).clamp(1, 1_000)).unwrap_or(1));
                match done_rx.recv_timeout(wait) {
                    Ok(ev) => {
                        let at = ev.at_unix_ms;
                        if let (Some(b), Some(flag)) =
                            (plan.get_mut(ev.host), busy.get_mut(ev.host))
                        {
                            *flag = false;
                            if ev.result.is_ok() {
                                b.succeeded(at);
                            } else {
                                b.failed(at);
                            }
                        }
                        if tx.blocking_send(ev).is_err() {
                            return;
                        }
                    }
                    Err(RecvTimeoutError::Timeout) => {
                        if tx.is_closed() {
                            return;
                        }
                    }
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            }
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpumeter_model::Snapshot;

    #[test]
    fn backoff_doubles_per_failure_up_to_a_minute_and_resets_on_success() {
        let mut b = Backoff::new(2_000, 0);
        assert!(b.is_due(0));
        b.succeeded(0);
        assert!(!b.is_due(1_999) && b.is_due(2_000));
        let mut at = 2_000;
        let mut delays = Vec::new();
        for _ in 0..7 {
            b.failed(at);
            delays.push(b.next_at_ms() - at);
            at = b.next_at_ms();
        }
        assert_eq!(
            delays,
            [4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000]
        );
        assert_eq!(b.failures(), 7);
        b.succeeded(at);
        assert_eq!((b.failures(), b.next_at_ms()), (0, at + 2_000));
        // Many failures do not overflow.
        for _ in 0..100 {
            b.failed(at);
        }
        assert_eq!(b.next_at_ms() - at, MAX_BACKOFF_MS);
    }

    #[test]
    fn a_document_of_this_schema_decodes_and_others_are_named() {
        let doc = Document {
            snapshot: Snapshot::empty("demo:idle", 5),
            billing: None,
            alerts: Vec::new(),
        };
        let body = serde_json::to_vec(&doc).unwrap();
        assert_eq!(decode(&body).unwrap(), doc);
        let mut v = serde_json::to_value(&doc).unwrap();
        v["schema"] = 99.into();
        let e = decode(&serde_json::to_vec(&v).unwrap()).unwrap_err();
        assert_eq!(e, Failure::WrongSchema(99));
        assert!(e.message().contains("schema 99"), "{}", e.message());
        for junk in [
            &b"<html>hi</html>"[..],
            b"{\"schema\":3}",
            b"[1,2]",
            b"{}",
            b"",
        ] {
            let e = decode(junk).unwrap_err();
            assert!(matches!(e, Failure::Garbage(_)), "{junk:?}: {e:?}");
            assert_eq!(e.state(), "garbage");
        }
    }

    #[test]
    fn failures_say_what_to_do() {
        assert!(Failure::Http(401).message().contains("token"));
        assert!(Failure::Http(503).message().contains("no reading yet"));
        assert_eq!(Failure::Timeout.state(), "timeout");
        assert_eq!(Failure::Unreachable("refused".into()).state(), "down");
    }
}
