//! Link-time layout of the release binary's code: the functions the dashboard's loop runs every
//! tick (bench/code-order/hot-functions.txt, made by bench/code-order/record.py) are placed side
//! by side in a section of their own before `.text`, so the pages the loop keeps mapped are few
//! (the kernel maps each faulted code page's cached neighbours too, 64 KiB at a time). It
//! changes where code lies, never what it does. The list holds mangled names with their hashes
//! as `*`, so a rebuild with other dependencies still matches them; a name that matches nothing
//! is no error. Only for release builds linked by lld on x86_64 Linux (rustc's default there).

use std::path::Path;

fn main() {
    let list = Path::new("bench/code-order/hot-functions.txt");
    println!("cargo:rerun-if-changed={}", list.display());
    println!("cargo:rerun-if-env-changed=GPUMETER_NO_CODE_ORDER");
    let target = std::env::var("TARGET").unwrap_or_default();
    let release = std::env::var("PROFILE").is_ok_and(|p| p == "release");
    let off = std::env::var_os("GPUMETER_NO_CODE_ORDER").is_some();
    if !release || off || target != "x86_64-unknown-linux-gnu" || !links_with_lld() {
        return;
    }
    let (Ok(text), Some(out)) = (std::fs::read_to_string(list), std::env::var_os("OUT_DIR")) else {
        return;
    };
    let script = Path::new(&out).join("code-order.ld");
    if std::fs::write(&script, linker_script(&text)).is_ok() {
        println!(
            "cargo:rustc-link-arg-bin=gpumeter=-Wl,-T,{}",
            script.display()
        );
    }
}

/// One output section, `.text.loop`, holding the listed functions' sections in the list's
/// order, inserted before `.text`: with INSERT the linker keeps its own layout for the rest.
fn linker_script(list: &str) -> String {
    let mut s = String::from("SECTIONS\n{\n  .text.loop : {\n");
    for name in list.lines().map(str::trim).filter(|l| is_pattern(l)) {
        s.push_str(&format!("    *(.text.{name} .text.unlikely.{name})\n"));
    }
    s.push_str("  }\n}\nINSERT BEFORE .text;\n");
    s
}

/// A line the script can hold as one pattern: a mangled name's characters and `*`.
fn is_pattern(line: &str) -> bool {
    !line.is_empty()
        && line
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_$.*".contains(&b))
}

/// rustc links with its own lld on x86_64 Linux from 1.90 on, unless a linker is chosen: GNU ld
/// would place the section differently, so anything else gets the default layout.
fn links_with_lld() -> bool {
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    if flags.contains("linker")
        || std::env::var_os("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER").is_some()
    {
        return false;
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let Ok(out) = std::process::Command::new(rustc).arg("-vV").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let minor = text
        .lines()
        .find_map(|l| l.strip_prefix("release: 1."))
        .and_then(|rest| rest.split('.').next())
        .and_then(|m| m.parse::<u32>().ok());
    minor.is_some_and(|m| m >= 90)
}
