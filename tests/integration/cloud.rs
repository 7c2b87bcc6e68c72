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
