//! One money formatter everywhere: the same session's amounts, printed by the alert text, the
//! spend panel, `watch` and `report`, in USD, EUR and JPY, read the same (and as written here).

use gpumeter_model::Snapshot;
use gpumeter_model::testing::SnapshotBuilder;

use gpumeter_core::billing::Pricing;
use gpumeter_core::billing::{ClockStart, Rate};
use gpumeter_core::engine::rules::AlertKind;
use gpumeter_core::ledger::Ledger;
use gpumeter_core::money::Currency;
use gpumeter_core::session::{Session, SessionConfig};

/// A minute boundary (2027-01-15T08:00:00Z).
const T0: i64 = 1_800_000_000_000;

fn idle(s: i64) -> Snapshot {
    SnapshotBuilder::new("demo:money", T0 + s * 1_000)
        .hostname("box")
        .uptime_s(86_400)
        .gpu(0, 0)
        .build()
}

fn text_of(lines: &[ratatui::text::Line<'_>]) -> String {
    lines
        .iter()
        .map(|l| {
            l.spans
                .iter()
                .map(|s| s.content.as_ref())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn alert_text_spend_panel_watch_and_report_print_money_alike() {
    // 1,234,567 an hour for 15 minutes: 308,641.75 spent.
    let cases = [
        ("USD", "$1,234,567.00", "$308,641.75"),
        ("EUR", "€1,234,567.00", "€308,641.75"),
        ("JPY", "¥1,234,567", "¥308,642"),
    ];
    for (code, rate_text, spent_text) in cases {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.sqlite");
        let currency = Currency::from_code(code).unwrap();
        let mut pricing = Pricing::simple(Rate::parse("1234567/h").unwrap());
        pricing.currency = currency;
        pricing.clock_start = ClockStart::At(T0);
        let mut s = Session::new(SessionConfig {
            pricing: Some(pricing),
            ledger_path: Some(path.clone()),
            interval_ms: 1_000,
            ..SessionConfig::default()
        })
        .unwrap();
        let mut idle_alert = None;
        let mut minute = None;
        for k in 0..=900 {
            let step = s.ingest(idle(k));
            for t in step.transitions {
                if t.alert().kind == AlertKind::IdlePaid {
                    idle_alert = Some(t.alert().clone());
                }
            }
            minute = step.flushed.or(minute);
        }
        let last = s.finish();
        assert!(last.notes.is_empty(), "{code}: {:?}", last.notes);
        let view = s.engine().billing().unwrap().clone();

        // The alert text: the rate as the rules print it.
        let alert = idle_alert.unwrap_or_else(|| panic!("{code}: no idle alert"));
        assert!(
            alert.title.contains(&format!("{rate_text}/h")),
            "{code}: {}",
            alert.title
        );
        assert!(
            alert
                .evidence
                .contains(&("rate".into(), format!("{rate_text}/h"))),
            "{code}: {:?}",
            alert.evidence
        );
        // The spend panel: the same rate, and the spend.
        let theme = crate::ui::theme::Theme::monochrome();
        let panel = text_of(&crate::ui::widgets::spend_panel::lines(&view, &theme));
        assert!(
            panel.contains(&format!("{spent_text}  (today")),
            "{code}: {panel}"
        );
        assert!(panel.contains(&format!("{rate_text}/h")), "{code}: {panel}");
        // `watch`: the minute line's burn, and the total.
        let line = gpumeter_core::session::lines::minute(&minute.unwrap(), &view);
        assert!(
            line.contains(&format!("burn {rate_text}/h")),
            "{code}: {line}"
        );
        let total = gpumeter_core::session::lines::total(&view);
        assert!(
            total.starts_with(&format!("total: spent {spent_text} over")),
            "{code}: {total}"
        );
        // `report`, from the ledger the session wrote.
        let ledger = Ledger::open_read_only(&path).unwrap();
        let report = crate::report::build(&ledger, T0 - 86_400_000, T0 + 3_600_000).unwrap();
        let table = crate::report::render::table(&report);
        assert!(table.contains(spent_text), "{code}: {table}");
    }
}
