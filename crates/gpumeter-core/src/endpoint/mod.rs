//! The HTTP endpoint `serve` offers and `fleet` reads, as both sides must agree on it: the
//! default port, the `--listen` address and who may ask ([`auth`]: bearer tokens and the
//! loopback rule). No HTTP code here: serving is `serve`'s, requesting is `fleet`'s.

pub mod auth;

use std::net::{SocketAddr, ToSocketAddrs};

/// The default port: not one Prometheus' port list gives to a GPU exporter (DCGM's 9400,
/// nvidia_gpu_exporter's 9835, the NVIDIA exporters at 9445 and 9454) nor Prometheus' 9090.
pub const DEFAULT_PORT: u16 = 9958;
/// The default `--listen`.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:9958";

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
