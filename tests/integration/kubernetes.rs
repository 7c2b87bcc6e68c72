//! deploy/kubernetes/: the manifests against the Kubernetes schemas (`kubernetes-validate`,
//! strict; the Prometheus Operator's CRDs and the Kustomization have no schema there and are
//! skipped by it with a warning), the PrometheusRule generated from the shipped rules (one
//! source: deploy/prometheus/gpumeter-rules.yml, which promtool checks), and the DaemonSet's
//! command line accepted by `serve`.
//!
//! Validator: `kubernetes_validate` importable by `GPUMETER_PYTHON` (CI's venv) or `python3`;
//! otherwise that test is skipped, unless `GPUMETER_REQUIRE_KUBEVALIDATE` is set.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn manifests() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join("deploy/kubernetes"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
}

/// What scripts/gen-prometheusrule.sh writes: its header, then the rules file's top-level
/// comments dropped and every other non-empty line indented under `spec:`.
fn generated_rule() -> String {
    let script = std::fs::read_to_string(repo().join("scripts/gen-prometheusrule.sh")).unwrap();
    let head = script
        .split_once("<<'HEAD'\n")
        .and_then(|(_, rest)| rest.split_once("HEAD\n"))
        .unwrap()
        .0;
    let rules =
        std::fs::read_to_string(repo().join("deploy/prometheus/gpumeter-rules.yml")).unwrap();
    let mut out = head.to_string();
    for line in rules.lines().filter(|l| !l.starts_with('#')) {
        if !line.is_empty() {
            out.push_str("  ");
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[test]
fn the_prometheus_rule_carries_the_shipped_rules_unchanged() {
    let shipped =
        std::fs::read_to_string(repo().join("deploy/kubernetes/prometheusrule.yaml")).unwrap();
    assert!(
        shipped == generated_rule(),
        "deploy/kubernetes/prometheusrule.yaml is not deploy/prometheus/gpumeter-rules.yml: run \
         scripts/gen-prometheusrule.sh"
    );
}

/// The Python with `kubernetes_validate`, or `None` to skip.
fn validator() -> Option<PathBuf> {
    let required = std::env::var_os("GPUMETER_REQUIRE_KUBEVALIDATE").is_some();
    let python = std::env::var_os("GPUMETER_PYTHON")
        .map_or_else(|| PathBuf::from("python3"), |p| repo().join(p));
    let found = Command::new(&python)
        .args(["-c", "import kubernetes_validate"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            !required,
            "{} cannot import kubernetes_validate (GPUMETER_REQUIRE_KUBEVALIDATE is set)",
            python.display()
        );
        eprintln!(
            "skipping: no kubernetes_validate (pip install kubernetes-validate, or set GPUMETER_PYTHON)"
        );
        return None;
    }
    Some(python)
}

#[test]
fn the_manifests_validate_against_the_kubernetes_schemas() {
    let Some(python) = validator() else {
        return;
    };
    let out = Command::new(&python)
        .args(["-m", "kubernetes_validate", "--strict", "--quiet"])
        .args(manifests())
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{said}");
    // The validator checked the built-in kinds (it skips only what it has no schema for).
    for kind in ["DaemonSet", "Service", "ConfigMap"] {
        let checked = manifests().iter().any(|p| {
            std::fs::read_to_string(p)
                .unwrap()
                .contains(&format!("kind: {kind}\n"))
        });
        assert!(checked, "no {kind} among the manifests");
    }
    for line in said.lines().filter(|l| l.contains("Couldn't find schema")) {
        assert!(
            ["Kustomization", "PrometheusRule", "ServiceMonitor"]
                .iter()
                .any(|k| line.contains(&format!("kind {k} "))),
            "an unvalidated manifest: {line}"
        );
    }
}

/// The DaemonSet's `args:` list.
fn daemonset_args() -> Vec<String> {
    let text = std::fs::read_to_string(repo().join("deploy/kubernetes/daemonset.yaml")).unwrap();
    let (_, rest) = text.split_once("          args:\n").unwrap();
    rest.lines()
        .map_while(|l| l.strip_prefix("            - "))
        .map(str::to_string)
        .collect()
}

#[test]
fn the_daemonsets_command_line_is_one_serve_accepts() {
    let args = daemonset_args();
    assert_eq!(args.first().map(String::as_str), Some("serve"));
    assert!(args.iter().any(|a| a == "--kubernetes=on"), "{args:?}");
    // Parsed (not run): `serve --help` after the same flags exits 0 only if each is known.
    let out = Command::new(env!("CARGO_BIN_EXE_gpumeter"))
        .args(&args)
        .arg("--help")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
