//! One GPU on one line, for small terminals or many GPUs: util bar, SM activity (GPM cards),
//! memory-controller util, VRAM, its Kubernetes pods (where it is given to some), what no
//! visible process holds, power, temperature, active slowdowns and the name, dropping
//! from the right what does not fit. A lost GPU says so on its line.

use gpumeter_model::{GpuReading, GpuState};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use gpumeter_core::units::NA;

use crate::ui::theme::{Scale, Theme};
use crate::ui::widgets::fmt::{self, styled};
use crate::ui::widgets::gpu_panel::{short_name, state_problem, vram_text};

const MIN_BAR: usize = 10;
const MAX_BAR: usize = 30;

/// One GPU on the first row of its area.
pub struct GpuLine<'a> {
    pub gpu: &'a GpuReading,
    /// VRAM no process visible here holds.
    pub hidden: Option<u64>,
    /// The view is narrowed to this GPU.
    pub selected: bool,
    pub theme: &'a Theme,
}

impl Widget for GpuLine<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if area.width == 0 || area.height == 0 {
            return;
        }
        let line = compact_line(
            self.gpu,
            self.hidden,
            usize::from(area.width),
            self.selected,
            self.theme,
        );
        Paragraph::new(line).render(area, buf);
    }
}

/// The line's spans for a width.
pub fn compact_line(
    g: &GpuReading,
    hidden: Option<u64>,
    width: usize,
    selected: bool,
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
    // Segments after the bar, most important first; dropped from the end when short of room.
    let mut rest: Vec<Vec<Span<'static>>> = Vec::new();
    if let Some(sm) = g.sm_active_pct {
        // GPM's SM activity beside util (only where the card has GPM).
        rest.push(vec![
            styled(" SM ", theme.label),
            fmt::pct_span(Some(sm), theme, Scale::Work),
        ]);
    }
    rest.push(vec![
        styled(" mem ", theme.label),
        fmt::pct_span(g.util_memory_pct.map(f64::from), theme, Scale::Work),
    ]);
    rest.push(vec![
        styled(" VRAM ", theme.label),
        styled(
            vram_text(g.memory_used_bytes, g.memory_total_bytes),
            theme.text,
        ),
    ]);
    if let Some((word, pods)) = fmt::pod_names(&g.pods) {
        rest.push(vec![
            styled(format!(" {word} "), theme.label),
            styled(pods, theme.text),
        ]);
    }
    if let Some(h) = hidden {
        // Another tenant's memory: said, never blamed.
        rest.push(vec![
            styled(" hidden ", theme.label),
            styled(gpumeter_core::units::bytes(h), theme.warm),
        ]);
    }
    rest.push(vec![
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
    ]);
    rest.push(vec![
        styled(" ", theme.text),
        match g.temperature_celsius {
            Some(t) => styled(format!("{t}°C"), theme.temperature(t)),
            None => styled(format!("{NA}°C"), theme.na),
        },
    ]);
    let slowdowns: Vec<&str> = g
        .throttle_reasons
        .iter()
        .flatten()
        .filter(|r| r.is_slowdown())
        .map(|r| r.label())
        .collect();
    if !slowdowns.is_empty() {
        rest.push(vec![styled(
            format!(" ⚠{}", slowdowns.join(",")),
            theme.hot,
        )]);
    }
    if g.state == GpuState::Error {
        rest.push(vec![styled(" ERROR ", theme.alarm)]);
    }
    if let Some(name) = &g.name {
        rest.push(vec![styled(format!("  {}", short_name(name)), theme.dim)]);
    }

    // Fixed part: head, bar, percentage. The bar grows with the width only (not with this
    // line's other text), so the bars of all GPUs line up.
    let bar_w = (MIN_BAR + width.saturating_sub(80) / 2).min(MAX_BAR);
    let mut fixed = vec![head, styled(" ", theme.text)];
    fixed.extend(fmt::bar(util, bar_w, theme, Scale::Work));
    let p = fmt::pct_span(util, theme, Scale::Work);
    let pw = fmt::pad_left(&p.content, 5);
    fixed.push(styled(pw, if util.is_some() { p.style } else { theme.na }));
    fmt::fit(fixed, rest, width)
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
