//! Text fitted to a width in display cells (a wide glyph is two, a combining mark none), cut with
//! `…`: what every table, column and line that pads or cuts text uses.

use std::borrow::Cow;

use unicode_width::UnicodeWidthStr;

/// Display width of a string.
pub fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// `s` cut to `max` display cells, with `…` marking a cut.
pub fn truncate(s: &str, max: usize) -> String {
    truncate_cow(s, max).0.into_owned()
}

/// [`truncate`] without a copy when `s` fits, and the cut text's width.
pub fn truncate_cow(s: &str, max: usize) -> (Cow<'_, str>, usize) {
    let full = width(s);
    if full <= max {
        return (Cow::Borrowed(s), full);
    }
    if max == 0 {
        return (Cow::Borrowed(""), 0);
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > max - 1 {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    // Measured as a whole, as the callers measured the cut text before.
    let w = width(&out);
    (Cow::Owned(out), w)
}

/// `s` padded with spaces (or cut) to exactly `w` cells.
pub fn pad_right(s: &str, w: usize) -> String {
    // One allocation: the table pads ~200 cells a frame.
    let (t, used) = truncate_cow(s, w);
    let fill = w.saturating_sub(used);
    let mut out = String::with_capacity(t.len() + fill);
    out.push_str(&t);
    out.extend(std::iter::repeat_n(' ', fill));
    out
}

/// `s` right-aligned in `w` cells (cut when longer).
pub fn pad_left(s: &str, w: usize) -> String {
    let (t, used) = truncate_cow(s, w);
    let fill = w.saturating_sub(used);
    let mut out = String::with_capacity(fill + t.len());
    out.extend(std::iter::repeat_n(' ', fill));
    out.push_str(&t);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_aligns_in_display_cells_and_cuts_what_is_too_long() {
        assert_eq!(pad_left("42", 5), "   42");
        assert_eq!(pad_right("42", 5), "42   ");
        assert_eq!(pad_left("日本", 6), "  日本", "wide glyphs count two cells");
        assert_eq!(pad_right("日本", 6), "日本  ");
        assert_eq!(pad_left("python3", 5), "pyth…");
        assert_eq!(pad_right("python3", 5), "pyth…");
        assert_eq!(pad_left("", 0), "");
        assert_eq!(width(&pad_right("ü", 3)), 3);
        for s in [
            "",
            "a",
            "日本語テキスト",
            "e\u{301}e\u{301}xyz",
            "👩‍🔬 lab",
            "tab\there",
            "x…y",
        ] {
            for w in 0..12 {
                // As truncate-then-pad gave them.
                let t = truncate(s, w);
                let fill = " ".repeat(w.saturating_sub(width(&t)));
                assert_eq!(pad_right(s, w), format!("{t}{fill}"), "{s:?} {w}");
                assert_eq!(pad_left(s, w), format!("{fill}{t}"), "{s:?} {w}");
            }
        }
    }

    #[test]
    fn truncation_marks_cuts_and_respects_wide_chars() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 3), "abc");
        assert_eq!(truncate("日本語テキスト", 5), "日本…");
        assert_eq!(pad_right("ab", 4), "ab  ");
        assert_eq!(pad_left("ab", 4), "  ab");
        assert_eq!(truncate("abc", 0), "");
    }
}
