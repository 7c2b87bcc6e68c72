//! Small text pieces the widgets share: bars, percentages, watts, energy, clocks, sample age, and
//! fitting text into a width. Absent readings come out as `N/A`, never 0.

use std::borrow::Cow;

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use gpumeter_core::units::NA;

use crate::ui::theme::Theme;

/// Partial blocks for bar ends, in eighths.
const EIGHTHS: [&str; 8] = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"];

/// A horizontal bar `width` cells wide filled to `pct` (0–100), in the level colour. An absent
/// value draws `N/A` in the bar's place.
pub fn bar(pct: Option<f64>, width: usize, theme: &Theme) -> Vec<Span<'static>> {
    if width == 0 {
        return Vec::new();
    }
    let Some(pct) = pct.filter(|p| p.is_finite()) else {
        return vec![Span::styled(pad_right(NA, width), theme.na)];
    };
    let pct = pct.clamp(0.0, 100.0);
    let eighths = (pct / 100.0 * width as f64 * 8.0).round() as usize;
    let full = (eighths / 8).min(width);
    let part = if full < width {
        EIGHTHS[eighths % 8]
    } else {
        ""
    };
    let used = full + usize::from(!part.is_empty());
    let mut filled = "█".repeat(full);
    filled.push_str(part);
    let mut spans = vec![Span::styled(filled, theme.level(pct))];
    if used < width {
        // In monochrome the empty part needs a visible texture.
        let empty = if theme.monochrome { "·" } else { "─" };
        spans.push(Span::styled(empty.repeat(width - used), theme.bar_empty));
    }
    spans
}

/// A percentage span in its level colour.
pub fn pct_span(v: Option<f64>, theme: &Theme) -> Span<'static> {
    match v.filter(|v| v.is_finite()) {
        Some(v) => Span::styled(format!("{v:.0}%"), theme.level(v)),
        None => Span::styled(NA, theme.na),
    }
}

/// `512W`.
pub fn watts(w: f64) -> String {
    format!("{w:.0}W")
}

/// Energy from millijoules: `850.2Wh`, `1.23kWh`, `4.56MWh`.
pub fn energy(mj: u64) -> String {
    let wh = mj as f64 / 3_600_000.0;
    if wh >= 1_000_000.0 {
        format!("{:.2}MWh", wh / 1_000_000.0)
    } else if wh >= 1000.0 {
        format!("{:.2}kWh", wh / 1000.0)
    } else {
        format!("{wh:.1}Wh")
    }
}

/// `1980/1980` (current/max, MHz implied by the label), each half `N/A` when absent.
pub fn clock_pair(cur: Option<u32>, max: Option<u32>) -> String {
    let s = |v: Option<u32>| v.map_or_else(|| NA.to_string(), |v| v.to_string());
    match (cur, max) {
        (None, None) => NA.to_string(),
        (c, None) => s(c),
        (c, m) => format!("{}/{}", s(c), s(m)),
    }
}

/// Sample age: `0.4s`, `12s`, `3m05s`.
pub fn age(ms: i64) -> String {
    let ms = ms.max(0);
    if ms < 10_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        gpumeter_core::units::duration_s((ms / 1000) as u64)
    }
}

/// Display width of a string.
pub fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// Total display width of spans.
pub fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| width(&s.content)).sum()
}

/// `s` cut to `max` display cells, with `…` marking a cut.
pub fn truncate(s: &str, max: usize) -> String {
    cut(s, max).0.into_owned()
}

/// [`truncate`] without a copy when `s` fits, and the cut text's width.
fn cut(s: &str, max: usize) -> (Cow<'_, str>, usize) {
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
    let (t, used) = cut(s, w);
    let fill = w.saturating_sub(used);
    let mut out = String::with_capacity(t.len() + fill);
    out.push_str(&t);
    out.extend(std::iter::repeat_n(' ', fill));
    out
}

/// `s` right-aligned in `w` cells (cut when longer).
pub fn pad_left(s: &str, w: usize) -> String {
    let (t, used) = cut(s, w);
    let fill = w.saturating_sub(used);
    let mut out = String::with_capacity(fill + t.len());
    out.extend(std::iter::repeat_n(' ', fill));
    out.push_str(&t);
    out
}

/// The fixed spans, then each whole segment (most important first) that still fits in `width`;
/// one that does not fit is left out and the next ones are tried.
pub fn fit(
    fixed: Vec<Span<'static>>,
    segments: Vec<Vec<Span<'static>>>,
    width: usize,
) -> Line<'static> {
    let mut used = spans_width(&fixed);
    let mut spans = fixed;
    for seg in segments {
        let w = spans_width(&seg);
        if used + w <= width {
            used += w;
            spans.extend(seg);
        }
    }
    Line::from(spans)
}

/// A styled span: a `&'static str` is borrowed, not copied (a frame has hundreds of fixed
/// separators and labels).
pub fn styled(s: impl Into<Cow<'static, str>>, style: Style) -> Span<'static> {
    Span::styled(s, style)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(spans: &[Span<'_>]) -> String {
        spans.iter().map(|s| s.content.as_ref()).collect()
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
    fn bars_fill_proportionally_and_keep_their_width() {
        let t = Theme::colour();
        assert_eq!(text(&bar(Some(50.0), 10, &t)), "█████─────");
        assert_eq!(text(&bar(Some(100.0), 4, &t)), "████");
        assert_eq!(text(&bar(Some(0.0), 4, &t)), "────");
        assert_eq!(text(&bar(Some(55.0), 10, &t)), "█████▌────");
        for p in [0.0, 3.3, 49.9, 99.4, 250.0, -5.0] {
            assert_eq!(spans_width(&bar(Some(p), 7, &t)), 7, "{p}");
        }
        assert_eq!(text(&bar(None, 5, &t)), "N/A  ");
        assert_eq!(text(&bar(Some(f64::NAN), 3, &t)), "N/A");
        assert!(bar(Some(50.0), 0, &t).is_empty());
    }

    #[test]
    fn absent_values_read_na_and_zero_reads_zero() {
        let t = Theme::colour();
        assert_eq!(pct_span(None, &t).content, "N/A");
        assert_eq!(pct_span(Some(0.0), &t).content, "0%");
        assert_eq!(clock_pair(None, None), "N/A");
        assert_eq!(clock_pair(Some(1200), None), "1200");
        assert_eq!(clock_pair(None, Some(1980)), "N/A/1980");
        assert_eq!(clock_pair(Some(0), Some(1980)), "0/1980");
    }

    #[test]
    fn energy_picks_a_unit() {
        assert_eq!(energy(0), "0.0Wh");
        assert_eq!(energy(3_600_000 * 850), "850.0Wh");
        assert_eq!(energy(3_600_000 * 1234), "1.23kWh");
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

    #[test]
    fn age_is_precise_when_fresh() {
        assert_eq!(age(400), "0.4s");
        assert_eq!(age(-5), "0.0s");
        assert_eq!(age(65_000), "1m05s");
    }
}
