//! Notifications through the terminal itself, so they reach the user's laptop over ssh: the
//! bell (BEL), and desktop notifications by OSC 9 (iTerm2, Windows Terminal, kitty, WezTerm,
//! foot) and OSC 777 (`notify;title;body`: VTE terminals, rxvt, WezTerm). Inside tmux the
//! sequences are wrapped for passthrough (`ESC P tmux; … ESC \`, inner ESCs doubled); tmux
//! forwards them when `allow-passthrough` is on. Text is sanitized: no control characters can
//! end the sequence early, and `;` cannot split OSC 777's fields.

use crate::sanitize::sanitize;

/// Longest title and body written into a sequence.
const MAX_TITLE: usize = 80;
const MAX_BODY: usize = 200;

/// Which sequences to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TerminalChannels {
    /// Write BEL (`\x07`) for the bell.
    pub bell: bool,
    /// Write a desktop-notification escape sequence (OSC 9 / OSC 777).
    pub desktop: bool,
    /// Wrap for tmux passthrough (set when `$TMUX` is).
    pub tmux: bool,
}

fn clean(text: &str, max: usize) -> String {
    sanitize(text, max).replace(';', ",")
}

/// Wraps a sequence for tmux passthrough.
fn tmux_wrap(seq: &str) -> String {
    format!("\x1bPtmux;{}\x1b\\", seq.replace('\x1b', "\x1b\x1b"))
}

/// The bytes to write for one notification (empty when both channels are off).
pub fn sequences(ch: TerminalChannels, title: &str, body: &str) -> String {
    let mut out = String::new();
    if ch.desktop {
        let (title, body) = (clean(title, MAX_TITLE), clean(body, MAX_BODY));
        let osc9 = format!("\x1b]9;{title}: {body}\x07");
        let osc777 = format!("\x1b]777;notify;{title};{body}\x07");
        for seq in [osc9, osc777] {
            out.push_str(&if ch.tmux { tmux_wrap(&seq) } else { seq });
        }
    }
    if ch.bell {
        // tmux turns a plain bell into its own bell/activity alert: no wrapping needed.
        out.push('\x07');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: TerminalChannels = TerminalChannels {
        bell: true,
        desktop: true,
        tmux: false,
    };

    #[test]
    fn osc9_osc777_and_bell() {
        let s = sequences(ALL, "gpumeter", "GPUs idle 42 min — $21.70 so far");
        assert_eq!(
            s,
            "\x1b]9;gpumeter: GPUs idle 42 min — $21.70 so far\x07\
             \x1b]777;notify;gpumeter;GPUs idle 42 min — $21.70 so far\x07\x07"
        );
    }

    #[test]
    fn tmux_passthrough_doubles_inner_escapes() {
        let ch = TerminalChannels {
            bell: false,
            tmux: true,
            ..ALL
        };
        let s = sequences(ch, "t", "b");
        assert_eq!(
            s,
            "\x1bPtmux;\x1b\x1b]9;t: b\x07\x1b\\\x1bPtmux;\x1b\x1b]777;notify;t;b\x07\x1b\\"
        );
    }

    #[test]
    fn hostile_text_cannot_break_out_and_channels_turn_off() {
        let s = sequences(ALL, "a;b", "x\x07\x1b]0;owned\x07y");
        // Exactly the two OSC terminators and the bell: nothing from the text survives as BEL/ESC.
        assert_eq!(s.matches('\x07').count(), 3, "{s:?}");
        assert_eq!(s.matches('\x1b').count(), 2, "{s:?}");
        assert!(s.contains("notify;a,b;"), "{s:?}");
        let off = TerminalChannels {
            bell: false,
            desktop: false,
            tmux: true,
        };
        assert_eq!(sequences(off, "t", "b"), "");
        let bell_only = TerminalChannels {
            desktop: false,
            ..ALL
        };
        assert_eq!(sequences(bell_only, "t", "b"), "\x07");
    }
}
