//! The terminal dashboard (ratatui + crossterm), a front-end over the session core. This room
//! holds the view state ([`App`]), the [`widgets`] (one per file; the alert widgets in
//! `widgets/alerts/`), the [`layout`], the [`theme`] (and theme files), the process rows, the
//! terminal guard and the event loop; whole-screen tests and their fixtures are in `tests/`. It
//! reads the [`Engine`] through `&` only: [`draw`] never mutates anything, so every screen is a
//! snapshot test. The only state it owns is the view; readings arrive over the collector
//! channel in [`run`].

pub mod alert_view;
pub mod app;
pub mod chart_window;
mod event_loop;
pub mod fallback;
pub mod fleet;
pub mod frame_writer;
mod input;
pub mod keys;
pub mod layout;
mod loop_alerts;
pub mod process_action;
pub mod replay;
mod rows;
pub mod screen_writer;
pub mod sort;
pub mod terminal;
pub mod theme;
pub mod widgets;

#[cfg(test)]
pub(crate) mod tests;

use std::path::PathBuf;

use gpumeter_model::GpuState;
use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use gpumeter_core::billing::Pricing;
use gpumeter_core::engine::Engine;

pub use app::{Action, App};
pub use event_loop::{EndReason, Feed, run, session_config};
pub use layout::{Screen, Spend};
pub use rows::{INVISIBLE_LABEL, ProcRow, build_rows};
use widgets::{
    Canvas, alerts, charts, confirm, fmt, gpu_line, gpu_panel, header, help, process_table,
    spend_line, spend_panel, status_line,
};

/// How the dashboard starts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UiOptions {
    /// Draw without colours (`--no-color`, or `NO_COLOR` set).
    pub no_color: bool,
    /// The source's label (`nvml`, `demo:training`), shown until the first reading names it.
    pub source_label: String,
    /// What the machine costs and where the ledger is; `None` shows no money.
    pub billing: Option<BillingSetup>,
    /// The colours (`--theme`, `[ui] theme`); unused when `no_color` is set.
    pub theme: theme::Theme,
    /// Alert rules, notification channels and autostop (`[alerts]`, `[autostop]`).
    pub alerts: gpumeter_core::config::AlertSettings,
    /// The keys (`[keys]` over the built-in table).
    pub keys: keys::KeyMap,
    /// Whether the process keys may signal: this machine's readings, not `--readonly`.
    /// `ReadOnly` also turns autostop and command hooks off.
    pub acting: process_action::Acting,
    /// What the terminal can show (`COLORTERM`, `TERM`); frames are reduced to it.
    pub colour_depth: fallback::ColourDepth,
    /// `--ascii`: every glyph of a frame reduced to ASCII.
    pub ascii: bool,
    /// Told the table's visible rows at each sync, so the source reads the GPU processes on
    /// screen every tick and the others every few (`source::focus`).
    pub focus: gpumeter_core::source::focus::ProcessFocus,
}

/// The billing session the dashboard runs beside the readings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BillingSetup {
    pub pricing: Pricing,
    /// The spend ledger; `None` runs without one.
    pub ledger_path: Option<PathBuf>,
    /// The sampling interval (a gap over ten of them is not billed as observed time).
    pub interval_ms: i64,
}

/// Why the dashboard could not run.
#[derive(Debug, thiserror::Error)]
pub enum UiError {
    /// The terminal could not be set up, read or drawn to.
    #[error("terminal: {0}")]
    Terminal(#[from] std::io::Error),
    /// Standard output is not a terminal (piped or redirected).
    #[error("standard output is not a terminal; the dashboard needs one (try `gpumeter snapshot`)")]
    NotATerminal,
    /// The source could not be opened (the screen was up while it tried): the message says
    /// why and what to do.
    #[error("{0}")]
    SourceUnavailable(String),
    /// A signal handler could not be installed.
    #[error("installing the {signal} handler: {source}")]
    Signal {
        signal: &'static str,
        source: std::io::Error,
    },
}

/// The layout for a terminal of `area` showing what `engine` holds at `now_unix_ms` (money only
/// when metered, alerts only when one is visible).
pub fn screen_for(area: Rect, engine: &Engine, now_unix_ms: i64) -> Screen {
    let gpus = engine.latest().map_or(0, |s| s.gpus.len());
    let visible = engine.rules().visible(now_unix_ms);
    let alert_rows = if visible.is_empty() {
        0
    } else {
        // The panel spans the width, inside its border.
        let cols = usize::from(area.width.saturating_sub(2));
        alerts::panel::all_lines(&visible, cols, now_unix_ms, &theme::Theme::monochrome()).len()
    };
    let charts = widgets::charts::metrics(engine).len();
    layout::compute_for(
        area,
        gpus,
        engine.billing().is_some(),
        alert_rows,
        charts.min(layout::MAX_CHARTS_WITH_GPM),
    )
}

/// VRAM on `gpu` that no process visible here holds, when enough to mention (the shared-card
/// rule's own measure and threshold).
fn hidden_vram(engine: &Engine, gpu: u32) -> Option<u64> {
    let min = engine.rules().config().shared.min_hidden_bytes;
    engine
        .latest()
        .and_then(|s| gpumeter_core::engine::rules::shared::hidden_bytes(s, gpu))
        .filter(|b| *b >= min)
}

/// Tells `app` what the screen will list (rows, GPUs, visible rows) so keys and mouse act on
/// what is shown. The event loop calls it before each frame.
pub fn sync(app: &mut App, engine: &Engine, area: Rect, now_unix_ms: i64) {
    sync_rows(app, engine, area, now_unix_ms);
}

/// [`sync`], handing back the process rows it built: the rows [`render_with_rows`] draws in the
/// frame right after (syncing leaves the view fields the rows are built from — filter, GPU
/// filter, tree, sort — as they were), so a frame builds them once.
pub fn sync_rows<'a>(
    app: &mut App,
    engine: &'a Engine,
    area: Rect,
    now_unix_ms: i64,
) -> Vec<ProcRow<'a>> {
    let screen = screen_for(area, engine, now_unix_ms);
    let (rows, gpus) = match engine.latest() {
        Some(s) => {
            let rows = build_rows(s, app, now_unix_ms);
            app.table_containers = process_table::any_container(&rows);
            (rows, s.gpus.iter().map(|g| g.index).collect())
        }
        None => (Vec::new(), Vec::new()),
    };
    let pids = rows.iter().map(|r| r.proc.pid).collect();
    app.sync(pids, gpus, screen.page_rows());
    let visible = engine.rules().visible(now_unix_ms);
    let history: Vec<(i64, String)> = engine
        .rules()
        .history()
        .iter()
        .rev()
        .map(|e| (e.at_unix_ms, e.alert.id.clone()))
        .collect();
    app.alerts.detail_scroll_max = match &app.alerts.detail {
        Some(d) => alerts::detail::max_scroll(area, &d.of, engine, now_unix_ms),
        None => 0,
    };
    app.alerts
        .sync(visible.iter().map(|a| a.id.clone()).collect(), history);
    rows
}

/// Renders one frame from borrowed state into a ratatui `Frame` (tests, benches, the fleet
/// view): [`render`] on its buffer.
pub fn draw(frame: &mut Frame, app: &App, engine: &Engine, now_unix_ms: i64) {
    render(frame.buffer_mut(), app, engine, now_unix_ms);
}

/// Renders one frame from borrowed state into `buf` (the whole screen), reduced to what the
/// terminal shows.
pub fn render(buf: &mut Buffer, app: &App, engine: &Engine, now_unix_ms: i64) {
    draw_frame(buf, app, engine, now_unix_ms, None);
}

/// [`render`] with the process rows [`sync_rows`] built for this frame (the same `app`,
/// `engine` and time), instead of building them again.
pub fn render_with_rows(
    buf: &mut Buffer,
    app: &App,
    engine: &Engine,
    now_unix_ms: i64,
    rows: &[ProcRow<'_>],
) {
    draw_frame(buf, app, engine, now_unix_ms, Some(rows));
}

fn draw_frame(
    buf: &mut Buffer,
    app: &App,
    engine: &Engine,
    now_unix_ms: i64,
    rows: Option<&[ProcRow<'_>]>,
) {
    draw_widgets(buf, app, engine, now_unix_ms, rows);
    fallback::reduce_colours(buf, app.colour_depth);
    if app.ascii {
        fallback::to_ascii(buf);
    }
}

fn draw_widgets(
    buf: &mut Buffer,
    app: &App,
    engine: &Engine,
    now_unix_ms: i64,
    synced: Option<&[ProcRow<'_>]>,
) {
    let area = buf.area;
    let theme = &app.theme;
    let layout = match screen_for(area, engine, now_unix_ms) {
        Screen::TooSmall(r) => {
            too_small(buf, r, app);
            return;
        }
        Screen::Dashboard(l) => l,
    };
    header::render(buf, layout.header, app, engine, now_unix_ms);

    let snap = engine.latest();
    let gpus = snap.map_or(&[][..], |s| &s.gpus[..]);
    match layout.gpu_mode {
        layout::GpuMode::Message => {
            let note = if snap.is_some() {
                "no NVIDIA GPUs in this reading"
            } else {
                "no reading yet"
            };
            if let Some(r) = layout.gpu_cells.first() {
                buf.render_widget(Paragraph::new(fmt::styled(note, theme.dim)), *r);
            }
        }
        layout::GpuMode::Panels { .. } => {
            for (cell, g) in layout.gpu_cells.iter().zip(gpus) {
                let selected = app.gpu_filter == Some(g.index);
                let hidden = hidden_vram(engine, g.index);
                gpu_panel::render(buf, *cell, g, hidden, selected, theme);
            }
        }
        layout::GpuMode::Lines => {
            for (cell, g) in layout.gpu_cells.iter().zip(gpus) {
                let selected = app.gpu_filter == Some(g.index);
                let hidden = hidden_vram(engine, g.index);
                gpu_line::render(buf, *cell, g, hidden, selected, theme);
            }
        }
    }
    if let Some((r, hidden)) = layout.gpu_overflow {
        let lost = gpus
            .iter()
            .skip(layout.gpu_cells.len())
            .filter(|g| g.state != GpuState::Ok)
            .count();
        let mut text = format!(" +{hidden} more GPUs (enlarge the terminal to see them)");
        if lost > 0 {
            text = format!(" +{hidden} more GPUs, {lost} of them LOST (enlarge the terminal)");
        }
        let style = if lost > 0 { theme.hot } else { theme.dim };
        buf.render_widget(Paragraph::new(fmt::styled(text, style)), r);
    }

    charts::render(buf, &layout.charts, app, engine, now_unix_ms);
    if let (Some(spend), Some(view)) = (layout.spend, engine.billing()) {
        match spend {
            Spend::Panel(r) => spend_panel::render(buf, r, view, theme),
            Spend::Line(r) => spend_line::render(buf, r, view, theme),
        }
    }
    let built;
    let rows = match synced {
        Some(rows) => rows,
        None => {
            built = snap
                .map(|s| build_rows(s, app, now_unix_ms))
                .unwrap_or_default();
            &built[..]
        }
    };
    process_table::render(buf, layout.table, rows, app, snap.is_some(), now_unix_ms);
    if let Some(place) = layout.alerts {
        let visible = engine.rules().visible(now_unix_ms);
        match place {
            layout::AlertArea::Panel(r) => {
                let selected = app.alerts.selected;
                alerts::panel::render(buf, r, &visible, now_unix_ms, theme, selected);
            }
            layout::AlertArea::Strip(r) => {
                alerts::strip::render(buf, r, &visible, app.alerts.selected, app);
            }
        }
    }
    let countdown = loop_alerts::countdown(engine);
    status_line::render(buf, layout.status, app, countdown.as_deref());
    if let Some(cursor) = app.alerts.history {
        alerts::strip::render_history(buf, area, engine, now_unix_ms, theme, cursor);
    }
    if let Some(d) = &app.alerts.detail {
        alerts::detail::render(buf, area, d, engine, now_unix_ms, app);
    }
    if app.help {
        help::render(buf, area, app);
    }
    if let Some(pending) = &app.confirm {
        confirm::render(buf, area, pending, theme);
    }
}

/// The notice below the minimum size: the longest wording that fits, or nothing.
fn too_small(buf: &mut Buffer, area: Rect, app: &App) {
    if area.width == 0 || area.height == 0 {
        return;
    }
    let w = usize::from(area.width);
    let long = format!(
        "terminal too small: {}×{} (need {}×{})",
        area.width,
        area.height,
        layout::MIN_WIDTH,
        layout::MIN_HEIGHT
    );
    let text = [long.as_str(), "terminal too small", "too small", "small"]
        .into_iter()
        .find(|t| fmt::width(t) <= w)
        .unwrap_or("");
    let line = Line::from(fmt::styled(text.to_string(), app.theme.warm));
    buf.render_widget(
        Paragraph::new(line),
        Rect::new(area.x, area.y, area.width, 1),
    );
}
