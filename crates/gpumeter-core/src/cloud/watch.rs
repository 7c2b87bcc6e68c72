//! The spot notice watched off the tick path: a thread of its own asks the metadata service
//! for the interruption notice every [`notice::POLL_EVERY`] (each question bounded by the
//! metadata timeout), keeps the last answer, and the source attaches it to each reading
//! ([`crate::source::notice`]). Started only on a box known to be spot or preemptible (from
//! metadata, or `[cloud] lifecycle = "spot"`) where metadata calls are allowed. A notice once
//! seen stays: the provider does not withdraw it, and a failed poll must not clear the alert.

use std::sync::{Arc, Mutex, Weak};

use super::metadata::Endpoints;
use super::notice::{self, Interruption};
use super::{Lifecycle, Priced, Provider};

/// The notice as last read; cheap to clone (one shared cell).
#[derive(Debug, Clone, Default)]
pub struct NoticeWatch {
    latest: Arc<Mutex<Option<Interruption>>>,
}

impl NoticeWatch {
    /// Starts polling `provider`'s notice on its own thread; it ends when the last handle is
    /// dropped. `None` when the thread cannot be started.
    pub fn start(endpoints: Endpoints, provider: Provider) -> Option<NoticeWatch> {
        let watch = NoticeWatch::default();
        let cell = Arc::downgrade(&watch.latest);
        std::thread::Builder::new()
            .name("spot-notice".into())
            .spawn(move || poll_loop(&endpoints, provider, &cell))
            .ok()?;
        Some(watch)
    }

    /// The notice standing, if one has been posted.
    pub fn latest(&self) -> Option<Interruption> {
        self.latest.lock().ok()?.clone()
    }

    /// Records a notice (the poll thread; tests).
    pub fn set(&self, notice: Interruption) {
        if let Ok(mut l) = self.latest.lock() {
            *l = Some(notice);
        }
    }
}

fn poll_loop(endpoints: &Endpoints, provider: Provider, cell: &Weak<Mutex<Option<Interruption>>>) {
    loop {
        let found = notice::poll(endpoints, provider);
        let Some(cell) = cell.upgrade() else { return };
        if let (Some(n), Ok(mut l)) = (found, cell.lock()) {
            *l = Some(n);
        }
        drop(cell);
        std::thread::sleep(notice::POLL_EVERY);
    }
}

/// The provider whose notice is worth watching: a known provider with a notice endpoint, a
/// spot box (`declared` from config wins over what metadata said), and metadata allowed.
pub fn worth_watching(found: &Priced, declared: Option<Lifecycle>) -> Option<Provider> {
    let w = &found.whereabouts;
    let spot = declared.or(w.lifecycle) == Some(Lifecycle::Spot);
    let provider = w.provider?;
    let has_notice = matches!(provider, Provider::Aws | Provider::Gcp | Provider::Azure);
    (spot && has_notice && found.asked_metadata).then_some(provider)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud::Whereabouts;

    fn found(provider: Provider, lifecycle: Option<Lifecycle>, asked: bool) -> Priced {
        Priced {
            whereabouts: Whereabouts {
                provider: Some(provider),
                lifecycle,
                ..Whereabouts::default()
            },
            asked_metadata: asked,
            ..Priced::default()
        }
    }

    #[test]
    fn only_a_spot_box_with_metadata_allowed_is_watched() {
        let spot = Some(Lifecycle::Spot);
        let od = Some(Lifecycle::OnDemand);
        assert_eq!(
            worth_watching(&found(Provider::Aws, spot, true), None),
            Some(Provider::Aws)
        );
        assert_eq!(worth_watching(&found(Provider::Aws, od, true), None), None);
        assert_eq!(
            worth_watching(&found(Provider::Aws, spot, false), None),
            None
        );
        // Declared in config: wins over what metadata said, either way.
        assert_eq!(
            worth_watching(&found(Provider::Gcp, None, true), spot),
            Some(Provider::Gcp)
        );
        assert_eq!(worth_watching(&found(Provider::Gcp, spot, true), od), None);
        // No notice endpoint on a pod.
        assert_eq!(
            worth_watching(&found(Provider::RunPod, spot, true), None),
            None
        );
    }

    #[test]
    fn the_thread_reads_the_posted_notice_into_the_watch() {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for (n, conn) in listener.incoming().enumerate() {
                let Ok(mut conn) = conn else { return };
                let mut buf = [0u8; 2048];
                let _ = conn.read(&mut buf);
                // The first poll says preempted, later ones fail (the box is going).
                let (status, body) = if n == 0 { (200, "TRUE") } else { (500, "") };
                let _ = conn.write_all(
                    format!(
                        "HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    )
                    .as_bytes(),
                );
            }
        });
        let watch = NoticeWatch::start(Endpoints::at(&base), Provider::Gcp).unwrap();
        let mut got = None;
        for _ in 0..200 {
            got = watch.latest();
            if got.is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let n = got.expect("no notice read");
        assert_eq!(
            (n.provider.as_str(), n.action.as_str()),
            ("GCP", "preempted")
        );
    }
}
