//! Alert selection, the detail view's keys and the history cursor.

use super::*;

fn ids(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn history(n: i64) -> Vec<(i64, String)> {
    (0..n).map(|i| (1_000 - i, format!("h{i}"))).collect()
}

#[test]
fn the_selection_follows_its_alert_when_alerts_come_and_go() {
    let mut v = AlertView::default();
    v.sync(ids(&["a", "b", "c"]), Vec::new());
    assert_eq!(v.selected_id(), Some("a"));
    assert_eq!(v.select_by(1), Action::Redraw);
    assert_eq!(v.selected_id(), Some("b"));
    // A more severe alert arrives on top: still b, now second... third.
    v.sync(ids(&["x", "a", "b", "c"]), Vec::new());
    assert_eq!((v.selected, v.selected_id()), (2, Some("b")));
    // b clears: the selection stays at that place.
    v.sync(ids(&["x", "a", "c"]), Vec::new());
    assert_eq!(v.selected_id(), Some("c"));
    // Wraps both ways.
    v.select_by(1);
    assert_eq!(v.selected_id(), Some("x"));
    v.select_by(-1);
    assert_eq!(v.selected_id(), Some("c"));
    v.sync(Vec::new(), Vec::new());
    assert_eq!(v.selected_id(), None);
    assert_eq!(v.open_detail(), Action::None, "nothing to open");
    let mut one = AlertView::default();
    one.sync(ids(&["only"]), Vec::new());
    assert_eq!(one.select_by(1), Action::None);
}

#[test]
fn until_the_user_picks_an_alert_the_selection_stays_on_the_worst() {
    let mut v = AlertView::default();
    // The budget INFO stands first; the HIGH starved verdict arrives a minute later on top.
    v.sync(ids(&["budget"]), Vec::new());
    assert_eq!(v.selected_id(), Some("budget"));
    v.sync(ids(&["starved", "budget"]), Vec::new());
    assert_eq!((v.selected, v.selected_id()), (0, Some("starved")));
    // Once the user moves, the selection is theirs and follows its alert.
    v.select_by(1);
    v.sync(ids(&["hung", "starved", "budget"]), Vec::new());
    assert_eq!((v.selected, v.selected_id()), (2, Some("budget")));
    // Opening an alert is a choice too.
    let mut w = AlertView::default();
    w.sync(ids(&["a", "b"]), Vec::new());
    w.open_detail();
    w.sync(ids(&["x", "a", "b"]), Vec::new());
    assert_eq!(w.selected_id(), Some("a"));
}

#[test]
fn a_and_z_target_the_open_detail_else_the_selection() {
    let mut v = AlertView::default();
    v.sync(ids(&["a", "b"]), Vec::new());
    v.select_by(1);
    assert_eq!(v.target_id(), Some("b"));
    v.open_detail();
    assert!(v.overlay_open());
    // n in the detail view moves to the next alert's details.
    assert_eq!(
        v.overlay_key(Some(KeyAction::NextAlert), false),
        Action::Redraw
    );
    assert_eq!(v.target_id(), Some("a"));
    assert_eq!(
        v.overlay_key(Some(KeyAction::Acknowledge), false),
        Action::Acknowledge
    );
    assert_eq!(
        v.overlay_key(Some(KeyAction::Snooze), false),
        Action::Snooze
    );
    // Any other key closes.
    assert_eq!(v.overlay_key(None, false), Action::Redraw);
    assert!(!v.overlay_open());
}

#[test]
fn the_detail_view_scrolls_within_its_text() {
    let mut v = AlertView::default();
    v.sync(ids(&["a"]), Vec::new());
    v.open_detail();
    v.detail_scroll_max = 3;
    assert_eq!(v.overlay_key(Some(KeyAction::Up), false), Action::None);
    v.overlay_key(Some(KeyAction::Down), false);
    v.overlay_key(Some(KeyAction::PageDown), false);
    assert_eq!(v.detail.as_ref().unwrap().scroll, 3);
    assert_eq!(v.overlay_key(Some(KeyAction::Down), false), Action::None);
    v.overlay_key(Some(KeyAction::First), false);
    assert_eq!(v.detail.as_ref().unwrap().scroll, 0);
    // A resize that makes the text fit clamps the scroll.
    v.overlay_key(Some(KeyAction::Last), false);
    v.detail_scroll_max = 1;
    v.sync(ids(&["a"]), Vec::new());
    assert_eq!(v.detail.as_ref().unwrap().scroll, 1);
    // Replay keys pass through during a replay, and close the view otherwise.
    assert_eq!(
        v.overlay_key(Some(KeyAction::Pause), true),
        Action::Replay(KeyAction::Pause)
    );
    assert!(v.detail.is_some());
    v.overlay_key(Some(KeyAction::Pause), false);
    assert!(v.detail.is_none());
}

#[test]
fn the_history_opens_an_entry_and_closing_it_goes_back_to_the_history() {
    let mut v = AlertView::default();
    v.sync(Vec::new(), history(3));
    v.open_history();
    assert_eq!(v.overlay_key(Some(KeyAction::Up), false), Action::None);
    v.overlay_key(Some(KeyAction::Down), false);
    v.overlay_key(Some(KeyAction::Down), false);
    assert_eq!(v.overlay_key(Some(KeyAction::Down), false), Action::None);
    assert_eq!(v.history, Some(2));
    assert_eq!(
        v.overlay_key(Some(KeyAction::AlertDetail), false),
        Action::Redraw
    );
    assert_eq!(
        v.detail.as_ref().unwrap().of,
        DetailOf::History {
            at_unix_ms: 998,
            id: "h2".into()
        }
    );
    // A history entry is not acted on: a closes the view like any other key.
    assert_eq!(v.target_id(), None);
    v.overlay_key(Some(KeyAction::Acknowledge), false);
    assert!(v.detail.is_none());
    assert_eq!(v.history, Some(2), "back in the history, at the same entry");
    v.overlay_key(None, false);
    assert!(!v.overlay_open());
    // The cursor stays inside a history that shrank.
    v.open_history();
    v.overlay_key(Some(KeyAction::Last), false);
    v.sync(Vec::new(), history(1));
    assert_eq!(v.history, Some(0));
}
