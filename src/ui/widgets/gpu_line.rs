//! One GPU on one line, for small terminals or many GPUs: util bar, SM activity (GPM cards),
//! memory-controller util, VRAM, its Kubernetes pods (where it is given to some), what no
//! visible process holds, temperature, power, active slowdowns and the name, in columns all
//! the lines of a screen share ([`LineColumns`]), dropping from the right what does not fit.
//! A lost GPU says so on its line.

use gpumeter_model::{GpuReading, GpuState};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use gpumeter_core::units::NA;

use crate::ui::theme::{Scale, Theme};
use crate::ui::widgets::fmt::{self, styled};
use crate::ui::widgets::gpu_panel::{short_name, state_problem, vram_text};

const MIN_BAR: usize = 8;
const MAX_BAR: usize = 30;

/// One GPU on the first row of its area.
pub struct GpuLine<'a> {
    pub gpu: &'a GpuReading,
    /// Its segments ([`segments`]), built once a frame for the columns and the line alike.
    pub segments: Segments,
    /// The view is narrowed to this GPU.
    pub selected: bool,
    /// The columns every GPU line on the screen shares ([`LineColumns::for_gpus`]).
    pub columns: &'a LineColumns,
    pub theme: &'a Theme,
}

impl Widget for GpuLine<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if area.width == 0 || area.height == 0 {
            return;
        }
        let line = line_in(
            self.gpu,
            self.segments,
            usize::from(area.width),
            self.selected,
            self.columns,
            self.theme,
        );
        Paragraph::new(line).render(area, buf);
    }
}

/// The segments after the bar, most important first: SM activity (GPM cards), memory-controller
/// util, VRAM, pods, hidden memory, temperature, power, slowdowns, name.
const SLOTS: usize = 9;

/// One GPU's segment for each slot; empty where it has none.
pub type Segments = [Vec<Span<'static>>; SLOTS];

/// Which segments the GPU lines of one screen show and how wide each is: the same for every
/// line, so a GPU with a segment the others lack (another tenant's memory, a pod) neither
/// pushes its temperature off nor its columns out of line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineColumns {
    /// Each slot's width; 0 where no line has it or it does not fit.
    widths: [usize; SLOTS],
}

impl LineColumns {
    /// The columns for `gpus` (each with its [`segments`]) on lines `width` cells wide: slot
    /// by slot in priority order, each as wide as its widest line, kept when it fits.
    pub fn for_gpus<'a>(
        gpus: impl IntoIterator<Item = (&'a GpuReading, &'a Segments)>,
        width: usize,
    ) -> Self {
        let mut widths = [0; SLOTS];
        for (g, segments) in gpus {
            if state_problem(g.state).is_some() {
                continue;
            }
            for (w, seg) in widths.iter_mut().zip(segments) {
                *w = (*w).max(fmt::spans_width(seg));
            }
        }
        let mut used = fixed_width(width);
        for w in &mut widths {
            if used + *w <= width {
                used += *w;
            } else {
                *w = 0;
            }
        }
        LineColumns { widths }
    }
}

/// The line's spans for a width, its columns its own (one GPU alone).
pub fn compact_line(
    g: &GpuReading,
    hidden: Option<u64>,
    width: usize,
    selected: bool,
    theme: &Theme,
) -> Line<'static> {
    let segments = segments(g, hidden, theme);
    let columns = LineColumns::for_gpus([(g, &segments)], width);
    line_in(g, segments, width, selected, &columns, theme)
}

fn bar_width(width: usize) -> usize {
    (MIN_BAR + width.saturating_sub(80) / 2).min(MAX_BAR)
}

/// Head, bar and percentage: `▶GPU0  ██████████  97%` (a GPU index past 99 is one wider;
/// `fit` still keeps that line to the width).
fn fixed_width(width: usize) -> usize {
    "▶GPU00 ".len() - "▶".len() + 1 + bar_width(width) + 5
}

/// The line's spans in shared `columns`.
fn line_in(
    g: &GpuReading,
    segments: Segments,
    width: usize,
    selected: bool,
    columns: &LineColumns,
    theme: &Theme,
) -> Line<'static> {
    let marker = if selected { "▶" } else { " " };
    let head = styled(
        format!("{marker}GPU{:<2}", g.index),
        if selected {
            theme.border_selected
        } else {
            theme.title
        },
    );
    if let Some((headline, _)) = state_problem(g.state) {
        let mut spans = vec![
            head,
            styled(" ", theme.text),
            styled(format!(" {headline} "), theme.alarm),
        ];
        if let Some(name) = &g.name {
            spans.push(styled(format!(" {}", short_name(name)), theme.dim));
        }
        return fmt::fit(spans, Vec::new(), width);
    }
    let util = g.util_gpu_pct.map(f64::from);
    // The bar grows with the width only (not with this line's other text), so the bars of
    // all GPUs line up.
    let mut spans = vec![head, styled(" ", theme.text)];
    spans.extend(fmt::bar(util, bar_width(width), theme, Scale::Work));
    let p = fmt::pct_span(util, theme, Scale::Work);
    let pw = fmt::pad_left(&p.content, 5);
    spans.push(styled(pw, if util.is_some() { p.style } else { theme.na }));
    let last = columns.widths.iter().rposition(|w| *w > 0);
    for (i, (seg, w)) in segments.into_iter().zip(columns.widths).enumerate() {
        if w == 0 {
            continue;
        }
        let pad = w.saturating_sub(fmt::spans_width(&seg));
        spans.extend(seg);
        // The last column needs no padding after it.
        if pad > 0 && Some(i) != last {
            spans.push(styled(" ".repeat(pad), theme.text));
        }
    }
    fmt::fit(spans, Vec::new(), width)
}

/// This GPU's segment for each slot ([`SLOTS`]), `hidden` the VRAM no visible process holds.
pub fn segments(g: &GpuReading, hidden: Option<u64>, theme: &Theme) -> Segments {
    let sm = g.sm_active_pct.map_or_else(Vec::new, |sm| {
        // GPM's SM activity beside util (only where the card has GPM).
        vec![
            styled(" SM act ", theme.label),
            fmt::pct_span(Some(sm), theme, Scale::Work),
        ]
    });
    let mem = vec![
        styled(" mem ", theme.label),
        fmt::pct_span(g.util_memory_pct.map(f64::from), theme, Scale::Work),
    ];
    let vram = vec![
        styled(" VRAM ", theme.label),
        styled(
            vram_text(g.memory_used_bytes, g.memory_total_bytes),
            theme.text,
        ),
    ];
    let pods = fmt::pod_names(&g.pods).map_or_else(Vec::new, |(word, pods)| {
        vec![
            styled(format!(" {word} "), theme.label),
            styled(pods, theme.text),
        ]
    });
    // Another tenant's memory: said, never blamed.
    let hidden = hidden.map_or_else(Vec::new, |h| {
        vec![
            styled(" hidden ", theme.label),
            styled(gpumeter_core::units::bytes(h), theme.warm),
        ]
    });
    let temp = vec![
        styled(" ", theme.text),
        match g.temperature_celsius {
            Some(t) => styled(format!("{t}°C"), theme.temperature(t)),
            None => styled(format!("{NA}°C"), theme.na),
        },
    ];
    let power = vec![
        styled(" ", theme.text),
        styled(
            format!(
                "{}/{}",
                g.power_watts.map_or_else(|| NA.to_string(), fmt::watts),
                g.power_limit_watts
                    .map_or_else(|| NA.to_string(), fmt::watts)
            ),
            if g.power_watts.is_some() {
                theme.text
            } else {
                theme.na
            },
        ),
    ];
    let slowdowns: Vec<&str> = g
        .throttle_reasons
        .iter()
        .flatten()
        .filter(|r| r.is_slowdown())
        .map(|r| r.label())
        .collect();
    let mut flags = Vec::new();
    if !slowdowns.is_empty() {
        flags.push(styled(format!(" ⚠{}", slowdowns.join(",")), theme.hot));
    }
    if g.state == GpuState::Error {
        flags.push(styled(" ERROR ", theme.alarm));
    }
    let name = g.name.as_ref().map_or_else(Vec::new, |name| {
        vec![styled(format!("  {}", short_name(name)), theme.dim)]
    });
    [sm, mem, vram, pods, hidden, temp, power, flags, name]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::tests::fixtures;

    fn text(line: &Line<'_>) -> String {
        line.spans.iter().map(|s| s.content.as_ref()).collect()
    }

    #[test]
    fn fits_the_width_and_drops_low_priority_segments() {
        let t = Theme::colour();
        let g = fixtures::gpu(3, 97);
        for w in [20, 40, 60, 80, 120, 200] {
            let l = compact_line(&g, None, w, false, &t);
            assert!(l.width() <= w.max(22), "w={w}: {}", text(&l));
        }
        let wide = text(&compact_line(&g, None, 200, false, &t));
        assert!(wide.contains("H100 80GB HBM3"), "{wide}");
        assert!(wide.contains("⚠power-cap"), "{wide}");
        let narrow = text(&compact_line(&g, None, 60, false, &t));
        assert!(narrow.contains("VRAM"), "{narrow}");
        assert!(!narrow.contains("H100"), "{narrow}");
    }

    #[test]
    fn lost_gpu_line_says_lost() {
        let t = Theme::colour();
        let s = text(&compact_line(&fixtures::lost_gpu(5), None, 80, false, &t));
        assert!(
            s.contains("GPU5") && s.contains("LOST — fell off the bus"),
            "{s}"
        );
        // No readings are invented for it.
        assert!(!s.contains('%') && !s.contains('W'), "{s}");
    }

    #[test]
    fn absent_readings_read_na() {
        let t = Theme::colour();
        let s = text(&compact_line(&fixtures::bare_gpu(1), None, 120, false, &t));
        assert!(s.contains("mem N/A"), "{s}");
        assert!(s.contains("N/A/N/A"), "{s}");
        assert!(s.contains("N/A°C"), "{s}");
    }
}
