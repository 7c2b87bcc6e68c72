//! Where each part of the dashboard goes for a terminal size and GPU count: full GPU panels in a
//! grid when they fit, one compact line per GPU when they do not, charts only when the process
//! table keeps enough rows (or, when it does not, beside a row of panels that leaves a panel's
//! width spare), the spend panel beside the charts on wide screens (a one-line
//! summary under the header otherwise, nothing without pricing), and a single "too small" line
//! below a minimum size. Pure geometry: no drawing, no state, so every decision is unit-tested.

use ratatui::layout::Rect;

/// Below this width or height the dashboard shows only a "terminal too small" line.
pub const MIN_WIDTH: u16 = 40;
pub const MIN_HEIGHT: u16 = 8;
/// Height of one full GPU panel, borders included.
pub const PANEL_HEIGHT: u16 = 8;
/// Narrowest full GPU panel; wider terminals get more panel columns.
pub const PANEL_MIN_WIDTH: u16 = 40;
/// Rows the process table keeps (title, header, rows) before GPU panels give way to lines.
const TABLE_MIN: u16 = 6;
/// Rows the process table keeps when GPUs are already compact.
const TABLE_MIN_SMALL: u16 = 3;
/// Charts appear only with this many rows for themselves and this many left for the table.
const CHART_MIN_HEIGHT: u16 = 7;
const CHART_MAX_HEIGHT: u16 = 14;
const TABLE_MIN_WITH_CHARTS: u16 = 8;
/// The charts row needs this much width (it holds one small chart per GPU, see
/// [`chart_grid`](super::chart_grid)); a chart beside a row of panels takes a panel's width.
const CHARTS_MIN_TOTAL_WIDTH: u16 = 60;
/// The full spend panel needs this terminal width (and a charts row to sit in).
pub const SPEND_PANEL_MIN_SCREEN_WIDTH: u16 = 120;
/// Width of the full spend panel: its longest line plus borders.
pub const SPEND_PANEL_WIDTH: u16 = 60;
/// The charts row grows to this height when the spend panel shares it (all its lines).
const SPEND_PANEL_HEIGHT: u16 = 10;
/// The one-line spend summary only on terminals at least this tall.
const SPEND_LINE_MIN_HEIGHT: u16 = 12;
/// The full alerts panel (evidence, cost, next step) from this size up; a one-line strip below.
pub const ALERT_PANEL_MIN_WIDTH: u16 = 100;
pub const ALERT_PANEL_MIN_HEIGHT: u16 = 30;
/// The alerts panel's tallest (borders included).
const ALERT_PANEL_MAX_HEIGHT: u16 = 12;
/// The alert strip only on terminals at least this tall.
const ALERT_STRIP_MIN_HEIGHT: u16 = 10;

/// Where the standing alerts are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlertArea {
    /// The bordered panel between the GPUs and the charts/table.
    Panel(Rect),
    /// One line under the header: the most severe alert and how many more.
    Strip(Rect),
}

/// Where the money is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spend {
    /// The full panel (bordered), beside the charts.
    Panel(Rect),
    /// One summary line under the header.
    Line(Rect),
}

impl Spend {
    pub fn area(self) -> Rect {
        match self {
            Spend::Panel(r) | Spend::Line(r) => r,
        }
    }
}

/// How the GPUs are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuMode {
    /// One bordered panel per GPU, in a grid with this many columns.
    Panels { columns: u16 },
    /// One line per GPU.
    Lines,
    /// No GPUs (or no reading yet): one line saying so.
    Message,
}

/// The dashboard's regions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScreenLayout {
    pub header: Rect,
    pub gpu_mode: GpuMode,
    /// One rect per GPU shown, in snapshot order (panels or lines); for `Message`, the line.
    pub gpu_cells: Vec<Rect>,
    /// A line saying how many GPUs did not fit, and that count.
    pub gpu_overflow: Option<(Rect, usize)>,
    /// The charts row (one small chart per GPU inside it); `None` when there is no room.
    pub charts: Option<Rect>,
    /// The spend panel or line; `None` without pricing or when there is no room.
    pub spend: Option<Spend>,
    /// The process table, title line and column header included.
    pub table: Rect,
    pub status: Rect,
    /// The alerts panel or strip; `None` when no alert is visible (or there is no room).
    pub alerts: Option<AlertArea>,
}

impl ScreenLayout {
    /// The table's row area (below its title line and column header).
    pub fn table_body(&self) -> Rect {
        let skip = 2.min(self.table.height);
        Rect::new(
            self.table.x,
            self.table.y + skip,
            self.table.width,
            self.table.height - skip,
        )
    }
}

/// What the screen shows at this size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Screen {
    /// Below [`MIN_WIDTH`]×[`MIN_HEIGHT`]: only a short notice.
    TooSmall(Rect),
    Dashboard(ScreenLayout),
}

impl Screen {
    /// Rows of the process table visible at once (0 when there is no table).
    pub fn page_rows(&self) -> usize {
        match self {
            Screen::TooSmall(_) => 0,
            Screen::Dashboard(l) => usize::from(l.table_body().height),
        }
    }
}

/// Lays out a terminal of `area` for `gpu_count` GPUs; `billing` when there is money to show.
pub fn compute(area: Rect, gpu_count: usize, billing: bool) -> Screen {
    compute_with_alerts(area, gpu_count, billing, 0)
}

/// [`compute`] with `alert_rows` lines of alerts to show (0: no alert is visible). Large
/// terminals get the panel (as many rows as the table can spare, up to
/// [`ALERT_PANEL_MAX_HEIGHT`]); smaller ones a one-line strip under the header.
pub fn compute_with_alerts(
    area: Rect,
    gpu_count: usize,
    billing: bool,
    alert_rows: usize,
) -> Screen {
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        return Screen::TooSmall(area);
    }
    let w = area.width;
    let header_h = if area.height >= 20 { 2 } else { 1 };
    let header = Rect::new(area.x, area.y, w, header_h);
    let status = Rect::new(area.x, area.bottom() - 1, w, 1);
    let mut body = Rect::new(area.x, area.y + header_h, w, area.height - header_h - 1);

    let panel =
        alert_rows > 0 && w >= ALERT_PANEL_MIN_WIDTH && area.height >= ALERT_PANEL_MIN_HEIGHT;
    let mut strip = None;
    if alert_rows > 0 && !panel && area.height >= ALERT_STRIP_MIN_HEIGHT {
        strip = Some(AlertArea::Strip(Rect::new(body.x, body.y, w, 1)));
        body = Rect::new(body.x, body.y + 1, w, body.height - 1);
    }
    let panel_rows = if panel { alert_rows } else { 0 };

    let wide = billing && w >= SPEND_PANEL_MIN_SCREEN_WIDTH;
    let mut l = body_layout(body, gpu_count, wide, panel_rows);
    if billing && l.spend.is_none() && area.height >= SPEND_LINE_MIN_HEIGHT {
        // No room beside the charts: one summary line under the header instead.
        let line = Rect::new(body.x, body.y, w, 1);
        let rest = Rect::new(body.x, body.y + 1, w, body.height - 1);
        l = body_layout(rest, gpu_count, false, panel_rows);
        l.spend = Some(Spend::Line(line));
    }
    if strip.is_some() {
        l.alerts = strip;
    }
    l.header = header;
    l.status = status;
    Screen::Dashboard(l)
}

/// GPUs, the alerts panel (`alert_rows` > 0), charts (with the spend panel when `spend_panel`
/// and they fit) and the table in `body`.
fn body_layout(body: Rect, gpu_count: usize, spend_panel: bool, alert_rows: usize) -> ScreenLayout {
    let w = body.width;
    let gpus = place_gpus(body, gpu_count);
    let mut rest_top = body.y + gpus.height;
    let mut rest_h = body.height - gpus.height;
    let mut alerts = None;
    if alert_rows > 0 {
        // Never at the process table's expense: it keeps TABLE_MIN rows.
        let want = u16::try_from(alert_rows.saturating_add(2)).unwrap_or(u16::MAX);
        let cap = ALERT_PANEL_MAX_HEIGHT.min((rest_h / 3).max(5));
        let h = want.min(cap).min(rest_h.saturating_sub(TABLE_MIN));
        if h >= 3 {
            alerts = Some(AlertArea::Panel(Rect::new(body.x, rest_top, w, h)));
            rest_top += h;
            rest_h -= h;
        }
    }

    let mut charts_h =
        if w >= CHARTS_MIN_TOTAL_WIDTH && rest_h >= CHART_MIN_HEIGHT + TABLE_MIN_WITH_CHARTS {
            (rest_h / 3).clamp(CHART_MIN_HEIGHT, CHART_MAX_HEIGHT)
        } else {
            0
        };
    let mut spend = None;
    let mut charts_w = w;
    if spend_panel && charts_h > 0 {
        // The panel shows all its lines when the table can spare the rows.
        if rest_h >= SPEND_PANEL_HEIGHT + TABLE_MIN_WITH_CHARTS {
            charts_h = charts_h.max(SPEND_PANEL_HEIGHT);
        }
        let panel_w = SPEND_PANEL_WIDTH.min(w / 2);
        charts_w = w - panel_w;
        spend = Some(Spend::Panel(Rect::new(
            body.x + charts_w,
            rest_top,
            panel_w,
            charts_h,
        )));
    }
    let mut charts = (charts_h > 0).then(|| Rect::new(body.x, rest_top, charts_w, charts_h));
    let table = Rect::new(body.x, rest_top + charts_h, w, rest_h - charts_h);
    let mut gpu_cells = gpus.cells;
    if charts.is_none() {
        charts = beside_panels(body, gpus.mode, &mut gpu_cells);
    }

    ScreenLayout {
        header: Rect::default(),
        gpu_mode: gpus.mode,
        gpu_cells,
        gpu_overflow: gpus.overflow,
        charts,
        spend,
        table,
        status: Rect::default(),
        alerts,
    }
}

struct GpuPlacement {
    mode: GpuMode,
    cells: Vec<Rect>,
    overflow: Option<(Rect, usize)>,
    height: u16,
}

/// GPU panels if they take no more than about half the body, else lines, else as many lines as
/// fit above a minimal table.
fn place_gpus(body: Rect, n: usize) -> GpuPlacement {
    if n == 0 {
        return GpuPlacement {
            mode: GpuMode::Message,
            cells: vec![Rect::new(body.x, body.y, body.width, 1)],
            overflow: None,
            height: 1,
        };
    }
    let max_cols = usize::from((body.width / PANEL_MIN_WIDTH).max(1));
    let mut cols = max_cols.min(n);
    let rows = n.div_ceil(cols);
    // Balance the grid: 4 GPUs on 3 possible columns read better as 2×2.
    cols = n.div_ceil(rows);
    let panels_h = rows.saturating_mul(usize::from(PANEL_HEIGHT));
    let body_h = usize::from(body.height);
    // Panels may take about half the body: the process table and charts need the rest.
    if panels_h + usize::from(TABLE_MIN) <= body_h && panels_h * 2 <= body_h + 2 {
        let height = panels_h as u16;
        let mut cells = Vec::with_capacity(n);
        for r in 0..rows {
            let row = Rect::new(
                body.x,
                body.y + r as u16 * PANEL_HEIGHT,
                body.width,
                PANEL_HEIGHT,
            );
            cells.extend(split_columns(row, cols));
        }
        cells.truncate(n);
        return GpuPlacement {
            mode: GpuMode::Panels {
                columns: cols as u16,
            },
            cells,
            overflow: None,
            height,
        };
    }
    let budget = usize::from(body.height.saturating_sub(TABLE_MIN_SMALL));
    let (shown, hidden) = if n <= budget {
        (n, 0)
    } else {
        let shown = budget.saturating_sub(1);
        (shown, n - shown)
    };
    let cells: Vec<Rect> = (0..shown)
        .map(|i| Rect::new(body.x, body.y + i as u16, body.width, 1))
        .collect();
    let overflow = (hidden > 0).then(|| {
        (
            Rect::new(body.x, body.y + shown as u16, body.width, 1),
            hidden,
        )
    });
    GpuPlacement {
        mode: GpuMode::Lines,
        cells,
        overflow,
        height: (shown + usize::from(hidden > 0)) as u16,
    }
}

/// With no room for a charts row, a single row of panels that leaves a panel's width spare
/// (one GPU at 80 columns) gives that width to the charts, beside the panels and as tall: a
/// GPU's history is worth more than an empty half of its panel. `None` otherwise.
fn beside_panels(body: Rect, mode: GpuMode, cells: &mut Vec<Rect>) -> Option<Rect> {
    let GpuMode::Panels { columns } = mode else {
        return None;
    };
    let n = cells.len();
    let one_row = n == usize::from(columns);
    if !one_row || usize::from(body.width / PANEL_MIN_WIDTH) <= n {
        return None;
    }
    let row = Rect::new(body.x, body.y, body.width, PANEL_HEIGHT);
    let mut slots = split_columns(row, n + 1);
    let chart = slots.pop()?;
    *cells = slots;
    Some(chart)
}

/// `n` side-by-side columns covering `area`, the remainder spread from the left.
pub fn split_columns(area: Rect, n: usize) -> Vec<Rect> {
    let n = n.max(1) as u32;
    let w = u32::from(area.width);
    (0..n)
        .map(|i| {
            let x0 = w * i / n;
            let x1 = w * (i + 1) / n;
            Rect::new(area.x + x0 as u16, area.y, (x1 - x0) as u16, area.height)
        })
        .collect()
}

/// A centred box of at most `width`×`height` inside `area`.
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

#[cfg(test)]
mod tests;
