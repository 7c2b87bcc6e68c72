//! `wall`: autostop warnings to everyone logged in (ssh sessions without gpumeter open).
//! The message goes on `wall`'s standard input, sanitized; no shell is involved.

use std::time::Duration;

use super::run::{RunError, RunSpec, run};
use crate::sanitize::sanitize;
use crate::units::{DurationStyle, duration};

const MAX_MESSAGE: usize = 400;

/// The autostop warning text.
pub fn autostop_message(
    host: &str,
    remaining_ms: i64,
    idle_ms: i64,
    tolerated: Option<&str>,
    command: &[String],
) -> String {
    let words = |ms: i64| duration(ms, DurationStyle::Words);
    let ignored = crate::engine::autostop::ignored_note(tolerated);
    sanitize(
        &format!(
            "gpumeter autostop: {host} has been idle for {}{ignored} and will run `{}` in {}. \
             Press any key in gpumeter, or start GPU work, to cancel.",
            words(idle_ms),
            command.join(" "),
            words(remaining_ms)
        ),
        MAX_MESSAGE,
    )
}

/// Sends `message` with `program` (normally `["wall"]`).
pub fn wall_with(program: &[String], message: &str) -> Result<(), RunError> {
    run(&RunSpec {
        argv: program,
        env: Vec::new(),
        timeout: Duration::from_secs(10),
        stdin: Some(format!("{}\n", sanitize(message, MAX_MESSAGE))),
        inherit_output: false,
    })
}

/// Sends `message` to every terminal with `wall`.
pub fn wall(message: &str) -> Result<(), RunError> {
    wall_with(&["wall".to_string()], message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_says_what_when_and_how_to_cancel() {
        let cmd = vec![
            "sudo".to_string(),
            "shutdown".to_string(),
            "-h".to_string(),
            "now".to_string(),
        ];
        let m = autostop_message("box\x1b[2J", 4 * 60_000 + 1, 26 * 60_000, None, &cmd);
        assert_eq!(
            m,
            "gpumeter autostop: box has been idle for 26 min and will run `sudo shutdown -h now` in 4 min. \
             Press any key in gpumeter, or start GPU work, to cancel."
        );
    }

    #[test]
    fn the_message_goes_on_standard_input() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("msg");
        let fake = vec![
            "sh".to_string(),
            "-c".to_string(),
            format!("cat > '{}'", out.display()),
        ];
        wall_with(&fake, "hello\x07 all").unwrap();
        assert_eq!(std::fs::read_to_string(out).unwrap(), "hello all\n");
    }
}
