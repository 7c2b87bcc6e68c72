//! From where the machine is to a rate the meter can run on: look the machine up (local facts,
//! then the metadata service when allowed) and price it from the catalog. The result is a
//! [`Pricing`] whose source says "list price", or no pricing and a note saying why (unknown
//! machine, no row, a stale or broken catalog): never a guessed rate passed off as the user's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono::NaiveDate;

use super::catalog::{self, Catalog};
use super::{Provider, Whereabouts, local};
use crate::billing::{Granularity, ListPrice, Pricing, RateSource};
use crate::money::Currency;

/// Overrides the DMI directory (tests: a fixture tree; an empty path reads none).
pub const DMI_ROOT_VAR: &str = "GPUMETER_DMI_ROOT";

/// What the launcher hands in: where to read facts, and today's date (the catalog's age).
#[derive(Debug, Clone)]
pub struct Probe {
    /// `None` reads no firmware strings.
    pub dmi_root: Option<PathBuf>,
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
        let dmi_root = match std::env::var_os(DMI_ROOT_VAR) {
            Some(v) if v.is_empty() => None,
            Some(v) => Some(PathBuf::from(v)),
            None => Some(PathBuf::from(local::DMI_ROOT)),
        };
        let env = local::POD_VARS
            .iter()
            .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
            .collect();
        Probe {
            dmi_root,
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
    /// Why there is no list price, or what to know about it (said on stderr and by `check`).
    pub notes: Vec<String>,
}

/// Finds the machine and its list price. `metadata` allows the metadata call (`[cloud]
/// metadata` or `--cloud-metadata`); `catalog_file` is the user's own catalog; `gpu` the first
/// GPU's name when known (GPU clouds price per GPU model).
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
    match catalog.price(&w, gpu, probe.today) {
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
}
