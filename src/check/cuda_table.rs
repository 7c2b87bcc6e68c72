//! The shipped table of minimum drivers per CUDA toolkit and PyTorch builds per CUDA
//! (`cuda_drivers.toml`, with its sources), and version arithmetic on driver strings.

use std::cmp::Ordering;
use std::sync::OnceLock;

use serde::Deserialize;

const TABLE: &str = include_str!("cuda_drivers.toml");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CudaTable {
    pub toolkit: Vec<Toolkit>,
    pub minor_compat: Vec<MinorCompat>,
    pub pytorch: Vec<TorchRelease>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Toolkit {
    pub cuda: String,
    pub min_driver: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MinorCompat {
    pub major: u32,
    pub min_driver: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TorchRelease {
    pub version: String,
    pub cuda: Vec<String>,
}

/// The table, parsed once; `None` only if the shipped file is broken (a test prevents that).
pub fn table() -> Option<&'static CudaTable> {
    static T: OnceLock<Option<CudaTable>> = OnceLock::new();
    T.get_or_init(|| toml::from_str(TABLE).ok()).as_ref()
}

/// `550.90.07` → [550, 90, 7]; `None` when it is not dotted numbers.
pub fn parse_version(text: &str) -> Option<Vec<u32>> {
    text.trim()
        .split('.')
        .map(|p| p.parse::<u32>().ok())
        .collect::<Option<Vec<u32>>>()
        .filter(|v| !v.is_empty())
}

/// Compares dotted versions numerically (missing parts are 0).
pub fn compare(a: &[u32], b: &[u32]) -> Ordering {
    let n = a.len().max(b.len());
    (0..n)
        .map(|i| a.get(i).unwrap_or(&0).cmp(b.get(i).unwrap_or(&0)))
        .find(|o| o.is_ne())
        .unwrap_or(Ordering::Equal)
}

impl CudaTable {
    /// The minimum driver of a toolkit (`12.9`), when the table knows it.
    pub fn min_driver(&self, cuda: &str) -> Option<&str> {
        let want = parse_version(cuda)?;
        self.toolkit
            .iter()
            .find(|t| parse_version(&t.cuda).is_some_and(|v| compare(&v, &want).is_eq()))
            .map(|t| t.min_driver.as_str())
    }

    /// The minimum driver for any toolkit of `major` through minor-version compatibility.
    pub fn compat_driver(&self, major: u32) -> Option<&str> {
        self.minor_compat
            .iter()
            .find(|c| c.major == major)
            .map(|c| c.min_driver.as_str())
    }

    /// The newest toolkit `driver` runs natively.
    pub fn newest_native(&self, driver: &[u32]) -> Option<&str> {
        self.toolkit
            .iter()
            .filter(|t| parse_version(&t.min_driver).is_some_and(|m| compare(driver, &m).is_ge()))
            .max_by(|a, b| version_cmp(&a.cuda, &b.cuda))
            .map(|t| t.cuda.as_str())
    }

    /// The newest PyTorch release with a build `driver` runs natively, and that build's CUDA.
    pub fn best_torch(&self, driver: &[u32]) -> Option<(&str, &str)> {
        self.pytorch
            .iter()
            .filter_map(|r| {
                let cuda = r
                    .cuda
                    .iter()
                    .filter(|c| {
                        self.min_driver(c)
                            .and_then(parse_version)
                            .is_some_and(|m| compare(driver, &m).is_ge())
                    })
                    .max_by(|a, b| version_cmp(a, b))?;
                Some((r.version.as_str(), cuda.as_str()))
            })
            .max_by(|a, b| version_cmp(a.0, b.0))
    }
}

fn version_cmp(a: &str, b: &str) -> Ordering {
    compare(
        &parse_version(a).unwrap_or_default(),
        &parse_version(b).unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_table_parses_and_is_ordered() {
        let t = table().expect("cuda_drivers.toml must parse");
        for w in t.toolkit.windows(2) {
            assert!(version_cmp(&w[0].cuda, &w[1].cuda).is_lt(), "{w:?}");
            assert!(
                version_cmp(&w[0].min_driver, &w[1].min_driver).is_lt(),
                "{w:?}"
            );
        }
        for r in &t.pytorch {
            for c in &r.cuda {
                assert!(
                    t.min_driver(c).is_some(),
                    "torch {} cu{c} has no toolkit row",
                    r.version
                );
            }
        }
        assert_eq!(t.min_driver("12.4"), Some("550.54.14"));
        assert_eq!(t.min_driver("13.0"), Some("580.65.06"));
        assert_eq!(t.compat_driver(12), Some("525.60.13"));
    }

    #[test]
    fn versions_compare_numerically() {
        let v = |s| parse_version(s).unwrap();
        assert!(compare(&v("550.90.07"), &v("550.54.14")).is_gt());
        assert!(compare(&v("570.26"), &v("570.26.0")).is_eq());
        assert!(compare(&v("535.183.01"), &v("545.23.06")).is_lt());
        assert_eq!(parse_version("abc"), None);
    }

    #[test]
    fn suggestions_fit_the_driver() {
        let t = table().unwrap();
        let d = parse_version("550.90.07").unwrap();
        assert_eq!(t.newest_native(&d), Some("12.4"));
        assert_eq!(t.best_torch(&d), Some(("2.7", "11.8")));
        let new = parse_version("580.82.07").unwrap();
        assert_eq!(t.best_torch(&new), Some(("2.9", "13.0")));
        assert_eq!(t.best_torch(&parse_version("470.1").unwrap()), None);
    }
}
