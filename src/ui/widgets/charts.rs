//! Braille history charts of GPU util, SM activity (GPM, beside util, only when a charted card
//! has it), VRAM use and power over the chosen window (`+` `-`: 1 m … 24 h, each served by the
//! engine's history tier that reaches back that far), one line per GPU (or only the GPU the
//! view is narrowed to). A chart spans the data it has: right after start only what was
//! recorded so far, growing to the whole window. The bottom row is the time axis, its ends
//! written by the one time formatter (`clock::utc_text`).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use gpumeter_core::engine::series::Series;
use gpumeter_core::engine::{Engine, GpuHistory};

use super::braille;
use crate::ui::app::App;
use crate::ui::widgets::fmt::styled;
use crate::ui::widgets::frame_box::FrameBox;

/// The shortest span a chart zooms to (fewer points than this make no line).
const MIN_SPAN_MS: i64 = 10_000;
/// Below this inner size a chart is not drawn (only its frame).
const MIN_INNER_W: u16 = 12;
const MIN_INNER_H: u16 = 2;

/// What a chart shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    Util,
    SmActive,
    Vram,
    Power,
}

impl Metric {
    /// In the order charts are laid out, left to right.
    pub const ALL: [Metric; 4] = [Metric::Util, Metric::SmActive, Metric::Vram, Metric::Power];

    fn title(self) -> &'static str {
        match self {
            Metric::Util => "util",
            Metric::SmActive => "SM activity (GPM)",
            Metric::Vram => "VRAM",
            Metric::Power => "power",
        }
    }

    fn series(self, h: &GpuHistory) -> &Series {
        match self {
            Metric::Util => &h.util_pct,
            Metric::SmActive => &h.sm_active_pct,
            Metric::Vram => &h.vram_used_pct,
            Metric::Power => &h.power_watts,
        }
    }

    fn value(self, v: f64) -> String {
        match self {
            Metric::Util | Metric::SmActive | Metric::Vram => format!("{v:.0}%"),
            Metric::Power => format!("{v:.0}W"),
        }
    }
}

/// The charts to draw, in [`Metric::ALL`] order: SM activity only when a GPU has its history.
pub fn metrics(engine: &Engine) -> Vec<Metric> {
    let gpm = engine
        .history()
        .gpus
        .values()
        .any(|h| h.sm_active_pct.last().is_some());
    Metric::ALL
        .into_iter()
        .filter(|m| *m != Metric::SmActive || gpm)
        .collect()
}

/// One chart of `metric` over the window `app` has chosen, at `now_ms`; the dashboard draws
/// one per chart area, in [`metrics`] order.
pub struct Chart<'a> {
    pub metric: Metric,
    pub app: &'a App,
    pub engine: &'a Engine,
    pub now_ms: i64,
}

impl Widget for Chart<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let Self {
            metric,
            app,
            engine,
            now_ms,
        } = self;
        let theme = &app.theme;
        let history = engine.history();
        let gpus: Vec<u32> = match app.gpu_filter {
            Some(g) => vec![g],
            None => history.gpus.keys().copied().collect(),
        };
        let window_ms = app.window.span_ms();
        let lines: Vec<(u32, Vec<(f64, f64)>)> = gpus
            .iter()
            .filter_map(|&g| {
                let points = metric
                    .series(history.gpu(g)?)
                    .window_iter(now_ms, window_ms)
                    .filter(|p| p.t_ms >= now_ms - window_ms)
                    .map(|p| ((p.t_ms - now_ms) as f64 / 1000.0, p.mean));
                // Reserved once: a collect from a filter would grow the list step by step.
                let mut pts = Vec::with_capacity(points.size_hint().1.unwrap_or(0));
                pts.extend(points);
                (!pts.is_empty()).then_some((g, pts))
            })
            .collect();
        let span_ms = shown_span(&lines, window_ms);

        // Title: what, over how long, the latest value (one GPU) or the mean of the latest values.
        let latest: Vec<f64> = lines
            .iter()
            .filter_map(|(g, _)| metric.series(history.gpu(*g)?).last().map(|(_, v)| v))
            .collect();
        let mut title = vec![styled(format!(" {} ", metric.title()), theme.title)];
        if let Some(g) = app.gpu_filter {
            title.push(styled(format!("GPU{g} "), theme.series_style(g)));
        }
        if !latest.is_empty() {
            let mean = latest.iter().sum::<f64>() / latest.len() as f64;
            let word = if latest.len() > 1 { "mean " } else { "" };
            title.push(styled(format!("{word}{} ", metric.value(mean)), theme.text));
        }
        let span_text = if span_ms < window_ms {
            format!(
                "· {} of {} ",
                gpumeter_core::units::duration(
                    span_ms,
                    gpumeter_core::units::DurationStyle::Compact
                ),
                app.window.label()
            )
        } else {
            format!("· {} ", app.window.label())
        };
        title.push(styled(span_text, theme.dim));
        if lines.len() > 1 {
            // The legend: each GPU's number in its line's colour.
            title.push(styled("GPU", theme.dim));
            for (g, _) in &lines {
                title.push(Span::styled(format!(" {g}"), theme.series_style(*g)));
            }
            title.push(styled(" ", theme.dim));
        }
        let inner = FrameBox::inner(area);
        FrameBox::new(theme.border, Line::from(title)).render(area, buf);
        if lines.is_empty() || inner.width < MIN_INNER_W || inner.height < MIN_INNER_H {
            if inner.width > 0 && inner.height > 0 {
                let note = if lines.is_empty() {
                    "no history yet"
                } else {
                    ""
                };
                Paragraph::new(styled(note, theme.dim))
                    .centered()
                    .render(inner, buf);
            }
            return;
        }

        let y_max = match metric {
            Metric::Util | Metric::SmActive | Metric::Vram => 100.0,
            Metric::Power => power_scale(engine, &gpus, &lines),
        };
        let top_label = match metric {
            Metric::Power => format!("{y_max:.0}W"),
            _ => "100".to_string(),
        };
        // The y axis: the top and "0" labels, a rule, then the plot (no x axis: the title says
        // the span).
        let label_w = top_label.chars().count().max(1) as u16;
        if inner.width <= label_w + 1 {
            return;
        }
        let bottom = inner.bottom() - 1;
        buf.set_stringn(
            inner.x,
            inner.y,
            &top_label,
            usize::from(label_w),
            theme.dim,
        );
        buf.set_stringn(inner.x, bottom, "0", 1, theme.dim);
        for y in inner.top()..inner.bottom() {
            if let Some(cell) = buf.cell_mut((inner.x + label_w, y)) {
                cell.set_symbol(ratatui::symbols::line::VERTICAL)
                    .set_style(theme.dim);
            }
        }
        let mut plot = Rect {
            x: inner.x + label_w + 1,
            width: inner.width - label_w - 1,
            ..inner
        };
        // The time axis takes the bottom row where three rows are left for the plot.
        if plot.height >= 4 {
            plot.height -= 1;
            time_axis(buf, plot, span_ms, window_ms, now_ms, theme);
            buf.set_stringn(inner.x, plot.bottom() - 1, "0", 1, theme.dim);
            if let Some(cell) = buf.cell_mut((inner.x, bottom)) {
                cell.set_symbol(" ");
            }
        }
        let span_s = span_ms as f64 / 1000.0;
        braille::plot(
            buf,
            plot,
            lines
                .iter()
                .map(|(g, pts)| (theme.series_style(*g), pts.as_slice())),
            [-span_s, 0.0],
            [0.0, y_max],
        );
    }
}

/// How much of the window the chart spans: what the lines cover (at least [`MIN_SPAN_MS`]),
/// up to the whole window.
fn shown_span(lines: &[(u32, Vec<(f64, f64)>)], window_ms: i64) -> i64 {
    let oldest_s = lines
        .iter()
        .filter_map(|(_, pts)| pts.first().map(|p| -p.0))
        .fold(0.0_f64, f64::max);
    let oldest_ms = (oldest_s * 1000.0).ceil() as i64;
    // Data reaching (almost: a sampling step or two) back to the window's start fills it.
    if window_ms - oldest_ms <= (window_ms / 50).max(2_000) {
        return window_ms.max(MIN_SPAN_MS);
    }
    oldest_ms.clamp(MIN_SPAN_MS, window_ms.max(MIN_SPAN_MS))
}

/// The row under `plot`: the time its left edge stands for and the time now, in UTC (to the
/// second for windows up to 15 minutes).
fn time_axis(
    buf: &mut ratatui::buffer::Buffer,
    plot: Rect,
    span_ms: i64,
    window_ms: i64,
    now_ms: i64,
    theme: &crate::ui::theme::Theme,
) {
    use gpumeter_core::clock::{UtcStyle, utc_text};
    let style = if window_ms <= 15 * 60_000 {
        UtcStyle::ClockSeconds
    } else {
        UtcStyle::Clock
    };
    let left = utc_text(now_ms - span_ms, style);
    let right = utc_text(now_ms, style);
    let y = plot.bottom();
    let w = usize::from(plot.width);
    let (lw, rw) = (left.chars().count(), right.chars().count());
    if w >= lw + rw + 2 {
        buf.set_stringn(plot.x, y, &left, lw, theme.dim);
        let x = plot.x + (w - rw) as u16;
        buf.set_stringn(x, y, &right, rw, theme.dim);
    } else if w >= rw {
        let x = plot.x + (w - rw) as u16;
        buf.set_stringn(x, y, &right, rw, theme.dim);
    }
}

/// The power chart's top: the highest power limit of the charted GPUs, else the highest value
/// seen, so lines are comparable against the cap.
fn power_scale(engine: &Engine, gpus: &[u32], lines: &[(u32, Vec<(f64, f64)>)]) -> f64 {
    let limit = engine
        .latest()
        .map(|s| {
            s.gpus
                .iter()
                .filter(|g| gpus.contains(&g.index))
                .filter_map(|g| g.power_limit_watts)
                .fold(0.0_f64, f64::max)
        })
        .unwrap_or(0.0);
    let seen = lines
        .iter()
        .flat_map(|(_, pts)| pts.iter().map(|p| p.1))
        .fold(0.0_f64, f64::max);
    let top = limit.max(seen);
    if top > 0.0 { top } else { 1.0 }
}
