//! The terminal dashboard (ratatui + crossterm), a front-end over the session core. This room
//! holds the view state ([`App`]), the [`widgets`] (one per file; the alert widgets in
//! `widgets/alerts/`), the [`layout`], the [`theme`] (and theme files), the process rows, the
//! terminal guard and the event loop; whole-screen tests and their fixtures are in `tests/`. It
//! reads the [`Engine`] through `&` only: a [`Dashboard`] (the whole screen, a widget over the
//! widgets) never mutates anything, so every screen is a snapshot test. The only state it owns
//! is the view; readings arrive over the collector channel in [`run`].

pub mod alert_view;
pub mod app;
pub mod chart_grid;
pub mod chart_window;
mod event_loop;
pub mod fallback;
pub mod fleet;
pub mod frame_writer;
mod input;
pub mod keys;
pub mod layout;
mod list_cursor;
mod loop_alerts;
pub mod process_action;
pub mod process_view;
pub mod replay;
mod rows;
pub mod screen_writer;
pub mod sort;
pub mod sort_menu;
pub mod tags;
pub mod terminal;
pub mod theme;
pub mod user_filter;
pub mod widgets;

#[cfg(test)]
pub(crate) mod tests;

use std::path::PathBuf;

use gpumeter_model::{GpuReading, GpuState};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget};

use gpumeter_core::billing::Pricing;
use gpumeter_core::engine::Engine;

pub use app::{Action, App};
pub use event_loop::{EndReason, Feed, run, session_config};
pub use layout::{Screen, Spend};
pub use rows::{INVISIBLE_LABEL, ProcRow, build_rows};
use widgets::alerts::detail::AlertDetail;
use widgets::alerts::panel::AlertPanel;
use widgets::alerts::strip::{AlertStrip, HistoryOverlay};
use widgets::charts::ChartGrid;
use widgets::confirm::Confirm;
use widgets::gpu_line::{GpuLine, LineColumns, Segments, segments};
use widgets::gpu_panel::GpuPanel;
use widgets::header::Header;
use widgets::help::Help;
use widgets::process_table::ProcessTable;
use widgets::spend_line::SpendLine;
use widgets::spend_panel::SpendPanel;
use widgets::status_line::StatusLine;
use widgets::{alerts, charts, fmt, process_table};

/// How the dashboard starts.
#[derive(Debug, Clone, PartialEq)]
pub struct UiOptions {
    /// How often the source is read (`--interval`).
    pub interval_ms: i64,
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

impl Default for UiOptions {
    fn default() -> Self {
        Self {
            interval_ms: 1_000,
            no_color: false,
            source_label: String::new(),
            billing: None,
            theme: theme::Theme::default(),
            alerts: Default::default(),
            keys: Default::default(),
            acting: Default::default(),
            colour_depth: Default::default(),
            ascii: false,
            focus: Default::default(),
        }
    }
}

/// The billing session the dashboard runs beside the readings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BillingSetup {
    pub pricing: Pricing,
    /// The spend ledger; `None` runs without one.
    pub ledger_path: Option<PathBuf>,
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
    layout::compute_with_alerts(area, gpus, engine.billing().is_some(), alert_rows)
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

/// [`sync`], handing back the process rows it built: the rows [`Dashboard::with_rows`] draws
/// in the frame right after (syncing leaves the view fields the rows are built from — filter, GPU
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
            app.users.sync(
                s.processes
                    .iter()
                    .filter_map(|p| p.user.as_deref().map(str::to_string))
                    .collect(),
            );
            app.tags.reconcile(s);
            let rows = build_rows(s, app, now_unix_ms);
            app.table_columns = process_table::optional(&rows, Some(s));
            (rows, s.gpus.iter().map(|g| g.index).collect())
        }
        None => (Vec::new(), Vec::new()),
    };
    let pids = rows.iter().map(|r| r.proc.pid).collect();
    app.sync(pids, gpus, screen.page_rows());
    app.row_starts = rows.iter().map(|r| r.proc.start_time_unix_s).collect();
    // The zoom offers no window shorter than one reading per plot column of these charts.
    let floor = match &screen {
        Screen::Dashboard(l) => l.charts.map_or(0, |r| {
            let charted = charts::charted_gpus(app, engine);
            chart_grid::window_floor_ms(r, &charted, app.interval_ms)
        }),
        Screen::TooSmall(_) => 0,
    };
    app.window.set_floor(floor);
    app.window.set_held(
        engine
            .history()
            .first_at_unix_ms
            .map(|first| now_unix_ms - first),
    );
    app.chart_gpm = charts::has_gpm(engine);
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
    app.help_scroll_max = widgets::help::max_scroll(app, area);
    app.help_scroll = app.help_scroll.min(app.help_scroll_max);
    if let Some(detail) = &app.process_detail {
        let max = widgets::process_detail::max_scroll(area, app, engine, detail, now_unix_ms);
        if let Some(d) = app.process_detail.as_mut() {
            d.set_scroll_max(max);
        }
    }
    rows
}

/// One whole frame of the dashboard from borrowed state (what `engine` holds at `now_unix_ms`,
/// as `app` views it), reduced to what the terminal shows. Drawn over the whole buffer:
/// `Dashboard::new(app, engine, now).render(buf.area, buf)`.
pub struct Dashboard<'a> {
    pub app: &'a App,
    pub engine: &'a Engine,
    pub now_unix_ms: i64,
    /// The process rows [`sync_rows`] built for this frame (the same `app`, `engine` and
    /// time); `None` builds them again.
    pub rows: Option<&'a [ProcRow<'a>]>,
}

impl<'a> Dashboard<'a> {
    /// The frame of `engine` at `now_unix_ms` as `app` views it, its rows built when drawn.
    pub fn new(app: &'a App, engine: &'a Engine, now_unix_ms: i64) -> Self {
        Self {
            app,
            engine,
            now_unix_ms,
            rows: None,
        }
    }

    /// The same frame, drawing the `rows` [`sync_rows`] built instead of building them.
    pub fn with_rows(self, rows: &'a [ProcRow<'a>]) -> Self {
        Self {
            rows: Some(rows),
            ..self
        }
    }
}

impl Widget for Dashboard<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let Self {
            app,
            engine,
            now_unix_ms,
            rows,
        } = self;
        draw_widgets(buf, area, app, engine, now_unix_ms, rows);
        fallback::reduce_colours(buf, app.colour_depth);
        if app.ascii {
            fallback::to_ascii(buf);
        }
    }
}

fn draw_widgets(
    buf: &mut Buffer,
    area: Rect,
    app: &App,
    engine: &Engine,
    now_unix_ms: i64,
    synced: Option<&[ProcRow<'_>]>,
) {
    let theme = &app.theme;
    let layout = match screen_for(area, engine, now_unix_ms) {
        Screen::TooSmall(r) => {
            too_small(buf, r, app);
            return;
        }
        Screen::Dashboard(l) => l,
    };
    Header {
        app,
        engine,
        now_ms: now_unix_ms,
    }
    .render(layout.header, buf);

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
                Paragraph::new(fmt::styled(note, theme.dim)).render(*r, buf);
            }
        }
        layout::GpuMode::Panels { .. } => {
            for (cell, gpu) in layout.gpu_cells.iter().zip(gpus) {
                GpuPanel {
                    gpu,
                    hidden: hidden_vram(engine, gpu.index),
                    selected: app.gpu_filter == Some(gpu.index),
                    theme,
                }
                .render(*cell, buf);
            }
        }
        layout::GpuMode::Lines => {
            let shown: Vec<(&GpuReading, Segments)> = layout
                .gpu_cells
                .iter()
                .zip(gpus)
                .map(|(_, g)| (g, segments(g, hidden_vram(engine, g.index), theme)))
                .collect();
            let width = layout.gpu_cells.first().map_or(0, |c| usize::from(c.width));
            let columns = LineColumns::for_gpus(shown.iter().map(|(g, s)| (*g, s)), width);
            for (cell, (gpu, segments)) in layout.gpu_cells.iter().zip(shown) {
                GpuLine {
                    gpu,
                    segments,
                    selected: app.gpu_filter == Some(gpu.index),
                    columns: &columns,
                    theme,
                }
                .render(*cell, buf);
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
        Paragraph::new(fmt::styled(text, style)).render(r, buf);
    }

    if let Some(r) = layout.charts {
        ChartGrid {
            app,
            engine,
            now_ms: now_unix_ms,
        }
        .render(r, buf);
    }
    if let (Some(spend), Some(view)) = (layout.spend, engine.billing()) {
        match spend {
            Spend::Panel(r) => SpendPanel { view, theme }.render(r, buf),
            Spend::Line(r) => SpendLine { view, theme }.render(r, buf),
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
    ProcessTable {
        rows,
        app,
        has_reading: snap.is_some(),
        optional: process_table::optional(rows, snap),
        now_ms: now_unix_ms,
    }
    .render(layout.table, buf);
    if let Some(place) = layout.alerts {
        let visible = engine.rules().visible(now_unix_ms);
        match place {
            layout::AlertArea::Panel(r) => AlertPanel {
                alerts: &visible,
                now_unix_ms,
                theme,
                selected: app.alerts.selected,
            }
            .render(r, buf),
            layout::AlertArea::Strip(r) => AlertStrip {
                visible: &visible,
                selected: app.alerts.selected,
                app,
            }
            .render(r, buf),
        }
    }
    let countdown = loop_alerts::countdown(engine);
    let judging = engine
        .judging()
        .map(|j| widgets::status_line::judging_text(&j));
    StatusLine {
        app,
        countdown: countdown.as_deref(),
        judging: judging.as_deref(),
    }
    .render(layout.status, buf);
    if let Some(cursor) = app.alerts.history {
        HistoryOverlay {
            engine,
            now: now_unix_ms,
            theme,
            cursor,
        }
        .render(area, buf);
    }
    if let Some(detail) = &app.alerts.detail {
        AlertDetail {
            detail,
            engine,
            now_unix_ms,
            app,
        }
        .render(area, buf);
    }
    if let Some(detail) = &app.process_detail {
        widgets::process_detail::ProcessDetailView {
            detail,
            engine,
            now_ms: now_unix_ms,
            app,
        }
        .render(area, buf);
    }
    widgets::picker::render_open(app, area, buf);
    if app.help {
        Help { app }.render(area, buf);
    }
    if let Some(pending) = &app.confirm {
        Confirm { pending, theme }.render(area, buf);
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
    Paragraph::new(line).render(Rect::new(area.x, area.y, area.width, 1), buf);
}
