//! The key table, `[keys]` parsing and the clash check.

use std::collections::BTreeMap;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;

fn ev(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn custom(pairs: &[(&str, &[&str])]) -> BTreeMap<String, Vec<String>> {
    pairs
        .iter()
        .map(|(a, ks)| (a.to_string(), ks.iter().map(|k| k.to_string()).collect()))
        .collect()
}

#[test]
fn the_built_in_table_has_no_clash_and_every_action_once() {
    let map = KeyMap::with(&BTreeMap::new()).unwrap();
    for bind in BINDINGS {
        assert!(!map.label(bind.action).is_empty(), "{}", bind.name);
        let n = BINDINGS.iter().filter(|b| b.action == bind.action).count();
        assert_eq!(n, 1, "{} listed twice", bind.name);
        let same_name = BINDINGS.iter().filter(|b| b.name == bind.name).count();
        assert_eq!(same_name, 1, "{}", bind.name);
    }
    assert_eq!(map, KeyMap::default());
}

#[test]
fn default_keys_reach_their_actions() {
    let map = KeyMap::default();
    assert_eq!(
        map.action(&ev(KeyCode::Char('q')), false),
        Some(KeyAction::Quit)
    );
    assert_eq!(map.action(&ev(KeyCode::Up), false), Some(KeyAction::Up));
    // Space tags a live process and pauses a replay.
    assert_eq!(
        map.action(&ev(KeyCode::Char(' ')), false),
        Some(KeyAction::Tag)
    );
    assert_eq!(
        map.action(&ev(KeyCode::Char(' ')), true),
        Some(KeyAction::Pause)
    );
    assert_eq!(
        map.action(&ev(KeyCode::Char('U')), true),
        Some(KeyAction::UntagAll)
    );
    assert_eq!(
        map.action(&ev(KeyCode::Char('q')), true),
        Some(KeyAction::Quit)
    );
    assert_eq!(
        map.action(&ev(KeyCode::BackTab), false),
        Some(KeyAction::PrevGpu)
    );
    assert_eq!(
        map.action(&ev(KeyCode::Enter), false),
        Some(KeyAction::AlertDetail)
    );
    // Shift arrives with the capital; it is not a separate modifier to match.
    let shifted = KeyEvent::new(KeyCode::Char('G'), KeyModifiers::SHIFT);
    assert_eq!(map.action(&shifted, false), Some(KeyAction::Last));
    // A Ctrl chord is not the plain key.
    let ctrl_q = KeyEvent::new(KeyCode::Char('q'), KeyModifiers::CONTROL);
    assert_eq!(map.action(&ctrl_q, false), None);
    assert_eq!(map.action(&ev(KeyCode::Esc), false), None);
    assert_eq!(map.label(KeyAction::Up), "↑ k");
    assert_eq!(map.first_label(KeyAction::Pause), "Space");
}

#[test]
fn a_custom_key_replaces_the_default_one() {
    let map = KeyMap::with(&custom(&[("quit", &["x"]), ("snooze", &["Ctrl-z", "F11"])])).unwrap();
    assert_eq!(
        map.action(&ev(KeyCode::Char('x')), false),
        Some(KeyAction::Quit)
    );
    assert_eq!(map.action(&ev(KeyCode::Char('q')), false), None);
    let ctrl_z = KeyEvent::new(KeyCode::Char('z'), KeyModifiers::CONTROL);
    assert_eq!(map.action(&ctrl_z, false), Some(KeyAction::Snooze));
    assert_eq!(
        map.action(&ev(KeyCode::F(11)), false),
        Some(KeyAction::Snooze)
    );
    assert_eq!(map.label(KeyAction::Snooze), "Ctrl-z F11");
}

#[test]
fn a_clash_names_both_actions() {
    // `a` is acknowledge's default.
    let e = KeyMap::with(&custom(&[("snooze", &["a"])])).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("`acknowledge`") && text.contains("`snooze`"),
        "{text}"
    );
    assert!(text.contains("`a`"), "{text}");
    // Moving acknowledge away first makes room.
    let map = KeyMap::with(&custom(&[("snooze", &["a"]), ("acknowledge", &["A"])])).unwrap();
    assert_eq!(
        map.action(&ev(KeyCode::Char('a')), false),
        Some(KeyAction::Snooze)
    );
    // Two custom keys on one key clash too.
    let e = KeyMap::with(&custom(&[("quit", &["Space"])])).unwrap_err();
    assert!(
        e.to_string().contains("`quit`") && e.to_string().contains("`tag`"),
        "{e}"
    );
}

#[test]
fn a_live_only_key_may_double_as_a_replay_key_and_nothing_else() {
    // Tagging is for this machine's processes, replay keys for a recording: one key can be
    // both, and which follows whether a recording plays.
    let map = KeyMap::with(&custom(&[("tag", &["["])])).unwrap();
    assert_eq!(
        map.action(&ev(KeyCode::Char('[')), false),
        Some(KeyAction::Tag)
    );
    assert_eq!(
        map.action(&ev(KeyCode::Char('[')), true),
        Some(KeyAction::SeekBack)
    );
    // Space, freed by tag, is still pause's in a replay and nothing live.
    assert_eq!(
        map.action(&ev(KeyCode::Char(' ')), false),
        Some(KeyAction::Pause)
    );
    // With any other action it clashes, whichever comes first in the table.
    for (action, key, other) in [
        ("tag", "s", "sort"),
        ("untag_all", "q", "quit"),
        // Actions listed after tag in the table.
        ("tag", "n", "next_alert"),
        ("untag_all", "c", "chart_series"),
    ] {
        let e = KeyMap::with(&custom(&[(action, &[key])]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("`{action}`")) && e.contains(&format!("`{other}`")),
            "{e}"
        );
    }
    let e = KeyMap::with(&custom(&[("untag_all", &["Space"])]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("`tag`") && e.contains("`untag_all`"), "{e}");
}

#[test]
fn bad_names_and_keys_are_errors_that_say_what() {
    let e = KeyMap::with(&custom(&[("quitt", &["q"])]))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("unknown action `quitt`") && e.contains("quit,"),
        "{e}"
    );
    let e = KeyMap::with(&custom(&[("quit", &["Hyper-q"])]))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("[keys] quit") && e.contains("`Hyper-q` is not a key"),
        "{e}"
    );
    let e = KeyMap::with(&custom(&[("quit", &[])]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("no key given"), "{e}");
    assert!(parse_key("Esc").unwrap_err().contains("cannot be bound"));
    assert!(parse_key("Ctrl-c").unwrap_err().contains("always quits"));
    assert!(parse_key("F13").is_err());
    assert_eq!(parse_key("pgdn").unwrap(), parse_key("PageDown").unwrap());
    assert_eq!(parse_key("space").unwrap().label(), "Space");
}

#[test]
fn the_default_config_documents_every_action_with_its_default_keys() {
    let text = include_str!("../../../config/default.toml");
    let keys = text.split("[keys]").nth(1).expect("a [keys] section");
    for bind in BINDINGS {
        let want = match bind.keys {
            [one] => format!("# {} = \"{one}\"", bind.name),
            many => format!(
                "# {} = [{}]",
                bind.name,
                many.iter()
                    .map(|k| format!("\"{k}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        assert!(keys.contains(&want), "{want}");
    }
}

#[test]
fn config_keys_reach_the_map_and_a_clash_names_the_file_and_line() {
    use gpumeter_core::config::{KeySettings, Origin};
    let mut k = KeySettings::default();
    k.bindings.insert("snooze".into(), vec!["a".into()]);
    k.origins.insert(
        "snooze".into(),
        Origin::File {
            name: "my.toml".into(),
            line: 3,
            col: 10,
        },
    );
    let e = KeyMap::from_settings(&k).unwrap_err().to_string();
    assert!(e.starts_with("my.toml:3:10: [keys]"), "{e}");
    assert!(e.contains("`acknowledge`") && e.contains("`snooze`"), "{e}");
}
