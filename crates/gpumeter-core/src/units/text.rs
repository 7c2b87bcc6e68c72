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

/// [`truncate`] at a word: a cut that would split a word backs off to the space before it
/// (when that keeps at least two thirds of the room), and a cut never leaves a dangling `(`,
/// comma or dash before its `…`. For sentences (an alert's title); columns cut at `max`.
pub fn truncate_words(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let cut = truncate(s, max);
    let body = cut.strip_suffix('…').unwrap_or(&cut);
    let next = s[body.len()..].chars().next();
    let mut keep = body;
    if next.is_some_and(|c| !c.is_whitespace())
        && let Some(space) = body.rfind(' ')
        && width(&body[..space]) * 3 >= max.saturating_sub(1) * 2
    {
        keep = &body[..space];
    }
    // An aside the cut opened and never closed goes, when enough is left without it.
    if let Some(open) = keep.rfind('(')
        && !keep[open..].contains(')')
        && width(&keep[..open]) * 3 >= max.saturating_sub(1) * 2
    {
        keep = &keep[..open];
    }
    let keep = keep.trim_end_matches(|c: char| c.is_whitespace() || "([{,;:-—–/".contains(c));
    format!("{keep}…")
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
    fn a_sentence_is_cut_at_a_word_and_never_before_a_dangling_bracket() {
        let t = "GPU 2 starved: a CPU-bound input pipeline (8 workers)";
        assert_eq!(truncate_words(t, 80), t);
        let cut = truncate_words(t, 40);
        assert_eq!(cut, "GPU 2 starved: a CPU-bound input…");
        assert!(width(&cut) <= 40);
        // "…pipeline (" would end on a bracket.
        assert_eq!(
            truncate_words(t, 45),
            "GPU 2 starved: a CPU-bound input pipeline…"
        );
        // One long word: cut inside it rather than leave nothing.
        assert_eq!(truncate_words("abcdefghijklmnop", 6), "abcde…");
        assert_eq!(truncate_words("abc", 0), "");
        assert_eq!(truncate_words("abc", 1), "…");
    }

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
