//! Where the rate the meter runs on came from: the user's own (a file, a flag, a demo
//! scenario), or a list price out of the catalog for the machine gpumeter found itself on. Every
//! place that shows the rate says which, so a guessed price is never read as what the user pays.

use super::pricing::Rate;
use crate::money::Currency;

/// Where the rate came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RateSource {
    /// The user's: where it was set (`config.toml`, `--rate`, `demo scenario idle`; empty when
    /// not known).
    Yours(String),
    /// A list price from the catalog; not what this user was told they pay.
    ListPrice(ListPrice),
}

impl Default for RateSource {
    fn default() -> Self {
        RateSource::Yours(String::new())
    }
}

/// What a list price was looked up for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListPrice {
    /// `AWS p5.48xlarge on-demand us-east-1`.
    pub what: String,
    /// The month its catalog row was taken (`2025-05`).
    pub catalog: String,
    /// The page the price is from.
    pub url: String,
}

impl RateSource {
    /// Whether the rate is a catalog list price rather than the user's own.
    pub fn is_list_price(&self) -> bool {
        matches!(self, RateSource::ListPrice(_))
    }

    /// `yours` or `list-price`, for machines (JSON, metrics labels).
    pub fn kind(&self) -> &'static str {
        match self {
            RateSource::Yours(_) => "yours",
            RateSource::ListPrice(_) => "list-price",
        }
    }

    /// `your rate (config.toml)` or `list price, AWS p5.48xlarge on-demand us-east-1, catalog
    /// 2025-05`.
    pub fn describe(&self) -> String {
        match self {
            RateSource::Yours(o) if o.is_empty() => "your rate".to_string(),
            RateSource::Yours(o) => format!("your rate ({o})"),
            RateSource::ListPrice(l) if l.catalog.is_empty() => format!("list price, {}", l.what),
            RateSource::ListPrice(l) => format!("list price, {}, catalog {}", l.what, l.catalog),
        }
    }

    /// The rate with where it came from: `list price, AWS p5.48xlarge on-demand us-east-1,
    /// catalog 2025-05: $98.32/h — set yours with --rate`, or `your rate (config.toml): $31/h`.
    pub fn line(&self, rate: &Rate, currency: Currency) -> String {
        let tail = if self.is_list_price() {
            " — set yours with --rate"
        } else {
            ""
        };
        format!("{}: {}{tail}", self.describe(), rate_text(rate, currency))
    }
}

/// `$98.32/h`, `€3.10/gpu-h`: a rate in the one money format.
pub fn rate_text(rate: &Rate, currency: Currency) -> String {
    format!("{}/{}", currency.format(rate.amount), rate.unit.suffix())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_price_says_so_and_how_to_set_yours() {
        let rate = Rate::parse("98.32/h").unwrap();
        let list = RateSource::ListPrice(ListPrice {
            what: "AWS p5.48xlarge on-demand us-east-1".into(),
            catalog: "2025-05".into(),
            url: "https://aws.amazon.com/ec2/pricing/on-demand/".into(),
        });
        assert_eq!(
            list.line(&rate, Currency::USD),
            "list price, AWS p5.48xlarge on-demand us-east-1, catalog 2025-05: $98.32/h — set yours with --rate"
        );
        assert_eq!(list.kind(), "list-price");
        let yours = RateSource::Yours("config.toml".into());
        assert_eq!(
            yours.line(&rate, Currency::USD),
            "your rate (config.toml): $98.32/h"
        );
        assert_eq!(RateSource::default().describe(), "your rate");
        let per_gpu = Rate::parse("3.1/gpu-h").unwrap();
        assert_eq!(rate_text(&per_gpu, Currency::USD), "$3.10/gpu-h");
    }
}
