//! `gpumeter man`: the man page. clap_mangen renders the title, synopsis and options; the
//! commands are listed here rather than by clap_mangen, whose list points at one page per
//! command (`gpumeter-snapshot(1)`) that is never installed; the KEYS section comes from the
//! dashboard's own key table, so it cannot drift from what the keys do.

use std::io::Write;

use clap::CommandFactory;
use gpumeter::cli::Cli;
use gpumeter::ui::keys::BINDINGS;

/// Text made safe for roff: backslashes and hyphens escaped, a leading `.` or `'` (a request)
/// defused.
fn esc(text: &str) -> String {
    let t = text.replace('\\', "\\\\").replace('-', "\\-");
    if t.starts_with(['.', '\'']) {
        format!("\\&{t}")
    } else {
        t
    }
}

/// Writes the whole page.
pub fn render(out: &mut dyn Write) -> std::io::Result<()> {
    let cmd = Cli::command();
    let man = clap_mangen::Man::new(cmd.clone());
    man.render_title(out)?;
    man.render_name_section(out)?;
    man.render_synopsis_section(out)?;
    man.render_description_section(out)?;
    man.render_options_section(out)?;
    writeln!(out, ".SH COMMANDS")?;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        writeln!(out, ".TP\n\\fBgpumeter {}\\fR", esc(sub.get_name()))?;
        let about = sub.get_about().map(ToString::to_string).unwrap_or_default();
        writeln!(out, "{}", esc(&about))?;
    }
    writeln!(
        out,
        ".PP\nEach command's options: \\fBgpumeter\\fR \\fICOMMAND\\fR \\fB\\-\\-help\\fR."
    )?;
    writeln!(out, ".SH KEYS")?;
    writeln!(
        out,
        "The dashboard's keys as shipped; each can be rebound in the config file's [keys] \
         table under the name in parentheses. Ctrl\\-C always quits, Esc always closes."
    )?;
    for b in BINDINGS {
        writeln!(
            out,
            ".TP\n\\fB{}\\fR ({})\n{}",
            esc(&b.keys.join(", ")),
            esc(b.name),
            esc(b.help)
        )?;
    }
    man.render_version_section(out)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_lists_commands_and_every_key_and_no_missing_pages() {
        let mut buf = Vec::new();
        render(&mut buf).unwrap();
        let page = String::from_utf8(buf).unwrap();
        assert!(!page.contains("gpumeter\\-snapshot(1)"), "{page}");
        assert!(page.contains(".SH COMMANDS") && page.contains("\\fBgpumeter snapshot\\fR"));
        assert!(page.contains(".SH KEYS"));
        for b in BINDINGS {
            assert!(
                page.contains(&format!("({})", esc(b.name))),
                "{} missing",
                b.name
            );
        }
        // No line a roff reader would take for a request it does not know.
        for line in page.lines() {
            assert!(!line.starts_with('\''), "{line}");
        }
    }

    #[test]
    fn roff_text_is_escaped() {
        assert_eq!(esc(".x -y \\z"), "\\&.x \\-y \\\\z");
    }
}
