//! The list of the loop's functions that build.rs hands to the linker (bench/code-order): one
//! symbol name a line, as lld's `--symbol-ordering-file` reads it.

use std::collections::HashSet;

const LIST: &str = include_str!("../../bench/code-order/hot-symbols.txt");

#[test]
fn hot_symbols_are_one_mangled_name_a_line_listed_once() {
    let names: Vec<&str> = LIST.lines().collect();
    // The per-tick path alone is hundreds of functions; a list cut short lays out nothing useful.
    assert!(names.len() >= 100, "{} names", names.len());
    let mut seen = HashSet::new();
    for (i, name) in names.iter().enumerate() {
        // Legacy (_ZN) or v0 (_R) Rust mangling: no spaces, quotes or callgrind's marks, which
        // would make the line a name no object defines.
        assert!(
            name.starts_with("_ZN") || name.starts_with("_R"),
            "line {}: {name:?}",
            i + 1
        );
        assert!(
            name.bytes().all(|b| b.is_ascii_graphic() && b != b'\''),
            "line {}: {name:?}",
            i + 1
        );
        assert!(seen.insert(*name), "line {}: {name} listed twice", i + 1);
    }
    // The functions every tick runs are among them (a list recorded from the wrong program
    // would miss them): the /proc stat parser and the dashboard's text widget.
    for path in ["4host4scan10parse_stat", "2ui7widgets4text6render"] {
        assert!(names.iter().any(|n| n.contains(path)), "{path} not listed");
    }
}
