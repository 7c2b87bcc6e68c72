//! From where the machine is to a rate the meter can run on: look the machine up (local facts,
//! then the metadata service when allowed) and price it from the catalog. The result is a
//! [`Pricing`] whose source says "list price", or no pricing and a note saying why (unknown
//! machine, no row, a stale or broken catalog): never a guessed rate passed off as the user's.
//! Beside it, the catalogued storage of the attached volumes ([`StoppedStorage`]), said with
//! the sizes and the price it was worked out from.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono::NaiveDate;

use super::catalog::{self, Catalog, StoragePrice};
use super::volumes::{self, Volume};
use super::{Provider, Whereabouts, local};
use crate::billing::{Granularity, ListPrice, Pricing, RateSource, StoppedStorage};
use crate::money::{Currency, Money};

/// Overrides the DMI directory (tests: a fixture tree; an empty path reads none).
pub const DMI_ROOT_VAR: &str = "GPUMETER_DMI_ROOT";
/// Overrides the driver's GPU directory, `/proc/driver/nvidia/gpus` (tests; empty: none).
pub const GPUS_ROOT_VAR: &str = "GPUMETER_NVIDIA_GPUS_ROOT";
/// Overrides the block-device directory, `/sys/block` (tests: a fixture tree; empty: none).
pub const BLOCK_ROOT_VAR: &str = "GPUMETER_BLOCK_ROOT";

/// Hours in the month the clouds turn a monthly storage price into an hourly one by.
const HOURS_PER_MONTH: i128 = 730;

/// What the launcher hands in: where to read facts, and today's date (the catalog's age).
#[derive(Debug, Clone)]
pub struct Probe {
    /// `None` reads no firmware strings.
    pub dmi_root: Option<PathBuf>,
    /// `None` looks for no attached volumes.
    pub block_root: Option<PathBuf>,
    /// `None` reads no GPU model from the driver (GPU clouds price per model).
    pub gpus_root: Option<PathBuf>,
    /// The pod variables that were set (see [`local::POD_VARS`]).
    pub env: BTreeMap<String, String>,
    /// `--cloud-metadata` was given.
    pub metadata_flag: bool,
    /// The metadata services, overridable for tests only.
    pub metadata: super::metadata::Endpoints,
    /// Today's date (UTC), against which catalog rows are judged stale.
    pub today: NaiveDate,
}

impl Probe {
    /// This machine, now.
    pub fn from_process(metadata_flag: bool) -> Probe {
        let root = |var: &str, default: &str| match std::env::var_os(var) {
            Some(v) if v.is_empty() => None,
            Some(v) => Some(PathBuf::from(v)),
            None => Some(PathBuf::from(default)),
        };
        let dmi_root = root(DMI_ROOT_VAR, local::DMI_ROOT);
        let block_root = root(BLOCK_ROOT_VAR, volumes::BLOCK_ROOT);
        let gpus_root = root(GPUS_ROOT_VAR, local::NVIDIA_GPUS_ROOT);
        let env = local::POD_VARS
            .iter()
            .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
            .collect();
        Probe {
            dmi_root,
            block_root,
            gpus_root,
            env,
            metadata_flag,
            metadata: super::metadata::Endpoints::from_process(),
            today: chrono::Utc::now().date_naive(),
        }
    }
}

/// What was found, and the rate, if the catalog gives one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Priced {
    /// What is known about the machine.
    pub whereabouts: Whereabouts,
    /// Whether the metadata service was asked.
    pub asked_metadata: bool,
    /// The list-price pricing (USD, the provider's granularity); `None` when there is no list
    /// price.
    pub pricing: Option<Pricing>,
    /// What the attached volumes cost while the box is stopped, at the catalog's prices.
    pub storage: Option<StoppedStorage>,
    /// Why there is no list price, or what to know about it (said on stderr and by `check`).
    pub notes: Vec<String>,
}

/// Finds the machine and its list price. `metadata` allows the metadata call (`[cloud]
/// metadata` or `--cloud-metadata`); `catalog_file` is the user's own catalog; `gpu` the first
/// GPU's name when known (GPU clouds price per GPU model), else the driver's name for it.
pub fn list_pricing(
    probe: &Probe,
    metadata: bool,
    catalog_file: Option<&Path>,
    gpu: Option<&str>,
) -> Priced {
    let env = |k: &str| probe.env.get(k).cloned();
    let mut w = local::detect(probe.dmi_root.as_deref(), &env);
    let asked = metadata || probe.metadata_flag;
    if asked {
        let told = super::metadata::ask(&probe.metadata, w.provider);
        w = w.or(told);
    }
    let mut out = Priced {
        asked_metadata: asked,
        ..Priced::default()
    };
    let Some(provider) = w.provider else {
        out.whereabouts = w;
        return out;
    };
    let catalog = Catalog::built_in().and_then(|c| match catalog_file {
        Some(p) => c.with_file(p),
        None => Ok(c),
    });
    let catalog = match catalog {
        Ok(c) => c,
        Err(e) => {
            out.notes.push(format!(
                "{e}: no list price used (set your rate with --rate)"
            ));
            out.whereabouts = w;
            return out;
        }
    };
    let attached = probe
        .block_root
        .as_deref()
        .map(volumes::scan)
        .unwrap_or_default();
    match stopped_storage(&attached, &catalog, &w, probe.today) {
        Ok(s) => out.storage = s,
        Err(note) => out.notes.push(note),
    }
    let gpu = gpu.map(String::from).or_else(|| {
        probe
            .gpus_root
            .as_deref()
            .filter(|_| w.instance_type.is_none())
            .and_then(local::gpu_model)
    });
    match catalog.price(&w, gpu.as_deref(), probe.today) {
        Ok(Some(found)) => {
            let mut p = Pricing::simple(found.rate);
            p.granularity = granularity(provider);
            p.currency = Currency::USD;
            let region = found.row.region.clone().or(w.region.clone());
            let what = [
                Some(provider.name().to_string()),
                found.row.instance.clone().or(found.row.gpu.clone()),
                Some(found.priced_as.name().to_string()),
                region,
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ");
            p.source = RateSource::ListPrice(ListPrice {
                what,
                catalog: found.row.taken.format("%Y-%m").to_string(),
                url: found.row.source.clone(),
            });
            if w.lifecycle == Some(super::Lifecycle::Spot)
                && found.priced_as != super::Lifecycle::Spot
            {
                out.notes.push(
                    "this is a spot instance: priced at its on-demand list price (spot prices \
                     move; set yours with --rate)"
                        .into(),
                );
            }
            out.pricing = Some(p);
        }
        Ok(None) => out.notes.push(format!(
            "{}: not in the price catalog, so no list price (set your rate with --rate)",
            w.describe()
        )),
        Err(stale) => out.notes.push(format!(
            "{stale} (set your rate with --rate, or refresh the catalog: [cloud] catalog)"
        )),
    }
    out.whereabouts = w;
    out
}

/// What `attached` costs per hour while the box is stopped, at the catalog's storage prices:
/// only the volumes of the provider the box was found on (a Hyper-V "Virtual Disk" off Azure is
/// no managed disk), only when the catalog prices every one of them (a part would understate
/// it). `Err`: a note saying why there is no figure where the catalog had one but stale.
pub fn stopped_storage(
    attached: &[Volume],
    catalog: &Catalog,
    w: &Whereabouts,
    today: NaiveDate,
) -> Result<Option<StoppedStorage>, String> {
    let ours: Vec<&Volume> = attached
        .iter()
        .filter(|v| Some(v.provider) == w.provider)
        .collect();
    if ours.is_empty() {
        return Ok(None);
    }
    // (what it is priced as, its size, the price as written) → how many, in the order found.
    let mut groups: Vec<(String, u64, String, u32)> = Vec::new();
    let mut monthly = Money::ZERO;
    for v in ours {
        let found = catalog
            .storage_price(v.provider, w.region.as_deref(), v.gb(), today)
            .map_err(|stale| {
                format!("{stale}, so no storage figure for the stop advice ([pricing] extras_per_hour sets one)")
            })?;
        let Some((row, per_month)) = found else {
            return Ok(None);
        };
        monthly = monthly.saturating_add(per_month);
        let price = match row.price {
            StoragePrice::PerGbMonth(m) => format!("{}/GB-month", Currency::USD.format(m)),
            StoragePrice::PerDiskMonth { amount, .. } => {
                format!("{}/month", Currency::USD.format(amount))
            }
        };
        let gb = v.gb();
        match groups
            .iter_mut()
            .find(|(d, g, p, _)| *d == row.disk && *g == gb && *p == price)
        {
            Some(group) => group.3 += 1,
            None => groups.push((row.disk.clone(), gb, price, 1)),
        }
    }
    let what = groups
        .iter()
        .map(|(disk, gb, price, n)| format!("{n} × {gb} GB {disk} at the catalogued {price}"))
        .collect::<Vec<_>>()
        .join(" + ");
    let lines = groups
        .iter()
        .map(|(disk, gb, price, n)| format!("{n} × {gb} GB {disk} at {price}"))
        .collect();
    Ok(Some(StoppedStorage {
        per_hour: monthly.mul_div(1, HOURS_PER_MONTH),
        what,
        lines,
    }))
}

/// How each provider rounds billed time (their published terms).
fn granularity(p: Provider) -> Granularity {
    match p {
        Provider::Aws | Provider::Gcp => Granularity::PerSecondMin60,
        Provider::Azure | Provider::RunPod | Provider::VastAi => Granularity::PerSecond,
    }
}

/// The catalog's default age limit, re-exported for the docs.
pub const DEFAULT_MAX_AGE_DAYS: u32 = catalog::DEFAULT_MAX_AGE_DAYS;

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(dmi: &[(&str, &str)]) -> (tempfile::TempDir, Probe) {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in dmi {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let p = Probe {
            dmi_root: Some(dir.path().to_path_buf()),
            block_root: None,
            gpus_root: None,
            env: BTreeMap::new(),
            metadata_flag: false,
            metadata: super::super::metadata::Endpoints::none(),
            today: NaiveDate::from_ymd_opt(2026, 1, 1).unwrap(),
        };
        (dir, p)
    }

    #[test]
    fn an_aws_p5_is_priced_at_its_list_price_and_says_so() {
        let (_d, p) = probe(&[
            ("sys_vendor", "Amazon EC2"),
            ("product_name", "p5.48xlarge"),
        ]);
        let got = list_pricing(&p, false, None, None);
        let pricing = got.pricing.unwrap();
        assert_eq!(pricing.rate.to_string(), "98.32/h");
        assert_eq!(pricing.granularity, Granularity::PerSecondMin60);
        assert_eq!(
            pricing.source.describe(),
            "list price, AWS p5.48xlarge on-demand us-east-1, catalog 2025-05"
        );
        assert!(!got.asked_metadata);
        assert!(got.notes.is_empty(), "{:?}", got.notes);
    }

    #[test]
    fn an_unknown_machine_has_no_price_and_no_note() {
        let (_d, p) = probe(&[("sys_vendor", "Dell Inc.")]);
        let got = list_pricing(&p, false, None, None);
        assert_eq!((got.pricing, got.notes.len()), (None, 0));
    }

    #[test]
    fn a_stale_or_broken_catalog_or_a_missing_row_leaves_the_meter_off_and_says_why() {
        let (_d, mut p) = probe(&[
            ("sys_vendor", "Amazon EC2"),
            ("product_name", "p5.48xlarge"),
        ]);
        p.today = NaiveDate::from_ymd_opt(2030, 1, 1).unwrap();
        let got = list_pricing(&p, false, None, None);
        assert!(got.pricing.is_none());
        assert!(got.notes[0].contains("days ago"), "{:?}", got.notes);

        let (d, p) = probe(&[
            ("sys_vendor", "Amazon EC2"),
            ("product_name", "p5.48xlarge"),
        ]);
        let bad = d.path().join("prices.toml");
        std::fs::write(&bad, "[[price]]\nprovider = 3\n").unwrap();
        let got = list_pricing(&p, false, Some(&bad), None);
        assert!(got.pricing.is_none());
        assert!(got.notes[0].contains("prices.toml"), "{:?}", got.notes);

        let (_d, p) = probe(&[("sys_vendor", "Amazon EC2"), ("product_name", "m7i.large")]);
        let got = list_pricing(&p, false, None, None);
        assert!(got.pricing.is_none());
        assert!(got.notes[0].contains("AWS m7i.large: not in the price catalog"));
    }

    /// A `/sys/block` of `(device, model, GiB)`.
    fn disks(root: &Path, list: &[(&str, &str, u64)]) {
        for (dev, model, gib) in list {
            let dir = root.join(dev).join("device");
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("model"), format!("{model}\n")).unwrap();
            std::fs::write(root.join(dev).join("size"), format!("{}\n", gib << 21)).unwrap();
        }
    }

    #[test]
    fn the_attached_ebs_volumes_are_priced_at_the_catalogued_storage_price() {
        let (d, mut p) = probe(&[
            ("sys_vendor", "Amazon EC2"),
            ("product_name", "p5.48xlarge"),
        ]);
        let block = d.path().join("block");
        disks(
            &block,
            &[
                ("nvme0n1", "Amazon Elastic Block Store", 1000),
                ("nvme1n1", "Amazon Elastic Block Store", 1000),
                ("nvme2n1", "Amazon EC2 NVMe Instance Storage", 3800),
            ],
        );
        p.block_root = Some(block);
        let got = list_pricing(&p, false, None, None);
        let s = got.storage.unwrap();
        assert_eq!(
            s.what,
            "2 × 1000 GB EBS gp3 at the catalogued $0.08/GB-month"
        );
        assert_eq!(
            s.lines,
            vec!["2 × 1000 GB EBS gp3 at $0.08/GB-month".to_string()]
        );
        // $160 a month over 730 hours.
        assert_eq!(s.per_hour, Money::from_micros(219_178));
        assert!(got.notes.is_empty(), "{:?}", got.notes);
    }

    #[test]
    fn a_hyperv_disk_off_azure_or_a_stale_storage_row_gives_no_figure() {
        let (d, mut p) = probe(&[
            ("sys_vendor", "Amazon EC2"),
            ("product_name", "p5.48xlarge"),
        ]);
        let block = d.path().join("block");
        disks(&block, &[("sda", "Virtual Disk", 100)]);
        p.block_root = Some(block.clone());
        assert_eq!(list_pricing(&p, false, None, None).storage, None);

        disks(&block, &[("nvme0n1", "Amazon Elastic Block Store", 100)]);
        let mine = d.path().join("prices.toml");
        std::fs::write(
            &mine,
            "[[storage]]\nprovider = \"aws\"\ndisk = \"EBS io2\"\nper_gb_month = \"0.125\"\nsource = \"https://x\"\ntaken = \"2020-01-01\"\n",
        )
        .unwrap();
        let got = list_pricing(&p, false, Some(&mine), None);
        assert_eq!(got.storage, None);
        assert!(
            got.notes
                .iter()
                .any(|n| n.contains("EBS io2 was taken 2020-01-01")
                    && n.contains("no storage figure")),
            "{:?}",
            got.notes
        );
    }
}
