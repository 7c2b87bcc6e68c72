//! `gpumeter fleet --once` end to end: real `gpumeter serve --demo` instances on loopback
//! (different scenarios), a server stopped and started again, and hosts that misbehave: one
//! that answers junk, one with another schema, one that accepts and never answers, one that
//! wants a token. Plus the hosts file's errors, through the real binary.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::serve::{Served, command};

/// Runs `gpumeter fleet ARGS`, killing it (and failing) if it has not exited within `limit`:
/// a poll must end however the hosts behave.
fn fleet(args: &[&str], limit: Duration) -> Output {
    let home = tempfile::tempdir().unwrap();
    let mut child: Child = command(home.path())
        .arg("fleet")
        .args(args)
        .env_remove("http_proxy")
        .env_remove("HTTP_PROXY")
        .env_remove("https_proxy")
        .env_remove("HTTPS_PROXY")
        .env_remove("ALL_PROXY")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + limit;
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "fleet did not finish within {limit:?}; stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn json_of(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

fn host<'a>(doc: &'a Value, url: &str) -> &'a Value {
    doc["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["url"] == url)
        .unwrap_or_else(|| panic!("{url} not in {doc:#}"))
}

fn url(addr: SocketAddr) -> String {
    format!("http://{addr}")
}

const LIMIT: Duration = Duration::from_secs(30);

fn demo(scenario: &str) -> Served {
    let s = Served::start(
        &["--demo", scenario, "--no-ledger", "--interval", "200ms"],
        &[],
    );
    s.wait_ready();
    s
}

/// A port nobody listens on (bound, then released).
fn dead_port() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap()
}

/// A listener that answers every connection with `reply` once it has read the request head
/// (or, with `None`, reads and never answers, holding the connection open).
fn fake_server(reply: Option<&'static [u8]>) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in l.incoming() {
            let Ok(mut s) = stream else { return };
            let mut buf = [0u8; 4096];
            let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
            let _ = s.read(&mut buf);
            match reply {
                Some(r) => {
                    let _ = s.write_all(r);
                }
                // Kept open, never answered: only the client's timeout ends it.
                None => held.push(s),
            }
        }
    });
    addr
}

#[test]
fn once_json_gives_each_hosts_row_and_the_totals_with_a_dead_host_marked() {
    let idle = demo("idle");
    let training = demo("training");
    let dead = dead_port();
    let out = fleet(
        &[
            &url(idle.addr),
            &url(training.addr),
            &url(dead),
            "--once",
            "--json",
        ],
        LIMIT,
    );
    let doc = json_of(&out);
    assert_eq!(doc["fleet_schema"], 1);
    let i = host(&doc, &url(idle.addr));
    assert_eq!(i["state"], "up");
    assert_eq!(i["gpus"], 8);
    assert_eq!(i["busy_gpus"], 0);
    assert_eq!(i["idle"], true);
    assert_eq!(i["currency"], "USD");
    // The idle demo bills $31/h, all of it idle.
    assert_eq!(i["burn_per_hour_micros"], 31_000_000);
    assert_eq!(i["idle_burn_per_hour_micros"], 31_000_000);
    let t = host(&doc, &url(training.addr));
    assert_eq!(t["state"], "up");
    assert_eq!(t["busy_gpus"], t["gpus"]);
    assert_eq!(t["idle"], false);
    assert_eq!(t["idle_burn_per_hour_micros"], 0);
    assert!(t["mean_util_pct"].as_f64().unwrap() > 50.0, "{t}");
    let d = host(&doc, &url(dead));
    assert_eq!(d["state"], "down");
    assert!(d["error"].as_str().unwrap().contains("refused"), "{d}");
    assert!(d["last_seen_unix_ms"].is_null() && d["gpus"].is_null());

    let totals = &doc["totals"];
    assert_eq!(totals["hosts"], 3);
    assert_eq!(totals["up"], 2);
    assert_eq!(totals["down"], 1);
    assert_eq!(totals["idle_hosts"], 1);
    let usd = &totals["money"][0];
    assert_eq!(usd["currency"], "USD");
    let burn =
        i["burn_per_hour_micros"].as_i64().unwrap() + t["burn_per_hour_micros"].as_i64().unwrap();
    assert_eq!(usd["burn_per_hour_micros"], burn);
    assert_eq!(usd["idle_burn_per_hour_micros"], 31_000_000);
    // Sorted by idle burn: the idle box first, the dead one last.
    let order: Vec<&str> = doc["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["url"].as_str().unwrap())
        .collect();
    assert_eq!(order, [url(idle.addr), url(training.addr), url(dead)]);
}

#[test]
fn the_table_marks_a_down_host_with_its_error() {
    let idle = demo("idle");
    let dead = dead_port();
    let out = fleet(&[&url(idle.addr), &url(dead), "--once"], LIMIT);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].contains("burn $31.00/h") && lines[0].contains("1 down"),
        "{text}"
    );
    assert!(
        lines[1].starts_with("HOST") && lines[1].contains("IDLE/H"),
        "{text}"
    );
    let dead_line = lines
        .iter()
        .find(|l| l.contains(&dead.to_string()))
        .unwrap();
    assert!(
        dead_line.contains("down") && dead_line.contains("never answered"),
        "{text}"
    );
}

#[test]
fn a_server_stopped_is_marked_down_with_when_it_was_last_seen_and_back_once_restarted() {
    let s = demo("idle");
    let addr = s.addr;
    let first = json_of(&fleet(&[&url(addr), "--once", "--json"], LIMIT));
    assert_eq!(host(&first, &url(addr))["state"], "up");
    assert!(s.stop().success());
    let down = json_of(&fleet(&[&url(addr), "--once", "--json"], LIMIT));
    assert_eq!(host(&down, &url(addr))["state"], "down");
    assert_eq!(down["totals"]["down"], 1);
    assert!(down["totals"]["money"].as_array().unwrap().is_empty());
    // Started again on the same address.
    let again = Served::start_on(
        &addr.to_string(),
        &["--demo", "idle", "--no-ledger", "--interval", "200ms"],
        &[],
    );
    again.wait_ready();
    let back = json_of(&fleet(&[&url(addr), "--once", "--json"], LIMIT));
    assert_eq!(host(&back, &url(addr))["state"], "up");
    assert_eq!(back["totals"]["down"], 0);
}

#[test]
fn junk_another_schema_and_a_stalled_server_are_each_named_and_the_poll_still_ends() {
    let junk = fake_server(Some(b"SSH-2.0-OpenSSH_9.6\r\n"));
    let html = fake_server(Some(
        b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\nConnection: close\r\n\r\n<html></html>",
    ));
    let newer = fake_server(Some(
        b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\nConnection: close\r\n\r\n{\"schema\":99}",
    ));
    let stalled = fake_server(None);
    let live = demo("training");
    let out = fleet(
        &[
            &url(junk),
            &url(html),
            &url(newer),
            &url(stalled),
            &url(live.addr),
            "--once",
            "--json",
            "--timeout",
            "1s",
        ],
        LIMIT,
    );
    let doc = json_of(&out);
    assert_eq!(host(&doc, &url(junk))["state"], "garbage");
    let h = host(&doc, &url(html));
    assert_eq!(h["state"], "garbage");
    assert!(
        h["error"]
            .as_str()
            .unwrap()
            .contains("not a snapshot document"),
        "{h}"
    );
    let n = host(&doc, &url(newer));
    assert_eq!(n["state"], "wrong schema");
    assert!(n["error"].as_str().unwrap().contains("schema 99"), "{n}");
    assert_eq!(host(&doc, &url(stalled))["state"], "timeout");
    // The healthy host is unaffected by the others.
    assert_eq!(host(&doc, &url(live.addr))["state"], "up");
    assert_eq!(doc["totals"]["down"], 4);
}

#[test]
fn a_server_with_a_token_answers_only_with_the_token_from_the_hosts_file() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let tok = dir.path().join("box.token");
    std::fs::write(&tok, "fleet-test-token-0123456789\n").unwrap();
    std::fs::set_permissions(&tok, std::fs::Permissions::from_mode(0o600)).unwrap();
    let s = Served::start(
        &[
            "--demo",
            "idle",
            "--no-ledger",
            "--interval",
            "200ms",
            "--token-file",
            tok.to_str().unwrap(),
        ],
        &[],
    );
    s.wait_ready();
    let without = json_of(&fleet(&[&url(s.addr), "--once", "--json"], LIMIT));
    let h = host(&without, &url(s.addr));
    assert_eq!(h["state"], "http error");
    assert!(h["error"].as_str().unwrap().contains("401"), "{h}");
    let hosts = dir.path().join("hosts.txt");
    std::fs::write(
        &hosts,
        format!(
            "# the team\n\n{} token_file=box.token name=trainer-1\n",
            url(s.addr)
        ),
    )
    .unwrap();
    let with = json_of(&fleet(
        &["--hosts", hosts.to_str().unwrap(), "--once", "--json"],
        LIMIT,
    ));
    let h = host(&with, &url(s.addr));
    assert_eq!(h["state"], "up", "{h}");
    assert_eq!(h["name"], "trainer-1");
    // --token-file gives every host without its own the same token.
    let with = json_of(&fleet(
        &[
            &url(s.addr),
            "--token-file",
            tok.to_str().unwrap(),
            "--once",
            "--json",
        ],
        LIMIT,
    ));
    assert_eq!(host(&with, &url(s.addr))["state"], "up");
}

#[test]
fn bad_input_is_a_clear_error_naming_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let hosts = dir.path().join("hosts.txt");
    std::fs::write(&hosts, "http://127.0.0.1:1\n# fine\nbox-7:9958\n").unwrap();
    // A bad file exits 1; a bad or missing address on the command line is a usage error (2).
    let failing = |args: &[&str], code: i32| {
        let out = fleet(args, LIMIT);
        assert_eq!(out.status.code(), Some(code), "{args:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let fail = |args: &[&str]| failing(args, 1);
    let usage = |args: &[&str]| failing(args, 2);
    let e = fail(&["--hosts", hosts.to_str().unwrap(), "--once"]);
    assert!(
        e.contains("hosts.txt:3:") && e.contains("not an http"),
        "{e}"
    );
    let missing = dir.path().join("nope.txt");
    let e = fail(&["--hosts", missing.to_str().unwrap(), "--once"]);
    assert!(
        e.contains("cannot read the hosts file") && e.contains("nope.txt"),
        "{e}"
    );
    let e = usage(&["--once"]);
    assert!(e.contains("no hosts to watch"), "{e}");
    std::fs::write(&hosts, "# nobody yet\n").unwrap();
    let e = usage(&["--hosts", hosts.to_str().unwrap(), "--once"]);
    assert!(e.contains("no hosts to watch"), "{e}");
    let e = usage(&["ftp://x:1", "--once"]);
    assert!(e.contains("not an http"), "{e}");
    // --json without --once is a usage error (2).
    let out = fleet(&["http://127.0.0.1:1", "--json"], LIMIT);
    assert_eq!(out.status.code(), Some(2));
}
