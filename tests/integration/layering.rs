//! The dependency rule, checked on the source. Between the crates the compiler keeps it: the core
//! (`crates/gpumeter-core`) cannot name the front-ends of the `gpumeter` crate. Inside the core,
//! the engine imports none of the rooms above it or beside it (config, notify, the session),
//! and `notify` does not read `config` (config resolves into notify's settings, never the
//! reverse). Inside the binary crate, the front-ends follow the rules below.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The rooms a file's code names, from `crate::room` paths and `use crate::{room, …}` groups,
/// and the core's from `gpumeter_core::room` paths (as `core:room`, so that the core's
/// `fleet` model is not the binary's `fleet` front-end). Comments
/// are skipped: a doc link to the room above (`[`crate::session`]`) says who calls, it is no
/// dependency.
fn rooms_used(text: &str) -> Vec<String> {
    let named = |prefix: &str, name: &str| {
        if prefix == "crate::" {
            name.to_string()
        } else {
            format!("core:{name}")
        }
    };
    let code: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let text = code.as_str();
    let mut out = Vec::new();
    for prefix in ["crate::", "gpumeter_core::"] {
        for (i, _) in text.match_indices(prefix) {
            if prefix == "crate::" && text[..i].ends_with("gpumeter_") {
                continue;
            }
            let rest = &text[i + prefix.len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let inner = group.split('}').next().unwrap_or_default();
                for part in inner.split(',') {
                    let name = part.trim().split("::").next().unwrap_or_default().trim();
                    if !name.is_empty() {
                        out.push(named(prefix, name));
                    }
                }
            } else {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect::<String>();
                out.push(named(prefix, &name));
            }
        }
    }
    out
}

/// The core crate's rooms.
fn check_core(room: &str, forbidden: &[&str]) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/gpumeter-core/src");
    check_dir(&root.join(room), room, forbidden);
}

/// The binary crate's rooms (the front-ends).
fn check(room: &str, forbidden: &[&str]) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    check_dir(&root.join(room), room, forbidden);
}

fn check_dir(root: &Path, room: &str, forbidden: &[&str]) {
    let mut files = Vec::new();
    rust_files(root, &mut files);
    assert!(!files.is_empty(), "no sources under {}", root.display());
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for used in rooms_used(&text) {
            assert!(
                !forbidden.contains(&used.as_str()),
                "{} uses {used}, which {room} must not depend on",
                f.display()
            );
        }
    }
}

#[test]
fn the_engine_knows_nothing_of_the_rooms_above_it() {
    check_core("engine", &["config", "notify", "session", "cloud"]);
}

#[test]
fn where_am_i_reads_no_config_and_runs_no_session() {
    // `cloud` is handed its options and hands back facts and a priced rate; config calls it.
    check_core(
        "cloud",
        &["config", "engine", "session", "notify", "ledger", "source"],
    );
}

#[test]
fn notify_does_not_read_config() {
    check_core("notify", &["config", "session"]);
}

#[test]
fn sources_and_recordings_know_nothing_of_the_engine_or_the_front_ends() {
    let above = ["engine", "session", "config", "notify", "ledger", "billing"];
    check_core("source", &above);
    check_core("recording", &above);
}

/// The binary crate's front-ends. Each shows what the core decided and never imports another
/// (what two of them share lives in the core), nor `cli`: each takes plain options, built in
/// `main.rs` and `subcommands.rs`.
const FRONT_ENDS: [&str; 7] = ["ui", "watch", "serve", "fleet", "check", "report", "eval"];

#[test]
fn no_front_end_imports_another_or_the_argument_parser() {
    for room in FRONT_ENDS {
        let mut forbidden: Vec<&str> = FRONT_ENDS.iter().copied().filter(|r| *r != room).collect();
        forbidden.push("cli");
        check(room, &forbidden);
    }
}

#[test]
fn the_argument_parser_names_no_front_end() {
    check("cli", &FRONT_ENDS);
}

#[test]
fn fleet_keeps_no_ledger_and_reads_no_local_source() {
    // It reads servers through the model's document: no local source, ledger or channels.
    check(
        "fleet",
        &[
            "core:config",
            "core:ledger",
            "core:notify",
            "core:source",
            "core:session",
            "core:engine",
        ],
    );
    check_core(
        "fleet",
        &["config", "ledger", "notify", "source", "session"],
    );
}

#[test]
fn the_check_sees_grouped_imports_and_both_crates() {
    assert_eq!(
        rooms_used(
            "use crate::{config::Env, ui};\nlet x = crate::cli::Cli;\nuse gpumeter_core::session::Step;\n//! see [`crate::session`]"
        ),
        ["config", "ui", "cli", "core:session"]
    );
}

/// The core crate pulls in no terminal, argument-parsing or HTTP-server crate, directly or
/// through another: its whole dependency closure in Cargo.lock (dev-dependencies included, so
/// this is stricter than the build) names none of them.
#[test]
fn the_core_depends_on_no_terminal_cli_or_http_server_crate() {
    let lock =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.lock")).unwrap();
    let lock: toml::Table = toml::from_str(&lock).unwrap();
    let packages = lock["package"].as_array().unwrap();
    let deps_of = |name: &str| -> Vec<String> {
        packages
            .iter()
            .filter(|p| p["name"].as_str() == Some(name))
            .flat_map(|p| p.get("dependencies").and_then(|d| d.as_array()).cloned())
            .flatten()
            .filter_map(|d| {
                d.as_str()
                    .map(|s| s.split(' ').next().unwrap_or(s).to_string())
            })
            .collect()
    };
    let mut seen = std::collections::BTreeSet::new();
    let mut todo = vec!["gpumeter-core".to_string()];
    while let Some(name) = todo.pop() {
        if seen.insert(name.clone()) {
            todo.extend(deps_of(&name));
        }
    }
    assert!(
        seen.contains("rusqlite"),
        "the walk found the core's dependencies: {seen:?}"
    );
    for banned in ["ratatui", "crossterm", "clap", "hyper"] {
        assert!(!seen.contains(banned), "gpumeter-core depends on {banned}");
    }
}
