//! Making strings from the system safe to show: process names, command lines, user names and
//! container ids can hold escape sequences, control characters, invalid UTF-8 or megabytes of
//! text. Everything from outside passes through here before it reaches a terminal or a file.

/// Longest command line kept, in characters.
pub const MAX_COMMAND_CHARS: usize = 512;
/// Longest short name (process name, user, container) kept, in characters.
pub const MAX_NAME_CHARS: usize = 64;

/// Longest unbroken run of characters an error message repeats from its input (a path, a
/// value): a 10 000-character argument is quoted cut, not echoed whole.
pub const MAX_QUOTED_RUN: usize = 80;

/// Cuts every run of non-whitespace characters longer than `max` to its first `max - 1` and
/// `…`, keeping the rest of the text (and its line breaks) as it is.
pub fn cut_runs(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len().min(4096));
    let mut run = 0usize;
    let mut cut = false;
    for c in text.chars() {
        if c.is_whitespace() {
            run = 0;
            cut = false;
            out.push(c);
            continue;
        }
        run += 1;
        if run < max {
            out.push(c);
        } else if !cut {
            out.push('…');
            cut = true;
        }
    }
    out
}

/// Cleans raw bytes (possibly invalid UTF-8): see [`sanitize`].
pub fn sanitize_bytes(raw: &[u8], max_chars: usize) -> String {
    sanitize(&String::from_utf8_lossy(raw), max_chars)
}

/// Removes terminal escape sequences and control characters (NUL separators become spaces),
/// collapses runs of whitespace and caps the length at `max_chars`, marking a cut with `…`.
pub fn sanitize(raw: &str, max_chars: usize) -> String {
    let mut out = String::with_capacity(raw.len().min(max_chars * 4));
    let mut chars = raw.chars().peekable();
    let mut count = 0usize;
    let mut last_space = true;
    while let Some(c) = chars.next() {
        let piece = match c {
            '\u{1b}' => {
                skip_escape(&mut chars);
                continue;
            }
            // C1 CSI / OSC / DCS introducers: swallow their sequences too.
            '\u{9b}' => {
                skip_csi_body(&mut chars);
                continue;
            }
            '\u{9d}' | '\u{90}' | '\u{9e}' | '\u{9f}' => {
                skip_string_body(&mut chars);
                continue;
            }
            '\0' | '\t' | '\n' | '\r' => ' ',
            c if c.is_control() => continue,
            // Bidirectional overrides can make text read differently from what it is.
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => continue,
            c => c,
        };
        if piece == ' ' {
            if last_space {
                continue;
            }
            last_space = true;
        } else {
            last_space = false;
        }
        if count == max_chars {
            out.push('…');
            return out.trim_end().to_string();
        }
        out.push(piece);
        count += 1;
    }
    out.trim_end().to_string()
}

fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.next() {
        Some('[') => skip_csi_body(chars),
        Some(']') | Some('P') | Some('X') | Some('^') | Some('_') => skip_string_body(chars),
        // Two-character escapes (ESC c, ESC 7, …): the one char is consumed.
        _ => {}
    }
}

/// CSI: parameters and intermediates, then one final byte in `@`..=`~`.
fn skip_csi_body(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    for c in chars.by_ref() {
        if ('@'..='~').contains(&c) {
            break;
        }
    }
}

/// OSC/DCS/…: until BEL or ST (`ESC \`).
fn skip_string_body(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(c) = chars.next() {
        match c {
            '\u{7}' | '\u{9c}' => break,
            '\u{1b}' => {
                if chars.peek() == Some(&'\\') {
                    chars.next();
                }
                break;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn long_runs_are_cut_and_the_rest_kept() {
        let long = "a".repeat(10_000);
        let text = format!("invalid value '{long}' for '--interval'\n\nFor more, try '--help'.");
        let got = super::cut_runs(&text, super::MAX_QUOTED_RUN);
        assert!(got.len() < 200, "{} chars", got.len());
        assert!(
            got.starts_with(&format!("invalid value '{}…", "a".repeat(78))),
            "{got}"
        );
        assert!(
            got.ends_with("for '--interval'\n\nFor more, try '--help'."),
            "{got}"
        );
        assert_eq!(super::cut_runs("short words stay", 80), "short words stay");
    }

    use super::*;
    use proptest::prelude::*;

    #[test]
    fn strips_csi_osc_and_controls() {
        let raw = "py\u{1b}[31mthon\u{1b}]0;pwned\u{7} train.py\u{8}\u{1b}[2J";
        assert_eq!(sanitize(raw, 100), "python train.py");
    }

    #[test]
    fn nul_separated_cmdline_becomes_spaces() {
        assert_eq!(
            sanitize("python\0-m\0torch.distributed.run\0\0", 100),
            "python -m torch.distributed.run"
        );
    }

    #[test]
    fn caps_length_with_ellipsis() {
        let long = "x".repeat(10_000);
        let s = sanitize(&long, 8);
        assert_eq!(s.chars().count(), 9);
        assert!(s.ends_with('…'));
    }

    #[test]
    fn invalid_utf8_is_replaced_not_rejected() {
        assert_eq!(sanitize_bytes(b"ab\xffcd", 10), "ab\u{fffd}cd");
    }

    #[test]
    fn bidi_overrides_are_removed() {
        assert_eq!(sanitize("evil\u{202e}txt.exe", 50), "eviltxt.exe");
    }

    proptest! {
        #[test]
        fn output_never_holds_control_chars(raw in proptest::collection::vec(any::<u8>(), 0..400)) {
            let s = sanitize_bytes(&raw, 64);
            prop_assert!(!s.chars().any(|c| c.is_control()));
            prop_assert!(s.chars().count() <= 65);
        }
    }
}
