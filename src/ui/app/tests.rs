//! Key and mouse transitions of [`App`].

use crossterm::event::MouseEventKind;
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent};
use ratatui::layout::Rect;

use super::*;
use crate::ui::keys::KeyAction;
use crate::ui::layout;

fn app_with_rows(n: u32, page: usize) -> App {
    let mut app = App::new(&UiOptions::default());
    app.sync((100..100 + n).collect(), vec![0, 1, 2], page);
    app
}

fn press(app: &mut App, code: KeyCode) -> Action {
    app.handle_key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn ch(app: &mut App, c: char) -> Action {
    press(app, KeyCode::Char(c))
}

#[test]
fn q_and_ctrl_c_quit() {
    let mut app = app_with_rows(3, 10);
    assert_eq!(ch(&mut app, 'q'), Action::Quit);
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert_eq!(app.handle_key(ctrl_c), Action::Quit);
    // Ctrl-C quits even while typing a filter; plain q does not.
    ch(&mut app, '/');
    assert_eq!(ch(&mut app, 'q'), Action::Redraw);
    assert_eq!(app.filter(), "q");
    assert_eq!(app.handle_key(ctrl_c), Action::Quit);
}

#[test]
fn esc_and_a_key_read_together_as_alt_count_as_both() {
    // ESC q arriving in one read is parsed as Alt-q: it must close the help and quit.
    let mut app = app_with_rows(3, 10);
    ch(&mut app, '?');
    assert!(app.help);
    let alt_q = KeyEvent::new(KeyCode::Char('q'), KeyModifiers::ALT);
    assert_eq!(app.handle_key(alt_q), Action::Quit);
    assert!(!app.help);
    // While typing a filter, ESC j clears the filter, then j moves the selection.
    ch(&mut app, '/');
    ch(&mut app, 'x');
    let alt_j = KeyEvent::new(KeyCode::Char('j'), KeyModifiers::ALT);
    app.handle_key(alt_j);
    assert_eq!(app.filter(), "");
    assert!(!app.filter_active);
}

#[test]
fn replay_keys_reach_the_loop_only_during_a_replay() {
    let mut app = app_with_rows(3, 10);
    for c in ['>', '<', '.', ',', '[', ']', '{', '}'] {
        assert_eq!(ch(&mut app, c), Action::None, "{c:?} without a replay");
    }
    // Live, Space tags the selected process instead.
    assert_eq!(ch(&mut app, ' '), Action::Redraw);
    assert_eq!(app.tags.len(), 1);
    app.replay = Some(crate::ui::replay::ReplayStatus {
        speed: 1,
        paused: false,
        at_end: false,
        at_ms: 0,
        first_ms: 0,
    });
    assert_eq!(ch(&mut app, ' '), Action::Replay(KeyAction::Pause));
    assert_eq!(ch(&mut app, ']'), Action::Replay(KeyAction::SeekForward));
    assert_eq!(
        press(&mut app, KeyCode::Right),
        Action::Replay(KeyAction::StepForward)
    );
    assert_eq!(
        press(&mut app, KeyCode::Left),
        Action::Replay(KeyAction::StepBack)
    );
    // The process keys still work beside them.
    assert_eq!(ch(&mut app, 'j'), Action::Redraw);
}

#[test]
fn keys_follow_the_key_map() {
    let custom: std::collections::BTreeMap<String, Vec<String>> =
        [("quit".to_string(), vec!["x".to_string()])].into();
    let options = UiOptions {
        keys: crate::ui::keys::KeyMap::with(&custom).unwrap(),
        ..Default::default()
    };
    let mut app = App::new(&options);
    assert_eq!(ch(&mut app, 'q'), Action::None);
    assert_eq!(ch(&mut app, 'x'), Action::Quit);
}

#[test]
fn e_toggles_full_command_lines_and_parentheses_the_chart_window() {
    let mut app = app_with_rows(3, 10);
    assert!(!app.full_command);
    ch(&mut app, 'e');
    assert!(app.full_command);
    assert_eq!(app.window.span_ms(), 300_000);
    ch(&mut app, ')');
    assert_eq!(app.window.span_ms(), 900_000);
    ch(&mut app, '(');
    ch(&mut app, '(');
    assert_eq!(app.window.span_ms(), 60_000);
    // `+` and `-` are the tree's now: the window stays.
    ch(&mut app, '+');
    ch(&mut app, '-');
    assert_eq!(app.window.span_ms(), 60_000);
}

#[test]
fn arrows_and_jk_move_and_clamp() {
    let mut app = app_with_rows(3, 10);
    assert_eq!(press(&mut app, KeyCode::Up), Action::None);
    assert_eq!(ch(&mut app, 'j'), Action::Redraw);
    assert_eq!(press(&mut app, KeyCode::Down), Action::Redraw);
    assert_eq!(app.selected, 2);
    assert_eq!(ch(&mut app, 'j'), Action::None);
    assert_eq!(ch(&mut app, 'k'), Action::Redraw);
    assert_eq!(app.selected_pid(), Some(101));
}

#[test]
fn pages_home_end_scroll_the_view() {
    let mut app = app_with_rows(50, 10);
    press(&mut app, KeyCode::PageDown);
    assert_eq!((app.selected, app.scroll), (10, 1));
    press(&mut app, KeyCode::PageDown);
    assert_eq!((app.selected, app.scroll), (20, 11));
    ch(&mut app, 'G');
    assert_eq!((app.selected, app.scroll), (49, 40));
    press(&mut app, KeyCode::PageUp);
    assert_eq!((app.selected, app.scroll), (39, 39));
    ch(&mut app, 'g');
    assert_eq!((app.selected, app.scroll), (0, 0));
    press(&mut app, KeyCode::End);
    press(&mut app, KeyCode::Home);
    assert_eq!(app.selected, 0);
}

#[test]
fn key_releases_are_ignored() {
    let mut app = app_with_rows(3, 10);
    let mut release = KeyEvent::new(KeyCode::Char('q'), KeyModifiers::NONE);
    release.kind = KeyEventKind::Release;
    assert_eq!(app.handle_key(release), Action::None);
}

#[test]
fn tab_cycles_all_then_each_gpu_and_back_tab_reverses() {
    let mut app = app_with_rows(3, 10);
    assert_eq!(app.gpu_filter(), None);
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.gpu_filter(), Some(0));
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.gpu_filter(), Some(2));
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.gpu_filter(), None);
    press(&mut app, KeyCode::BackTab);
    assert_eq!(app.gpu_filter(), Some(2));
}

#[test]
fn tab_without_gpus_does_nothing() {
    let mut app = App::new(&UiOptions::default());
    app.sync(vec![1], vec![], 5);
    assert_eq!(press(&mut app, KeyCode::Tab), Action::None);
    assert_eq!(app.gpu_filter(), None);
}

#[test]
fn filter_typing_enter_keeps_esc_clears() {
    let mut app = app_with_rows(3, 10);
    ch(&mut app, '/');
    assert!(app.filter_active);
    for c in "torch".chars() {
        ch(&mut app, c);
    }
    press(&mut app, KeyCode::Backspace);
    assert_eq!(app.filter(), "torc");
    press(&mut app, KeyCode::Enter);
    assert!(!app.filter_active);
    assert_eq!(app.filter(), "torc");
    // Keys are commands again once the input is closed.
    assert_eq!(ch(&mut app, 't'), Action::Redraw);
    assert!(!app.tree);
    // Esc on the main screen clears a kept filter.
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.filter(), "");
    ch(&mut app, '/');
    ch(&mut app, 'x');
    press(&mut app, KeyCode::Esc);
    assert!(!app.filter_active);
    assert_eq!(app.filter(), "");
}

#[test]
fn filter_ignores_control_characters_and_caps_length() {
    let mut app = app_with_rows(3, 10);
    ch(&mut app, '/');
    assert_eq!(ch(&mut app, '\u{1b}'), Action::None);
    for _ in 0..200 {
        ch(&mut app, 'a');
    }
    assert_eq!(app.filter().len(), MAX_FILTER_CHARS);
}

#[test]
fn s_cycles_sort_with_natural_direction_and_capital_s_reverses() {
    let mut app = app_with_rows(3, 10);
    assert_eq!((app.sort, app.sort_desc), (SortColumn::Vram, true));
    ch(&mut app, 's');
    assert_eq!((app.sort, app.sort_desc), (SortColumn::Sm, true));
    ch(&mut app, 'S');
    assert!(!app.sort_desc);
    for _ in 0..5 {
        ch(&mut app, 's');
    }
    assert_eq!((app.sort, app.sort_desc), (SortColumn::Pid, false));
    ch(&mut app, 's');
    assert_eq!((app.sort, app.sort_desc), (SortColumn::User, false));
}

#[test]
fn help_opens_with_question_mark_and_any_key_closes_it() {
    let mut app = app_with_rows(3, 10);
    ch(&mut app, '?');
    assert!(app.help);
    // q closes help rather than quitting.
    assert_eq!(ch(&mut app, 'q'), Action::Redraw);
    assert!(!app.help);
    ch(&mut app, '?');
    press(&mut app, KeyCode::Esc);
    assert!(!app.help);
}

#[test]
fn selection_follows_the_process_when_rows_reorder() {
    let mut app = app_with_rows(5, 10);
    ch(&mut app, 'j');
    ch(&mut app, 'j');
    assert_eq!(app.selected_pid(), Some(102));
    app.sync(vec![104, 102, 100], vec![0], 10);
    assert_eq!(app.selected, 1);
    // The selected process exits: the index is kept (clamped) and the new row selected.
    app.sync(vec![7, 8], vec![0], 10);
    assert_eq!((app.selected, app.selected_pid()), (1, Some(8)));
    app.sync(vec![], vec![0], 10);
    assert_eq!((app.selected, app.selected_pid()), (0, None));
}

#[test]
fn status_message_is_cleared_by_the_next_key() {
    let mut app = app_with_rows(3, 10);
    app.set_status("hello");
    assert_eq!(ch(&mut app, 'x'), Action::Redraw);
    assert!(app.status.is_none());
    assert_eq!(ch(&mut app, 'x'), Action::None);
}

fn mouse(kind: MouseEventKind, column: u16, row: u16) -> MouseEvent {
    MouseEvent {
        kind,
        column,
        row,
        modifiers: KeyModifiers::NONE,
    }
}

#[test]
fn click_selects_a_row_and_a_gpu_panel_filters() {
    let screen = layout::compute(Rect::new(0, 0, 120, 40), 3, false);
    let Screen::Dashboard(l) = &screen else {
        panic!("dashboard expected")
    };
    let mut app = app_with_rows(30, screen.page_rows());
    let body = l.table_body();
    let click = mouse(MouseEventKind::Down(MouseButton::Left), 5, body.y + 4);
    assert_eq!(app.handle_mouse(click, &screen), Action::Redraw);
    assert_eq!(app.selected_pid(), Some(104));
    // Below the last row: nothing.
    let mut few = app_with_rows(2, screen.page_rows());
    let below = mouse(MouseEventKind::Down(MouseButton::Left), 5, body.y + 5);
    assert_eq!(few.handle_mouse(below, &screen), Action::None);
    // A GPU cell narrows the view to it; again, back to all.
    let gpu1 = l.gpu_cells[1];
    let on_gpu1 = mouse(
        MouseEventKind::Down(MouseButton::Left),
        gpu1.x + 1,
        gpu1.y + 1,
    );
    app.handle_mouse(on_gpu1, &screen);
    assert_eq!(app.gpu_filter(), Some(1));
    app.handle_mouse(on_gpu1, &screen);
    assert_eq!(app.gpu_filter(), None);
}

#[test]
fn wheel_scrolls_and_keeps_selection_on_screen() {
    let screen = layout::compute(Rect::new(0, 0, 80, 24), 1, false);
    let page = screen.page_rows();
    let mut app = app_with_rows(40, page);
    let down = mouse(MouseEventKind::ScrollDown, 1, 1);
    assert_eq!(app.handle_mouse(down, &screen), Action::Redraw);
    assert_eq!(app.scroll, 3);
    assert_eq!(app.selected, 3);
    for _ in 0..50 {
        app.handle_mouse(down, &screen);
    }
    assert_eq!(app.scroll, 40 - page);
    assert_eq!(app.handle_mouse(down, &screen), Action::None);
    let up = mouse(MouseEventKind::ScrollUp, 1, 1);
    app.handle_mouse(up, &screen);
    assert!(app.selected >= app.scroll && app.selected < app.scroll + page);
}

#[test]
fn mouse_on_a_too_small_screen_does_nothing() {
    let screen = layout::compute(Rect::new(0, 0, 10, 3), 1, false);
    let mut app = app_with_rows(5, 0);
    let click = mouse(MouseEventKind::Down(MouseButton::Left), 1, 1);
    assert_eq!(app.handle_mouse(click, &screen), Action::None);
}

mod any_keys {
    use super::*;
    use proptest::prelude::*;

    const KEYS: [KeyCode; 16] = [
        KeyCode::Up,
        KeyCode::Down,
        KeyCode::PageUp,
        KeyCode::PageDown,
        KeyCode::Home,
        KeyCode::End,
        KeyCode::Tab,
        KeyCode::BackTab,
        KeyCode::Esc,
        KeyCode::Enter,
        KeyCode::Backspace,
        KeyCode::Char('/'),
        KeyCode::Char('s'),
        KeyCode::Char('t'),
        KeyCode::Char('?'),
        KeyCode::Char('j'),
    ];

    proptest! {
        /// Whatever is pressed, the selection stays on a row and on screen.
        #[test]
        fn selection_stays_on_a_visible_row(
            rows in 0u32..60,
            page in 1usize..25,
            keys in proptest::collection::vec(0usize..KEYS.len(), 0..80),
            resync in proptest::collection::vec(0u32..60, 0..4),
        ) {
            let mut app = app_with_rows(rows, page);
            for (i, k) in keys.iter().enumerate() {
                let _ = press(&mut app, KEYS[*k]);
                if i % 20 == 19 {
                    // The rows change under the user's feet (processes come and go).
                    let n = resync.get(i / 20).copied().unwrap_or(rows);
                    app.sync((500..500 + n).collect(), vec![0, 1], page);
                }
                let len = app.row_pids.len();
                prop_assert!(app.selected < len.max(1));
                prop_assert!(app.scroll <= app.selected);
                prop_assert!(app.selected < app.scroll + page);
                prop_assert_eq!(app.selected_pid(), app.row_pids.get(app.selected).copied());
            }
        }
    }
}

#[test]
fn a_and_z_ask_the_loop_to_acknowledge_and_snooze() {
    let mut app = app_with_rows(3, 10);
    assert_eq!(ch(&mut app, 'a'), Action::Acknowledge);
    assert_eq!(ch(&mut app, 'z'), Action::Snooze);
    // While typing a filter they are just letters.
    ch(&mut app, '/');
    assert_eq!(ch(&mut app, 'a'), Action::Redraw);
    assert_eq!(app.filter(), "a");
}

#[test]
fn h_opens_the_alert_history_and_any_key_closes_it() {
    let mut app = app_with_rows(3, 10);
    assert_eq!(ch(&mut app, 'H'), Action::Redraw);
    assert!(app.alerts.history.is_some());
    // The closing key does nothing else: q closes the overlay, it does not quit.
    assert_eq!(ch(&mut app, 'q'), Action::Redraw);
    assert!(app.alerts.history.is_none());
    assert_eq!(ch(&mut app, 'q'), Action::Quit);
}

/// The source is told the rows on screen at each sync (it reads those every tick, the other
/// GPU processes every few): the first page, then the page scrolled to.
#[test]
fn the_rows_on_screen_are_the_sources_focus() {
    use gpumeter_core::source::focus::{ProcessFocus, Watched};
    let focus = ProcessFocus::new();
    let options = UiOptions {
        focus: focus.clone(),
        ..Default::default()
    };
    let mut app = App::new(&options);
    let rows: Vec<u32> = (100..130).collect();
    app.sync(rows.clone(), vec![0], 10);
    let mut seen = None;
    assert_eq!(
        focus.changed_since(&mut seen),
        Some(Watched::only(100..110))
    );
    assert_eq!(app.visible_pids(), (100..110).collect::<Vec<_>>());
    // A page down scrolls; the next sync (before the frame) says so.
    press(&mut app, KeyCode::PageDown);
    press(&mut app, KeyCode::PageDown);
    app.sync(rows, vec![0], 10);
    let Some(Watched::Only(now)) = focus.changed_since(&mut seen) else {
        panic!("the focus moves with the page");
    };
    assert_eq!(now, app.visible_pids());
    assert!(now.contains(&app.row_pids[app.selected]) && !now.contains(&100));
    // Fewer rows than the page: all of them.
    app.sync(vec![7, 5], vec![0], 10);
    assert_eq!(focus.changed_since(&mut seen), Some(Watched::only([5, 7])));
}

/// htop's keys do what htop users expect: F-keys, `P`/`M`/`T`/`N` sort (again: the other
/// way), `I` inverts; no default key sends a signal without asking.
#[test]
fn htop_keys_sort_invert_and_never_signal_unasked() {
    use crate::ui::sort::SortColumn;
    let mut app = app_with_rows(3, 10);
    assert_eq!(ch(&mut app, 'P'), Action::Redraw);
    assert_eq!((app.sort, app.sort_desc), (SortColumn::Cpu, true));
    ch(&mut app, 'P');
    assert_eq!((app.sort, app.sort_desc), (SortColumn::Cpu, false));
    ch(&mut app, 'I');
    assert_eq!((app.sort, app.sort_desc), (SortColumn::Cpu, true));
    ch(&mut app, 'M');
    assert_eq!(app.sort, SortColumn::Vram);
    ch(&mut app, 'T');
    assert_eq!((app.sort, app.sort_desc), (SortColumn::Runtime, true));
    ch(&mut app, 'N');
    assert_eq!((app.sort, app.sort_desc), (SortColumn::Pid, false));
    let tree = app.tree;
    assert_eq!(press(&mut app, KeyCode::F(5)), Action::Redraw);
    assert_eq!(app.tree, !tree);
    press(&mut app, KeyCode::F(3));
    assert!(app.filter_active);
    press(&mut app, KeyCode::Esc);
    // Every signal key asks first: the action is a question, never the signal itself.
    for code in [KeyCode::F(9), KeyCode::Char('i'), KeyCode::Char('K')] {
        assert!(
            matches!(press(&mut app, code), Action::Act(_)),
            "{code:?} did not ask"
        );
    }
    assert_eq!(press(&mut app, KeyCode::F(10)), Action::Quit);
}
