//! The billing family: is a rate configured (so gpumeter can put a price on idle time) and a
//! budget (so it warns before the bill does), and where; and what the machine says it is, from
//! local DMI data only (`/sys/class/dmi/id`), never from the network.

use super::facts::Facts;
use super::verdict::{Family, Level, Verdict};

fn v(id: &'static str, level: Level, s: String) -> Verdict {
    Verdict::new(Family::Billing, id, level, s)
}

pub fn check(facts: &Facts) -> Vec<Verdict> {
    billing(&facts.billing)
}

fn billing(b: &super::facts::BillingFacts) -> Vec<Verdict> {
    let mut out = Vec::new();
    if let Some(e) = &b.config_error {
        out.push(
            v(
                "billing.config",
                Level::Fail,
                format!("the config file does not load: {e}"),
            )
            .fix("fix the file (the message names the line)"),
        );
    }
    let from = b
        .origin
        .as_deref()
        .map_or(String::new(), |o| format!(" (from {o})"));
    out.push(match (&b.rate, &b.list_price) {
        (Some(r), Some(list)) => v(
            "billing.rate",
            Level::Warn,
            format!("rate {r}: {list}, not necessarily what you pay"),
        )
        .fix("pass --rate with your price, or set [pricing] rate in ~/.config/gpumeter/config.toml"),
        (Some(r), None) => v("billing.rate", Level::Ok, format!("rate {r}{from}")),
        (None, _) => v("billing.rate", Level::Warn, "no rate configured: gpumeter cannot price idle time".into())
            .fix("pass --rate 2.49/h (or 3.10/gpu-h), or set [pricing] rate in ~/.config/gpumeter/config.toml"),
    });
    if let Some(c) = &b.cloud {
        out.push(v("billing.cloud", Level::Ok, format!("rented from {c}")));
    }
    let declared = if b.spot_declared {
        " (as [cloud] lifecycle says)"
    } else {
        ""
    };
    out.push(match b.spot {
        Some(true) if b.metadata_asked => v(
            "billing.spot",
            Level::Warn,
            format!(
                "spot instance{declared}: the provider can take it back at short notice; its \
                 interruption notice is watched every {} s (the spot alert)",
                gpumeter_core::cloud::notice::POLL_EVERY.as_secs()
            ),
        )
        .fix("checkpoint often; a spot box is no place for a run that cannot resume"),
        Some(true) => v(
            "billing.spot",
            Level::Warn,
            format!(
                "spot instance{declared}: the provider can take it back at short notice; its \
                 interruption notice is not watched without the metadata service"
            ),
        )
        .fix("pass --cloud-metadata (or set [cloud] metadata = true) to be alerted at the notice; checkpoint often"),
        Some(false) => v(
            "billing.spot",
            Level::Ok,
            format!("on-demand instance (not spot){declared}"),
        ),
        None if b.metadata_asked => v(
            "billing.spot",
            Level::Skip,
            "spot or on-demand: the metadata service did not say".into(),
        ),
        None => v(
            "billing.spot",
            Level::Skip,
            "spot or on-demand: unknown without the metadata service".into(),
        )
        .fix("pass --cloud-metadata (or set [cloud] metadata = true) to ask it"),
    });
    out.push(match (&b.budget, &b.rate) {
        (Some(x), _) => v("billing.budget", Level::Ok, format!("budget {x}{from}")),
        (None, _) => v(
            "billing.budget",
            Level::Warn,
            "no budget set: nothing warns before the bill does".into(),
        )
        .fix("pass --budget 500/day (or 2000/month), or set [pricing] budget in the config file"),
    });
    out.push(match &b.instance {
        Some(i) => v(
            "billing.instance",
            Level::Ok,
            format!("machine: {i} (from DMI)"),
        ),
        None => v(
            "billing.instance",
            Level::Skip,
            "no DMI data (/sys/class/dmi/id): instance type unknown".into(),
        ),
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::facts::BillingFacts;

    fn verdicts(b: BillingFacts) -> Vec<(String, Level, String)> {
        billing(&b)
            .into_iter()
            .map(|v| (v.id.to_string(), v.level, v.summary.clone()))
            .collect()
    }

    fn find(vs: &[(String, Level, String)], id: &str) -> (Level, String) {
        let v = vs.iter().find(|v| v.0 == id).unwrap();
        (v.1, v.2.clone())
    }

    #[test]
    fn a_list_price_warns_and_a_spot_box_is_said_to_be_spot() {
        let vs = verdicts(BillingFacts {
            rate: Some("98.32/h USD".into()),
            list_price: Some(
                "list price, AWS p5.48xlarge on-demand us-east-1, catalog 2025-05".into(),
            ),
            cloud: Some("AWS p5.48xlarge spot us-east-1 (from DMI, AWS IMDSv2)".into()),
            spot: Some(true),
            metadata_asked: true,
            ..BillingFacts::default()
        });
        let (level, text) = find(&vs, "billing.rate");
        assert_eq!(level, Level::Warn);
        assert!(text.contains("list price, AWS p5.48xlarge"), "{text}");
        let (level, text) = find(&vs, "billing.spot");
        assert_eq!(level, Level::Warn);
        assert!(
            text.ends_with("notice is watched every 5 s (the spot alert)"),
            "{text}"
        );
        let declared = verdicts(BillingFacts {
            spot: Some(true),
            spot_declared: true,
            ..BillingFacts::default()
        });
        assert_eq!(
            find(&declared, "billing.spot").1,
            "spot instance (as [cloud] lifecycle says): the provider can take it back at short \
             notice; its interruption notice is not watched without the metadata service"
        );
        assert!(
            find(&vs, "billing.cloud")
                .1
                .contains("rented from AWS p5.48xlarge spot")
        );
        let vs = verdicts(BillingFacts {
            spot: Some(false),
            ..BillingFacts::default()
        });
        assert_eq!(
            find(&vs, "billing.spot"),
            (Level::Ok, "on-demand instance (not spot)".into())
        );
        let vs = verdicts(BillingFacts::default());
        assert_eq!(find(&vs, "billing.spot").0, Level::Skip);
        assert!(vs.iter().all(|v| v.0 != "billing.cloud"));
    }
}
