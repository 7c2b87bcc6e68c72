//! Braille history charts of GPU util, SM activity (GPM, beside util, only when a charted card
//! has it), VRAM use and power over the last minutes, one line per GPU (or only the GPU the
//! view is narrowed to), read from the engine's history windows.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

use crate::engine::series::Series;
use crate::engine::{Engine, GpuHistory};

use super::braille;
use crate::ui::app::App;
use crate::ui::widgets::fmt::styled;

/// How far back the charts look.
pub const SPAN_MS: i64 = 5 * 60 * 1000;
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

/// Draws one chart per area, in [`metrics`] order.
pub fn render(frame: &mut Frame, areas: &[Rect], app: &App, engine: &Engine, now_ms: i64) {
    for (area, metric) in areas.iter().zip(metrics(engine)) {
        render_one(frame, *area, metric, app, engine, now_ms);
    }
}

fn render_one(
    frame: &mut Frame,
    area: Rect,
    metric: Metric,
    app: &App,
    engine: &Engine,
    now_ms: i64,
) {
    let theme = &app.theme;
    let history = engine.history();
    let gpus: Vec<u32> = match app.gpu_filter {
        Some(g) => vec![g],
        None => history.gpus.keys().copied().collect(),
    };
    let lines: Vec<(u32, Vec<(f64, f64)>)> = gpus
        .iter()
        .filter_map(|&g| {
            let pts: Vec<(f64, f64)> = metric
                .series(history.gpu(g)?)
                .window(now_ms, SPAN_MS)
                .iter()
                .map(|p| ((p.t_ms - now_ms) as f64 / 1000.0, p.mean))
                .collect();
            (!pts.is_empty()).then_some((g, pts))
        })
        .collect();

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
    title.push(styled(format!("· {}m ", SPAN_MS / 60_000), theme.dim));
    if lines.len() > 1 {
        // The legend: each GPU's number in its line's colour.
        title.push(styled("GPU", theme.dim));
        for (g, _) in &lines {
            title.push(Span::styled(format!(" {g}"), theme.series_style(*g)));
        }
        title.push(styled(" ", theme.dim));
    }
    let block = Block::bordered()
        .border_style(theme.border)
        .title(Line::from(title));
    let inner = block.inner(area);
    if lines.is_empty() || inner.width < MIN_INNER_W || inner.height < MIN_INNER_H {
        frame.render_widget(block, area);
        if inner.width > 0 && inner.height > 0 {
            let note = if lines.is_empty() {
                "no history yet"
            } else {
                ""
            };
            frame.render_widget(Paragraph::new(styled(note, theme.dim)).centered(), inner);
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
    frame.render_widget(block, area);
    // The y axis: the top and "0" labels, a rule, then the plot (no x axis: the title says
    // the span).
    let label_w = top_label.chars().count().max(1) as u16;
    if inner.width <= label_w + 1 {
        return;
    }
    let buf = frame.buffer_mut();
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
    let plot = Rect {
        x: inner.x + label_w + 1,
        width: inner.width - label_w - 1,
        ..inner
    };
    let span_s = SPAN_MS as f64 / 1000.0;
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
