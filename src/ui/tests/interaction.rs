//! The charts' window and zoom, the table's first rows, header clicks and full command lines,
//! and view state that outlives a resize — whole screens from fixtures.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;

use crate::ui::layout::{self, Screen};
use crate::ui::sort::SortColumn;
use crate::ui::tests::fixtures::{self, NOW, T0, buffer_to_string, render, render_at};
use crate::ui::*;
use gpumeter_core::engine::Engine;

fn app() -> App {
    App::new(&fixtures::options())
}

fn key(app: &mut App, code: KeyCode) {
    app.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
}

/// An engine fed `secs` of one-second readings ending at `NOW`.
fn fresh(secs: i64) -> Engine {
    let mut e = Engine::new();
    for k in (0..secs).rev() {
        e.ingest(fixtures::snapshot_at(2, NOW - k * 1000));
    }
    e
}

fn util_title(screen: &str) -> String {
    let line = screen.lines().find(|l| l.contains(" util ")).unwrap();
    let at = line.find(" util ").unwrap();
    let end = line[at..].find('┐').map_or(line.len(), |e| at + e);
    line[at..end].to_string()
}

#[test]
fn right_after_start_the_charts_span_what_was_recorded_and_grow_to_the_window() {
    let s = buffer_to_string(&render(&mut app(), &fresh(20), 120, 40));
    assert!(util_title(&s).contains("· 19s of 5m"), "{}", util_title(&s));
    // The time axis: from the first reading to now, to the second.
    let from =
        gpumeter_core::clock::utc_text(NOW - 19_000, gpumeter_core::clock::UtcStyle::ClockSeconds);
    let to = gpumeter_core::clock::utc_text(NOW, gpumeter_core::clock::UtcStyle::ClockSeconds);
    let axis = s.lines().find(|l| l.contains(&to)).unwrap_or("");
    assert!(axis.contains(&from), "{s}");
    // Five minutes of readings fill the 5-minute window.
    let full = buffer_to_string(&render(&mut app(), &fixtures::engine(2), 120, 40));
    assert!(util_title(&full).contains("· 5m "), "{}", util_title(&full));
    let long = fresh(400);
    let s = buffer_to_string(&render(&mut app(), &long, 120, 40));
    assert!(util_title(&s).contains("· 5m "), "{}", util_title(&s));
}

#[test]
fn parentheses_change_the_window_and_its_axis() {
    let engine = fresh(400);
    let mut a = app();
    key(&mut a, KeyCode::Char('('));
    let s = buffer_to_string(&render(&mut a, &engine, 120, 40));
    assert!(util_title(&s).contains("· 1m "), "{}", util_title(&s));
    let from =
        gpumeter_core::clock::utc_text(NOW - 60_000, gpumeter_core::clock::UtcStyle::ClockSeconds);
    assert!(s.contains(&from), "{s}");
    for _ in 0..3 {
        key(&mut a, KeyCode::Char(')'));
        render(&mut a, &engine, 120, 40);
    }
    let s = buffer_to_string(&render(&mut a, &engine, 120, 40));
    // Zooming out stops at the first window that covers the 400 s held (15 m, not 1 h: an
    // hour would squeeze them into a tenth of the chart); the axis spans the data.
    assert!(
        util_title(&s).contains("· 6m39s of 15m"),
        "{}",
        util_title(&s)
    );
    let to = gpumeter_core::clock::utc_text(NOW, gpumeter_core::clock::UtcStyle::ClockSeconds);
    assert!(s.contains(&to), "{s}");
}

#[test]
fn the_table_opens_at_the_top_while_the_first_readings_re_sort_it() {
    let mut a = app();
    a.sync((100..160).collect(), vec![0], 10);
    // The next reading sorts the first row to the end: the view stays at the top.
    a.sync((101..160).chain([100]).collect(), vec![0], 10);
    assert_eq!((a.selected, a.scroll, a.selected_pid()), (0, 0, Some(101)));
    // Once the user picks a row, it is followed and kept on screen.
    key(&mut a, KeyCode::Down);
    assert_eq!(a.selected_pid(), Some(102));
    a.sync((103..160).chain([100, 101, 102]).collect(), vec![0], 10);
    assert_eq!(a.selected_pid(), Some(102));
    assert_eq!(a.selected, 59);
    assert!(a.scroll <= a.selected && a.selected < a.scroll + 10);
}

fn click(a: &mut App, screen: &Screen, column: u16, row: u16) -> Action {
    a.handle_mouse(
        MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column,
            row,
            modifiers: KeyModifiers::NONE,
        },
        screen,
    )
}

#[test]
fn clicking_a_column_header_sorts_by_it_and_again_reverses() {
    let engine = fixtures::engine(2);
    let mut a = app();
    let s = buffer_to_string(&render(&mut a, &engine, 120, 40));
    let screen = screen_for(Rect::new(0, 0, 120, 40), &engine, NOW);
    let Screen::Dashboard(l) = &screen else {
        panic!("too small")
    };
    let header_y = l.table.y + 1;
    let header = s.lines().nth(usize::from(header_y)).unwrap();
    let x = header.find("CPU%").unwrap() as u16;
    assert_eq!(click(&mut a, &screen, x + 1, header_y), Action::Redraw);
    assert_eq!((a.sort, a.sort_desc), (SortColumn::Cpu, true));
    click(&mut a, &screen, x + 1, header_y);
    assert_eq!((a.sort, a.sort_desc), (SortColumn::Cpu, false));
    let x = header.find("USER").unwrap() as u16;
    click(&mut a, &screen, x, header_y);
    assert_eq!((a.sort, a.sort_desc), (SortColumn::User, false));
    let s = buffer_to_string(&render(&mut a, &engine, 120, 40));
    assert!(s.contains("sort user ▲"), "{s}");
    // The gap between two columns does nothing.
    let gap = header.find("USER").unwrap() as u16 - 1;
    assert_eq!(click(&mut a, &screen, gap, header_y), Action::None);
}

#[test]
fn e_shows_the_selected_process_whole_command_line() {
    let mut snap = fixtures::snapshot(1);
    let long = format!("python train.py {} --the-end", "--flag value ".repeat(12));
    snap.processes[0].command = Some(long.clone().into());
    let engine = fixtures::engine_with(snap);
    let mut a = app();
    a.tree = false;
    let before = buffer_to_string(&render(&mut a, &engine, 100, 40));
    assert!(!before.contains("--the-end"), "{before}");
    key(&mut a, KeyCode::Char('e'));
    let after = buffer_to_string(&render(&mut a, &engine, 100, 40));
    // Every part of it, in order, across the wrapped lines (wrapped at the column's edge, so a
    // word may be split: compare without the white space).
    let dense = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    assert!(dense(&after).contains(&dense(&long)[40..]), "{after}");
    key(&mut a, KeyCode::Char('e'));
    let again = buffer_to_string(&render(&mut a, &engine, 100, 40));
    assert_eq!(again, before);
}

#[test]
fn e_wraps_the_command_at_words_at_80x24() {
    let mut snap = fixtures::snapshot(1);
    let long = "python train.py --config configs/llama-7b.yaml --data /mnt/shards/imagenet \
                --workers 16 --resume checkpoints/step-120000.pt";
    // On every process, so the selected row (the first by VRAM) carries it.
    for p in &mut snap.processes {
        p.command = Some(long.to_string().into());
    }
    let engine = fixtures::engine_with(snap);
    let mut a = app();
    a.tree = false;
    key(&mut a, KeyCode::Char('e'));
    let s = buffer_to_string(&render(&mut a, &engine, 80, 24));
    let first = s.lines().find(|l| l.contains("python train.py")).unwrap();
    let at = first.find("python").unwrap();
    // The row and the lines under it, each piece whole words; no `…` on the wrapped row.
    let mut lines = s.lines().skip_while(|l| !l.contains("python train.py"));
    let mut pieces: Vec<&str> = lines.next().map(|l| l[at..].trim()).into_iter().collect();
    pieces.extend(
        lines
            .take_while(|l| l.get(..at).is_some_and(|p| p.trim().is_empty()))
            .map(|l| l[at..].trim())
            .filter(|p| !p.is_empty()),
    );
    assert!(pieces.len() >= 2, "{s}");
    let words: Vec<&str> = long.split(' ').collect();
    for p in &pieces {
        assert!(!p.contains('…'), "{p}\n{s}");
        for w in p.split(' ') {
            assert!(words.contains(&w), "{w:?} is cut\n{s}");
        }
    }
    assert_eq!(pieces.join(" "), long, "{s}");
}

#[test]
fn selection_alert_detail_and_table_survive_a_resize() {
    let engine = crate::ui::tests::demo::played_for("cpu-starved", 300);
    let now = engine.latest().unwrap().taken_at_unix_ms;
    let mut a = app();
    render_at(&mut a, &engine, 200, 60, now);
    for _ in 0..5 {
        key(&mut a, KeyCode::Down);
    }
    let pid = a.selected_pid();
    // The table was selected last: `n` gives Enter back to the alerts.
    key(&mut a, KeyCode::Char('n'));
    key(&mut a, KeyCode::Enter);
    let open = a.alerts.detail.clone();
    assert!(open.is_some(), "cpu-starved stands an alert after 5 min");
    key(&mut a, KeyCode::End);
    let small = buffer_to_string(&render_at(&mut a, &engine, 80, 24, now));
    assert!(small.contains("Alert details"), "{small}");
    let big = buffer_to_string(&render_at(&mut a, &engine, 200, 60, now));
    assert!(big.contains("Alert details"), "{big}");
    assert_eq!(
        a.alerts.detail.as_ref().map(|d| &d.of),
        open.as_ref().map(|d| &d.of)
    );
    assert_eq!(a.selected_pid(), pid);
    key(&mut a, KeyCode::Esc);
    let small = render_at(&mut a, &engine, 80, 24, now);
    assert_eq!(a.selected_pid(), pid);
    // The selected row is on screen at the small size too.
    let l = layout::compute(Rect::new(0, 0, 80, 24), 8, true);
    assert!(a.scroll <= a.selected && a.selected < a.scroll + l.page_rows().max(1));
    let _ = (small, T0);
}

#[test]
fn minus_folds_the_selected_subtree_and_plus_unfolds_it() {
    let engine = fixtures::engine(1);
    let mut a = app();
    let s = buffer_to_string(&render(&mut a, &engine, 80, 24));
    assert!(s.contains("├─ python -c"), "{s}");
    // The first row is GPU 0's trainer with its two workers.
    assert_eq!(a.selected_pid(), Some(1000));
    key(&mut a, KeyCode::Char('-'));
    let s = buffer_to_string(&render(&mut a, &engine, 80, 24));
    assert!(
        !s.contains("├─ python -c") && !s.contains("└─ python -c"),
        "{s}"
    );
    let row = s
        .lines()
        .find(|l| l.contains("   1000 alice"))
        .unwrap_or("");
    assert!(row.contains("[+2] [job 3"), "{row}");
    // The table lists the rows it shows; the fold says what it hides.
    assert!(s.contains("Processes 4 "), "{s}");
    // The chart window did not move.
    assert_eq!(a.window.span_ms(), 300_000);
    key(&mut a, KeyCode::Char('+'));
    let s = buffer_to_string(&render(&mut a, &engine, 120, 40));
    assert!(s.contains("├─ python -c") && !s.contains("[+2]"), "{s}");
    // The flat view has no subtrees: `-` does nothing there.
    key(&mut a, KeyCode::Char('t'));
    assert_eq!(
        a.handle_key(KeyEvent::new(KeyCode::Char('-'), KeyModifiers::NONE)),
        Action::None
    );
}

#[test]
fn at_80x24_the_help_scrolls_through_every_key() {
    let engine = fixtures::engine(8);
    let mut a = app();
    render(&mut a, &engine, 80, 24);
    key(&mut a, KeyCode::Char('?'));
    let mut seen = String::new();
    for _ in 0..40 {
        seen.push_str(&buffer_to_string(&render(&mut a, &engine, 80, 24)));
        key(&mut a, KeyCode::Down);
    }
    assert!(seen.contains("↑ ↓ more: 1–"), "{seen}");
    // Every action outside the replay (whose keys show only while one plays) is listed.
    for b in crate::ui::keys::BINDINGS {
        if b.group == crate::ui::keys::Group::Replay {
            continue;
        }
        let label = a.keymap.label(b.action);
        assert!(seen.contains(&format!(" {label}")), "{} ({label})", b.name);
    }
    for words in [
        "tree: unfold / fold",
        "one user's processes",
        "charts: next series",
    ] {
        assert!(seen.contains(words), "{words}");
    }
    assert!(seen.contains("does not apply"), "the last line");
    // Scrolled, any other key still closes it.
    assert!(a.help);
    key(&mut a, KeyCode::Char('x'));
    assert!(!a.help);
}

/// The table's row of `pid` on `screen`.
fn row_of(screen: &str, pid: u32) -> String {
    let want = pid.to_string();
    screen
        .lines()
        .find(|l| {
            let bare = l.trim_start().trim_start_matches('*');
            bare.split_whitespace().next() == Some(&want)
        })
        .unwrap_or_else(|| panic!("no row for {pid} in\n{screen}"))
        .to_string()
}

#[test]
fn space_tags_rows_which_the_table_marks_and_u_untags_them_at_80x24() {
    let engine = fixtures::engine(2);
    let mut a = app();
    render(&mut a, &engine, 80, 24);
    let first = a.selected_pid().expect("a row");
    key(&mut a, KeyCode::Char(' '));
    let second = a.selected_pid().expect("a row");
    assert_ne!(first, second, "Space moves down a row, as in htop");
    key(&mut a, KeyCode::Char(' '));
    let s = buffer_to_string(&render(&mut a, &engine, 80, 24));
    assert!(s.contains("· 2 tagged"), "{s}");
    for pid in [first, second] {
        assert!(row_of(&s, pid).trim_start().starts_with('*'), "{s}");
    }
    let third = a.selected_pid().expect("a row");
    assert!(!row_of(&s, third).trim_start().starts_with('*'), "{s}");
    // The status line says what tagging is for, with the keys as bound.
    assert!(s.contains("2 tagged: F9 i K r reach them all"), "{s}");
    // Space on a tagged row untags it.
    key(&mut a, KeyCode::Up);
    key(&mut a, KeyCode::Char(' '));
    let s = buffer_to_string(&render(&mut a, &engine, 80, 24));
    assert!(s.contains("· 1 tagged"), "{s}");
    assert!(!row_of(&s, second).trim_start().starts_with('*'), "{s}");
    key(&mut a, KeyCode::Char('U'));
    let s = buffer_to_string(&render(&mut a, &engine, 80, 24));
    assert!(!s.contains("· 1 tagged") && s.contains("untagged 1"), "{s}");
    assert!(!row_of(&s, first).trim_start().starts_with('*'), "{s}");
}

#[test]
fn f6_opens_the_sort_menu_on_the_current_column_and_enter_sorts_at_80x24() {
    let engine = fixtures::engine(2);
    let mut a = app();
    render(&mut a, &engine, 80, 24);
    key(&mut a, KeyCode::F(6));
    let s = buffer_to_string(&render(&mut a, &engine, 80, 24));
    assert!(s.contains(" Sort by "), "{s}");
    assert!(s.contains("VRAM     ▼ now"), "{s}");
    assert!(s.contains("Enter sorts · Esc keeps"), "{s}");
    // Two down from VRAM: SM%, then CPU%.
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::Enter);
    let s = buffer_to_string(&render(&mut a, &engine, 80, 24));
    assert!(!s.contains(" Sort by "), "{s}");
    assert!(s.contains("sort CPU% ▼"), "{s}");
    // Esc leaves the sort as it was.
    key(&mut a, KeyCode::F(6));
    key(&mut a, KeyCode::Up);
    key(&mut a, KeyCode::Esc);
    let s = buffer_to_string(&render(&mut a, &engine, 80, 24));
    assert!(s.contains("sort CPU% ▼"), "{s}");
}

#[test]
fn help_rows_wrap_at_words_instead_of_being_cut_at_80_and_60_columns() {
    let engine = fixtures::engine(2);
    for width in [80u16, 60] {
        let mut a = app();
        // Tall, so nothing scrolls: the width is what wraps.
        render(&mut a, &engine, width, 120);
        key(&mut a, KeyCode::Char('?'));
        let s = buffer_to_string(&render(&mut a, &engine, width, 120));
        let mut descriptions = String::new();
        let boxed: Vec<&str> = s
            .lines()
            .skip_while(|l| !l.contains("┌ gpumeter keys"))
            .skip(1)
            .take_while(|l| !l.contains('└'))
            .collect();
        assert!(!boxed.is_empty(), "{width}: no help\n{s}");
        for line in &boxed {
            let inner: String = line.chars().skip_while(|c| *c != '│').skip(1).collect();
            let inner = inner.trim_end().trim_end_matches('│');
            // One space, the key column (16), then the description.
            if inner.chars().count() > 17 {
                let text: String = inner.chars().skip(17).collect();
                descriptions.push(' ');
                descriptions.push_str(text.trim());
            }
        }
        let descriptions = descriptions
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        for (_, words) in crate::ui::widgets::help::rows(&a) {
            assert!(descriptions.contains(words), "{width}: {words:?} in\n{s}");
        }
        // The legend under the keys wraps too.
        let legend = boxed
            .iter()
            .map(|l| l.trim().trim_matches('│').trim())
            .collect::<Vec<_>>()
            .join(" ");
        assert!(legend.contains("(a worker holds no VRAM)"), "{width}:\n{s}");
    }
}
