//! Where am I, end to end: the binary on a DMI fixture tree of a rented box prices it at its
//! list price with no flag, says so in `snapshot --json`, and steps aside for the user's rate.

use std::path::Path;

use serde_json::Value;

use crate::support::fake_nvml;

/// A `/sys/class/dmi/id` of an AWS p5.48xlarge.
fn p5_tree(dir: &Path) {
    for (name, text) in [
        ("sys_vendor", "Amazon EC2\n"),
        ("product_name", "p5.48xlarge\n"),
        ("board_asset_tag", "i-0123456789abcdef0\n"),
    ] {
        std::fs::write(dir.join(name), text).unwrap();
    }
}

fn snapshot_on(dmi: &Path, home: &Path, extra: &[(&str, &str)]) -> Value {
    let dmi = dmi.to_str().unwrap();
    let home_s = home.to_str().unwrap();
    let config = home.join("config");
    let state = home.join("state");
    let mut env = vec![
        ("GPUMETER_DMI_ROOT", dmi),
        ("HOME", home_s),
        ("XDG_CONFIG_HOME", config.to_str().unwrap()),
        ("XDG_STATE_HOME", state.to_str().unwrap()),
    ];
    env.extend_from_slice(extra);
    fake_nvml::snapshot("training", 5_000, &env)
}

#[test]
fn a_plain_snapshot_on_an_aws_p5_carries_its_list_price_and_says_it_is_one() {
    let (dmi, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    p5_tree(dmi.path());
    let doc = snapshot_on(dmi.path(), home.path(), &[]);
    let b = &doc["billing"];
    assert_eq!(b["rate"], "98.32/h", "{b:#}");
    assert_eq!(b["rate_source"], "list-price");
    assert_eq!(
        b["rate_note"],
        "list price, AWS p5.48xlarge on-demand us-east-1, catalog 2025-05: $98.32/h — set yours with --rate"
    );
    assert_eq!(b["granularity"], "per-second-min-60s");
}

/// A `/sys/block` with two 1000 GB EBS volumes and an instance-store disk.
fn p5_disks(root: &Path) {
    for (dev, model) in [
        ("nvme0n1", "Amazon Elastic Block Store"),
        ("nvme1n1", "Amazon Elastic Block Store"),
        ("nvme2n1", "Amazon EC2 NVMe Instance Storage"),
    ] {
        std::fs::create_dir_all(root.join(dev).join("device")).unwrap();
        std::fs::write(root.join(dev).join("device/model"), format!("{model}\n")).unwrap();
        std::fs::write(root.join(dev).join("size"), format!("{}\n", 1000u64 << 21)).unwrap();
    }
}

#[test]
fn the_attached_ebs_volumes_are_what_bills_while_stopped_unless_the_user_prices_them() {
    let (dmi, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    p5_tree(dmi.path());
    let block = dmi.path().join("block");
    p5_disks(&block);
    let block_s = block.to_str().unwrap();
    let doc = snapshot_on(dmi.path(), home.path(), &[("GPUMETER_BLOCK_ROOT", block_s)]);
    let s = &doc["billing"]["stopped_storage"];
    assert_eq!(
        s["what"], "2 × 1000 GB EBS gp3 at the catalogued $0.08/GB-month",
        "{:#}",
        doc["billing"]
    );
    assert_eq!(s["per_hour_micros"], 219_178);

    // The user's own figure for what bills while stopped wins.
    let dir = home.path().join("config/gpumeter");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.toml"),
        "[pricing]\nextras_per_hour = \"0.40\"\n",
    )
    .unwrap();
    let doc = snapshot_on(dmi.path(), home.path(), &[("GPUMETER_BLOCK_ROOT", block_s)]);
    let b = &doc["billing"];
    assert!(b.get("stopped_storage").is_none(), "{b:#}");
    // …and rides on the list price, as the user's egress and electricity do.
    assert_eq!(b["rate_source"], "list-price");
    assert_eq!(b["burn_per_hour_micros"], 98_720_000, "{b:#}");
}

#[test]
fn a_runpod_pod_is_priced_per_gpu_by_the_model_the_driver_names() {
    let (root, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let gpu = root.path().join("gpus/0000:1a:00.0");
    std::fs::create_dir_all(&gpu).unwrap();
    std::fs::write(
        gpu.join("information"),
        "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 114\n",
    )
    .unwrap();
    let gpus = root.path().join("gpus");
    let doc = snapshot_on(
        &root.path().join("no-dmi"),
        home.path(),
        &[
            ("RUNPOD_POD_ID", "abc123xyz"),
            ("GPUMETER_NVIDIA_GPUS_ROOT", gpus.to_str().unwrap()),
        ],
    );
    let b = &doc["billing"];
    assert_eq!(b["rate"], "2.99/gpu-h", "{b:#}");
    assert_eq!(b["rate_source"], "list-price");
    assert!(
        b["rate_note"]
            .as_str()
            .unwrap()
            .starts_with("list price, RunPod H100 80GB HBM3 on-demand, catalog 2025-05"),
        "{b:#}"
    );
}

#[test]
fn the_users_rate_wins_over_the_list_price() {
    let (dmi, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    p5_tree(dmi.path());
    let dir = home.path().join("config/gpumeter");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), "[pricing]\nrate = \"61.00/h\"\n").unwrap();
    let doc = snapshot_on(dmi.path(), home.path(), &[]);
    let b = &doc["billing"];
    assert_eq!(
        (&b["rate"], &b["rate_source"]),
        (&"61/h".into(), &"yours".into())
    );
    assert_eq!(b["rate_note"], "your rate (config.toml): $61.00/h");
}

#[test]
fn a_box_not_in_the_catalog_or_a_broken_catalog_runs_without_a_rate_and_says_why() {
    let (dmi, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    p5_tree(dmi.path());
    let dir = home.path().join("config/gpumeter");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("prices.toml"), "[[price]]\nprovider = \"aws\"\n").unwrap();
    std::fs::write(
        dir.join("config.toml"),
        format!(
            "[cloud]\ncatalog = \"{}\"\n",
            dir.join("prices.toml").display()
        ),
    )
    .unwrap();
    let home_s = home.path().to_str().unwrap();
    let out = fake_nvml::gpumeter(
        &["snapshot", "--json", "--interval", "100ms"],
        "training",
        5_000,
        &[
            ("GPUMETER_DMI_ROOT", dmi.path().to_str().unwrap()),
            ("HOME", home_s),
            (
                "XDG_CONFIG_HOME",
                home.path().join("config").to_str().unwrap(),
            ),
            (
                "XDG_STATE_HOME",
                home.path().join("state").to_str().unwrap(),
            ),
        ],
    );
    assert!(out.status.success());
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc.get("billing").is_none(), "{:#}", doc["billing"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("prices.toml") && err.contains("no list price used"),
        "{err}"
    );
}

/// A loopback AWS IMDSv2: a token for a PUT, then the facts only with the token; counts the
/// requests it answered.
fn imds(life_cycle: &'static str) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    imds_with_notice(life_cycle, None)
}

/// The same, with `notice` posted at `spot/instance-action` (absent: 404, as before one is).
fn imds_with_notice(
    life_cycle: &'static str,
    notice: Option<&'static str>,
) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = count.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            let mut reader = BufReader::new(conn.try_clone().unwrap());
            let (mut line, mut token) = (String::new(), false);
            reader.read_line(&mut line).unwrap();
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).unwrap() == 0 || h.trim().is_empty() {
                    break;
                }
                token |= h
                    .to_ascii_lowercase()
                    .starts_with("x-aws-ec2-metadata-token: t0k");
            }
            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let path = line.split(' ').nth(1).unwrap_or_default();
            let body = match (line.starts_with("PUT "), token, path) {
                (true, _, "/latest/api/token") => Some("t0k"),
                (false, true, "/latest/meta-data/instance-type") => Some("p5.48xlarge"),
                (false, true, "/latest/meta-data/placement/region") => Some("us-east-1"),
                (false, true, "/latest/meta-data/placement/availability-zone") => {
                    Some("us-east-1b")
                }
                (false, true, "/latest/meta-data/instance-life-cycle") => Some(life_cycle),
                (false, true, "/latest/meta-data/spot/instance-action") => notice,
                _ => None,
            };
            let reply = match body {
                Some(b) => format!(
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{b}",
                    b.len()
                ),
                None => "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                    .into(),
            };
            let _ = conn.write_all(reply.as_bytes());
        }
    });
    (base, count)
}

#[test]
fn with_metadata_allowed_a_plain_snapshot_asks_imdsv2_and_says_a_spot_box_is_priced_on_demand() {
    let (dmi, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    p5_tree(dmi.path());
    let dir = home.path().join("config/gpumeter");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), "[cloud]\nmetadata = true\n").unwrap();
    let (base, asked) = imds("spot");
    let home_s = home.path().to_str().unwrap();
    let out = fake_nvml::gpumeter(
        &["snapshot", "--json", "--interval", "100ms"],
        "training",
        5_000,
        &[
            ("GPUMETER_DMI_ROOT", dmi.path().to_str().unwrap()),
            ("GPUMETER_METADATA_URL", &base),
            ("HOME", home_s),
            (
                "XDG_CONFIG_HOME",
                home.path().join("config").to_str().unwrap(),
            ),
            (
                "XDG_STATE_HOME",
                home.path().join("state").to_str().unwrap(),
            ),
        ],
    );
    assert!(out.status.success());
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["billing"]["rate_source"], "list-price");
    assert_eq!(doc["billing"]["rate"], "98.32/h");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("this is a spot instance: priced at its on-demand list price"),
        "{err}"
    );
    // The token, then one request per fact.
    assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), 5);
}

#[test]
fn without_metadata_allowed_nothing_is_asked() {
    let (dmi, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    p5_tree(dmi.path());
    let (base, asked) = imds("spot");
    let doc = snapshot_on(dmi.path(), home.path(), &[("GPUMETER_METADATA_URL", &base)]);
    assert_eq!(doc["billing"]["rate_source"], "list-price");
    assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), 0);
}

#[test]
fn on_a_spot_box_the_live_meter_watches_the_notice_and_raises_the_alert() {
    let (dmi, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    p5_tree(dmi.path());
    let dir = home.path().join("config/gpumeter");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), "[cloud]\nmetadata = true\n").unwrap();
    // Reclaimed at a fixed time well ahead, so the alert says how long is left.
    let (base, _) = imds_with_notice(
        "spot",
        Some(r#"{"action": "terminate", "time": "2099-01-01T12:04:00Z"}"#),
    );
    let out = fake_nvml::gpumeter(
        &["--no-ledger", "watch", "--for", "3s", "--interval", "200ms"],
        "training",
        5_000,
        &[
            ("GPUMETER_DMI_ROOT", dmi.path().to_str().unwrap()),
            ("GPUMETER_METADATA_URL", &base),
            ("HOME", home.path().to_str().unwrap()),
            (
                "XDG_CONFIG_HOME",
                home.path().join("config").to_str().unwrap(),
            ),
        ],
    );
    let (text, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{text}\n{err}");
    assert!(
        err.contains("spot instance: watching AWS's interruption notice every 5 s"),
        "{err}"
    );
    assert!(
        text.contains("alert fired [high] spot: spot interruption at 12:04Z (in ")
            && text.contains("— checkpoint now; this run has cost $"),
        "{text}\n{err}"
    );
    assert!(text.contains("    action: terminate"), "{text}");
}

#[test]
fn the_dashboard_on_an_aws_p5_shows_its_spend_at_the_list_price_with_no_flag() {
    use crate::support::tmux::{self, Tmux};
    if !tmux::available() {
        return;
    }
    let dmi = tempfile::tempdir().unwrap();
    p5_tree(dmi.path());
    let block = dmi.path().join("block");
    p5_disks(&block);
    let bin = env!("CARGO_BIN_EXE_gpumeter");
    let lib = fake_nvml::library().to_str().unwrap().to_string();
    let t = Tmux::start(
        &format!("exec {bin} --interval 200ms --no-ledger"),
        140,
        45,
        &[
            ("GPUMETER_NVML_LIB", &lib),
            ("GPUMETER_FAKE_NVML_SCENARIO", "training"),
            ("GPUMETER_FAKE_NVML_ELAPSED_MS", "5000"),
            ("GPUMETER_DMI_ROOT", dmi.path().to_str().unwrap()),
            ("GPUMETER_BLOCK_ROOT", block.to_str().unwrap()),
            ("GPUMETER_NVIDIA_GPUS_ROOT", ""),
        ],
    );
    let screen = t.wait_for(
        "the spend at the list price",
        std::time::Duration::from_secs(30),
        |s| s.contains("list price") && s.contains("$98.32/h"),
    );
    assert!(!screen.contains("no pricing"), "{screen}");
    assert!(
        screen.contains("priced as  AWS p5.48xlarge on-demand us-east-1")
            && screen.contains("stopped    $0.22/h of catalogued storage bills on:")
            && screen.contains("           2 × 1000 GB EBS gp3 at $0.08/GB-month"),
        "{screen}"
    );
    t.keys(&["q"]);
    t.wait_dead(std::time::Duration::from_secs(15));
    assert_eq!(t.exit_status(), Some(0));
}

#[test]
fn a_budget_with_no_rate_holds_on_the_list_price_and_is_refused_with_none() {
    let (dmi, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    p5_tree(dmi.path());
    let dir = home.path().join("config/gpumeter");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), "[pricing]\nbudget = \"500/day\"\n").unwrap();
    let doc = snapshot_on(dmi.path(), home.path(), &[]);
    let b = &doc["billing"];
    assert_eq!(b["rate_source"], "list-price", "{b:#}");
    assert_eq!(b["budget"]["amount_micros"], 500_000_000, "{b:#}");
    assert_eq!(b["budget"]["period"], "day");

    // Not a box the catalog knows: nothing to price the budget with.
    std::fs::write(dmi.path().join("product_name"), "m7i.large\n").unwrap();
    let out = fake_nvml::gpumeter(
        &["snapshot", "--json", "--interval", "100ms"],
        "training",
        5_000,
        &[
            ("GPUMETER_DMI_ROOT", dmi.path().to_str().unwrap()),
            ("HOME", home.path().to_str().unwrap()),
            (
                "XDG_CONFIG_HOME",
                home.path().join("config").to_str().unwrap(),
            ),
            (
                "XDG_STATE_HOME",
                home.path().join("state").to_str().unwrap(),
            ),
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("pricing.budget: a budget needs a rate")
            && err.contains("no list price was found for this machine"),
        "{err}"
    );
}
