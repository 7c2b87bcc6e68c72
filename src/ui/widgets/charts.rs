//! Small braille history charts, one per GPU (as nvtop and btop draw them), of the one series
//! chosen with the chart-series key: util, SM activity (GPM, where a card has it), VRAM use or
//! power, over the chosen window (1 m … 24 h, each served by the engine's history tier that
//! reaches back that far). The grid is [`chart_grid`](crate::ui::chart_grid)'s: when the GPUs
//! outnumber the cells, the last one charts the mean of the rest ("+3 more"). Each title names
//! the series, the GPU and its latest value. A chart spans the data it has: right after start
//! only what was recorded so far, growing to the whole window. The bottom row is the time
//! axis, its ends written by the one time formatter (`clock::utc_text`).

use std::collections::BTreeMap;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget};

use gpumeter_core::engine::series::Series;
use gpumeter_core::engine::{Engine, GpuHistory};

use super::braille;
use crate::ui::app::App;
use crate::ui::chart_grid::{self, Shows};
use crate::ui::widgets::fmt::styled;
use crate::ui::widgets::frame_box::FrameBox;

/// The shortest span a chart zooms to (fewer points than this make no line).
const MIN_SPAN_MS: i64 = 10_000;
/// Below this inner size a chart is not drawn (only its frame).
const MIN_INNER_W: u16 = 12;
const MIN_INNER_H: u16 = 2;

/// What the charts show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Metric {
    #[default]
    Util,
    SmActive,
    Vram,
    Power,
}

impl Metric {
    /// In the order the chart-series key cycles through them.
    pub const ALL: [Metric; 4] = [Metric::Util, Metric::SmActive, Metric::Vram, Metric::Power];

    /// The series' name in a chart's title.
    pub fn title(self) -> &'static str {
        match self {
            Metric::Util => "util",
            Metric::SmActive => "SM act",
            Metric::Vram => "VRAM",
            Metric::Power => "power",
        }
    }

    /// The next series; SM activity only when `gpm` (a card has its history).
    pub fn next(self, gpm: bool) -> Metric {
        let at = Self::ALL.iter().position(|m| *m == self).unwrap_or(0);
        let n = Self::ALL.len();
        (1..=n)
            .map(|k| Self::ALL[(at + k) % n])
            .find(|m| *m != Metric::SmActive || gpm)
            .unwrap_or(Metric::Util)
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

/// Whether any GPU has SM activity (GPM) history: the series is offered only then.
pub fn has_gpm(engine: &Engine) -> bool {
    engine
        .history()
        .gpus
        .values()
        .any(|h| h.sm_active_pct.last().is_some())
}

/// The GPUs the charts are for: the one the view is narrowed to, else all with history.
pub fn charted_gpus(app: &App, engine: &Engine) -> Vec<u32> {
    match app.gpu_filter {
        Some(g) => vec![g],
        None => engine.history().gpus.keys().copied().collect(),
    }
}

/// The charts row: one small chart per GPU of the chosen series, at `now_ms`.
pub struct ChartGrid<'a> {
    pub app: &'a App,
    pub engine: &'a Engine,
    pub now_ms: i64,
}

impl Widget for ChartGrid<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let gpus = charted_gpus(self.app, self.engine);
        let metric = self.app.chart_metric;
        if gpus.is_empty() {
            // Before the first reading: the row says what it will hold.
            let theme = &self.app.theme;
            let title = Line::from(styled(format!(" {} ", metric.title()), theme.title));
            FrameBox::new(theme.border, title).render(area, buf);
            Paragraph::new(styled("no history yet", theme.dim))
                .centered()
                .render(FrameBox::inner(area), buf);
            return;
        }
        for cell in chart_grid::cells(area, &gpus) {
            Chart {
                metric,
                shows: &cell.shows,
                app: self.app,
                engine: self.engine,
                now_ms: self.now_ms,
            }
            .render(cell.area, buf);
        }
    }
}

/// One chart: one GPU's series, or the mean of several.
struct Chart<'a> {
    metric: Metric,
    shows: &'a Shows,
    app: &'a App,
    engine: &'a Engine,
    now_ms: i64,
}

impl Chart<'_> {
    fn gpus(&self) -> &[u32] {
        match self.shows {
            Shows::One(g) => std::slice::from_ref(g),
            Shows::Rest(gs) => gs,
        }
    }

    /// The points (seconds before now, value) over the window; for several GPUs the mean of
    /// those read at each time.
    fn points(&self, window_ms: i64) -> Vec<(f64, f64)> {
        let history = self.engine.history();
        let now = self.now_ms;
        let mut by_t: BTreeMap<i64, (f64, u32)> = BTreeMap::new();
        for g in self.gpus() {
            let Some(h) = history.gpu(*g) else { continue };
            for p in self.metric.series(h).window_iter(now, window_ms) {
                if p.t_ms >= now - window_ms {
                    let e = by_t.entry(p.t_ms).or_insert((0.0, 0));
                    e.0 += p.mean;
                    e.1 += 1;
                }
            }
        }
        by_t.into_iter()
            .map(|(t, (sum, n))| ((t - now) as f64 / 1000.0, sum / f64::from(n.max(1))))
            .collect()
    }

    /// The latest value (the mean of the latest values for several GPUs).
    fn latest(&self) -> Option<f64> {
        let history = self.engine.history();
        let vals: Vec<f64> = self
            .gpus()
            .iter()
            .filter_map(|g| self.metric.series(history.gpu(*g)?).last().map(|(_, v)| v))
            .collect();
        (!vals.is_empty()).then(|| vals.iter().sum::<f64>() / vals.len() as f64)
    }

    /// The title's parts in the order they give way when the title is too long: the series,
    /// the GPU, the value, the span.
    fn title(&self, span_ms: i64, window_ms: i64, room: usize) -> Line<'static> {
        let theme = &self.app.theme;
        let (who, style) = match self.shows {
            Shows::One(g) => (format!("GPU{g}"), theme.series_style(*g)),
            Shows::Rest(gs) => (format!("+{} more", gs.len()), theme.text),
        };
        let value = match (self.latest(), self.shows) {
            (Some(v), Shows::One(_)) => self.metric.value(v),
            (Some(v), Shows::Rest(_)) => format!("mean {}", self.metric.value(v)),
            (None, _) => "N/A".to_string(),
        };
        let span = if span_ms < window_ms {
            format!("· {} of {} ", compact(span_ms), self.app.window.label())
        } else {
            format!("· {} ", self.app.window.label())
        };
        let head = [
            styled(format!(" {} ", self.metric.title()), theme.title),
            styled(format!("{who} "), style),
            styled(format!("{value} "), theme.text),
        ];
        let head_w: usize = head.iter().map(|s| s.width()).sum();
        let mut spans = head.to_vec();
        if head_w + span.chars().count() <= room {
            spans.push(styled(span, theme.dim));
        }
        Line::from(spans)
    }
}

fn compact(ms: i64) -> String {
    gpumeter_core::units::duration(ms, gpumeter_core::units::DurationStyle::Compact)
}

impl Widget for Chart<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let theme = &self.app.theme;
        let window_ms = self.app.window.span_ms();
        let points = self.points(window_ms);
        let span_ms = shown_span(&points, window_ms);
        let room = usize::from(area.width.saturating_sub(2));
        let inner = FrameBox::inner(area);
        FrameBox::new(theme.border, self.title(span_ms, window_ms, room)).render(area, buf);
        if points.is_empty() || inner.width < MIN_INNER_W || inner.height < MIN_INNER_H {
            if inner.width > 0 && inner.height > 0 && points.is_empty() {
                // A card without GPM has no SM activity; the others have no history yet.
                let note = if self.latest().is_none() && self.metric == Metric::SmActive {
                    "N/A on this card (no GPM)"
                } else {
                    "no history yet"
                };
                Paragraph::new(styled(note, theme.dim))
                    .centered()
                    .render(inner, buf);
            }
            return;
        }
        let y_max = match self.metric {
            Metric::Util | Metric::SmActive | Metric::Vram => 100.0,
            Metric::Power => power_scale(self.engine, self.gpus(), &points),
        };
        let top_label = match self.metric {
            Metric::Power => format!("{y_max:.0}W"),
            _ => "100".to_string(),
        };
        // The y axis: the top and "0" labels, a rule, then the plot.
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
            time_axis(buf, plot, span_ms, window_ms, self.now_ms, theme);
            buf.set_stringn(inner.x, plot.bottom() - 1, "0", 1, theme.dim);
            if let Some(cell) = buf.cell_mut((inner.x, bottom)) {
                cell.set_symbol(" ");
            }
        }
        let style: Style = match self.shows {
            Shows::One(g) => theme.series_style(*g),
            Shows::Rest(_) => theme.text,
        };
        let span_s = span_ms as f64 / 1000.0;
        braille::plot(
            buf,
            plot,
            [(style, points.as_slice())],
            [-span_s, 0.0],
            [0.0, y_max],
        );
    }
}

/// How much of the window the chart spans: what the points cover (at least [`MIN_SPAN_MS`]),
/// up to the whole window.
fn shown_span(points: &[(f64, f64)], window_ms: i64) -> i64 {
    let oldest_s = points.first().map_or(0.0, |p| -p.0).max(0.0);
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
/// seen, so a line reads against the cap.
fn power_scale(engine: &Engine, gpus: &[u32], points: &[(f64, f64)]) -> f64 {
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
    let seen = points.iter().map(|p| p.1).fold(0.0_f64, f64::max);
    let top = limit.max(seen);
    if top > 0.0 { top } else { 1.0 }
}
