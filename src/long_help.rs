//! `gpumeter --help`: the command line's options (the `cli` room) followed by the dashboard's
//! keys from the key table. Here in the binary, not in `cli`: the argument parser names no
//! front-end.

/// The command line as `main` parses it: `Cli`, with the dashboard's keys (from the key
/// table itself, so they cannot drift) after `--help`'s options; `-h` stays short.
pub fn parse_args() -> Result<gpumeter::cli::Cli, clap::Error> {
    parse_args_from(std::env::args_os())
}

/// [`parse_args`] from given arguments (the first is the program's name).
pub fn parse_args_from<I, T>(args: I) -> Result<gpumeter::cli::Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use clap::{CommandFactory, FromArgMatches};
    let short = gpumeter::cli::Cli::command()
        .get_after_help()
        .map(|h| h.to_string())
        .unwrap_or_default();
    let command =
        gpumeter::cli::Cli::command().after_long_help(format!("{short}\n\n{}", keys_help()));
    gpumeter::cli::Cli::from_arg_matches(&command.try_get_matches_from(args)?)
}

/// The dashboard's keys as shipped, one a line: `  q, F10            quit`.
pub fn keys_help() -> String {
    let rows: Vec<(String, &str)> = gpumeter::ui::keys::BINDINGS
        .iter()
        .map(|b| (b.keys.join(", "), b.help))
        .collect();
    let w = rows
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::from(
        "Dashboard keys (each can be rebound in the config file's [keys]; `?` in the dashboard \
         lists them as bound, `gpumeter man` prints them all):",
    );
    for (keys, help) in rows {
        out.push_str(&format!("\n  {keys:<w$}  {help}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn long_help_lists_the_dashboard_keys_and_short_help_stays_short() {
        let long = parse_args_from(["gpumeter", "--help"])
            .unwrap_err()
            .to_string();
        for b in gpumeter::ui::keys::BINDINGS {
            assert!(long.contains(b.help), "{} missing:\n{long}", b.name);
        }
        assert!(long.contains("Exit codes:"), "{long}");
        let short = parse_args_from(["gpumeter", "-h"]).unwrap_err().to_string();
        assert!(!short.contains("Dashboard keys"), "{short}");
        assert!(short.contains("Exit codes:"), "{short}");
        // Arguments still parse as before.
        assert!(parse_args_from(["gpumeter", "--demo"]).is_ok());
    }
}
