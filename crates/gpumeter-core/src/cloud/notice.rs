//! The interruption notice of a spot or preemptible instance, read from the metadata service
//! (so only when the user allows metadata calls): AWS `spot/instance-action` (IMDSv2), GCP
//! `instance/preempted`, Azure Scheduled Events (`Preempt`). One question per poll, no retries;
//! the caller polls at a modest cadence ([`POLL_EVERY`]) and raises the alert. No notice, an
//! unreachable service or an answer that does not parse is `None`.

use std::time::Duration;

use chrono::DateTime;

use super::Provider;
use super::metadata::Endpoints;

/// How often a spot box's notice is worth asking for: AWS gives two minutes, GCP and Azure 30 s.
pub const POLL_EVERY: Duration = Duration::from_secs(5);

/// A notice that the provider takes the machine back: the snapshot model's own, so the poller's
/// answer rides on each reading as it is.
pub use gpumeter_model::Interruption;

/// The notice standing now, if any.
pub fn poll(endpoints: &Endpoints, provider: Provider) -> Option<Interruption> {
    let base = endpoints.base.as_deref()?;
    let agent = super::metadata::agent(endpoints.timeout);
    match provider {
        Provider::Aws => aws(&agent, base),
        Provider::Gcp => gcp(&agent, base),
        Provider::Azure => azure(&agent, base),
        Provider::RunPod | Provider::VastAi => None,
    }
}

#[derive(serde::Deserialize)]
struct AwsAction {
    action: String,
    time: Option<String>,
}

fn aws(agent: &ureq::Agent, base: &str) -> Option<Interruption> {
    let token = super::metadata::aws_token(agent, base)?;
    // 404 until a notice is posted.
    let body = super::metadata::text(
        agent
            .get(format!("{base}/latest/meta-data/spot/instance-action"))
            .header("X-aws-ec2-metadata-token", &token)
            .call(),
    )?;
    let a: AwsAction = serde_json::from_str(&body).ok()?;
    Some(Interruption {
        provider: Provider::Aws.name().into(),
        action: super::local::clean(&a.action)?,
        at_unix_ms: a
            .time
            .and_then(|t| DateTime::parse_from_rfc3339(&t).ok())
            .map(|t| t.timestamp_millis()),
    })
}

fn gcp(agent: &ureq::Agent, base: &str) -> Option<Interruption> {
    let body = super::metadata::text(
        agent
            .get(format!("{base}/computeMetadata/v1/instance/preempted"))
            .header("Metadata-Flavor", "Google")
            .call(),
    )?;
    body.trim()
        .eq_ignore_ascii_case("true")
        .then(|| Interruption {
            provider: Provider::Gcp.name().into(),
            action: "preempted".into(),
            // GCP stops the machine about 30 s after it says so; it gives no time.
            at_unix_ms: None,
        })
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "PascalCase")]
struct AzureEvents {
    #[serde(default)]
    events: Vec<AzureEvent>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "PascalCase")]
struct AzureEvent {
    event_type: String,
    not_before: Option<String>,
}

fn azure(agent: &ureq::Agent, base: &str) -> Option<Interruption> {
    let body = super::metadata::text(
        agent
            .get(format!(
                "{base}/metadata/scheduledevents?api-version=2020-07-01"
            ))
            .header("Metadata", "true")
            .call(),
    )?;
    let events: AzureEvents = serde_json::from_str(&body).ok()?;
    let e = events
        .events
        .into_iter()
        .find(|e| e.event_type == "Preempt")?;
    Some(Interruption {
        provider: Provider::Azure.name().into(),
        action: "Preempt".into(),
        // `Mon, 19 Sep 2016 18:29:47 GMT`
        at_unix_ms: e
            .not_before
            .and_then(|t| DateTime::parse_from_rfc2822(&t.replace("GMT", "+0000")).ok())
            .map(|t| t.timestamp_millis()),
    })
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;

    use super::*;

    /// A stand-in answering `route(request line, headers)` with (status, body).
    fn stand_in(route: impl Fn(&str, &str) -> (u16, String) + Send + 'static) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { return };
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                let (mut line, mut headers) = (String::new(), String::new());
                reader.read_line(&mut line).unwrap();
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).unwrap() == 0 || h.trim().is_empty() {
                        break;
                    }
                    headers.push_str(&h.to_ascii_lowercase());
                }
                let (status, body) = route(&line, &headers);
                let reply = format!(
                    "HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = conn.write_all(reply.as_bytes());
            }
        });
        base
    }

    #[test]
    fn aws_reads_the_instance_action_with_its_time_and_none_before_one_is_posted() {
        let posted = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let p = posted.clone();
        let base = stand_in(move |line, headers| {
            if line.starts_with("PUT /latest/api/token") {
                return (200, "tok".into());
            }
            let has_token = headers.contains("x-aws-ec2-metadata-token: tok");
            let posted = p.load(std::sync::atomic::Ordering::SeqCst);
            if line.contains("/spot/instance-action") && has_token && posted {
                return (
                    200,
                    r#"{"action": "terminate", "time": "2026-12-04T12:04:00Z"}"#.into(),
                );
            }
            (404, String::new())
        });
        let at = Endpoints::at(&base);
        assert_eq!(poll(&at, Provider::Aws), None);
        posted.store(true, std::sync::atomic::Ordering::SeqCst);
        let n = poll(&at, Provider::Aws).unwrap();
        assert_eq!(n.action, "terminate");
        assert_eq!(n.at_unix_ms, Some(1_796_385_840_000));
    }

    #[test]
    fn gcp_says_preempted_only_when_true() {
        let base = stand_in(|line, headers| {
            let ok = headers.contains("metadata-flavor: google");
            match (ok, line.contains("/instance/preempted")) {
                (true, true) => (200, "TRUE".into()),
                _ => (404, String::new()),
            }
        });
        let n = poll(&Endpoints::at(&base), Provider::Gcp).unwrap();
        assert_eq!((n.action.as_str(), n.at_unix_ms), ("preempted", None));
        let calm = stand_in(|_, _| (200, "FALSE".into()));
        assert_eq!(poll(&Endpoints::at(&calm), Provider::Gcp), None);
    }

    #[test]
    fn azure_finds_the_preempt_among_scheduled_events() {
        let base = stand_in(|_, headers| {
            if !headers.contains("metadata: true") {
                return (400, String::new());
            }
            (
                200,
                r#"{"DocumentIncarnation":2,"Events":[
                    {"EventId":"a","EventType":"Reboot","NotBefore":"Mon, 19 Sep 2016 18:00:00 GMT"},
                    {"EventId":"b","EventType":"Preempt","NotBefore":"Mon, 19 Sep 2016 18:29:47 GMT"}]}"#
                    .into(),
            )
        });
        let n = poll(&Endpoints::at(&base), Provider::Azure).unwrap();
        assert_eq!(n.action, "Preempt");
        assert_eq!(n.at_unix_ms, Some(1_474_309_787_000));
        let calm = stand_in(|_, _| (200, r#"{"DocumentIncarnation":1,"Events":[]}"#.into()));
        assert_eq!(poll(&Endpoints::at(&calm), Provider::Azure), None);
        assert_eq!(poll(&Endpoints::none(), Provider::Azure), None);
    }
}
