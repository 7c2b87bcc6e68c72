//! Small text pieces the widgets share: bars, percentages, watts, energy, clocks, the pods a
//! GPU is given to, and spans
//! fitted into a width (the text measures and the sample age are the core's
//! [`gpumeter_core::units`], re-exported here for the widgets). Absent readings come out as
//! `N/A`, never 0.

use std::borrow::Cow;

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use gpumeter_core::units::NA;
pub use gpumeter_core::units::{age, pad_left, pad_right, truncate, width};
use gpumeter_model::PodRef;

use crate::ui::theme::{Scale, Theme};

/// The pods a GPU is given to, by [`PodRef::short_name`], sorted, each once and joined by
/// commas (MIG slices or time-sliced replicas: several), after the word for them (`pod`,
/// `pods`); `None` when none is known.
pub fn pod_names(pods: &[PodRef]) -> Option<(&'static str, String)> {
    let mut names: Vec<&str> = pods.iter().filter_map(PodRef::short_name).collect();
    names.sort_unstable();
    names.dedup();
    let word = if names.len() == 1 { "pod" } else { "pods" };
    (!names.is_empty()).then(|| (word, names.join(", ")))
}

/// Partial blocks for bar ends, in eighths.
const EIGHTHS: [&str; 8] = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"];

/// A horizontal bar `width` cells wide filled to `pct` (0–100), coloured for its `scale`. An
/// absent value draws `N/A` in the bar's place.
pub fn bar(pct: Option<f64>, width: usize, theme: &Theme, scale: Scale) -> Vec<Span<'static>> {
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
    let mut spans = vec![Span::styled(filled, theme.share(pct, scale))];
    if used < width {
        // In monochrome the empty part needs a visible texture.
        let empty = if theme.monochrome { "·" } else { "─" };
        spans.push(Span::styled(empty.repeat(width - used), theme.bar_empty));
    }
    spans
}

/// A percentage span coloured for its `scale`.
pub fn pct_span(v: Option<f64>, theme: &Theme, scale: Scale) -> Span<'static> {
    match v.filter(|v| v.is_finite()) {
        Some(v) => Span::styled(format!("{v:.0}%"), theme.share(v, scale)),
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

/// Total display width of spans.
pub fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| width(&s.content)).sum()
}

/// The fixed spans, then each whole segment (most important first) that still fits in `width`;
/// one that does not fit is left out and the next ones are tried.
pub fn fit(
    fixed: Vec<Span<'static>>,
    segments: Vec<Vec<Span<'static>>>,
    width: usize,
) -> Line<'static> {
    let fixed = cut_to(fixed, width);
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

/// `text` word-wrapped to rows of at most `room` cells (at least one row); a word longer than
/// a row is cut into pieces that fill whole rows.
pub fn wrap_words(text: &str, room: usize) -> Vec<String> {
    let room = room.max(1);
    let mut rows: Vec<String> = Vec::new();
    let mut row = String::new();
    for word in text.split_whitespace() {
        for (k, piece) in chunks(word, room).into_iter().enumerate() {
            let used = width(&row);
            // A word's later pieces, or a word that does not fit after the row's text: a new row.
            if k > 0 || (used > 0 && used + 1 + width(&piece) > room) {
                rows.push(std::mem::take(&mut row));
            } else if used > 0 {
                row.push(' ');
            }
            row.push_str(&piece);
        }
    }
    if !row.is_empty() || rows.is_empty() {
        rows.push(row);
    }
    rows
}

/// `word` in pieces of at most `room` cells (at least one character each).
fn chunks(word: &str, room: usize) -> Vec<String> {
    let mut out = vec![String::new()];
    for c in word.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        let last = out.last().map_or(0, |p| width(p));
        if last > 0 && last + w > room {
            out.push(String::new());
        }
        if let Some(p) = out.last_mut() {
            p.push(c);
        }
    }
    out
}

/// `spans` cut to `room` cells: the span that crosses the edge is cut at a word with `…`
/// (its style kept), the ones after it dropped. A line that fits is returned as it is.
fn cut_to(spans: Vec<Span<'static>>, room: usize) -> Vec<Span<'static>> {
    if spans_width(&spans) <= room {
        return spans;
    }
    let mut out = Vec::with_capacity(spans.len());
    let mut used = 0;
    for s in spans {
        let w = width(&s.content);
        if used + w <= room {
            used += w;
            out.push(s);
            continue;
        }
        let cut = gpumeter_core::units::truncate_words(&s.content, room - used);
        if !cut.is_empty() {
            out.push(Span::styled(cut, s.style));
        }
        break;
    }
    out
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
    fn bars_fill_proportionally_and_keep_their_width() {
        let t = Theme::colour();
        assert_eq!(text(&bar(Some(50.0), 10, &t, Scale::Work)), "█████─────");
        assert_eq!(text(&bar(Some(100.0), 4, &t, Scale::Work)), "████");
        assert_eq!(text(&bar(Some(0.0), 4, &t, Scale::Work)), "────");
        assert_eq!(text(&bar(Some(55.0), 10, &t, Scale::Work)), "█████▌────");
        for p in [0.0, 3.3, 49.9, 99.4, 250.0, -5.0] {
            assert_eq!(spans_width(&bar(Some(p), 7, &t, Scale::Work)), 7, "{p}");
        }
        assert_eq!(text(&bar(None, 5, &t, Scale::Work)), "N/A  ");
        assert_eq!(text(&bar(Some(f64::NAN), 3, &t, Scale::Work)), "N/A");
        assert!(bar(Some(50.0), 0, &t, Scale::Work).is_empty());
    }

    #[test]
    fn absent_values_read_na_and_zero_reads_zero() {
        let t = Theme::colour();
        assert_eq!(pct_span(None, &t, Scale::Work).content, "N/A");
        assert_eq!(pct_span(Some(0.0), &t, Scale::Work).content, "0%");
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
}
