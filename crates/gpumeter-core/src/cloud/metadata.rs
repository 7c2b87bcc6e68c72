//! The instance metadata services, asked only when the user allows it (`[cloud] metadata =
//! true`, `--cloud-metadata`): the link-local HTTP endpoint each cloud serves to its own
//! machines, never a proxy. What is sent, per provider:
//! - AWS IMDSv2: `PUT /latest/api/token` (a session token), then `GET /latest/meta-data/`
//!   `instance-type`, `placement/region`, `placement/availability-zone`, `instance-life-cycle`.
//! - GCP: `GET /computeMetadata/v1/instance/` `machine-type`, `zone`,
//!   `scheduling/preemptible`, `scheduling/provisioning-model` (`Metadata-Flavor: Google`).
//! - Azure IMDS: `GET /metadata/instance/compute?api-version=2021-02-01` (`Metadata: true`):
//!   `vmSize`, `location`, `priority`.
//!
//! Each request waits at most [`TIMEOUT`]; nothing is retried, and a provider whose first
//! answer fails is asked nothing more. A missing answer is unknown, never an error.

use std::time::Duration;

use super::{Lifecycle, Provider, Whereabouts};

/// The address every cloud serves its metadata on.
pub const LINK_LOCAL: &str = "http://169.254.169.254";
/// Overrides the metadata base URL, for tests only (a loopback stand-in).
pub const BASE_VAR: &str = "GPUMETER_METADATA_URL";
/// The longest one request may take (connect and answer).
pub const TIMEOUT: Duration = Duration::from_millis(800);
/// The largest answer read.
const MAX_BODY: u64 = 64 * 1024;

/// Where the metadata services answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoints {
    /// `None` asks nothing.
    pub base: Option<String>,
    /// How long one request may take (connect and answer).
    pub timeout: Duration,
}

impl Default for Endpoints {
    fn default() -> Self {
        Endpoints {
            base: Some(LINK_LOCAL.to_string()),
            timeout: TIMEOUT,
        }
    }
}

impl Endpoints {
    /// Asks nothing.
    pub fn none() -> Endpoints {
        Endpoints {
            base: None,
            timeout: TIMEOUT,
        }
    }

    /// A stand-in at `base` (tests).
    pub fn at(base: &str) -> Endpoints {
        Endpoints {
            base: Some(base.trim_end_matches('/').to_string()),
            timeout: TIMEOUT,
        }
    }

    /// The link-local address, or the test override.
    pub fn from_process() -> Endpoints {
        match std::env::var(BASE_VAR) {
            Ok(v) if !v.is_empty() => Endpoints::at(&v),
            _ => Endpoints::default(),
        }
    }
}

/// What the metadata service of `provider` says (each in turn when the provider is unknown,
/// stopping at the first that answers).
pub fn ask(endpoints: &Endpoints, provider: Option<Provider>) -> Whereabouts {
    let Some(base) = endpoints.base.as_deref() else {
        return Whereabouts::default();
    };
    let agent = agent(endpoints.timeout);
    let order = match provider {
        Some(p) => vec![p],
        None => vec![Provider::Aws, Provider::Gcp, Provider::Azure],
    };
    for p in order {
        let told = match p {
            Provider::Aws => aws(&agent, base),
            Provider::Gcp => gcp(&agent, base),
            Provider::Azure => azure(&agent, base),
            Provider::RunPod | Provider::VastAi => None,
        };
        if let Some(w) = told {
            return w;
        }
    }
    Whereabouts::default()
}

pub(super) fn agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .max_redirects(0)
        // Link-local: a proxy from the environment must not see (or answer) these.
        .proxy(None)
        .http_status_as_error(false)
        .build()
        .into()
}

/// The body of a 200 answer, as short clean text.
pub(super) fn text(resp: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> Option<String> {
    let mut resp = resp.ok()?;
    if resp.status().as_u16() != 200 {
        return None;
    }
    let body = resp
        .body_mut()
        .with_config()
        .limit(MAX_BODY)
        .read_to_string()
        .ok()?;
    Some(body)
}

/// An IMDSv2 session token (every IMDSv2 read needs one).
pub(super) fn aws_token(agent: &ureq::Agent, base: &str) -> Option<String> {
    text(
        agent
            .put(format!("{base}/latest/api/token"))
            .header("X-aws-ec2-metadata-token-ttl-seconds", "60")
            .send_empty(),
    )
    .and_then(|t| super::local::clean(&t))
}

fn aws(agent: &ureq::Agent, base: &str) -> Option<Whereabouts> {
    let token = aws_token(agent, base)?;
    let get = |path: &str| {
        text(
            agent
                .get(format!("{base}/latest/meta-data/{path}"))
                .header("X-aws-ec2-metadata-token", &token)
                .call(),
        )
        .and_then(|v| super::local::clean(&v))
    };
    let instance_type = get("instance-type")?;
    Some(Whereabouts {
        provider: Some(Provider::Aws),
        instance_type: Some(instance_type),
        region: get("placement/region"),
        zone: get("placement/availability-zone"),
        lifecycle: get("instance-life-cycle").map(|l| match l.as_str() {
            "spot" => Lifecycle::Spot,
            _ => Lifecycle::OnDemand,
        }),
        evidence: vec!["AWS IMDSv2".into()],
        ..Default::default()
    })
}

fn gcp(agent: &ureq::Agent, base: &str) -> Option<Whereabouts> {
    let get = |path: &str| {
        let resp = agent
            .get(format!("{base}/computeMetadata/v1/instance/{path}"))
            .header("Metadata-Flavor", "Google")
            .call();
        // Only Google's server answers with its flavour: anything else is not GCP's.
        let resp = resp.ok().filter(|r| {
            r.headers()
                .get("Metadata-Flavor")
                .is_some_and(|v| v == "Google")
        });
        text(resp.ok_or(ureq::Error::ConnectionFailed)).and_then(|v| super::local::clean(&v))
    };
    let machine = get("machine-type")?;
    // `projects/123/machineTypes/a3-highgpu-8g`, `projects/123/zones/us-central1-a`.
    let last = |s: String| s.rsplit('/').next().map(str::to_string);
    let zone = get("zone").and_then(last);
    let region = zone
        .as_deref()
        .and_then(|z| z.rsplit_once('-'))
        .map(|(r, _)| r.to_string());
    let spot = get("scheduling/provisioning-model").is_some_and(|m| m == "SPOT")
        || get("scheduling/preemptible").is_some_and(|p| p.eq_ignore_ascii_case("true"));
    Some(Whereabouts {
        provider: Some(Provider::Gcp),
        instance_type: last(machine),
        region,
        zone,
        lifecycle: Some(if spot {
            Lifecycle::Spot
        } else {
            Lifecycle::OnDemand
        }),
        evidence: vec!["GCP metadata server".into()],
        ..Default::default()
    })
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct AzureCompute {
    vm_size: Option<String>,
    location: Option<String>,
    priority: Option<String>,
    vm_id: Option<String>,
}

fn azure(agent: &ureq::Agent, base: &str) -> Option<Whereabouts> {
    let body = text(
        agent
            .get(format!(
                "{base}/metadata/instance/compute?api-version=2021-02-01"
            ))
            .header("Metadata", "true")
            .call(),
    )?;
    let c: AzureCompute = serde_json::from_str(&body).ok()?;
    let clean = |v: Option<String>| v.and_then(|v| super::local::clean(&v));
    let vm_size = clean(c.vm_size)?;
    Some(Whereabouts {
        provider: Some(Provider::Azure),
        instance_type: Some(vm_size),
        region: clean(c.location),
        lifecycle: clean(c.priority).map(|p| match p.as_str() {
            "Spot" | "Low" => Lifecycle::Spot,
            _ => Lifecycle::OnDemand,
        }),
        instance_id: clean(c.vm_id),
        evidence: vec!["Azure IMDS".into()],
        ..Default::default()
    })
}

#[cfg(test)]
mod tests;
