//! The HTTP side of `serve` (hyper, HTTP/1.1): `/metrics`, `/api/v1/snapshot`, `/healthz`,
//! `/-/ready` and a short index at `/`. Every answer is bytes rendered by the sampler
//! ([`Published`]); a request costs an `Arc` clone and a write. The first request after a new
//! reading asks the sampler to render it ([`Wake::Render`]) and waits for it at most
//! [`RENDER_WAIT`] (a reading in progress on a slow driver): past that it gets the previous one.
//!
//! Bad input: an unknown path is 404, a method other than GET or HEAD is 405 (with `Allow`),
//! request headers over 16 KiB or 64 fields are cut off with 431 by hyper, a client that does
//! not finish its headers in 3 s or keeps a connection over 60 s is dropped, and at most
//! 256 connections are held at once. A flood of silent sockets cannot stall a scrape: when
//! every slot is taken, a new connection sheds the oldest one that never sent a whole request
//! ([`Slots`]); only when all of them have, it waits for one to end. With a token, every path
//! but the probes (`/healthz`, `/-/ready`) needs `Authorization: Bearer …`, else 401.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::sync::{Notify, watch};

use super::published::Published;
use super::sampler::{Ticks, Wake};
use gpumeter_core::endpoint::auth::Token;

/// Most connections held at once.
pub const MAX_CONNECTIONS: usize = 256;
/// Largest request head (request line and headers), in bytes.
pub const MAX_HEADER_BYTES: usize = 16 * 1024;
const MAX_HEADERS: usize = 64;
/// A scraper sends its few hundred bytes of head at once; 3 s is ample even over a slow link and
/// frees a slot held by a silent socket well inside Prometheus's 10 s scrape timeout.
const HEADER_TIMEOUT: Duration = Duration::from_secs(3);
const CONNECTION_LIFETIME: Duration = Duration::from_secs(60);
/// Longest a request waits for the latest reading to be rendered.
pub const RENDER_WAIT: Duration = Duration::from_secs(1);

const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
const CLASSIC: &str = "text/plain; version=0.0.4; charset=utf-8";
const INDEX: &str = "gpumeter serve\n\n\
/metrics          Prometheus metrics (OpenMetrics when asked for, else text 0.0.4)\n\
/api/v1/snapshot  the latest reading with billing and alerts (JSON)\n\
/healthz          200 while the process runs\n\
/-/ready          200 once readings arrive, 503 before and while the source fails\n";

/// What the handlers share.
#[derive(Debug, Clone)]
pub struct Shared {
    pub state: watch::Receiver<Arc<Published>>,
    pub token: Option<Token>,
    /// The sampler's latest tick, to tell whether `state` is behind.
    pub ticks: Arc<Ticks>,
    /// Wakes the sampler to render.
    pub wake: std::sync::mpsc::Sender<Wake>,
}

/// The published state of the latest tick: rendered on demand, once per tick; the one before
/// when the sampler does not get to it within [`RENDER_WAIT`].
pub async fn current(shared: &Shared) -> Arc<Published> {
    let want = shared.ticks.latest();
    if shared.state.borrow().tick >= want {
        return shared.state.borrow().clone();
    }
    // A gone sampler cannot render; the state we have is all there is.
    if shared.wake.send(Wake::Render).is_ok() {
        let mut rx = shared.state.clone();
        let _ = tokio::time::timeout(RENDER_WAIT, rx.wait_for(|p| p.tick >= want)).await;
    }
    shared.state.borrow().clone()
}

/// One held connection: whether a whole request came on it, and the signal to drop it.
#[derive(Debug, Default)]
struct Held {
    requested: AtomicBool,
    shed: Notify,
}

/// The connections held, oldest first, and a signal when one ends.
#[derive(Debug, Default)]
struct Slots {
    held: Mutex<VecDeque<(u64, Arc<Held>)>>,
    next: std::sync::atomic::AtomicU64,
    freed: Notify,
}

impl Slots {
    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<(u64, Arc<Held>)>> {
        match self.held.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Takes a slot: at once while one is free, else by shedding the oldest connection that
    /// never sent a whole request, else once one ends.
    async fn take(&self) -> (u64, Arc<Held>) {
        loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            {
                let mut held = self.lock();
                if held.len() >= MAX_CONNECTIONS {
                    let silent = held
                        .iter()
                        .position(|(_, h)| !h.requested.load(Ordering::Relaxed));
                    if let Some((_, h)) = silent.and_then(|i| held.remove(i)) {
                        h.shed.notify_one();
                    }
                }
                if held.len() < MAX_CONNECTIONS {
                    let id = self.next.fetch_add(1, Ordering::Relaxed);
                    let h = Arc::new(Held::default());
                    held.push_back((id, Arc::clone(&h)));
                    return (id, h);
                }
            }
            freed.await;
        }
    }

    fn give_back(&self, id: u64) {
        self.lock().retain(|(i, _)| *i != id);
        self.freed.notify_waiters();
    }
}

/// Serves `listener` until `shutdown` completes.
pub async fn serve(
    listener: tokio::net::TcpListener,
    shared: Shared,
    shutdown: impl std::future::Future<Output = ()>,
) {
    let slots = Arc::new(Slots::default());
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            () = &mut shutdown => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Out of file descriptors and the like: pause rather than spin.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let (id, held) = tokio::select! {
            () = &mut shutdown => return,
            slot = slots.take() => slot,
        };
        let (shared, slots) = (shared.clone(), Arc::clone(&slots));
        tokio::spawn(async move {
            let seen = Arc::clone(&held);
            let service = hyper::service::service_fn(move |req| {
                // hyper calls this once a whole request head is in: the slot is a client's.
                seen.requested.store(true, Ordering::Relaxed);
                let shared = shared.clone();
                async move { Ok::<_, Infallible>(respond(&req, &shared).await) }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .max_header_size(MAX_HEADER_BYTES)
                .max_headers(MAX_HEADERS)
                .serve_connection(TokioIo::new(stream), service);
            // A broken, timed-out or shed connection concerns only that client.
            tokio::select! {
                _ = tokio::time::timeout(CONNECTION_LIFETIME, conn) => {}
                () = held.shed.notified() => {}
            }
            slots.give_back(id);
        });
    }
}

fn text(status: StatusCode, body: &'static str) -> Response<Full<Bytes>> {
    build(
        status,
        "text/plain; charset=utf-8",
        Bytes::from_static(body.as_bytes()),
    )
}

fn build(status: StatusCode, content_type: &'static str, body: Bytes) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body));
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

/// Whether the client asked for OpenMetrics (Prometheus does; curl and promtool do not).
fn wants_openmetrics(req: &Request<Incoming>) -> bool {
    req.headers()
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.contains("application/openmetrics-text"))
}

/// The answer to one request.
pub async fn respond(req: &Request<Incoming>, shared: &Shared) -> Response<Full<Bytes>> {
    let path = req.uri().path();
    let probe = matches!(path, "/healthz" | "/-/ready");
    if !matches!(path, "/" | "/metrics" | "/api/v1/snapshot") && !probe {
        return text(StatusCode::NOT_FOUND, "not found (see /)\n");
    }
    if !matches!(*req.method(), Method::GET | Method::HEAD) {
        let mut r = text(StatusCode::METHOD_NOT_ALLOWED, "only GET and HEAD\n");
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return r;
    }
    if let Some(token) = &shared.token {
        let given = req
            .headers()
            .get(header::AUTHORIZATION)
            .map(HeaderValue::as_bytes);
        if !probe && !token.accepts(given) {
            let mut r = text(StatusCode::UNAUTHORIZED, "a bearer token is required\n");
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"gpumeter\""),
            );
            return r;
        }
    }
    let state = match path {
        // The probes and the index need no reading; /healthz answers while the sampler is busy.
        "/healthz" | "/" => shared.state.borrow().clone(),
        _ => current(shared).await,
    };
    let mut r = match path {
        "/metrics" if wants_openmetrics(req) => {
            build(StatusCode::OK, OPENMETRICS, state.openmetrics.clone())
        }
        "/metrics" => build(StatusCode::OK, CLASSIC, state.classic.clone()),
        "/api/v1/snapshot" => match &state.snapshot {
            Some(json) => build(StatusCode::OK, "application/json", json.clone()),
            None => text(StatusCode::SERVICE_UNAVAILABLE, "no reading yet\n"),
        },
        "/healthz" => text(StatusCode::OK, "ok\n"),
        "/-/ready" => match &state.ready {
            Ok(()) => text(StatusCode::OK, "ready\n"),
            Err(why) => build(
                StatusCode::SERVICE_UNAVAILABLE,
                "text/plain; charset=utf-8",
                Bytes::from(format!("not ready: {why}\n")),
            ),
        },
        _ => text(StatusCode::OK, INDEX),
    };
    if req.method() == Method::HEAD {
        // Same headers, the length GET would send, no body.
        let len = hyper::body::Body::size_hint(r.body()).exact().unwrap_or(0);
        r.headers_mut()
            .insert(header::CONTENT_LENGTH, HeaderValue::from(len));
        *r.body_mut() = Full::new(Bytes::new());
    }
    r
}
