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
    assert_eq!(map.action(&ev(KeyCode::Char('q'))), Some(KeyAction::Quit));
    assert_eq!(map.action(&ev(KeyCode::Up)), Some(KeyAction::Up));
    assert_eq!(map.action(&ev(KeyCode::Char(' '))), Some(KeyAction::Pause));
    assert_eq!(map.action(&ev(KeyCode::BackTab)), Some(KeyAction::PrevGpu));
    assert_eq!(
        map.action(&ev(KeyCode::Enter)),
        Some(KeyAction::AlertDetail)
    );
    // Shift arrives with the capital; it is not a separate modifier to match.
    let shifted = KeyEvent::new(KeyCode::Char('G'), KeyModifiers::SHIFT);
    assert_eq!(map.action(&shifted), Some(KeyAction::Last));
    // A Ctrl chord is not the plain key.
    let ctrl_q = KeyEvent::new(KeyCode::Char('q'), KeyModifiers::CONTROL);
    assert_eq!(map.action(&ctrl_q), None);
    assert_eq!(map.action(&ev(KeyCode::Esc)), None);
    assert_eq!(map.label(KeyAction::Up), "↑ k");
    assert_eq!(map.first_label(KeyAction::Pause), "Space");
}

#[test]
fn a_custom_key_replaces_the_default_one() {
    let map = KeyMap::with(&custom(&[("quit", &["x"]), ("snooze", &["Ctrl-z", "F7"])])).unwrap();
    assert_eq!(map.action(&ev(KeyCode::Char('x'))), Some(KeyAction::Quit));
    assert_eq!(map.action(&ev(KeyCode::Char('q'))), None);
    let ctrl_z = KeyEvent::new(KeyCode::Char('z'), KeyModifiers::CONTROL);
    assert_eq!(map.action(&ctrl_z), Some(KeyAction::Snooze));
    assert_eq!(map.action(&ev(KeyCode::F(7))), Some(KeyAction::Snooze));
    assert_eq!(map.label(KeyAction::Snooze), "Ctrl-z F7");
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
    assert_eq!(map.action(&ev(KeyCode::Char('a'))), Some(KeyAction::Snooze));
    // Two custom keys on one key clash too.
    let e = KeyMap::with(&custom(&[("quit", &["Space"])])).unwrap_err();
    assert!(
        e.to_string().contains("`quit`") && e.to_string().contains("`pause`"),
        "{e}"
    );
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
