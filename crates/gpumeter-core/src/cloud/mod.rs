//! Where am I: which cloud or GPU host this machine is rented from, and, where local facts or
//! (when the user allows it) the instance metadata service tell, its instance type, region and
//! whether it is spot. Then what such a box lists at ([`catalog`]), so the meter can run on a
//! list price, said to be one, when the user set no rate, and what its attached volumes
//! ([`volumes`]) cost while it is stopped; on a spot box, the provider's interruption notice,
//! polled on a thread of its own ([`watch`]).
//!
//! A room of its own beside `billing` rather than under `source`: these are facts read once at
//! launch (files under `/sys/class/dmi/id` and `/sys/block`, environment variables, and an opt-in HTTP call to
//! the link-local metadata service), not readings taken every tick, and `billing` stays pure (no
//! I/O). Unknown is a normal answer: nothing here fails a launch.

pub mod catalog;
pub mod local;
pub mod metadata;
pub mod notice;
pub mod price;
pub mod volumes;
pub mod watch;

pub use price::{Priced, Probe, list_pricing};

use std::fmt;

/// Who the machine is rented from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provider {
    /// Amazon Web Services (EC2).
    Aws,
    /// Google Cloud (Compute Engine).
    Gcp,
    /// Microsoft Azure.
    Azure,
    /// RunPod (found by its pod environment variables).
    RunPod,
    /// vast.ai (found by its instance environment variables).
    VastAi,
}

impl Provider {
    /// Every provider, in a fixed order.
    pub const ALL: [Provider; 5] = [
        Provider::Aws,
        Provider::Gcp,
        Provider::Azure,
        Provider::RunPod,
        Provider::VastAi,
    ];

    /// The catalog's key (`aws`, `gcp`, `azure`, `runpod`, `vast`).
    pub fn key(self) -> &'static str {
        match self {
            Provider::Aws => "aws",
            Provider::Gcp => "gcp",
            Provider::Azure => "azure",
            Provider::RunPod => "runpod",
            Provider::VastAi => "vast",
        }
    }

    /// The provider for a catalog key (`aws`, `gcp`, `azure`, `runpod`, `vast`); `None` for any
    /// other.
    pub fn from_key(key: &str) -> Option<Provider> {
        Provider::ALL.into_iter().find(|p| p.key() == key)
    }

    /// As people write it (`AWS`, `GCP`, `Azure`, `RunPod`, `vast.ai`).
    pub fn name(self) -> &'static str {
        match self {
            Provider::Aws => "AWS",
            Provider::Gcp => "GCP",
            Provider::Azure => "Azure",
            Provider::RunPod => "RunPod",
            Provider::VastAi => "vast.ai",
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How the instance is bought.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifecycle {
    /// Bought at the on-demand price: not taken back at short notice.
    OnDemand,
    /// Spot, preemptible or low-priority: it can be taken back at short notice.
    Spot,
}

impl Lifecycle {
    /// `on-demand` or `spot`, as the config and the catalog write it.
    pub fn name(self) -> &'static str {
        match self {
            Lifecycle::OnDemand => "on-demand",
            Lifecycle::Spot => "spot",
        }
    }
}

/// What was found out about the machine; every field may be unknown.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Whereabouts {
    /// `None` when the machine is not recognised as rented from a known provider.
    pub provider: Option<Provider>,
    /// `p5.48xlarge`, `a3-highgpu-8g`, `Standard_ND96isr_H100_v5`.
    pub instance_type: Option<String>,
    /// `us-east-1`, `us-central1`, `eastus` (a zone is cut to its region).
    pub region: Option<String>,
    /// Availability zone (`us-east-1a`, `us-central1-a`), when the metadata service says.
    pub zone: Option<String>,
    /// `None` when neither metadata nor `[cloud] lifecycle` says how it is bought.
    pub lifecycle: Option<Lifecycle>,
    /// The provider's id of this instance or pod (`i-0abc…`, a RunPod pod id).
    pub instance_id: Option<String>,
    /// GPUs the provider says it gave (RunPod, vast.ai).
    pub gpu_count: Option<u32>,
    /// Where each fact came from, for `check` (`DMI`, `RUNPOD_POD_ID`, `AWS IMDSv2`).
    pub evidence: Vec<String>,
}

impl Whereabouts {
    /// `AWS p5.48xlarge spot us-east-1`, `GCP`, `unknown`.
    pub fn describe(&self) -> String {
        let Some(p) = self.provider else {
            return "unknown".to_string();
        };
        let mut out = p.name().to_string();
        for part in [
            self.instance_type.as_deref(),
            self.lifecycle.map(Lifecycle::name),
            self.region.as_deref(),
        ]
        .into_iter()
        .flatten()
        {
            out.push(' ');
            out.push_str(part);
        }
        out
    }

    /// Facts of `other` fill what this one leaves unknown (metadata over local facts).
    pub fn or(mut self, other: Whereabouts) -> Whereabouts {
        self.provider = self.provider.or(other.provider);
        self.instance_type = self.instance_type.or(other.instance_type);
        self.region = self.region.or(other.region);
        self.zone = self.zone.or(other.zone);
        self.lifecycle = self.lifecycle.or(other.lifecycle);
        self.instance_id = self.instance_id.or(other.instance_id);
        self.gpu_count = self.gpu_count.or(other.gpu_count);
        self.evidence.extend(other.evidence);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_what_is_known_and_says_unknown_otherwise() {
        assert_eq!(Whereabouts::default().describe(), "unknown");
        let w = Whereabouts {
            provider: Some(Provider::Aws),
            instance_type: Some("p5.48xlarge".into()),
            region: Some("us-east-1".into()),
            lifecycle: Some(Lifecycle::Spot),
            ..Default::default()
        };
        assert_eq!(w.describe(), "AWS p5.48xlarge spot us-east-1");
        for p in Provider::ALL {
            assert_eq!(Provider::from_key(p.key()), Some(p));
        }
    }

    #[test]
    fn metadata_fills_only_what_local_facts_left_unknown() {
        let local = Whereabouts {
            provider: Some(Provider::Aws),
            instance_type: Some("p5.48xlarge".into()),
            ..Default::default()
        };
        let meta = Whereabouts {
            provider: Some(Provider::Gcp),
            instance_type: Some("other".into()),
            region: Some("us-east-1".into()),
            ..Default::default()
        };
        let both = local.or(meta);
        assert_eq!(both.provider, Some(Provider::Aws));
        assert_eq!(both.instance_type.as_deref(), Some("p5.48xlarge"));
        assert_eq!(both.region.as_deref(), Some("us-east-1"));
    }
}
