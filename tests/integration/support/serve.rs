//! Runs the real `gpumeter serve` on a free loopback port (`--listen 127.0.0.1:0`; the bound
//! address is read from its stderr) and talks HTTP/1.1 to it over plain sockets, so tests see
//! exactly what a scraper sees, bad requests included. The process is stopped on drop (SIGTERM,
//! then SIGKILL), so a failing test leaves nothing running.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_gpumeter");

/// A running `gpumeter serve`.
pub struct Served {
    child: Option<Child>,
    pub addr: SocketAddr,
    pub stderr: Arc<Mutex<Vec<String>>>,
    _home: tempfile::TempDir,
}

/// One HTTP response.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub head: String,
    pub body: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
        })
    }
}

/// [`super::gpumeter`] (a private home: no user config, no user ledger), with no token from
/// the environment.
pub fn command(home: &std::path::Path) -> Command {
    let mut c = super::gpumeter(home);
    c.env_remove("GPUMETER_SERVE_TOKEN");
    c
}

impl Served {
    /// `gpumeter serve --listen 127.0.0.1:0 <args>` with `env`; waits for the listening line.
    pub fn start(args: &[&str], env: &[(&str, &str)]) -> Served {
        Self::start_on("127.0.0.1:0", args, env)
    }

    /// [`Served::start`] on a given `--listen` address (a server started again where it was).
    pub fn start_on(listen: &str, args: &[&str], env: &[(&str, &str)]) -> Served {
        let home = tempfile::tempdir().unwrap();
        let mut cmd = command(home.path());
        cmd.arg("serve").arg("--listen").arg(listen).args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let lines = stderr.clone();
        let pipe = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                if let Some(rest) = line.strip_prefix("gpumeter: serving on http://") {
                    let addr = rest.trim_end_matches("/metrics").to_string();
                    let _ = tx.send(addr);
                }
                lines.lock().unwrap().push(line);
            }
        });
        let mut served = Served {
            child: Some(child),
            addr: "127.0.0.1:1".parse().unwrap(),
            stderr,
            _home: home,
        };
        match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(a) => served.addr = a.parse().unwrap(),
            Err(_) => panic!(
                "serve did not start within 30 s; stderr: {:?}",
                served.stderr.lock().unwrap()
            ),
        }
        served
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// Waits until `/-/ready` answers 200 (the first reading is in).
    pub fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if self.get("/-/ready").status == 200 {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("serve never became ready");
    }

    pub fn get(&self, path: &str) -> Reply {
        self.request(&format!(
            "GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
        ))
    }

    pub fn get_with(&self, path: &str, headers: &str) -> Reply {
        self.request(&format!(
            "GET {path} HTTP/1.1\r\nHost: t\r\n{headers}Connection: close\r\n\r\n"
        ))
    }

    /// Sends `raw` and reads the whole answer (the server closes after it).
    pub fn request(&self, raw: &str) -> Reply {
        request(self.addr, raw.as_bytes())
    }

    /// SIGTERM, then waits (SIGKILL after 20 s).
    pub fn stop(mut self) -> ExitStatus {
        let mut child = self.child.take().unwrap();
        terminate(&mut child)
    }
}

/// SIGTERM `child` and wait for it, SIGKILL if it lingers 20 s.
pub fn terminate(child: &mut Child) -> ExitStatus {
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            return child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// One raw exchange with `addr`.
pub fn request(addr: SocketAddr, raw: &[u8]) -> Reply {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(raw).unwrap();
    let mut bytes = Vec::new();
    // A server may close while we still send (431); what it sent first still counts.
    let _ = s.read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let chunked = head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    Reply {
        status,
        head: head.to_string(),
        body: if chunked {
            dechunk(body)
        } else {
            body.to_string()
        },
    }
}

/// The body of a chunked transfer (Go's HTTP server sends large answers so).
fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || after.len() < n {
            break;
        }
        out.push_str(&after[..n]);
        rest = after[n..].trim_start_matches("\r\n");
    }
    out
}

/// Whether Prometheus' tools are here; CI sets GPUMETER_REQUIRE_PROMETHEUS so absence fails.
pub fn prometheus_available() -> bool {
    let ok = ["promtool", "prometheus"].iter().all(|t| {
        Command::new(t)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if !ok && std::env::var_os("GPUMETER_REQUIRE_PROMETHEUS").is_some() {
        panic!(
            "prometheus and promtool are required (GPUMETER_REQUIRE_PROMETHEUS is set) but not installed"
        );
    }
    if !ok {
        eprintln!("skipping: prometheus/promtool not installed (apt-get install prometheus)");
    }
    ok
}
