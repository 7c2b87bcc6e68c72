//! The optional webhook: one HTTP POST of Slack-compatible JSON (`{"text": "…"}`) per alert
//! transition, sent by a worker thread so a slow endpoint never blocks the dashboard. Each
//! request has a timeout and is never retried; a rate limit (a few per minute, a cap per hour)
//! drops the excess and counts it, so a flapping source cannot become a request storm. The URL
//! comes only from the config file.
//!
//! HTTP client: `ureq` (blocking, small, with timeouts) with default features off and `rustls`
//! on, because webhook endpoints (Slack, Teams, ntfy) are https; no async runtime needed here.

use std::collections::VecDeque;
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// Requests waiting for the worker at most.
const QUEUE: usize = 8;

/// Resolved `[alerts.webhook]`.
#[derive(Debug, Clone, PartialEq)]
pub struct WebhookConfig {
    /// Where alerts are POSTed as JSON (`[alerts.webhook] url`).
    pub url: String,
    /// How long one request may take (`[alerts.webhook] timeout`).
    pub timeout: Duration,
    /// Messages allowed in any 60 s; more are dropped (`[alerts.webhook] max_per_minute`).
    pub max_per_minute: u32,
    /// Messages allowed in any hour; more are dropped (`[alerts.webhook] max_per_hour`).
    pub max_per_hour: u32,
}

/// What happened to one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Handed to the worker thread, which sends it.
    Queued,
    /// Over the rate limit: dropped.
    RateLimited,
    /// The worker is still busy with earlier requests: dropped.
    QueueFull,
}

/// Counters the worker keeps.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WebhookStats {
    /// Requests answered without an error status (no 4xx/5xx).
    pub sent: u64,
    /// Requests that failed (connection error, timeout, or a 4xx/5xx answer).
    pub failed: u64,
    /// Messages never sent: over the rate limit, or the worker's queue was full.
    pub dropped: u64,
    /// The last failure, sanitized (at most 200 characters); `None` until one fails.
    pub last_error: Option<String>,
}

fn lock(m: &Mutex<WebhookStats>) -> MutexGuard<'_, WebhookStats> {
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// The channel: a queue to the worker thread and the rate limiter.
#[derive(Debug)]
pub struct Webhook {
    cfg: WebhookConfig,
    tx: SyncSender<String>,
    sent_at: VecDeque<i64>,
    stats: Arc<Mutex<WebhookStats>>,
}

/// The Slack-compatible body.
pub fn body(text: &str) -> String {
    serde_json::json!({ "text": text }).to_string()
}

impl Webhook {
    /// Starts the worker thread.
    pub fn start(cfg: WebhookConfig) -> Webhook {
        let (tx, rx) = sync_channel::<String>(QUEUE);
        let stats = Arc::new(Mutex::new(WebhookStats::default()));
        let worker_stats = Arc::clone(&stats);
        let url = cfg.url.clone();
        let timeout = cfg.timeout;
        std::thread::Builder::new()
            .name("gpumeter-webhook".into())
            .spawn(move || worker(&url, timeout, &rx, &worker_stats))
            .map_or_else(
                |e| lock(&stats).last_error = Some(format!("cannot start the webhook thread: {e}")),
                |_| (),
            );
        Webhook {
            cfg,
            tx,
            sent_at: VecDeque::new(),
            stats,
        }
    }

    /// Queues one message (at most once per transition: the caller calls this once).
    pub fn send(&mut self, text: &str, now_ms: i64) -> Outcome {
        while self
            .sent_at
            .front()
            .is_some_and(|&t| now_ms - t >= 3_600_000)
        {
            self.sent_at.pop_front();
        }
        let last_minute = self
            .sent_at
            .iter()
            .filter(|&&t| now_ms - t < 60_000)
            .count();
        if last_minute >= self.cfg.max_per_minute as usize
            || self.sent_at.len() >= self.cfg.max_per_hour as usize
        {
            lock(&self.stats).dropped += 1;
            return Outcome::RateLimited;
        }
        match self.tx.try_send(body(text)) {
            Ok(()) => {
                self.sent_at.push_back(now_ms);
                Outcome::Queued
            }
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                lock(&self.stats).dropped += 1;
                Outcome::QueueFull
            }
        }
    }

    /// A copy of the worker's counters so far.
    pub fn stats(&self) -> WebhookStats {
        lock(&self.stats).clone()
    }
}

fn worker(url: &str, timeout: Duration, rx: &Receiver<String>, stats: &Mutex<WebhookStats>) {
    let config = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .max_redirects(0)
        .build();
    let agent: ureq::Agent = config.into();
    // Ends when the Webhook (the sender) is dropped.
    while let Ok(payload) = rx.recv() {
        let result = agent
            .post(url)
            .header("Content-Type", "application/json")
            .send(&payload);
        let mut s = lock(stats);
        match result {
            Ok(_) => s.sent += 1,
            Err(e) => {
                s.failed += 1;
                s.last_error = Some(crate::sanitize::sanitize(&e.to_string(), 200));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpListener;
    use std::sync::mpsc;
    use std::time::Instant;

    /// A local HTTP endpoint (127.0.0.1 only) that records up to `max` request bodies; replies
    /// 200 unless `silent`, in which case it reads and never answers.
    fn endpoint(max: usize, silent: bool) -> (String, mpsc::Receiver<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for stream in listener.incoming().take(max) {
                let mut stream = stream.unwrap();
                stream
                    .set_read_timeout(Some(Duration::from_secs(5)))
                    .unwrap();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut len = 0usize;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        len = v.trim().parse().unwrap();
                    }
                }
                let mut body = vec![0; len.min(1 << 20)];
                reader.read_exact(&mut body).unwrap();
                tx.send(String::from_utf8(body).unwrap()).unwrap();
                if silent {
                    std::thread::sleep(Duration::from_secs(3));
                } else {
                    let _ = stream.write_all(
                        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
                    );
                }
            }
        });
        (url, rx)
    }

    fn hook(url: String, timeout_ms: u64) -> Webhook {
        Webhook::start(WebhookConfig {
            url,
            timeout: Duration::from_millis(timeout_ms),
            max_per_minute: 3,
            max_per_hour: 4,
        })
    }

    fn wait_for(w: &Webhook, done: impl Fn(&WebhookStats) -> bool) -> WebhookStats {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let s = w.stats();
            if done(&s) || Instant::now() > deadline {
                return s;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn posts_slack_json_once_per_message() {
        let (url, bodies) = endpoint(1, false);
        let mut w = hook(url, 5_000);
        assert_eq!(w.send("GPUs idle 42 min — \"$21.70\"", 0), Outcome::Queued);
        let got = bodies.recv_timeout(Duration::from_secs(20)).unwrap();
        let v: serde_json::Value = serde_json::from_str(&got).unwrap();
        assert_eq!(v["text"], "GPUs idle 42 min — \"$21.70\"");
        let s = wait_for(&w, |s| s.sent == 1);
        assert_eq!((s.sent, s.failed), (1, 0), "{s:?}");
    }

    #[test]
    fn rate_limit_drops_the_excess_per_minute_and_per_hour() {
        let (url, bodies) = endpoint(5, false);
        let mut w = hook(url, 5_000);
        let outcomes: Vec<Outcome> = (0..5).map(|i| w.send(&format!("m{i}"), i)).collect();
        assert_eq!(&outcomes[..3], &[Outcome::Queued; 3]);
        assert_eq!(&outcomes[3..], &[Outcome::RateLimited; 2]);
        // A minute later one more fits the hourly cap of 4, then nothing for the hour.
        assert_eq!(w.send("later", 61_000), Outcome::Queued);
        assert_eq!(w.send("later2", 62_000), Outcome::RateLimited);
        assert_eq!(w.send("next hour", 3_700_000), Outcome::Queued);
        for _ in 0..5 {
            bodies.recv_timeout(Duration::from_secs(20)).unwrap();
        }
        assert_eq!(w.stats().dropped, 3);
    }

    #[test]
    fn a_silent_endpoint_times_out_without_retry() {
        let (url, bodies) = endpoint(2, true);
        let mut w = hook(url, 300);
        w.send("once", 0);
        bodies.recv_timeout(Duration::from_secs(20)).unwrap();
        let s = wait_for(&w, |s| s.failed == 1);
        assert_eq!((s.sent, s.failed), (0, 1), "{s:?}");
        assert!(s.last_error.is_some());
        // No second attempt reaches the endpoint.
        assert!(bodies.recv_timeout(Duration::from_millis(800)).is_err());
    }
}
