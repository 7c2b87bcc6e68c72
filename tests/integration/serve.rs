//! `gpumeter serve` end to end: the real binary on loopback, spoken to over plain sockets.
//! Routes, readiness, the snapshot document, auth, bad requests, slow clients, promtool's lint
//! on every demo scenario, and a clean stop on SIGTERM that writes the ledger.

use std::io::Write;
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::serve::{Served, command, prometheus_available};

const TOKEN: &str = "test-token-0123456789abcdef";

fn sample_value(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.starts_with(name) && l[name.len()..].starts_with(['{', ' ']))
        .and_then(|l| l.rsplit_once(' '))
        .and_then(|(_, v)| v.parse().ok())
}

/// `promtool check metrics` on `text`: (passed, what it said).
fn promtool_check(text: &str) -> (bool, String) {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), said)
}

#[test]
fn routes_answer_with_the_right_status_and_type() {
    let s = Served::start(
        &["--demo", "idle", "--no-ledger", "--interval", "200ms"],
        &[],
    );
    s.wait_ready();
    assert_eq!(s.get("/healthz").status, 200);

    let classic = s.get("/metrics");
    assert_eq!(classic.status, 200);
    assert!(
        classic
            .header("content-type")
            .unwrap()
            .starts_with("text/plain; version=0.0.4")
    );
    assert!(!classic.body.contains("# EOF"));
    let om = s.get_with(
        "/metrics",
        "Accept: application/openmetrics-text;version=1.0.0\r\n",
    );
    assert!(
        om.header("content-type")
            .unwrap()
            .starts_with("application/openmetrics-text")
    );
    assert!(om.body.ends_with("# EOF\n"));
    assert_eq!(
        sample_value(&classic.body, "gpumeter_billing_active"),
        Some(1.0)
    );

    let snap = s.get("/api/v1/snapshot");
    assert_eq!(snap.status, 200);
    assert_eq!(
        snap.header("content-type").as_deref(),
        Some("application/json")
    );
    let v: serde_json::Value = serde_json::from_str(&snap.body).unwrap();
    assert_eq!(v["schema"], gpumeter_model::SCHEMA_VERSION);
    assert_eq!(v["source"], "demo:idle");
    assert_eq!(v["billing"]["currency"], "USD");
    assert!(v["billing"]["spent_micros"].as_i64().unwrap() > 0);
    assert!(v["alerts"].is_array());

    // HEAD: the headers GET would send, no body.
    let head = s.request("HEAD /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    assert!(
        head.header("content-length")
            .unwrap()
            .parse::<usize>()
            .unwrap()
            > 1000
    );

    let index = s.get("/");
    assert!(index.body.contains("/api/v1/snapshot"));
}

#[test]
fn bad_requests_get_404_405_and_431_and_the_server_goes_on() {
    let s = Served::start(&["--demo", "training", "--no-ledger"], &[]);
    s.wait_ready();
    assert_eq!(s.get("/nope").status, 404);
    assert_eq!(s.get("/metrics/../etc/passwd").status, 404);
    for method in ["POST", "PUT", "DELETE", "OPTIONS", "PATCH"] {
        let r = s.request(&format!(
            "{method} /metrics HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        ));
        assert_eq!(r.status, 405, "{method}");
        assert_eq!(r.header("allow").as_deref(), Some("GET, HEAD"));
    }
    let huge = "x".repeat(32 * 1024);
    let r = s.get_with("/metrics", &format!("X-Big: {huge}\r\n"));
    assert_eq!(r.status, 431, "{}", r.head);
    let many: String = (0..200).map(|i| format!("X-H{i}: v\r\n")).collect();
    assert_eq!(s.get_with("/metrics", &many).status, 431);
    // Not HTTP at all: the connection is closed with an error status, nothing else happens.
    let r = s.request("\x16\x03\x01 garbage\r\n\r\n");
    assert!(r.status == 400 || r.status == 0, "{}", r.head);
    assert_eq!(s.get("/metrics").status, 200);
}

#[test]
fn slow_clients_do_not_delay_sampling_or_other_scrapes() {
    let s = Served::start(
        &[
            "--demo",
            "mixed",
            "--no-ledger",
            "--interval",
            "200ms",
            "--process-metrics",
        ],
        &[],
    );
    s.wait_ready();
    // Forty clients that send half a request and stall, and ten that ask for the snapshot and
    // never read it.
    let mut stalled = Vec::new();
    for _ in 0..40 {
        let mut c = TcpStream::connect(s.addr).unwrap();
        c.write_all(b"GET /metrics HTTP/1.1\r\nHost: t\r\nX-Slow: ")
            .unwrap();
        stalled.push(c);
    }
    for _ in 0..10 {
        let mut c = TcpStream::connect(s.addr).unwrap();
        c.write_all(b"GET /api/v1/snapshot HTTP/1.1\r\nHost: t\r\n\r\n")
            .unwrap();
        stalled.push(c);
    }
    let first = sample_value(
        &s.get("/metrics").body,
        "gpumeter_last_sample_timestamp_seconds",
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let r = s.get("/metrics");
        assert_eq!(r.status, 200);
        let t = sample_value(&r.body, "gpumeter_last_sample_timestamp_seconds").unwrap();
        if t >= first + 1.0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "sampling stalled at {t} (from {first})"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(stalled);
}

#[test]
fn a_token_is_required_off_loopback_and_checked_on_every_request() {
    // Non-loopback without a token: refuses to start, says why, exit 1.
    let home = tempfile::tempdir().unwrap();
    let out = command(home.path())
        .args(["serve", "--demo", "--no-ledger", "--listen", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("refusing to listen on 0.0.0.0:0 without a token"),
        "{err}"
    );
    assert!(err.contains("--token-file"), "{err}");
    // The token never comes from argv.
    let out = command(home.path())
        .args(["serve", "--token", TOKEN])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));

    let s = Served::start(
        &["--demo", "idle", "--no-ledger"],
        &[("GPUMETER_SERVE_TOKEN", TOKEN)],
    );
    s.wait_ready(); // the probes need no token
    let r = s.get("/metrics");
    assert_eq!(r.status, 401);
    assert!(r.header("www-authenticate").unwrap().starts_with("Bearer"));
    assert_eq!(
        s.get_with(
            "/metrics",
            "Authorization: Bearer wrong-token-wrong-token\r\n"
        )
        .status,
        401
    );
    assert_eq!(
        s.get_with(
            "/api/v1/snapshot",
            &format!("Authorization: Basic {TOKEN}\r\n")
        )
        .status,
        401
    );
    let ok = s.get_with("/metrics", &format!("Authorization: Bearer {TOKEN}\r\n"));
    assert_eq!(ok.status, 200);
    assert!(ok.body.contains("gpumeter_up"));
    assert_eq!(s.get("/healthz").status, 200);
}

#[test]
fn a_token_file_with_loose_permissions_warns_and_a_world_writable_one_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("token");
    std::fs::write(&path, format!("{TOKEN}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let file = path.to_str().unwrap();
    let s = Served::start(
        &["--demo", "idle", "--no-ledger", "--token-file", file],
        &[],
    );
    s.wait_ready();
    assert_eq!(
        s.get_with("/metrics", &format!("Authorization: Bearer {TOKEN}\r\n"))
            .status,
        200
    );
    assert!(
        s.stderr
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("chmod 600")),
        "{:?}",
        s.stderr.lock().unwrap()
    );
    drop(s);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
    let out = command(dir.path())
        .args([
            "serve",
            "--demo",
            "--no-ledger",
            "--listen",
            "127.0.0.1:0",
            "--token-file",
            file,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("writable by others"));
}

#[test]
fn sigterm_stops_cleanly_and_the_ledger_keeps_the_spend() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.sqlite");
    let l = ledger.to_str().unwrap();
    let s = Served::start(
        &["--demo", "idle", "--ledger", l, "--interval", "200ms"],
        &[],
    );
    s.wait_ready();
    std::thread::sleep(Duration::from_millis(600));
    let status = s.stop();
    assert!(status.success(), "{status:?}");
    let out = command(dir.path())
        .args(["report", "--json", "--ledger", l])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let spent: i64 = v["days"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["spend_micros"].as_i64().unwrap())
        .sum();
    // The demo box's clock started at its boot: the first reading already carries its spend.
    assert!(spent > 0, "{v}");
    assert_eq!(v["sessions"].as_array().unwrap().len(), 1, "{v}");
}

#[test]
fn snapshot_json_carries_the_billing_block_when_pricing_is_known() {
    let home = tempfile::tempdir().unwrap();
    let out = command(home.path())
        .args([
            "snapshot",
            "--json",
            "--demo",
            "idle",
            "--at",
            "90s",
            "--no-ledger",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let b = &v["billing"];
    assert_eq!(b["currency"], "USD");
    assert_eq!(b["burn_per_hour_micros"], 31_000_000);
    assert!(b["idle_spend_micros"].as_i64().unwrap() > 0, "{b}");
    assert!(b["budget"]["used_ratio"].as_f64().is_some());
}

#[test]
fn promtool_passes_every_scenario_with_process_metrics_and_flags_dcgm_names() {
    if !prometheus_available() {
        return;
    }
    let names: Vec<&str> = gpumeter_sim::builtin_scenarios()
        .iter()
        .map(|(n, _)| *n)
        .collect();
    let servers: Vec<(&str, Served)> = names
        .iter()
        .map(|n| {
            let s = Served::start(
                &[
                    "--demo",
                    n,
                    "--no-ledger",
                    "--process-metrics",
                    "--budget",
                    "500/day",
                ],
                &[],
            );
            (*n, s)
        })
        .collect();
    for (name, s) in &servers {
        s.wait_ready();
        let body = s.get("/metrics").body;
        let (ok, said) = promtool_check(&body);
        assert!(ok, "{name}: promtool check metrics: {said}");
        assert!(body.contains("gpumeter_process_series_dropped"), "{name}");
    }
    drop(servers);
    let s = Served::start(
        &["--demo", "training", "--no-ledger", "--compat", "dcgm"],
        &[],
    );
    s.wait_ready();
    let body = s.get("/metrics").body;
    assert!(body.contains("DCGM_FI_DEV_GPU_UTIL{"));
    let (ok, said) = promtool_check(&body);
    assert!(
        !ok && said.contains("DCGM_FI_DEV"),
        "the DCGM names are not Prometheus-style: {said}"
    );
}

/// `sample_value` for a series whose labels contain `labels`.
fn series_value(text: &str, name: &str, labels: &str) -> Option<f64> {
    text.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")) && l.contains(labels))
        .find_map(|l| l.rsplit_once(' ')?.1.parse().ok())
}

#[test]
fn on_the_real_nvml_path_a_lost_gpu_keeps_its_series_and_a_failing_driver_is_not_ready() {
    use crate::support::fake_nvml::{FULL, library, scenario_file};
    // GPU 1 falls off the bus at 1 s; at 4 s NVML cannot even count the GPUs.
    let scenario = scenario_file(&format!(
        "{FULL}\n[[fault]]\ngpu = 1\nfunction = \"*\"\nerror = \"GPU_IS_LOST\"\nfrom_s = 1\n\
         \n[[fault]]\nfunction = \"nvmlDeviceGetCount_v2\"\nerror = \"UNKNOWN\"\nfrom_s = 4\n"
    ));
    let lib = library().to_str().unwrap().to_string();
    let path = scenario.path.to_str().unwrap().to_string();
    let s = Served::start(
        &["--no-ledger", "--interval", "200ms", "--rate", "12/h"],
        &[
            ("GPUMETER_NVML_LIB", lib.as_str()),
            ("GPUMETER_FAKE_NVML_SCENARIO", path.as_str()),
        ],
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut lost_seen = false;
    loop {
        assert!(
            Instant::now() < deadline,
            "lost_seen {lost_seen}: {}",
            s.get("/metrics").body
        );
        std::thread::sleep(Duration::from_millis(150));
        let m = s.get("/metrics").body;
        if !lost_seen && series_value(&m, "gpumeter_gpu_lost", "gpu=\"1\"") == Some(1.0) {
            assert_eq!(
                series_value(&m, "gpumeter_gpu_lost", "gpu=\"0\""),
                Some(0.0)
            );
            assert!(series_value(&m, "gpumeter_gpu_info", "gpu=\"1\"").is_some());
            assert!(series_value(&m, "gpumeter_gpu_utilization_ratio", "gpu=\"1\"").is_none());
            assert!(series_value(&m, "gpumeter_gpu_utilization_ratio", "gpu=\"0\"").is_some());
            assert_eq!(s.get("/-/ready").status, 200, "the other GPUs go on");
            lost_seen = true;
        }
        if lost_seen && sample_value(&m, "gpumeter_up") == Some(0.0) {
            assert!(sample_value(&m, "gpumeter_sample_errors_total").unwrap() >= 1.0);
            // The last good reading stays exported, lost GPU included.
            assert_eq!(
                series_value(&m, "gpumeter_gpu_lost", "gpu=\"1\""),
                Some(1.0)
            );
            let ready = s.get("/-/ready");
            assert_eq!(ready.status, 503);
            assert!(ready.body.contains("failing"), "{}", ready.body);
            break;
        }
    }
    assert_eq!(s.get("/healthz").status, 200);
}

#[test]
fn without_nvml_serve_exits_3_before_listening() {
    let home = tempfile::tempdir().unwrap();
    let out = command(home.path())
        .args([
            "serve",
            "--no-ledger",
            "--listen",
            "127.0.0.1:0",
            "--nvml-lib",
        ])
        .arg(home.path().join("no-such-libnvidia-ml.so.1"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("serving on"));
}

/// Raises this process's open-file limit to its hard limit (the flood below holds 1 000
/// sockets; a soft limit of 1 024 would leave no room for anything else).
fn raise_open_files() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit write and read only the struct passed.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 {
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
    lim.rlim_cur
}

#[test]
fn a_thousand_silent_sockets_do_not_stall_a_scrape_with_or_without_a_token() {
    if raise_open_files() < 1_200 {
        eprintln!("skipped: the open-file limit is below 1 200");
        return;
    }
    let s = Served::start(
        &["--demo", "idle", "--no-ledger"],
        &[("GPUMETER_SERVE_TOKEN", TOKEN)],
    );
    s.wait_ready();
    // A thousand connections that never say a word: far more than the server's slots.
    let start = Instant::now();
    let silent: Vec<TcpStream> = (0..1_000)
        .map(|_| TcpStream::connect(s.addr).unwrap())
        .collect();
    // A scrape comes through, without a token and with one, before the server's 3 s header
    // timeout could have freed a single slot: the silent sockets were shed to make room (this
    // bound is the protocol's timeout, not a speed target: a scrape takes milliseconds).
    assert_eq!(s.get("/metrics").status, 401);
    let ok = s.get_with("/metrics", &format!("Authorization: Bearer {TOKEN}\r\n"));
    let took = start.elapsed();
    assert_eq!(ok.status, 200);
    assert!(ok.body.contains("gpumeter_up"));
    assert!(
        took < Duration::from_secs(3),
        "the scrapes waited {took:?}: for the silent sockets' header timeout"
    );
    eprintln!("1 000 silent sockets, then two scrapes: {took:?}");
    drop(silent);
}
