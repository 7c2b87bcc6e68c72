//! The built-in demo scenarios as a user sees them: each one played for two simulated minutes
//! ([`crate::ui::tests::demo`]: a fake clock, metered at its own price, no ledger) and drawn at
//! 80×24, 120×40 and 200×60 into insta snapshots. Deterministic: a fixed start, no wall time,
//! no host name from this machine (the scenario names its own), no config file. Beside the
//! snapshots, assertions on what each scenario must show, and a size sweep that must not panic.

use crate::ui::tests::demo::{NOW, SECONDS, names, played, played_for};
use crate::ui::tests::fixtures;
use crate::ui::tests::fixtures::{buffer_to_string, render_at};
use crate::ui::*;

const SIZES: [(u16, u16); 3] = [(80, 24), (120, 40), (200, 60)];

fn screen(engine: &Engine, w: u16, h: u16) -> String {
    let mut app = App::new(&fixtures::options());
    buffer_to_string(&render_at(&mut app, engine, w, h, NOW))
}

#[test]
fn every_scenario_at_the_three_sizes() {
    assert_eq!(names().len(), 16);
    for name in names() {
        let engine = played(name);
        for (w, h) in SIZES {
            let text = screen(&engine, w, h);
            // Money everywhere: every built-in scenario has a price.
            assert!(text.contains("spent"), "{name} {w}x{h}:\n{text}");
            insta::assert_snapshot!(format!("{name}_{w}x{h}"), text);
        }
    }
}

#[test]
fn every_scenario_survives_a_sweep_of_sizes() {
    let mut widths: Vec<u16> = (0..=240).step_by(13).collect();
    widths.extend([1, 39, 40, 79, 80, 119, 120, 121, 159, 160, 199, 200]);
    let mut heights: Vec<u16> = (0..=70).step_by(7).collect();
    heights.extend([1, 7, 8, 11, 12, 19, 20, 23, 24, 39, 40, 59, 60]);
    // The scenarios at two minutes, and `idle` once its alert has fired (the panel and strip).
    let mut engines: Vec<(Engine, i64)> = names().into_iter().map(|n| (played(n), NOW)).collect();
    engines.push((played_for("idle", IDLE_SECONDS), IDLE_NOW));
    for (engine, now) in &engines {
        for &w in &widths {
            for &h in &heights {
                let mut app = App::new(&fixtures::options());
                let buf = render_at(&mut app, engine, w, h, *now);
                assert_eq!(buf.area, ratatui::layout::Rect::new(0, 0, w, h));
            }
        }
    }
}

/// `idle` played long enough for its reminder (10 min by default) to fire.
const IDLE_SECONDS: i64 = 15 * 60;
const IDLE_NOW: i64 = crate::ui::tests::demo::START + IDLE_SECONDS * 1_000 + 400;

#[test]
fn idle_after_fifteen_minutes_shows_its_alert_at_the_three_sizes() {
    let engine = played_for("idle", IDLE_SECONDS);
    assert!(!engine.rules().visible(IDLE_NOW).is_empty());
    for (w, h) in SIZES {
        let mut app = App::new(&fixtures::options());
        let text = buffer_to_string(&render_at(&mut app, &engine, w, h, IDLE_NOW));
        // The process table is never pushed off the screen by the alert.
        assert!(text.contains("PID"), "{w}x{h}:\n{text}");
        if (w, h) == (80, 24) {
            assert!(text.contains("a ack"), "{w}x{h}:\n{text}");
        } else {
            assert!(text.contains("Alerts (1)"), "{w}x{h}:\n{text}");
        }
        insta::assert_snapshot!(format!("idle_15min_{w}x{h}"), text);
    }
}

#[test]
fn one_to_eight_gpus_fit_beside_an_alert() {
    let alerted = played_for("idle", IDLE_SECONDS);
    let alerts = alerted.rules().visible(IDLE_NOW).len();
    assert!(alerts > 0);
    for n in [1usize, 2, 4, 8] {
        for (w, h) in SIZES {
            let rows = crate::ui::widgets::alerts::panel::all_lines(
                &alerted.rules().visible(IDLE_NOW),
                usize::from(w - 2),
                IDLE_NOW,
                &crate::ui::theme::Theme::monochrome(),
            )
            .len();
            let Screen::Dashboard(l) =
                layout::compute_with_alerts(ratatui::layout::Rect::new(0, 0, w, h), n, true, rows)
            else {
                panic!("{w}x{h} too small");
            };
            assert!(l.alerts.is_some(), "{n} GPUs {w}x{h}: no alert area");
            assert!(l.table.height >= 3, "{n} GPUs {w}x{h}: table {:?}", l.table);
            let shown = l.gpu_cells.len() + l.gpu_overflow.map_or(0, |(_, k)| k);
            assert_eq!(shown, n, "{n} GPUs {w}x{h}");
        }
    }
}

/// The text of the lines of `text` that contain `needle`.
fn lines_with<'a>(text: &'a str, needle: &str) -> Vec<&'a str> {
    text.lines().filter(|l| l.contains(needle)).collect()
}

/// The amount after `label` on the spend line or panel (`spent $279.34`).
fn spent(text: &str) -> gpumeter_core::money::Money {
    let line = lines_with(text, "spent").into_iter().next().unwrap();
    let after = line.split("spent").nth(1).unwrap().trim_start();
    let amount = after.split_whitespace().next().unwrap();
    gpumeter_core::money::Currency::USD
        .parse_amount(amount)
        .unwrap()
}

#[test]
fn cpu_starved_shows_the_sawtooth_and_busy_workers() {
    let engine = played("cpu-starved");
    let text = screen(&engine, 120, 40);
    // The util series swings between starved and busy over the two minutes.
    let util = engine
        .history()
        .gpu(0)
        .unwrap()
        .util_pct
        .window(NOW, 120_000);
    let (lo, hi) = util.iter().fold((f64::MAX, 0f64), |(lo, hi), p| {
        (lo.min(p.mean), hi.max(p.mean))
    });
    assert!(lo < 20.0 && hi > 60.0, "util {lo}..{hi}");
    // Dataloader workers near a full core each.
    let busy = text
        .lines()
        .filter(|l| l.contains("├─") || l.contains("└─"))
        .filter(|l| {
            l.split_whitespace()
                .filter_map(|w| w.parse::<f64>().ok())
                .any(|v| v >= 90.0)
        })
        .count();
    assert!(busy >= 3, "{text}");
    // Workers read by the name the starved alert's evidence gives them, at 80×24 too.
    let small = screen(&engine, 80, 24);
    let workers = |t: &str| {
        t.lines()
            .filter(|l| l.contains("├─ pt_data_worker") || l.contains("└─ pt_data_worker"))
            .count()
    };
    assert!(
        workers(&text) >= 3 && workers(&small) >= 1,
        "{text}\n{small}"
    );
}

#[test]
fn gpu_lost_says_lost() {
    for (w, h) in SIZES {
        let text = screen(&played("gpu-lost"), w, h);
        assert!(text.contains("LOST"), "{w}x{h}:\n{text}");
    }
}

#[test]
fn mixed_labels_the_invisible_pid_and_cleans_the_hostile_name() {
    let text = screen(&played("mixed"), 200, 60);
    assert!(text.contains(INVISIBLE_LABEL), "{text}");
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "{text:?}"
    );
}

#[test]
fn idle_money_moves() {
    let engine = played("idle");
    let view = engine.billing().unwrap();
    assert_eq!(view.busy_gpus, 0);
    assert!(view.idle_share.unwrap() > 0.0);
    let now = spent(&screen(&engine, 80, 24));
    // A minute later the same screen shows more.
    let later = played_for("idle", SECONDS + 60);
    let mut app = App::new(&fixtures::options());
    let text = buffer_to_string(&render_at(&mut app, &later, 80, 24, NOW + 60_000));
    assert!(spent(&text) > now, "{text}");
}

#[test]
fn gpm_cards_show_sm_activity_and_its_source_others_util_only() {
    // training (H100, GPM): the SM gauge, the source in the panel title, the SM chart one
    // press of the chart-series key away.
    let training = played("training");
    let text = screen(&training, 200, 60);
    assert!(text.contains("· activity: GPM"), "{text}");
    assert!(text.contains(" SM act █"), "{text}");
    // No SM chart before the series key picks it.
    assert!(!text.contains(" SM act GPU"), "{text}");
    let mut app = App::new(&fixtures::options());
    render_at(&mut app, &training, 200, 60, NOW);
    app.handle_key(crossterm::event::KeyEvent::from(
        crossterm::event::KeyCode::Char('c'),
    ));
    let text = buffer_to_string(&render_at(&mut app, &training, 200, 60, NOW));
    assert!(text.contains(" SM act GPU0 "), "{text}");
    // container (A100, no GPM): none of it, and no N/A gauge in its place (its starved alert
    // may say "no GPM on this card": the source of the figure it judged).
    let text = screen(&played("container"), 200, 60);
    assert!(!text.contains("activity: GPM"), "{text}");
    assert!(!text.contains("(GPM)"), "{text}");
    assert!(!text.contains(" SM N/A"), "{text}");
}

#[test]
fn shared_cards_show_the_other_tenants_memory_per_gpu() {
    let text = screen(&played("shared"), 120, 40);
    assert_eq!(
        text.matches("hidden VRAM 12.0GiB").count(),
        2,
        "GPUs 1 and 3:\n{text}"
    );
    let text = screen(&played("training"), 120, 40);
    assert!(!text.contains("hidden VRAM"), "{text}");
}

/// The strip line of an 80×24 screen (the row that starts with a severity).
fn strip(text: &str) -> Option<&str> {
    text.lines().find(|l| {
        [" HIGH ", " MODERATE ", " INFO "]
            .iter()
            .any(|s| l.starts_with(s))
    })
}

#[test]
fn the_strip_keeps_the_worst_alert_while_alerts_arrive_one_by_one() {
    // In the live demo the budget INFO stands from the first tick and the HIGH starved
    // verdict comes a minute later. The screen's first tick lists only the budget alert; the
    // next lists both, and the HIGH one must take the strip without a key.
    for name in ["io-starved", "mixed"] {
        let engine = played(name);
        let visible = engine.rules().visible(NOW);
        let info = visible
            .iter()
            .find(|a| a.severity == gpumeter_core::engine::rules::Severity::Info)
            .map(|a| a.id.clone());
        let mut app = App::new(&fixtures::options());
        app.alerts.sync(info.into_iter().collect(), Vec::new());
        let text = buffer_to_string(&render_at(&mut app, &engine, 80, 24, NOW));
        let line = strip(&text).unwrap_or_default();
        assert!(
            line.starts_with(" HIGH ") && line.contains("(1/"),
            "{name}:\n{text}"
        );
        // Once the user steps with `n`, the choice is theirs and stays.
        app.alerts.select_by(1);
        let text = buffer_to_string(&render_at(&mut app, &engine, 80, 24, NOW));
        assert!(
            strip(&text).is_some_and(|l| l.contains("(2/")),
            "{name}:\n{text}"
        );
    }
}

#[test]
fn gpu_lines_share_their_columns_when_one_gpu_has_more_to_say() {
    // `shared` (hidden memory on GPUs 1 and 3) and `kubernetes` (pod names of different
    // lengths) at 80×24: every GPU line keeps its temperature, in the same column.
    for name in ["shared", "kubernetes"] {
        let text = screen(&played(name), 80, 24);
        let gpu_lines: Vec<&str> = text.lines().filter(|l| l.starts_with(" GPU")).collect();
        assert_eq!(gpu_lines.len(), 4, "{name}:\n{text}");
        let columns: Vec<Option<usize>> = gpu_lines
            .iter()
            .map(|l| l.find("°C").map(|b| l[..b].chars().count()))
            .collect();
        assert!(columns[0].is_some(), "{name}:\n{text}");
        assert!(columns.iter().all(|c| *c == columns[0]), "{name}:\n{text}");
        let vram: Vec<Option<usize>> = gpu_lines.iter().map(|l| l.find("VRAM")).collect();
        assert!(vram.iter().all(|c| *c == vram[0]), "{name}:\n{text}");
    }
    let text = screen(&played("shared"), 80, 24);
    assert_eq!(lines_with(&text, "hidden 12.0GiB").len(), 2, "{text}");
}

#[test]
fn the_gpu_sm_activity_and_the_process_sm_share_have_their_own_names() {
    // `hung` at 80×24: the GPU's GPM activity is `SM act`, the process's share `SM%`.
    let text = screen(&played_for("hung", 6 * 60), 80, 24);
    assert!(lines_with(&text, " GPU0 ")[0].contains("SM act "), "{text}");
    let bare_sm = |l: &str| l.replace(" SM act ", "").contains(" SM ");
    assert!(
        !text.lines().any(|l| l.starts_with(" GPU") && bare_sm(l)),
        "{text}"
    );
    assert!(lines_with(&text, "PID")[0].contains("SM%"), "{text}");
}

#[test]
fn one_gpu_at_80x24_gets_its_chart_beside_its_panel_and_no_value_is_cut() {
    // `container`: one A100. Its panel takes half the width, its chart the other half, and
    // the panel's lines keep each value whole (the link `Gen4 x16` never reads `x1`).
    let text = screen(&played("container"), 80, 24);
    let titled = lines_with(&text, "┌ GPU0 ");
    assert_eq!(titled.len(), 1, "{text}");
    assert!(titled[0].contains("┐┌ util GPU0 "), "{text}");
    let braille = |l: &str| l.chars().any(|c| ('\u{2801}'..='\u{28ff}').contains(&c));
    assert!(text.lines().any(braille), "a drawn chart:\n{text}");
    let panel: Vec<String> = text
        .lines()
        .skip_while(|l| !l.starts_with("┌ GPU0"))
        .take(8)
        .map(|l| l.chars().take(40).collect())
        .collect();
    for line in &panel {
        let inside = line.trim_end_matches('│').trim_end();
        for cut in ["Gen4 x1", "Gen4 x", "GiB/", "MB/"] {
            assert!(!inside.ends_with(cut), "cut at {cut:?}: {line}\n{text}");
        }
    }
    assert!(panel.iter().any(|l| l.contains("PCIe RX ")), "{text}");
}
