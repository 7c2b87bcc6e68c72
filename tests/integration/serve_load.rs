//! A bounded loopback load test of `gpumeter serve`: concurrent clients scraping `/metrics`
//! (both formats) and `/api/v1/snapshot` from a machine with 5 000 GPU processes and process
//! metrics on. Asserts behaviour only — every request answered in full, sampling went on under
//! load — and prints the figures (throughput, RSS before and after, readings taken) for
//! bench/README.md. Size: GPUMETER_SERVE_LOAD_CLIENTS × GPUMETER_SERVE_LOAD_REQUESTS (default
//! 20 × 20 in the test run; the bench figures use 20 × 250 = 5 000).

use std::time::{Duration, Instant};

use crate::support::serve::{Served, request};

const TRAINING: &str = include_str!("../../crates/gpumeter-sim/scenarios/training.toml");
const MANY: &str = "\n[[process]]\npid = 600000\ncount = 5000\ngpu_stride = 0\nname = \"worker\"\n\
                    command = \"python serve_model.py --shard={rank}\"\n\
                    gpus = [{ gpu = 0, memory_gib = { const = 0.01 }, sm_util_pct = { const = 1 } }]\n";

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn last_sample(s: &Served) -> f64 {
    s.get("/metrics")
        .body
        .lines()
        .find_map(|l| l.strip_prefix("gpumeter_last_sample_timestamp_seconds{} "))
        .and_then(|v| v.parse().ok())
        .unwrap()
}

#[test]
fn concurrent_clients_all_get_full_answers_while_sampling_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("many.toml");
    std::fs::write(&scenario, format!("{TRAINING}{MANY}")).unwrap();
    let interval_ms = 500;
    let s = Served::start(
        &[
            "--demo",
            scenario.to_str().unwrap(),
            "--no-ledger",
            "--process-metrics",
            "--interval",
            &format!("{interval_ms}ms"),
        ],
        &[],
    );
    s.wait_ready();
    let snap: serde_json::Value = serde_json::from_str(&s.get("/api/v1/snapshot").body).unwrap();
    let procs = snap["processes"].as_array().unwrap().len();
    assert!(procs >= 5000, "{procs}");
    for _ in 0..20 {
        assert_eq!(s.get("/metrics").status, 200);
    }
    let (clients, per) = (
        env_or("GPUMETER_SERVE_LOAD_CLIENTS", 20),
        env_or("GPUMETER_SERVE_LOAD_REQUESTS", 20),
    );
    let rss_before = rss_kib(s.pid());
    let t0 = last_sample(&s);
    let started = Instant::now();
    let addr = s.addr;
    let workers: Vec<_> = (0..clients)
        .map(|c| {
            std::thread::spawn(move || {
                let mut failed = Vec::new();
                let mut bytes = 0usize;
                for k in 0..per {
                    let (path, accept) = match (c + k) % 10 {
                        0 => ("/api/v1/snapshot", ""),
                        1..=4 => ("/metrics", "Accept: application/openmetrics-text\r\n"),
                        _ => ("/metrics", ""),
                    };
                    let raw = format!(
                        "GET {path} HTTP/1.1\r\nHost: t\r\n{accept}Connection: close\r\n\r\n"
                    );
                    let r = request(addr, raw.as_bytes());
                    let full = r
                        .header("content-length")
                        .and_then(|n| n.parse::<usize>().ok())
                        .is_some_and(|n| n == r.body.len() && n > 0);
                    if r.status != 200 || !full {
                        failed.push(format!("{path}: {} ({} bytes)", r.status, r.body.len()));
                    }
                    bytes += r.body.len();
                }
                (failed, bytes)
            })
        })
        .collect();
    let mut failed = Vec::new();
    let mut bytes = 0;
    for w in workers {
        let (f, b) = w.join().unwrap();
        failed.extend(f);
        bytes += b;
    }
    let elapsed = started.elapsed();
    let t1 = last_sample(&s);
    let rss_after = rss_kib(s.pid());
    let total = clients * per;
    let readings = ((t1 - t0) * 1000.0 / f64::from(interval_ms)).round();
    let expected = (elapsed.as_secs_f64() * 1000.0 / f64::from(interval_ms)).floor();
    println!(
        "serve load: {total} requests from {clients} clients in {:.2} s ({:.0} req/s, {:.1} MB), \
         {procs} processes; RSS {} → {} KiB; {readings} readings at {interval_ms} ms during the \
         load (wall time allows {expected})",
        elapsed.as_secs_f64(),
        total as f64 / elapsed.as_secs_f64().max(1e-9),
        bytes as f64 / 1e6,
        rss_before,
        rss_after,
    );
    assert!(
        failed.is_empty(),
        "{} of {total} failed: {:?}",
        failed.len(),
        &failed[..failed.len().min(5)]
    );
    // Sampling went on under load: a new reading arrived (its pace is for the bench to judge).
    if elapsed > Duration::from_millis(u64::from(interval_ms as u32) * 2) {
        assert!(t1 > t0, "no reading during {elapsed:?} of load");
    }
    assert!(s.stop().success());
}
