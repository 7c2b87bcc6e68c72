//! Bad scenarios fail with a message naming the file and the line or field.
// Always true in a test crate; it lets clippy.toml's allow-*-in-tests cover helpers, not only #[test] fns.
#![cfg(test)]

use gpumeter_sim::{Scenario, ScenarioError};

const HEAD: &str = "name = \"t\"\ndescription = \"d\"\n";

fn err(body: &str) -> String {
    Scenario::from_toml("bad.toml", &format!("{HEAD}{body}"))
        .unwrap_err()
        .to_string()
}

#[test]
fn unknown_field_names_file_line_and_field() {
    let e = err("[[gpu]]\nname = \"x\"\nutil_gpu = { const = 1 }\n");
    assert!(e.starts_with("bad.toml:5:"), "{e}");
    assert!(
        e.contains("unknown key `util_gpu` in [gpu]; did you mean `util_gpu_pct`?"),
        "{e}"
    );
}

#[test]
fn wrong_type_shows_the_offending_line() {
    let e = err("seed = \"seven\"\n");
    assert!(e.starts_with("bad.toml:3:"), "{e}");
    assert!(e.contains("seed = \"seven\""), "{e}");
}

#[test]
fn unknown_error_name_is_rejected() {
    let e = err(
        "[[gpu]]\nname = \"x\"\n[[fault]]\nfunction = \"nvmlDeviceGetPowerUsage\"\nerror = \"EXPLODED\"\n",
    );
    assert!(e.starts_with("bad.toml:7:"), "{e}");
    assert!(e.contains("unknown NVML error name `EXPLODED`"), "{e}");
}

#[test]
fn negative_period_is_rejected_at_its_line() {
    let e = err(
        "[[gpu]]\nname = \"x\"\npower_watts = { sine = { min = 1, max = 2, period_s = -5 } }\n",
    );
    assert!(e.starts_with("bad.toml:5:"), "{e}");
    assert!(e.contains("period_s must be > 0"), "{e}");
    assert!(e.contains("power_watts"), "{e}");
}

#[test]
fn semantic_errors_name_the_field() {
    let r = Scenario::from_toml(
        "bad.toml",
        &format!("{HEAD}[[gpu]]\nname = \"x\"\n[[process]]\npid = 5\ngpus = [{{ gpu = 3 }}]\n"),
    );
    match r {
        Err(ScenarioError::Invalid { origin, field, .. }) => {
            assert_eq!(origin, "bad.toml");
            assert_eq!(field, "process[0].gpus[0].gpu");
        }
        other => panic!("{other:?}"),
    }
    let e = err(
        "[[gpu]]\nname = \"x\"\n[[process]]\npid = 5\nworkers = { count = 2 }\n[[process]]\npid = 6\n",
    );
    assert!(e.contains("pid 6") && e.contains("used twice"), "{e}");
    let e = err("[[gpu]]\nname = \"x\"\n[[fault]]\nfunction = \"*\"\n");
    assert!(e.contains("fault[0]") && e.contains("latency_ms"), "{e}");
    let e = err("[pricing]\nrate = \"12/week\"\n");
    assert!(e.contains("unknown unit `week`"), "{e}");
}

#[test]
fn zero_affinity_and_non_positive_quota_are_rejected() {
    let e = err("[[process]]\npid = 5\ncpus_allowed = 0\n");
    assert!(e.contains("process[0].cpus_allowed"), "{e}");
    let e = err("[host]\ncpu_quota_cores = 0\n");
    assert!(e.contains("host.cpu_quota_cores"), "{e}");
}

#[test]
fn a_bad_process_state_or_link_speed_is_named_with_its_field() {
    let proc = |state: &str| err(&format!("[[process]]\npid = 7\nstate = {state}\n"));
    let e = proc("\"Q\"");
    assert!(e.contains("process[0].state"), "{e}");
    assert!(e.contains("`Q` is not a process state"), "{e}");
    let e = proc("{ steps = [[10, \"R\"], [5, \"D\"]] }");
    assert!(e.contains("steps must be in increasing time order"), "{e}");
    let e = proc("{ steps = [] }");
    assert!(e.contains("steps must not be empty"), "{e}");
    let e = err("[[process]]\npid = 7\nworkers = { count = 1, state = \"x\" }\n");
    assert!(e.contains("process[0].workers.state"), "{e}");
    let e = err("[[gpu]]\nname = \"x\"\npower_default_watts = 0\n");
    assert!(e.contains("gpu[0].power_default_watts"), "{e}");
    assert!(e.contains("must be > 0, got 0"), "{e}");
    let e = err("[[gpu]]\nname = \"x\"\npower_limit_watts = -5\n");
    assert!(e.contains("gpu[0].power_limit_watts"), "{e}");
    let e = err("[host]\nnic_speed_gbit = 0\n");
    assert!(e.contains("host.nic_speed_gbit"), "{e}");
    assert!(e.contains("must be > 0"), "{e}");
    // A state that steps in order is accepted.
    assert!(
        Scenario::from_toml(
            "ok.toml",
            &format!(
                "{HEAD}[[process]]\npid = 7\nstate = {{ steps = [[0, \"R\"], [60, \"D\"]] }}\n"
            )
        )
        .is_ok()
    );
}

#[test]
fn a_malformed_pod_is_refused_naming_its_field() {
    let pod = |pod: &str| err(&format!("[[process]]\npid = 7\npod = {pod}\n"));
    let e = pod("{ namespace = \"ml\" }");
    assert!(e.contains("process[0].pod"), "{e}");
    assert!(e.contains("needs a name (or a uid"), "{e}");
    let e = pod("{ name = \"Trainer_1\" }");
    assert!(e.contains("process[0].pod.name"), "{e}");
    assert!(
        e.contains("`Trainer_1` is not a Kubernetes pod name"),
        "{e}"
    );
    let e = pod("{ name = \"\" }");
    assert!(e.contains("process[0].pod.name"), "{e}");
    let e = pod("{ name = \"t\", namespace = \"-ml\" }");
    assert!(e.contains("process[0].pod.namespace"), "{e}");
    let e = pod(&format!(
        "{{ name = \"t\", container = \"{}\" }}",
        "c".repeat(64)
    ));
    assert!(e.contains("process[0].pod.container"), "{e}");
    assert!(e.contains("at most 63"), "{e}");
    let e = pod("{ uid = \"pod\\u001b[31m\" }");
    assert!(e.contains("process[0].pod.uid"), "{e}");
    assert!(!e.contains('\u{1b}'), "{e:?}");
    // A misspelt key is named, with its line.
    let e = pod("{ nmae = \"t\" }");
    assert!(e.starts_with("bad.toml:5:"), "{e}");
    assert!(e.contains("nmae"), "{e}");
    // Names a cluster could give are accepted (a pod's name may hold dots).
    assert!(
        Scenario::from_toml(
            "ok.toml",
            &format!(
                "{HEAD}[[process]]\npid = 7\npod = {{ name = \"web.v2-7f9c\", namespace = \"ml\", container = \"main\" }}\n\
                 [[process]]\npid = 8\npod = {{ uid = \"0d9a1c2e-5b7f-4c11-9e2a-6f0b3c8d1a22\" }}\n"
            )
        )
        .is_ok()
    );
}
