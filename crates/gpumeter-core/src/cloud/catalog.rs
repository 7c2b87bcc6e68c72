//! The price catalog: list prices per hour of the GPU machines people rent, and per month of
//! the storage attached to them (`[[storage]]`: what bills while the box is stopped), as data
//! (`config/prices.toml`, built in; a user's own file layered before it). Parsed strictly: an
//! unknown key, provider or rate, a row without its source or date, is an error naming the
//! file, row and field. A row older than the catalog's `max_age_days` is stale and not used.

use std::path::Path;

use chrono::NaiveDate;
use serde::Deserialize;

use super::{Lifecycle, Provider, Whereabouts};
use crate::billing::Rate;
use crate::money::Money;

/// The built-in catalog.
pub const BUILT_IN: &str = include_str!("../../../../config/prices.toml");
/// How the built-in catalog is named in messages.
pub const BUILT_IN_NAME: &str = "<built-in price catalog>";

/// Why a catalog could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CatalogError {
    /// The catalog is not valid TOML for a catalog (an unknown key, a value of the wrong type).
    #[error("{name}: {message}")]
    Invalid {
        /// The catalog's name, with the line when the TOML error gives one (`prices.toml:12`).
        name: String,
        /// The TOML parser's message.
        message: String,
    },
    /// One `[[price]]` or `[[storage]]` row is unusable (unknown provider, bad rate, no source
    /// or date).
    #[error("{name}: {table} {row} ({what}): {message}")]
    Row {
        /// How the catalog is named: its file path or `<built-in price catalog>`.
        name: String,
        /// `price` or `storage`: the table the row is in.
        table: &'static str,
        /// 1-based row number within that table.
        row: usize,
        /// The row's instance type, GPU model or volume type, so the user can find it.
        what: String,
        /// What is wrong with the row.
        message: String,
    },
    /// The user's catalog file could not be read.
    #[error("cannot read the price catalog {path}: {message}")]
    Read {
        /// The file, as given in `[cloud] catalog`.
        path: String,
        /// The I/O error.
        message: String,
    },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCatalog {
    catalog: Option<RawHeader>,
    #[serde(default)]
    price: Vec<RawRow>,
    #[serde(default)]
    storage: Vec<RawStorage>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStorage {
    provider: String,
    disk: Option<String>,
    region: Option<String>,
    per_gb_month: Option<String>,
    per_month: Option<String>,
    up_to_gb: Option<u64>,
    source: Option<String>,
    taken: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHeader {
    max_age_days: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRow {
    provider: String,
    instance: Option<String>,
    gpu: Option<String>,
    region: Option<String>,
    on_demand: String,
    spot: Option<String>,
    source: Option<String>,
    taken: Option<String>,
}

/// One list price.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// Whose list price it is (the row's `provider`).
    pub provider: Provider,
    /// The instance type it prices (clouds), or…
    pub instance: Option<String>,
    /// …the GPU model it prices per GPU (GPU clouds).
    pub gpu: Option<String>,
    /// The region the price is for (`us-east-1`); `None` prices every region.
    pub region: Option<String>,
    /// The on-demand list rate (hourly or per GPU-hour).
    pub on_demand: Rate,
    /// The spot list rate, when the catalog keeps one.
    pub spot: Option<Rate>,
    /// The `https://` page the price was taken from.
    pub source: String,
    /// The date the price was taken (`taken`); rows older than `max_age_days` are stale.
    pub taken: NaiveDate,
}

/// How a storage row is priced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoragePrice {
    /// Per GB (GiB) per month, whatever the size (AWS EBS, GCP persistent disk).
    PerGbMonth(Money),
    /// Per disk per month, for disks up to `up_to_gb` (Azure's managed-disk tiers).
    PerDiskMonth {
        /// The largest disk (GB) this tier covers.
        up_to_gb: u64,
        /// What one such disk costs a month.
        amount: Money,
    },
}

/// One storage list price: what a provider's network volume costs per month.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageRow {
    /// The cloud whose volumes the row prices.
    pub provider: Provider,
    /// How the volume is named, with the type it is priced as (`EBS gp3`).
    pub disk: String,
    /// The region the price was read for (`us-east-1`); `None`: not said.
    pub region: Option<String>,
    /// What the volume costs a month.
    pub price: StoragePrice,
    /// Where the price was read (a URL).
    pub source: String,
    /// When it was read: rows older than the catalog's `max_age_days` are not used.
    pub taken: NaiveDate,
}

/// Rows, first match wins (a user's rows come before the built-in ones).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Catalog {
    /// The rows in match order: a user's file first, then the built-in ones.
    pub rows: Vec<Row>,
    /// The `[[storage]]` rows ($/GB-month of volumes that bill while stopped), in match order.
    pub storage: Vec<StorageRow>,
    /// Rows older than this many days are not used.
    pub max_age_days: u32,
    /// Whether the file said `max_age_days` (else the default stands in, and does not
    /// tighten the built-in catalog's limit when a user's file is layered on it).
    max_age_said: bool,
}

/// The default for `max_age_days` when a catalog does not say.
pub const DEFAULT_MAX_AGE_DAYS: u32 = 365;

/// A price found for this machine, with what it was found for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The catalog row that matched.
    pub row: Row,
    /// The rate used: the row's spot rate for a spot box when it has one, else on-demand.
    pub rate: Rate,
    /// The lifecycle the rate is for (on-demand unless a spot price was listed for a spot box).
    pub priced_as: Lifecycle,
}

/// Why no price was used for a machine the catalog has a row for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the catalog's price for {what} was taken {taken}, {age} days ago (older than {max} days): not used"
)]
pub struct Stale {
    /// The row's instance type or GPU model.
    pub what: String,
    /// The date the row's price was taken.
    pub taken: NaiveDate,
    /// How many days before today that was.
    pub age: i64,
    /// The catalog's `max_age_days` it exceeded.
    pub max: u32,
}

impl Catalog {
    /// The built-in catalog.
    pub fn built_in() -> Result<Catalog, CatalogError> {
        Catalog::parse(BUILT_IN_NAME, BUILT_IN)
    }

    /// A user's file, its rows before `base`'s (the stricter age limit of the two holds; a
    /// file that sets none keeps `base`'s).
    pub fn with_file(self, path: &Path) -> Result<Catalog, CatalogError> {
        let text =
            crate::textfile::read_text(path, crate::textfile::MAX_TEXT_FILE).map_err(|e| {
                CatalogError::Read {
                    path: path.display().to_string(),
                    message: e.to_string(),
                }
            })?;
        let mut mine = Catalog::parse(&path.display().to_string(), &text)?;
        mine.max_age_days = if mine.max_age_said {
            mine.max_age_days.min(self.max_age_days)
        } else {
            self.max_age_days
        };
        mine.max_age_said |= self.max_age_said;
        mine.rows.extend(self.rows);
        mine.storage.extend(self.storage);
        Ok(mine)
    }

    /// Parses a catalog; `name` is how errors refer to it.
    pub fn parse(name: &str, text: &str) -> Result<Catalog, CatalogError> {
        let raw: RawCatalog = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].lines().count().max(1));
            CatalogError::Invalid {
                name: line.map_or(name.to_string(), |l| format!("{name}:{l}")),
                message: e.message().trim().to_string(),
            }
        })?;
        let max_age = raw.catalog.as_ref().and_then(|c| c.max_age_days);
        let rows = raw
            .price
            .into_iter()
            .enumerate()
            .map(|(i, r)| row(name, i + 1, r))
            .collect::<Result<Vec<_>, _>>()?;
        let storage = raw
            .storage
            .into_iter()
            .enumerate()
            .map(|(i, r)| storage_row(name, i + 1, r))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Catalog {
            rows,
            storage,
            max_age_days: max_age.unwrap_or(DEFAULT_MAX_AGE_DAYS),
            max_age_said: max_age.is_some(),
        })
    }

    /// The price for this machine on `today`: its instance type in its region, else in any
    /// region; for a GPU cloud, its GPU model (`gpu`, as NVML names it). `Ok(None)` when the
    /// catalog has no row; `Err` when the row is stale.
    pub fn price(
        &self,
        w: &Whereabouts,
        gpu: Option<&str>,
        today: NaiveDate,
    ) -> Result<Option<Found>, Stale> {
        let Some(provider) = w.provider else {
            return Ok(None);
        };
        let ours = |r: &&Row| r.provider == provider;
        let by_type = |r: &&Row| {
            w.instance_type.is_some() && r.instance.as_deref() == w.instance_type.as_deref()
        };
        let by_gpu = |r: &&Row| {
            let want = gpu.map(normal_gpu);
            want.is_some() && r.gpu.as_deref().map(normal_gpu) == want
        };
        let same_region =
            |r: &&Row| w.region.is_none() || r.region.is_none() || r.region == w.region;
        let rows = || self.rows.iter().filter(ours);
        let row = rows()
            .filter(by_type)
            .find(same_region)
            .or_else(|| rows().find(by_type))
            .or_else(|| rows().find(by_gpu));
        let Some(row) = row else {
            return Ok(None);
        };
        let age = (today - row.taken).num_days();
        if age > i64::from(self.max_age_days) {
            return Err(Stale {
                what: row.instance.clone().or(row.gpu.clone()).unwrap_or_default(),
                taken: row.taken,
                age,
                max: self.max_age_days,
            });
        }
        let (rate, priced_as) = match (w.lifecycle, row.spot) {
            (Some(Lifecycle::Spot), Some(spot)) => (spot, Lifecycle::Spot),
            _ => (row.on_demand, Lifecycle::OnDemand),
        };
        Ok(Some(Found {
            row: row.clone(),
            rate,
            priced_as,
        }))
    }
}

impl Catalog {
    /// The storage price of one `gb`-GB volume of `provider` on `today`: the row for the
    /// box's region (else any region), per GB, or the smallest tier that holds it. With the row,
    /// what that volume costs per month. `Ok(None)` when no row prices it; `Err` when it is stale.
    pub fn storage_price(
        &self,
        provider: Provider,
        region: Option<&str>,
        gb: u64,
        today: NaiveDate,
    ) -> Result<Option<(&StorageRow, Money)>, Stale> {
        let fits = |r: &&StorageRow| match r.price {
            StoragePrice::PerGbMonth(_) => true,
            StoragePrice::PerDiskMonth { up_to_gb, .. } => gb <= up_to_gb,
        };
        // A per-GB row prices any size; of tiers, the smallest that holds the volume (the
        // first such, so a user's tier wins over the built-in one of the same size).
        fn smallest(rows: Vec<&StorageRow>) -> Option<&StorageRow> {
            match rows.first() {
                Some(r) if matches!(r.price, StoragePrice::PerGbMonth(_)) => Some(*r),
                _ => rows.into_iter().min_by_key(|r| match r.price {
                    StoragePrice::PerGbMonth(_) => 0,
                    StoragePrice::PerDiskMonth { up_to_gb, .. } => up_to_gb,
                }),
            }
        }
        let ours = || {
            self.storage
                .iter()
                .filter(|r| r.provider == provider)
                .filter(fits)
        };
        let same_region = |r: &&StorageRow| {
            region.is_none() || r.region.is_none() || r.region.as_deref() == region
        };
        let row =
            smallest(ours().filter(same_region).collect()).or_else(|| smallest(ours().collect()));
        let Some(row) = row else {
            return Ok(None);
        };
        let age = (today - row.taken).num_days();
        if age > i64::from(self.max_age_days) {
            return Err(Stale {
                what: row.disk.clone(),
                taken: row.taken,
                age,
                max: self.max_age_days,
            });
        }
        let monthly = match row.price {
            StoragePrice::PerGbMonth(per_gb) => per_gb.mul_div(i128::from(gb), 1),
            StoragePrice::PerDiskMonth { amount, .. } => amount,
        };
        Ok(Some((row, monthly)))
    }
}

/// `NVIDIA H100 80GB HBM3` and `h100 80gb hbm3` match.
fn normal_gpu(name: &str) -> String {
    let lower = name.trim().to_ascii_lowercase();
    lower
        .strip_prefix("nvidia ")
        .unwrap_or(&lower)
        .trim()
        .to_string()
}

fn row(name: &str, n: usize, r: RawRow) -> Result<Row, CatalogError> {
    let what = r
        .instance
        .clone()
        .or(r.gpu.clone())
        .unwrap_or_else(|| "no instance or gpu".into());
    let err = |message: String| CatalogError::Row {
        name: name.to_string(),
        table: "price",
        row: n,
        what: what.clone(),
        message,
    };
    let provider = provider_of(&r.provider).map_err(err)?;
    if r.instance.is_some() == r.gpu.is_some() {
        return Err(err("give exactly one of instance or gpu".into()));
    }
    let rate = |field: &str, text: &str| {
        Rate::parse(text)
            .map_err(|e| err(format!("{field}: {e}")))
            .and_then(|rate| {
                if rate.unit.monthly() {
                    Err(err(format!("{field}: an hourly rate such as 2.99/h")))
                } else {
                    Ok(rate)
                }
            })
    };
    let on_demand = rate("on_demand", &r.on_demand)?;
    let spot = r.spot.as_deref().map(|s| rate("spot", s)).transpose()?;
    let (source, taken) = provenance(r.source, r.taken.as_deref()).map_err(err)?;
    Ok(Row {
        provider,
        instance: r.instance,
        gpu: r.gpu,
        region: r.region,
        on_demand,
        spot,
        source,
        taken,
    })
}

/// A row's `source` and `taken`, which every row must give.
fn provenance(source: Option<String>, taken: Option<&str>) -> Result<(String, NaiveDate), String> {
    let source = source
        .filter(|s| s.starts_with("https://"))
        .ok_or("source: every row names the https:// page its price is from")?;
    let taken = taken
        .ok_or("taken: every row says the date its price was taken".to_string())
        .and_then(|t| {
            NaiveDate::parse_from_str(t.trim(), "%Y-%m-%d")
                .map_err(|_| format!("taken: '{t}' is not a date such as 2026-11-20"))
        })?;
    Ok((source, taken))
}

/// A row's provider by its key, or the message naming the known ones.
fn provider_of(key: &str) -> Result<Provider, String> {
    Provider::from_key(key.trim()).ok_or_else(|| {
        let known: Vec<_> = Provider::ALL.iter().map(|p| p.key()).collect();
        format!("unknown provider '{key}' (use {})", known.join(", "))
    })
}

fn storage_row(name: &str, n: usize, r: RawStorage) -> Result<StorageRow, CatalogError> {
    let disk = r.disk.clone().unwrap_or_else(|| "no disk".into());
    let err = |message: String| CatalogError::Row {
        name: name.to_string(),
        table: "storage",
        row: n,
        what: disk.clone(),
        message,
    };
    let provider = provider_of(&r.provider).map_err(err)?;
    if r.disk.is_none() {
        return Err(err(
            "disk: every storage row names the disk it prices".into()
        ));
    }
    let amount = |field: &str, text: &str| {
        Money::parse(text.trim())
            .map_err(|e| err(format!("{field}: {e}")))
            .and_then(|m| {
                if m.is_negative() {
                    Err(err(format!("{field}: must not be negative")))
                } else {
                    Ok(m)
                }
            })
    };
    let price = match (&r.per_gb_month, &r.per_month, r.up_to_gb) {
        (Some(per_gb), None, None) => StoragePrice::PerGbMonth(amount("per_gb_month", per_gb)?),
        (None, Some(per_disk), Some(up_to_gb)) if up_to_gb > 0 => StoragePrice::PerDiskMonth {
            up_to_gb,
            amount: amount("per_month", per_disk)?,
        },
        _ => {
            return Err(err(
                "give per_gb_month, or per_month with up_to_gb (a tier of disk sizes)".into(),
            ));
        }
    };
    let (source, taken) = provenance(r.source, r.taken.as_deref()).map_err(err)?;
    Ok(StorageRow {
        provider,
        disk: r.disk.unwrap_or_default(),
        region: r.region,
        price,
        source,
        taken,
    })
}

#[cfg(test)]
mod tests;
