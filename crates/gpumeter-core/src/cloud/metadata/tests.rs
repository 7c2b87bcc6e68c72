//! Each metadata service against a loopback stand-in that answers as the real one does.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use super::*;

/// One request as the stand-in saw it: `PUT /latest/api/token` and its headers (lower-case).
#[derive(Debug, Clone)]
struct Seen {
    line: String,
    headers: Vec<(String, String)>,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

type Answer = (u16, Vec<(&'static str, &'static str)>, String);

/// A server on 127.0.0.1 answering with `answer`; returns its base URL and what it saw.
fn stand_in(answer: impl Fn(&Seen) -> Answer + Send + 'static) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            let mut reader = BufReader::new(conn.try_clone().unwrap());
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let mut headers = Vec::new();
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).unwrap() == 0 || h.trim().is_empty() {
                    break;
                }
                if let Some((k, v)) = h.split_once(':') {
                    headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
                }
            }
            let req = Seen {
                line: line.trim().to_string(),
                headers,
            };
            let (status, extra, body) = answer(&req);
            log.lock().unwrap().push(req);
            let mut head = format!(
                "HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n",
                body.len()
            );
            for (k, v) in extra {
                head.push_str(&format!("{k}: {v}\r\n"));
            }
            let _ = conn.write_all(format!("{head}\r\n{body}").as_bytes());
        }
    });
    (base, seen)
}

fn ok(body: &str) -> Answer {
    (200, vec![], body.to_string())
}

fn not_found() -> Answer {
    (404, vec![], String::new())
}

/// AWS IMDSv2: a token for a PUT, the values only with the token.
fn aws_stand_in(life_cycle: &'static str) -> impl Fn(&Seen) -> Answer {
    move |r| {
        let path = r.line.split(' ').nth(1).unwrap_or_default();
        if r.line.starts_with("PUT /latest/api/token") {
            return match r.header("x-aws-ec2-metadata-token-ttl-seconds") {
                Some(_) => ok("TOKEN123"),
                None => (400, vec![], String::new()),
            };
        }
        if r.header("x-aws-ec2-metadata-token") != Some("TOKEN123") {
            return (401, vec![], String::new());
        }
        match path {
            "/latest/meta-data/instance-type" => ok("p5.48xlarge"),
            "/latest/meta-data/placement/region" => ok("us-east-1"),
            "/latest/meta-data/placement/availability-zone" => ok("us-east-1a"),
            "/latest/meta-data/instance-life-cycle" => ok(life_cycle),
            _ => not_found(),
        }
    }
}

#[test]
fn aws_imdsv2_asks_for_a_token_first_and_reads_type_region_and_life_cycle() {
    let (base, seen) = stand_in(aws_stand_in("spot"));
    let w = ask(&Endpoints::at(&base), Some(Provider::Aws));
    assert_eq!(w.provider, Some(Provider::Aws));
    assert_eq!(w.instance_type.as_deref(), Some("p5.48xlarge"));
    assert_eq!(w.region.as_deref(), Some("us-east-1"));
    assert_eq!(w.zone.as_deref(), Some("us-east-1a"));
    assert_eq!(w.lifecycle, Some(Lifecycle::Spot));
    let seen = seen.lock().unwrap();
    assert!(
        seen[0].line.starts_with("PUT /latest/api/token"),
        "{seen:?}"
    );
    assert_eq!(seen.len(), 5, "one request per fact, no retries: {seen:?}");
}

#[test]
fn gcp_sends_its_flavour_and_reads_machine_type_zone_and_spot() {
    let (base, seen) = stand_in(|r| {
        if r.header("metadata-flavor") != Some("Google") {
            return (403, vec![], String::new());
        }
        let flavour = vec![("Metadata-Flavor", "Google")];
        let path = r.line.split(' ').nth(1).unwrap_or_default();
        let body = match path {
            "/computeMetadata/v1/instance/machine-type" => "projects/42/machineTypes/a3-highgpu-8g",
            "/computeMetadata/v1/instance/zone" => "projects/42/zones/us-central1-a",
            "/computeMetadata/v1/instance/scheduling/provisioning-model" => "STANDARD",
            "/computeMetadata/v1/instance/scheduling/preemptible" => "TRUE",
            _ => return not_found(),
        };
        (200, flavour, body.to_string())
    });
    let w = ask(&Endpoints::at(&base), Some(Provider::Gcp));
    assert_eq!(w.instance_type.as_deref(), Some("a3-highgpu-8g"));
    assert_eq!(w.zone.as_deref(), Some("us-central1-a"));
    assert_eq!(w.region.as_deref(), Some("us-central1"));
    assert_eq!(w.lifecycle, Some(Lifecycle::Spot));
    assert!(
        seen.lock()
            .unwrap()
            .iter()
            .all(|s| s.line.starts_with("GET "))
    );
}

#[test]
fn a_server_that_is_not_googles_is_not_taken_for_gcp() {
    let (base, _) = stand_in(|_| ok("projects/42/machineTypes/a3-highgpu-8g"));
    assert_eq!(
        ask(&Endpoints::at(&base), Some(Provider::Gcp)),
        Whereabouts::default()
    );
}

#[test]
fn azure_imds_reads_size_location_and_priority() {
    let (base, _) = stand_in(|r| {
        if r.header("metadata") != Some("true") || !r.line.contains("api-version=") {
            return (400, vec![], String::new());
        }
        ok(
            r#"{"vmSize":"Standard_ND96isr_H100_v5","location":"eastus","priority":"Spot","vmId":"abc"}"#,
        )
    });
    let w = ask(&Endpoints::at(&base), Some(Provider::Azure));
    assert_eq!(w.instance_type.as_deref(), Some("Standard_ND96isr_H100_v5"));
    assert_eq!(w.region.as_deref(), Some("eastus"));
    assert_eq!(w.lifecycle, Some(Lifecycle::Spot));
}

#[test]
fn an_unknown_provider_is_found_by_the_service_that_answers() {
    // Not AWS (no token), not GCP (no flavour): Azure's answer decides.
    let (base, seen) = stand_in(|r| {
        if r.line.contains("/metadata/instance/compute") {
            ok(r#"{"vmSize":"Standard_NC40ads_H100_v5","location":"eastus","priority":"Regular"}"#)
        } else {
            not_found()
        }
    });
    let w = ask(&Endpoints::at(&base), None);
    assert_eq!(w.provider, Some(Provider::Azure));
    assert_eq!(w.lifecycle, Some(Lifecycle::OnDemand));
    // AWS gave up after its token, GCP after its first question.
    assert_eq!(seen.lock().unwrap().len(), 3, "{:?}", seen.lock().unwrap());
}

#[test]
fn no_server_or_garbage_is_unknown_and_quick_to_say_so() {
    // A port nothing listens on: refused at once, one attempt each.
    let dead = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    assert_eq!(ask(&Endpoints::at(&dead), None), Whereabouts::default());
    let (base, _) = stand_in(|_| ok("{not json"));
    assert_eq!(
        ask(&Endpoints::at(&base), Some(Provider::Azure)),
        Whereabouts::default()
    );
    assert_eq!(ask(&Endpoints::none(), None), Whereabouts::default());
}
