//! htop's `u` as a user meets it: the picker lists the users present, Enter narrows the table
//! to one user's processes (said in its title), Esc in the picker shows everyone again; at
//! 80×24 and 120×40.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::ui::tests::fixtures::{self, buffer_to_string, render};
use crate::ui::*;

fn key(app: &mut App, code: KeyCode) {
    app.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
}

/// The process table's rows (below its title and header) on `screen`.
fn table_rows(screen: &str) -> Vec<&str> {
    screen
        .lines()
        .skip_while(|l| !l.contains("    PID USER"))
        .skip(1)
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .collect()
}

#[test]
fn u_picks_a_user_and_the_table_shows_only_theirs_at_80x24() {
    let engine = fixtures::engine(1);
    let mut a = App::new(&fixtures::options());
    let s = buffer_to_string(&render(&mut a, &engine, 80, 24));
    assert_eq!(table_rows(&s).len(), 6, "{s}");
    key(&mut a, KeyCode::Char('u'));
    let s = buffer_to_string(&render(&mut a, &engine, 80, 24));
    assert!(s.contains("Show one user's processes"), "{s}");
    for u in ["alice", "bob", "mallory"] {
        assert!(s.contains(&format!("│ {u} ")), "{u}:\n{s}");
    }
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::Enter);
    let s = buffer_to_string(&render(&mut a, &engine, 80, 24));
    assert!(!s.contains("Show one user's processes"), "{s}");
    assert!(s.contains("Processes 1 "), "{s}");
    assert!(s.contains("· user bob "), "{s}");
    let rows = table_rows(&s);
    assert_eq!(rows.len(), 1, "{s}");
    assert!(rows[0].contains("3100 bob"), "{s}");
    // Esc in the picker: everyone's again.
    key(&mut a, KeyCode::Char('u'));
    key(&mut a, KeyCode::Esc);
    let s = buffer_to_string(&render(&mut a, &engine, 80, 24));
    assert!(!s.contains("· user "), "{s}");
    assert_eq!(table_rows(&s).len(), 6, "{s}");
}

#[test]
fn at_120x40_a_trainers_user_keeps_its_tree() {
    let engine = fixtures::engine(2);
    let mut a = App::new(&fixtures::options());
    render(&mut a, &engine, 120, 40);
    key(&mut a, KeyCode::Char('u'));
    // alice is first: her trainers and their workers, nobody else's.
    key(&mut a, KeyCode::Enter);
    let s = buffer_to_string(&render(&mut a, &engine, 120, 40));
    assert!(s.contains("· user alice "), "{s}");
    let rows = table_rows(&s);
    assert_eq!(rows.len(), 6, "{s}");
    assert!(rows.iter().all(|r| r.contains(" alice ")), "{s}");
    assert!(rows.iter().any(|r| r.contains("└─ python")), "{s}");
}
