//! `gpumeter serve`: the meter as a Prometheus exporter. One thin front-end over the same run
//! `watch` has (source → engine, meter and ledger, rules, notify channels, autostop), plus an
//! HTTP side that serves the latest reading, rendered when a request first asks for it. Rooms: [`sampler`] (the metering thread),
//! [`published`] (the state handed across), [`metrics`] (the exposition), [`http`] (routes,
//! limits, auth checks), [`auth`] (tokens and the loopback rule).
//!
//! Binds to loopback by default (port [`DEFAULT_PORT`]); another address needs a token.
//! SIGTERM or SIGINT stops it cleanly: the HTTP side stops accepting, the sampler writes the
//! open ledger minute.

pub mod auth;
pub mod http;
pub mod metrics;
pub mod published;
pub mod sampler;

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;

use tokio::sync::watch;

use auth::{AuthError, Token};
use published::Published;
use sampler::SamplerSetup;

/// The default port: not one Prometheus' port list gives to a GPU exporter (DCGM's 9400,
/// nvidia_gpu_exporter's 9835, the NVIDIA exporters at 9445 and 9454) nor Prometheus' 9090.
pub const DEFAULT_PORT: u16 = 9958;
/// The default `--listen`.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:9958";

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

/// `ADDR:PORT` (`127.0.0.1:9958`, `[::1]:9958`, `0.0.0.0:9958`, `localhost:9958`). A host name
/// must resolve to one address (the loopback rule is checked on it).
pub fn parse_listen(s: &str) -> Result<SocketAddr, String> {
    if let Ok(a) = s.parse::<SocketAddr>() {
        return Ok(a);
    }
    let bad = || {
        format!(
            "'{s}' is not ADDR:PORT (examples: 127.0.0.1:{DEFAULT_PORT}, [::1]:{DEFAULT_PORT}, 0.0.0.0:{DEFAULT_PORT})"
        )
    };
    let (host, port) = s.rsplit_once(':').ok_or_else(bad)?;
    let port: u16 = port.parse().map_err(|_| bad())?;
    if host == "localhost" {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    let mut addrs = (host, port).to_socket_addrs().map_err(|_| bad())?;
    addrs.next().ok_or_else(bad)
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
    let listener = std::net::TcpListener::bind(listen).map_err(|source| ServeError::Bind {
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
    // Start-up's pages go once it is over, as in the dashboard (see `residency`).
    runtime.spawn(crate::residency::after_startup());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_addresses_parse_and_bad_ones_say_what_is_wanted() {
        assert_eq!(
            parse_listen("127.0.0.1:9958").unwrap(),
            "127.0.0.1:9958".parse::<SocketAddr>().unwrap()
        );
        assert_eq!(
            parse_listen("localhost:1234").unwrap(),
            "127.0.0.1:1234".parse::<SocketAddr>().unwrap()
        );
        assert!(parse_listen("[::1]:9958").unwrap().ip().is_loopback());
        for bad in ["9958", "127.0.0.1", "127.0.0.1:99999", "host:port"] {
            let e = parse_listen(bad).unwrap_err();
            assert!(e.contains("ADDR:PORT"), "{bad}: {e}");
        }
        assert_eq!(DEFAULT_LISTEN, format!("127.0.0.1:{DEFAULT_PORT}"));
    }
}
