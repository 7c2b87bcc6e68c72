//! The detail view's GPU lines: each GPU the process holds, its VRAM and SM share now and
//! whose pod the card is, and the process's own history of both over the charts' window as
//! sparklines (the engine's per-process history; N/A where the driver never said).

use ratatui::text::{Line, Span};

use gpumeter_core::engine::series::Series;
use gpumeter_core::engine::{Engine, ProcessKey};
use gpumeter_core::units;
use gpumeter_model::{PodRef, ProcessReading};

use crate::ui::app::App;
use crate::ui::widgets::alerts::panel::wrapped;
use crate::ui::widgets::fmt::styled;

/// Columns a history sparkline takes at most.
const SPARK_MAX: usize = 48;
const SPARK: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// A sparkline of `series` over the last `window_ms` before `now_ms`, `cols` wide, scaled to
/// `top`; `None` when the window holds nothing.
fn sparkline(
    series: &Series,
    now_ms: i64,
    window_ms: i64,
    cols: usize,
    top: f64,
) -> Option<String> {
    let cols = cols.clamp(1, SPARK_MAX);
    let mut sums = vec![(0.0_f64, 0u32); cols];
    let start = now_ms - window_ms;
    for p in series.window_iter(now_ms, window_ms) {
        if p.t_ms < start {
            continue;
        }
        let at = ((p.t_ms - start) as f64 / window_ms.max(1) as f64 * cols as f64) as usize;
        if let Some(s) = sums.get_mut(at.min(cols - 1)) {
            s.0 += p.mean;
            s.1 += 1;
        }
    }
    if sums.iter().all(|s| s.1 == 0) {
        return None;
    }
    Some(
        sums.iter()
            .map(|&(sum, n)| {
                if n == 0 {
                    return ' ';
                }
                let v = (sum / f64::from(n) / top.max(1e-9)).clamp(0.0, 1.0);
                SPARK[((v * 7.0).round() as usize).min(7)]
            })
            .collect(),
    )
}

/// Its GPUs: VRAM and SM share now, and its own history of both over the charts' window.
pub(super) fn gpu_lines(
    out: &mut Vec<Line<'static>>,
    app: &App,
    engine: &Engine,
    p: &ProcessReading,
    cols: usize,
    now_ms: i64,
) {
    let theme = &app.theme;
    if p.gpu.is_empty() {
        out.push(Line::from(styled(
            "GPUs: none of its own (it feeds its job's GPU process)",
            theme.dim,
        )));
        return;
    }
    out.push(Line::from(styled("GPUs", theme.title)));
    let window_ms = app.window.span_ms();
    let window = app.window.label();
    let snap = engine.latest();
    for u in &p.gpu {
        let g = u.gpu_index;
        let vram = u.memory_bytes.map_or_else(|| "N/A".into(), units::bytes);
        let sm = u
            .sm_util_pct
            .map_or_else(|| "N/A".into(), |v| format!("{v}%"));
        // Whose the card is on Kubernetes (MIG: several pods).
        let owner = snap
            .and_then(|s| s.gpu(g))
            .and_then(|gpu| PodRef::describe(&gpu.pods))
            .map(|words| format!(" · {words}"))
            .unwrap_or_default();
        out.extend(wrapped(
            Span::styled(format!("  GPU{g} "), theme.series_style(g)),
            &format!("VRAM {vram} · SM {sm}{owner}"),
            cols,
        ));
        // Its own history on this GPU (the engine keeps it per process and GPU, capped).
        let key = ProcessKey {
            pid: p.pid,
            start_time_unix_s: p.start_time_unix_s,
            gpu_index: g,
        };
        let own = engine.history().process(&key);
        // VRAM against the card's total, so a line reads as its share of the card.
        let total = snap
            .and_then(|s| s.gpu(g))
            .and_then(|gpu| gpu.memory_total_bytes)
            .map(|b| b as f64);
        let room = cols.saturating_sub(24);
        let rows: [(&str, Option<&Series>, Option<f64>); 2] = [
            ("VRAM", own.map(|h| &h.vram_bytes), total),
            ("SM share", own.map(|h| &h.sm_util_pct), Some(100.0)),
        ];
        for (name, series, top) in rows {
            let text = series
                .and_then(|s| {
                    let top = top.or_else(|| peak(s, now_ms, window_ms))?;
                    sparkline(s, now_ms, window_ms, room, top)
                })
                .unwrap_or_else(|| "N/A".into());
            out.push(Line::from(vec![
                styled(format!("    {name:<11} {window:>4} "), theme.dim),
                styled(text, theme.series_style(g)),
            ]));
        }
    }
}

/// The highest point of `series` in the window, to scale a line that has no known top.
fn peak(series: &Series, now_ms: i64, window_ms: i64) -> Option<f64> {
    series
        .window_iter(now_ms, window_ms)
        .map(|p| p.mean)
        .reduce(f64::max)
}
