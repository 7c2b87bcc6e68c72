//! The list of the loop's functions that build.rs lays out first (bench/code-order): one mangled
//! name a line, hashes as `*`, each becoming one pattern of a linker script.

use std::collections::HashSet;

const LIST: &str = include_str!("../../bench/code-order/hot-functions.txt");

#[test]
fn hot_functions_are_one_mangled_name_a_line_listed_once() {
    let names: Vec<&str> = LIST.lines().collect();
    // The per-tick path alone is hundreds of functions; a list cut short lays out nothing useful.
    assert!(names.len() >= 100, "{} names", names.len());
    let mut seen = HashSet::new();
    for (i, name) in names.iter().enumerate() {
        // Only what a mangled name and a glob hold (build.rs skips any other line, and a
        // space or a parenthesis would end the pattern early in the linker script).
        assert!(
            name.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_$.*".contains(&b)),
            "line {}: {name:?}",
            i + 1
        );
        assert!(seen.insert(*name), "line {}: {name} listed twice", i + 1);
    }
    // The functions every tick runs are among them (a list recorded from the wrong program
    // would miss them): the /proc stat parser and the dashboard's text widget's line writer.
    // Written with the hash as `*`, as a rebuild with other dependencies renames them.
    for path in [
        "4host4stat17parse_stat_fields17h*",
        "2ui7widgets4text8put_line17h*",
    ] {
        assert!(names.iter().any(|n| n.ends_with(path)), "{path} not listed");
    }
    // Most are Rust functions, legacy (_ZN) or v0 (_R) mangled.
    let rust = names
        .iter()
        .filter(|n| n.starts_with("_ZN") || n.starts_with("_R"))
        .count();
    assert!(rust * 10 >= names.len() * 9, "{rust} of {}", names.len());
}
