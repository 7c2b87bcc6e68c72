//! gpumeter with the real Prometheus tools: the shipped rules checked and unit-tested by
//! promtool, a real Prometheus server scraping a real `gpumeter serve --demo idle` every second
//! (idle spend rising, one series per GPU, the shipped idle rule firing with the money in its
//! text), and every metric the Grafana dashboard queries present in a scrape. Skipped with a
//! reason when prometheus/promtool are missing, unless GPUMETER_REQUIRE_PROMETHEUS is set.

use std::collections::BTreeSet;
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::serve::{Served, prometheus_available, request, terminate};

fn deploy() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy")
}

fn promtool(args: &[&str], dir: &Path) -> String {
    let out = Command::new("promtool")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "promtool {args:?}: {said}");
    said
}

#[test]
fn the_shipped_rules_pass_promtool_check_and_their_unit_tests() {
    if !prometheus_available() {
        return;
    }
    let dir = deploy().join("prometheus");
    let said = promtool(&["check", "rules", "gpumeter-rules.yml"], &dir);
    assert!(said.contains("SUCCESS: 9 rules found"), "{said}");
    promtool(&["test", "rules", "gpumeter-rules.test.yml"], &dir);
    // Every rule has a firing case in the tests.
    let rules = std::fs::read_to_string(dir.join("gpumeter-rules.yml")).unwrap();
    let tests = std::fs::read_to_string(dir.join("gpumeter-rules.test.yml")).unwrap();
    for name in rules
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- alert: "))
    {
        assert!(
            tests.contains(&format!(
                "alertname: {name}\n        exp_alerts:\n          - exp_labels"
            )),
            "{name} has no firing test"
        );
        assert!(
            tests.contains(&format!("alertname: {name}\n        exp_alerts: []")),
            "{name} has no quiet test"
        );
    }
    // Syntax only: the example's token file lives on the Prometheus host, not here.
    let said = promtool(
        &["check", "config", "--syntax-only", "prometheus.yml"],
        &dir,
    );
    assert!(said.contains("SUCCESS"), "{said}");
}

/// A Prometheus server, stopped (and its data removed) on drop.
struct Prometheus {
    child: Option<Child>,
    addr: SocketAddr,
    dir: tempfile::TempDir,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            terminate(&mut c);
        }
    }
}

impl Prometheus {
    fn start(target: SocketAddr) -> Prometheus {
        let dir = tempfile::tempdir().unwrap();
        // The shipped rules, with their `for:` cut to nothing, so the idle rule fires in seconds.
        let rules = std::fs::read_to_string(deploy().join("prometheus/gpumeter-rules.yml"))
            .unwrap()
            .lines()
            .map(|l| {
                if l.trim_start().starts_with("for: ") {
                    "        for: 0s"
                } else {
                    l
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        std::fs::write(dir.path().join("rules.yml"), rules).unwrap();
        let config = format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             rule_files:\n  - rules.yml\n\
             scrape_configs:\n  - job_name: gpumeter\n    static_configs:\n      - targets: ['{target}']\n"
        );
        std::fs::write(dir.path().join("prometheus.yml"), config).unwrap();
        // A free port: bind, read, release (Prometheus binds it a moment later).
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let log = std::fs::File::create(dir.path().join("prometheus.log")).unwrap();
        let child = Command::new("prometheus")
            .current_dir(dir.path())
            .arg("--config.file=prometheus.yml")
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .arg("--log.level=warn")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        Prometheus {
            child: Some(child),
            addr,
            dir,
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("prometheus.log")).unwrap_or_default()
    }

    /// The `data` of an API answer, or None while Prometheus is not up yet.
    fn api(&self, path: &str) -> Option<serde_json::Value> {
        if std::net::TcpStream::connect(self.addr).is_err() {
            return None;
        }
        let r = request(
            self.addr,
            format!("GET {path} HTTP/1.1\r\nHost: p\r\nConnection: close\r\n\r\n").as_bytes(),
        );
        let v: serde_json::Value = serde_json::from_str(&r.body).ok()?;
        (v["status"] == "success").then(|| v["data"].clone())
    }

    fn query(&self, q: &str) -> Vec<serde_json::Value> {
        self.api(&format!("/api/v1/query?query={q}"))
            .and_then(|d| d["result"].as_array().cloned())
            .unwrap_or_default()
    }
}

#[test]
fn a_real_prometheus_scrapes_serve_and_the_idle_rule_fires_with_the_money() {
    if !prometheus_available() {
        return;
    }
    let s = Served::start(
        &["--demo", "idle", "--no-ledger", "--interval", "250ms"],
        &[],
    );
    s.wait_ready();
    let snap: serde_json::Value = serde_json::from_str(&s.get("/api/v1/snapshot").body).unwrap();
    let gpus = snap["gpus"].as_array().unwrap().len();
    let host = snap["system"]["hostname"].as_str().unwrap().to_string();
    let p = Prometheus::start(s.addr);

    let deadline = Instant::now() + Duration::from_secs(60);
    let mut first: Option<f64> = None;
    let mut rising = false;
    let mut per_gpu = false;
    let mut fired: Option<String> = None;
    while Instant::now() < deadline && !(rising && per_gpu && fired.is_some()) {
        std::thread::sleep(Duration::from_millis(500));
        if let Some(v) = p
            .query("gpumeter_idle_spend_total")
            .first()
            .and_then(|r| r["value"][1].as_str()?.parse::<f64>().ok())
        {
            match first {
                None => first = Some(v),
                Some(f) if v > f => rising = true,
                _ => {}
            }
        }
        let series = p.query("gpumeter_gpu_utilization_ratio");
        let distinct: BTreeSet<String> = series
            .iter()
            .filter_map(|r| Some(r["metric"]["gpu"].as_str()?.to_string()))
            .collect();
        per_gpu = series.len() == gpus && distinct.len() == gpus;
        if fired.is_none() {
            fired = p.api("/api/v1/alerts").and_then(|d| {
                d["alerts"].as_array()?.iter().find_map(|a| {
                    (a["labels"]["alertname"] == "GpumeterIdlePaidGpus" && a["state"] == "firing")
                        .then(|| {
                            a["annotations"]["summary"]
                                .as_str()
                                .unwrap_or("")
                                .to_string()
                        })
                })
            });
        }
    }
    assert!(
        rising,
        "idle spend never rose (first {first:?}); prometheus log: {}",
        p.log()
    );
    assert!(
        per_gpu,
        "not one series per GPU ({gpus}); prometheus log: {}",
        p.log()
    );
    let summary = fired.unwrap_or_else(|| panic!("the idle rule never fired: {}", p.log()));
    assert_eq!(
        summary,
        format!("{host}: all {gpus} GPUs idle at 31.00 USD/h")
    );
    // The rules evaluate cleanly on real data.
    let groups = p.api("/api/v1/rules").unwrap();
    for rule in groups["groups"][0]["rules"].as_array().unwrap() {
        assert_eq!(rule["health"], "ok", "{rule}");
    }
    // Prometheus sees what gpumeter serves: no instance/job labels of ours clash with its own.
    let up = p.query("up");
    assert_eq!(up[0]["value"][1], "1");
    drop(p);
    assert!(s.stop().success());
}

/// Metric names in a PromQL expression: identifiers starting with `gpumeter_` or `DCGM_`.
fn metric_names(expr: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut cur = String::new();
    for c in expr.chars().chain([' ']) {
        if c.is_ascii_alphanumeric() || c == '_' || c == ':' {
            cur.push(c);
        } else {
            if cur.starts_with("gpumeter_") || cur.starts_with("DCGM_") {
                names.push(cur.clone());
            }
            cur.clear();
        }
    }
    names
}

/// Every PromQL expression of the dashboard: panel targets and query variables.
fn exprs(dash: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    for p in dash["panels"].as_array().unwrap() {
        for t in p["targets"].as_array().unwrap() {
            out.push(t["expr"].as_str().unwrap().to_string());
        }
    }
    for v in dash["templating"]["list"].as_array().unwrap() {
        if v["type"] == "query" {
            out.push(v["definition"].as_str().unwrap().to_string());
        }
    }
    out
}

#[test]
fn every_metric_the_grafana_dashboard_queries_is_in_a_scrape() {
    let path = deploy().join("grafana/gpumeter-dashboard.json");
    let dash: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let all = exprs(&dash);
    let panels = dash["panels"].as_array().unwrap();
    let targets: usize = panels
        .iter()
        .map(|p| p["targets"].as_array().map_or(0, Vec::len))
        .sum();
    assert!(targets >= panels.len(), "every panel has a query");
    // A day budget (so the forecast exists) and process metrics on: the fullest scrape.
    let s = Served::start(
        &[
            "--demo",
            "idle",
            "--no-ledger",
            "--budget",
            "500/day",
            "--process-metrics",
        ],
        &[],
    );
    s.wait_ready();
    let scrape = s.get("/metrics").body;
    let emitted: BTreeSet<&str> = scrape
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split(['{', ' ']).next())
        .collect();
    let mut checked = 0;
    for e in &all {
        let names = metric_names(e);
        assert!(
            !names.is_empty() || e.starts_with("time()"),
            "{e} queries no gpumeter metric"
        );
        for n in names {
            assert!(
                emitted.contains(n.as_str()),
                "{n} (in `{e}`) is not in a scrape"
            );
            checked += 1;
        }
    }
    assert!(checked >= 20, "{checked}");
}
