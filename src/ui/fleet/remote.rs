//! One watched host as the dashboard sees it, for the drill-in: a local [`Session`] fed with
//! that host's polled snapshots, so Enter shows the very dashboard (`crate::ui::Dashboard`: GPU
//! panels, charts, process table, alerts) with its history, rules and widgets unchanged.
//!
//! Why a local session and not the server's own state: the dashboard draws from an
//! [`Engine`](gpumeter_core::engine::Engine) (history for the charts, the rules' visible alerts), and the
//! snapshot document carries one reading, not its history. Feeding the readings to a session
//! of our own, as `--replay` does with recorded ones, keeps one per-tick path and one set of
//! widgets. It has no ledger, rings no bell, runs no hook or autostop; it is priced at the
//! server's rate (from its billing block) from the first reading seen, so its spend counts
//! from when the fleet started watching; the server's own totals are the fleet row's.

use gpumeter_model::Document;

use gpumeter_core::billing::{ClockStart, ListPrice, Pricing, Rate, RateSource};
use gpumeter_core::money::Currency;
use gpumeter_core::session::{Session, SessionConfig};

/// A host's local session and the newest reading it took.
#[derive(Debug)]
pub struct Remote {
    pub session: Session,
    last_taken_at: Option<i64>,
}

impl Remote {
    /// A session for the host that sent `doc` (priced as its billing block says, if it parses).
    pub fn for_document(doc: &Document, interval_ms: i64) -> Option<Remote> {
        let pricing = doc.billing.as_ref().and_then(|b| {
            let mut p = Pricing::simple(Rate::parse(&b.rate).ok()?);
            p.currency = Currency::from_code(&b.currency).ok()?;
            p.clock_start = ClockStart::FirstSample;
            if b.rate_source == "list-price" {
                // The host meters on a list price: the fleet says so too.
                p.source = RateSource::ListPrice(ListPrice {
                    what: "as its host found it".into(),
                    catalog: String::new(),
                    url: String::new(),
                });
            }
            Some(p)
        });
        let session = Session::new(SessionConfig {
            pricing,
            interval_ms,
            ..SessionConfig::default()
        })
        .ok()?;
        Some(Remote {
            session,
            last_taken_at: None,
        })
    }

    /// Takes a polled reading; one already taken (the server has not sampled since) is
    /// skipped, so nothing is counted twice.
    pub fn ingest(&mut self, doc: &Document) {
        let at = doc.snapshot.taken_at_unix_ms;
        if self.last_taken_at.is_some_and(|t| at <= t) {
            return;
        }
        self.last_taken_at = Some(at);
        // The step's notes, bell bytes and autostop are for a local run; this one shows nothing.
        let _ = self.session.ingest(doc.snapshot.clone());
    }

    /// The host stopped answering: the dashboard says so in its header.
    pub fn failed(&mut self, message: String, now_unix_ms: i64, retry_in_ms: u64) {
        self.session
            .source_failed(message, now_unix_ms, retry_in_ms);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpumeter_model::{BillingSummary, Snapshot};

    fn doc(at: i64, rate: &str) -> Document {
        Document {
            snapshot: Snapshot::empty("demo:idle", at),
            billing: Some(BillingSummary {
                currency: "EUR".into(),
                rate: rate.into(),
                rate_source: "yours".into(),
                rate_note: String::new(),
                granularity: "per-second".into(),
                clock_start_unix_ms: None,
                paid_ms: 0,
                spent_micros: 0,
                spent_today_micros: 0,
                burn_per_hour_micros: 0,
                idle_spend_micros: 0,
                idle_share: None,
                cost_per_busy_gpu_hour_micros: None,
                projected_end_of_day_micros: None,
                projected_end_of_month_micros: None,
                budget: None,
                gpus: 0,
                busy_gpus: 0,
                stopped_storage: None,
            }),
            alerts: Vec::new(),
        }
    }

    #[test]
    fn readings_feed_the_session_once_each_at_the_servers_rate() {
        let mut r = Remote::for_document(&doc(1_000, "36/h"), 1_000).unwrap();
        for at in [1_000, 1_000, 2_000, 1_500, 3_000] {
            r.ingest(&doc(at, "36/h"));
        }
        let e = r.session.engine();
        assert_eq!(e.ticks(), 3, "repeats and older readings are skipped");
        let view = e.billing().unwrap();
        assert_eq!(view.currency.code(), "EUR");
        // 36/h for the 2 s watched.
        assert_eq!(view.spent.micros(), 20_000);
        // A rate that does not parse: the dashboard without money, not an error.
        let r = Remote::for_document(&doc(1_000, "lots"), 1_000).unwrap();
        assert!(r.session.engine().billing().is_none());
    }
}
