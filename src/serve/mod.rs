//! `gpumeter serve`: the meter as a Prometheus exporter. One thin front-end over the same run
//! `watch` has (source → engine, meter and ledger, rules, notify channels, autostop), plus an
//! HTTP side that serves the latest reading, rendered when a request first asks for it. Rooms: [`sampler`] (the metering thread),
//! [`published`] (the state handed across), [`metrics`] (the exposition), [`http`] (routes,
//! limits, auth checks); the tokens and the loopback rule are the core's
//! [`gpumeter_core::endpoint::auth`], shared with `fleet`.
//!
//! Binds to loopback by default (port [`gpumeter_core::endpoint::DEFAULT_PORT`]); another address needs a token.
//! SIGTERM or SIGINT stops it cleanly: the HTTP side stops accepting, the sampler writes the
//! open ledger minute.

pub mod http;
pub mod metrics;
pub mod published;
pub mod sampler;

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::sync::watch;

use gpumeter_core::endpoint::auth::{self, AuthError, Token};
use published::Published;
use sampler::SamplerSetup;

/// Why `serve` could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Auth(#[from] AuthError),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("the sampler thread stopped unexpectedly")]
    SamplerPanicked,
}

/// Serves until SIGTERM/SIGINT (or the sampler stops). `bound` is told the address actually
/// bound (port 0 picks a free one) before the first request is accepted.
pub fn run(
    listen: SocketAddr,
    token: Option<Token>,
    setup: SamplerSetup,
    bound: &mut dyn FnMut(SocketAddr),
) -> Result<(), ServeError> {
    auth::check_listen(listen, token.as_ref())?;
    let listener = bind(listen).map_err(|source| ServeError::Bind {
        addr: listen,
        source,
    })?;
    listener.set_nonblocking(true)?;
    bound(listener.local_addr()?);

    let (tx, rx) = watch::channel(Arc::new(Published::starting(&setup.metrics)));
    let (wake_tx, wake_rx) = std::sync::mpsc::channel();
    let ticks = Arc::new(sampler::Ticks::default());
    let sampler_ticks = Arc::clone(&ticks);
    let sampler = std::thread::Builder::new()
        .name("gpumeter-sampler".into())
        .spawn(move || {
            sampler::run(
                setup,
                tx,
                &sampler_ticks,
                wake_rx,
                &mut std::io::stdout(),
                &mut std::io::stderr(),
            )
        })?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let shared = http::Shared {
        state: rx.clone(),
        token,
        ticks,
        wake: wake_tx.clone(),
    };
    let served = runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        http::serve(listener, shared, stopped(rx)).await;
        Ok::<(), std::io::Error>(())
    });
    // The sampler may already be gone (that is what stopped us); then nobody hears this.
    let _ = wake_tx.send(sampler::Wake::Stop);
    let sampled = sampler.join().map_err(|_| ServeError::SamplerPanicked)?;
    served?;
    sampled?;
    Ok(())
}

/// Completes on SIGTERM or SIGINT, or when the sampler drops its end of the channel.
async fn stopped(mut rx: watch::Receiver<Arc<Published>>) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        // Without signal handlers the default action (exit) still stops us.
        while rx.changed().await.is_ok() {}
        return;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
        () = async { while rx.changed().await.is_ok() {} } => {}
    }
}

/// Connections the kernel queues for `accept` (std's `bind` asks for 128). A burst of new
/// connections (a flood, many scrapers at once) beyond the queue is dropped by the kernel and
/// retried by the client a second later; with room for 1 024 the accept loop, which sheds
/// silent connections at once, keeps up.
const LISTEN_BACKLOG: i32 = 1024;

/// A listening socket on `addr` with [`LISTEN_BACKLOG`].
fn bind(addr: SocketAddr) -> std::io::Result<std::net::TcpListener> {
    use socket2::{Domain, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    // As std does: a restarted server may bind while old connections linger in TIME_WAIT.
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(LISTEN_BACKLOG)?;
    Ok(socket.into())
}
