//! Where each part of the dashboard goes for a terminal size and GPU count: full GPU panels in a
//! grid when they fit, one compact line per GPU when they do not, charts only when the process
//! table keeps enough rows, and a single "too small" line below a minimum size. Pure geometry:
//! no drawing, no state, so every decision is unit-tested.

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
/// Charts need this much width; each chart at least [`CHART_MIN_WIDTH`].
const CHARTS_MIN_TOTAL_WIDTH: u16 = 60;
const CHART_MIN_WIDTH: u16 = 36;
/// At most this many charts (util, VRAM, power).
pub const MAX_CHARTS: usize = 3;

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
    /// Side-by-side chart areas (util, VRAM, power — as many as fit).
    pub charts: Vec<Rect>,
    /// The process table, title line and column header included.
    pub table: Rect,
    pub status: Rect,
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

/// Lays out a terminal of `area` for `gpu_count` GPUs.
pub fn compute(area: Rect, gpu_count: usize) -> Screen {
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        return Screen::TooSmall(area);
    }
    let w = area.width;
    let header_h = if area.height >= 20 { 2 } else { 1 };
    let header = Rect::new(area.x, area.y, w, header_h);
    let status = Rect::new(area.x, area.bottom() - 1, w, 1);
    let body_top = area.y + header_h;
    let body_h = area.height - header_h - 1;

    let gpus = place_gpus(Rect::new(area.x, body_top, w, body_h), gpu_count);
    let rest_top = body_top + gpus.height;
    let rest_h = body_h - gpus.height;

    let charts_h =
        if w >= CHARTS_MIN_TOTAL_WIDTH && rest_h >= CHART_MIN_HEIGHT + TABLE_MIN_WITH_CHARTS {
            (rest_h / 3).clamp(CHART_MIN_HEIGHT, CHART_MAX_HEIGHT)
        } else {
            0
        };
    let charts = if charts_h > 0 {
        let n = usize::from(w / CHART_MIN_WIDTH).clamp(1, MAX_CHARTS);
        split_columns(Rect::new(area.x, rest_top, w, charts_h), n)
    } else {
        Vec::new()
    };
    let table = Rect::new(area.x, rest_top + charts_h, w, rest_h - charts_h);

    Screen::Dashboard(ScreenLayout {
        header,
        gpu_mode: gpus.mode,
        gpu_cells: gpus.cells,
        gpu_overflow: gpus.overflow,
        charts,
        table,
        status,
    })
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
mod tests {
    #![allow(clippy::panic)]
    use super::*;

    fn dash(w: u16, h: u16, n: usize) -> ScreenLayout {
        match compute(Rect::new(0, 0, w, h), n) {
            Screen::Dashboard(l) => l,
            Screen::TooSmall(_) => panic!("{w}x{h} should fit a dashboard"),
        }
    }

    #[test]
    fn tiny_sizes_are_too_small() {
        for (w, h) in [(0, 0), (1, 1), (10, 3), (39, 40), (200, 7)] {
            assert!(matches!(
                compute(Rect::new(0, 0, w, h), 8),
                Screen::TooSmall(_)
            ));
        }
    }

    #[test]
    fn eighty_by_24_with_8_gpus_uses_lines_and_no_charts() {
        let l = dash(80, 24, 8);
        assert_eq!(l.gpu_mode, GpuMode::Lines);
        assert_eq!(l.gpu_cells.len(), 8);
        assert!(l.charts.is_empty());
        assert!(l.table_body().height >= 8, "{:?}", l.table);
    }

    #[test]
    fn eighty_by_24_with_one_or_two_gpus_uses_panels() {
        assert_eq!(dash(80, 24, 1).gpu_mode, GpuMode::Panels { columns: 1 });
        assert_eq!(dash(80, 24, 2).gpu_mode, GpuMode::Panels { columns: 2 });
    }

    #[test]
    fn one_twenty_by_40_panels_for_4_lines_for_8_and_charts() {
        let four = dash(120, 40, 4);
        assert_eq!(four.gpu_mode, GpuMode::Panels { columns: 2 });
        assert_eq!(four.charts.len(), 3);
        let eight = dash(120, 40, 8);
        assert_eq!(eight.gpu_mode, GpuMode::Lines);
        assert_eq!(eight.charts.len(), 3);
    }

    #[test]
    fn two_hundred_by_60_uses_a_grid_and_side_by_side_charts() {
        let l = dash(200, 60, 8);
        assert_eq!(l.gpu_mode, GpuMode::Panels { columns: 4 });
        assert_eq!(l.gpu_cells.len(), 8);
        assert_eq!(l.charts.len(), 3);
        assert!(l.charts.windows(2).all(|w| w[0].y == w[1].y));
        assert!(l.table_body().height >= 20);
    }

    #[test]
    fn regions_stay_inside_the_screen_and_do_not_overlap() {
        for (w, h) in [(40, 8), (80, 24), (120, 40), (200, 60), (57, 13)] {
            for n in [0, 1, 2, 4, 8, 16] {
                let area = Rect::new(0, 0, w, h);
                let l = dash(w, h, n);
                let mut all = vec![l.header, l.table, l.status];
                all.extend(l.gpu_cells.iter().copied());
                all.extend(l.charts.iter().copied());
                all.extend(l.gpu_overflow.map(|(r, _)| r));
                for (i, a) in all.iter().enumerate() {
                    assert_eq!(a.intersection(area), *a, "{w}x{h} n={n} {a:?}");
                    for b in &all[i + 1..] {
                        assert!(!a.intersects(*b), "{w}x{h} n={n}: {a:?} overlaps {b:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn many_gpus_on_a_short_screen_overflow_into_a_count() {
        let l = dash(60, 10, 8);
        let (_, hidden) = l
            .gpu_overflow
            .unwrap_or_else(|| panic!("expected overflow"));
        assert_eq!(l.gpu_cells.len() + hidden, 8);
        assert!(l.table.height >= TABLE_MIN_SMALL);
    }

    #[test]
    fn columns_cover_the_width_exactly() {
        let cols = split_columns(Rect::new(3, 1, 101, 5), 4);
        assert_eq!(cols.iter().map(|c| c.width).sum::<u16>(), 101);
        assert_eq!(cols[0].x, 3);
        assert_eq!(cols[3].right(), 104);
    }
}
