//! Shared test harnesses, and [`gpumeter`]: the one way a test runs the binary.

use std::path::Path;
use std::process::Command;

use assert_cmd::cargo::CommandCargoExt;

pub mod fake_nvml;
pub mod serve;
pub mod tmux;

/// The built binary, kept off the user's files: HOME, the config and the state directories are
/// under `home` (so the default ledger is `home/state/gpumeter/ledger.sqlite`), and no NVML
/// library named by the environment is picked up.
pub fn gpumeter(home: &Path) -> Command {
    let mut cmd = Command::cargo_bin("gpumeter").unwrap();
    cmd.env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env_remove("GPUMETER_NVML_LIB");
    // Not on a cloud (whatever box CI runs on): no DMI strings, no pod variables.
    cmd.env("GPUMETER_DMI_ROOT", "")
        .env("GPUMETER_BLOCK_ROOT", "")
        .env("GPUMETER_NVIDIA_GPUS_ROOT", "");
    for var in gpumeter_core::cloud::local::POD_VARS {
        cmd.env_remove(var);
    }
    cmd
}

/// The default ledger of a [`gpumeter`] run under `home`.
pub fn default_ledger(home: &Path) -> std::path::PathBuf {
    home.join("state/gpumeter/ledger.sqlite")
}

/// Runs `cmd`, asserts it succeeded (its stderr in the message otherwise) and returns its
/// stdout.
pub fn stdout_ok(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}
