//! Link-time layout of the release binary's code: the functions the dashboard's loop runs every
//! tick are placed side by side at the start of `.text` (bench/code-order/hot-symbols.txt, made
//! by bench/code-order/record.py), so the pages the loop keeps mapped are few (the kernel maps
//! each faulted code page's cached neighbours too, 64 KiB at a time). It changes where code
//! lies, never what it does. Only for release builds linked by lld on x86_64 Linux (rustc's
//! default there); names missing from a build are skipped by the linker without a warning.

use std::path::Path;

fn main() {
    let list = Path::new("bench/code-order/hot-symbols.txt");
    println!("cargo:rerun-if-changed={}", list.display());
    println!("cargo:rerun-if-env-changed=GPUMETER_NO_CODE_ORDER");
    let target = std::env::var("TARGET").unwrap_or_default();
    let release = std::env::var("PROFILE").is_ok_and(|p| p == "release");
    let off = std::env::var_os("GPUMETER_NO_CODE_ORDER").is_some();
    if !release
        || off
        || target != "x86_64-unknown-linux-gnu"
        || !list.is_file()
        || !links_with_lld()
    {
        return;
    }
    let Ok(dir) = std::env::var("CARGO_MANIFEST_DIR") else {
        return;
    };
    let path = Path::new(&dir).join(list);
    println!(
        "cargo:rustc-link-arg-bin=gpumeter=-Wl,--symbol-ordering-file={}",
        path.display()
    );
    println!("cargo:rustc-link-arg-bin=gpumeter=-Wl,--no-warn-symbol-ordering");
}

/// rustc links with its own lld on x86_64 Linux from 1.90 on, unless a linker is chosen: GNU ld
/// would refuse the ordering option, so anything else gets the default layout.
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
