use super::*;

fn day(text: &str) -> NaiveDate {
    NaiveDate::parse_from_str(text, "%Y-%m-%d").unwrap()
}

fn aws(instance: &str, region: Option<&str>) -> Whereabouts {
    Whereabouts {
        provider: Some(Provider::Aws),
        instance_type: Some(instance.into()),
        region: region.map(String::from),
        ..Default::default()
    }
}

const ONE: &str = r#"
[catalog]
max_age_days = 30

[[price]]
provider = "aws"
instance = "p5.48xlarge"
region = "us-west-2"
on_demand = "99/h"
source = "https://example.com/a"
taken = "2026-11-20"

[[price]]
provider = "aws"
instance = "p5.48xlarge"
region = "us-east-1"
on_demand = "98.32/h"
spot = "40/h"
source = "https://example.com/b"
taken = "2026-11-20"

[[price]]
provider = "runpod"
gpu = "H100 80GB HBM3"
on_demand = "2.99/gpu-h"
source = "https://example.com/c"
taken = "2026-11-20"
"#;

#[test]
fn every_built_in_row_has_a_source_and_a_date_and_parses() {
    let c = Catalog::built_in().unwrap();
    assert!(c.rows.len() > 40, "{} rows", c.rows.len());
    for r in &c.rows {
        assert!(r.source.starts_with("https://"), "{r:?}");
    }
    for (p, t) in [
        (Provider::Aws, "p4d.24xlarge"),
        (Provider::Aws, "p5.48xlarge"),
        (Provider::Aws, "g6e.xlarge"),
        (Provider::Gcp, "a3-highgpu-8g"),
        (Provider::Gcp, "g2-standard-4"),
        (Provider::Azure, "Standard_ND96isr_H100_v5"),
    ] {
        let w = Whereabouts {
            provider: Some(p),
            instance_type: Some(t.into()),
            ..Default::default()
        };
        let found = c.price(&w, None, day("2025-06-01")).unwrap();
        assert!(found.is_some(), "{p} {t}");
    }
}

#[test]
fn the_boxs_region_is_preferred_then_any_region_then_the_gpu_model() {
    let c = Catalog::parse("t", ONE).unwrap();
    let today = day("2026-12-01");
    let f = c.price(&aws("p5.48xlarge", Some("us-east-1")), None, today);
    let f = f.unwrap().unwrap();
    assert_eq!(f.rate.to_string(), "98.32/h");
    assert_eq!(f.priced_as, Lifecycle::OnDemand);
    let f = c.price(&aws("p5.48xlarge", Some("eu-west-1")), None, today);
    assert_eq!(f.unwrap().unwrap().row.region.as_deref(), Some("us-west-2"));
    assert_eq!(c.price(&aws("g5.xlarge", None), None, today), Ok(None));
    let pod = Whereabouts {
        provider: Some(Provider::RunPod),
        ..Default::default()
    };
    let f = c.price(&pod, Some("NVIDIA H100 80GB HBM3"), today);
    assert_eq!(f.unwrap().unwrap().rate.to_string(), "2.99/gpu-h");
    assert_eq!(c.price(&pod, Some("Tesla T4"), today), Ok(None));
    assert_eq!(c.price(&Whereabouts::default(), None, today), Ok(None));
}

#[test]
fn a_spot_box_gets_the_spot_price_where_one_is_listed() {
    let c = Catalog::parse("t", ONE).unwrap();
    let mut w = aws("p5.48xlarge", Some("us-east-1"));
    w.lifecycle = Some(Lifecycle::Spot);
    let f = c.price(&w, None, day("2026-12-01")).unwrap().unwrap();
    assert_eq!(
        (f.rate.to_string(), f.priced_as),
        ("40/h".into(), Lifecycle::Spot)
    );
    w.region = Some("us-west-2".into());
    let f = c.price(&w, None, day("2026-12-01")).unwrap().unwrap();
    assert_eq!(f.priced_as, Lifecycle::OnDemand);
}

#[test]
fn a_stale_row_is_refused_with_its_age() {
    let c = Catalog::parse("t", ONE).unwrap();
    let e = c
        .price(
            &aws("p5.48xlarge", Some("us-east-1")),
            None,
            day("2027-01-20"),
        )
        .unwrap_err();
    assert_eq!(e.age, 61);
    assert!(
        e.to_string()
            .contains("taken 2026-11-20, 61 days ago (older than 30 days)")
    );
}

#[test]
fn malformed_catalogs_say_which_row_and_field() {
    let bad = |text: &str| Catalog::parse("p.toml", text).unwrap_err().to_string();
    let row = |body: &str| format!("[[price]]\n{body}\n");
    assert!(bad("[[price]]\nprovider = \"aws\"\nbogus = 1\n").contains("p.toml:"));
    let e = bad(&row(
        "provider = \"ibm\"\ninstance = \"x\"\non_demand = \"1/h\"\nsource = \"https://a\"\ntaken = \"2026-01-01\"",
    ));
    assert!(e.contains("price 1 (x): unknown provider 'ibm'"), "{e}");
    let e = bad(&row(
        "provider = \"aws\"\ninstance = \"x\"\non_demand = \"1/h\"\ntaken = \"2026-01-01\"",
    ));
    assert!(e.contains("source: every row names"), "{e}");
    let e = bad(&row(
        "provider = \"aws\"\ninstance = \"x\"\non_demand = \"1/h\"\nsource = \"https://a\"",
    ));
    assert!(e.contains("taken: every row says"), "{e}");
    let e = bad(&row(
        "provider = \"aws\"\ninstance = \"x\"\non_demand = \"1/h\"\nsource = \"https://a\"\ntaken = \"Nov 2026\"",
    ));
    assert!(e.contains("'Nov 2026' is not a date"), "{e}");
    let e = bad(&row(
        "provider = \"aws\"\ninstance = \"x\"\non_demand = \"cheap\"\nsource = \"https://a\"\ntaken = \"2026-01-01\"",
    ));
    assert!(e.contains("on_demand:"), "{e}");
    let e = bad(&row(
        "provider = \"aws\"\non_demand = \"1/h\"\nsource = \"https://a\"\ntaken = \"2026-01-01\"",
    ));
    assert!(e.contains("exactly one of instance or gpu"), "{e}");
}

#[test]
fn a_users_rows_come_first_and_keep_the_stricter_age() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mine.toml");
    std::fs::write(
        &path,
        "[[price]]\nprovider = \"aws\"\ninstance = \"p5.48xlarge\"\non_demand = \"50/h\"\nsource = \"https://mine\"\ntaken = \"2026-11-01\"\n",
    )
    .unwrap();
    let c = Catalog::parse("t", ONE).unwrap().with_file(&path).unwrap();
    assert_eq!(c.max_age_days, 30);
    let f = c.price(
        &aws("p5.48xlarge", Some("us-east-1")),
        None,
        day("2026-11-20"),
    );
    assert_eq!(f.unwrap().unwrap().rate.to_string(), "50/h");
    let missing = Catalog::parse("t", ONE)
        .unwrap()
        .with_file(&dir.path().join("nope.toml"));
    assert!(matches!(missing, Err(CatalogError::Read { .. })));
}

const DISKS: &str = r#"
[[storage]]
provider = "aws"
disk = "EBS gp3"
region = "us-east-1"
per_gb_month = "0.08"
source = "https://example.com/ebs"
taken = "2026-11-20"

[[storage]]
provider = "azure"
disk = "Premium SSD P30"
up_to_gb = 1024
per_month = "135.17"
source = "https://example.com/disks"
taken = "2026-11-20"

[[storage]]
provider = "azure"
disk = "Premium SSD P10"
up_to_gb = 128
per_month = "19.71"
source = "https://example.com/disks"
taken = "2026-11-20"
"#;

#[test]
fn storage_is_priced_per_gb_or_at_the_smallest_tier_that_holds_the_disk() {
    let c = Catalog::parse("t", DISKS).unwrap();
    let today = day("2026-12-01");
    let (row, month) = c
        .storage_price(Provider::Aws, Some("us-east-1"), 1000, today)
        .unwrap()
        .unwrap();
    assert_eq!(
        (row.disk.as_str(), month.to_string()),
        ("EBS gp3", "80".into())
    );
    // Any region when the box's has no row of its own.
    assert!(
        c.storage_price(Provider::Aws, Some("eu-west-1"), 1, today)
            .unwrap()
            .is_some()
    );
    let tier = |gb| {
        c.storage_price(Provider::Azure, None, gb, today)
            .unwrap()
            .map(|(r, m)| (r.disk.clone(), m.to_string()))
    };
    assert_eq!(tier(30), Some(("Premium SSD P10".into(), "19.71".into())));
    assert_eq!(tier(129), Some(("Premium SSD P30".into(), "135.17".into())));
    assert_eq!(tier(1025), None);
    assert_eq!(c.storage_price(Provider::Gcp, None, 10, today), Ok(None));
    let stale = c
        .storage_price(Provider::Aws, None, 10, day("2028-01-01"))
        .unwrap_err();
    assert!(
        stale.to_string().contains("EBS gp3 was taken 2026-11-20"),
        "{stale}"
    );
}

#[test]
fn every_built_in_storage_row_has_a_source_and_a_date_and_each_cloud_one() {
    let c = Catalog::built_in().unwrap();
    for r in &c.storage {
        assert!(r.source.starts_with("https://"), "{r:?}");
    }
    let today = day("2025-06-01");
    let (ebs, month) = c
        .storage_price(Provider::Aws, None, 1000, today)
        .unwrap()
        .unwrap();
    assert_eq!(
        (ebs.disk.as_str(), month.to_string()),
        ("EBS gp3", "80".into())
    );
    let (pd, _) = c
        .storage_price(Provider::Gcp, None, 100, today)
        .unwrap()
        .unwrap();
    assert!(pd.disk.contains("pd-balanced"), "{pd:?}");
    let (p30, _) = c
        .storage_price(Provider::Azure, None, 1024, today)
        .unwrap()
        .unwrap();
    assert_eq!(p30.disk, "Premium SSD P30");
}

#[test]
fn malformed_storage_rows_say_which_row_and_field() {
    let bad = |body: &str| {
        Catalog::parse("p.toml", &format!("[[storage]]\n{body}\n"))
            .unwrap_err()
            .to_string()
    };
    let e =
        bad("provider = \"aws\"\ndisk = \"EBS\"\nsource = \"https://a\"\ntaken = \"2026-01-01\"");
    assert!(
        e.contains("storage 1 (EBS): give per_gb_month, or per_month with up_to_gb"),
        "{e}"
    );
    let e =
        bad("provider = \"aws\"\ndisk = \"EBS\"\nper_gb_month = \"0.08\"\ntaken = \"2026-01-01\"");
    assert!(
        e.contains("storage 1 (EBS): source: every row names"),
        "{e}"
    );
    let e = bad(
        "provider = \"aws\"\ndisk = \"EBS\"\nper_gb_month = \"-1\"\nsource = \"https://a\"\ntaken = \"2026-01-01\"",
    );
    assert!(e.contains("per_gb_month:"), "{e}");
    let e = bad(
        "provider = \"aws\"\nper_gb_month = \"1\"\nsource = \"https://a\"\ntaken = \"2026-01-01\"",
    );
    assert!(e.contains("disk: every storage row names"), "{e}");
}

#[test]
fn a_users_file_that_sets_no_age_limit_keeps_the_built_in_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mine.toml");
    std::fs::write(
        &path,
        "[[price]]\nprovider = \"aws\"\ninstance = \"m7i.large\"\non_demand = \"0.1/h\"\nsource = \"https://mine\"\ntaken = \"2026-11-01\"\n",
    )
    .unwrap();
    let base = Catalog::built_in().unwrap();
    let limit = base.max_age_days;
    assert!(limit > DEFAULT_MAX_AGE_DAYS);
    let c = base.with_file(&path).unwrap();
    assert_eq!(c.max_age_days, limit);
    // The built-in p5 row, older than the default 365 days, still prices the box.
    let found = c.price(&aws("p5.48xlarge", None), None, day("2026-12-07"));
    assert_eq!(found.unwrap().unwrap().rate.to_string(), "98.32/h");
}
