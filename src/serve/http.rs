//! The HTTP side of `serve` (hyper, HTTP/1.1): `/metrics`, `/api/v1/snapshot`, `/healthz`,
//! `/-/ready` and a short index at `/`. Every answer is bytes rendered by the sampler
//! ([`Published`]); a request costs an `Arc` clone and a write. The first request after a new
//! reading asks the sampler to render it ([`Wake::Render`]) and waits for it at most
//! [`RENDER_WAIT`] (a reading in progress on a slow driver): past that it gets the previous one.
//!
//! Bad input: an unknown path is 404, a method other than GET or HEAD is 405 (with `Allow`),
//! request headers over 16 KiB or 64 fields are cut off with 431 by hyper, a client that does
//! not finish its headers in 3 s or keeps a connection over 60 s is dropped, and at most
//! 256 connections are served at once (more wait in the kernel's backlog). With a token, every
//! path but the probes (`/healthz`, `/-/ready`) needs `Authorization: Bearer …`, else 401.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::sync::{Semaphore, watch};

use super::published::Published;
use super::sampler::{Ticks, Wake};
use gpumeter_core::endpoint::auth::Token;

/// Most connections served at once.
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

/// Serves `listener` until `shutdown` completes.
pub async fn serve(
    listener: tokio::net::TcpListener,
    shared: Shared,
    shutdown: impl std::future::Future<Output = ()>,
) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            () = &mut shutdown => return,
            p = slots.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => return,
            },
        };
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
        let shared = shared.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let shared = shared.clone();
                async move { Ok::<_, Infallible>(respond(&req, &shared).await) }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .max_header_size(MAX_HEADER_BYTES)
                .max_headers(MAX_HEADERS)
                .serve_connection(TokioIo::new(stream), service);
            // A broken or timed-out connection concerns only that client.
            let _ = tokio::time::timeout(CONNECTION_LIFETIME, conn).await;
            drop(permit);
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
