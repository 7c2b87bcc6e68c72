//! Where the small charts go: one per GPU (nvtop, btop), in a grid over the charts row, each at
//! least [`CELL_MIN_W`]×[`CELL_MIN_H`] so that none is an unreadable sliver. When there are
//! more GPUs than cells, the last cell charts the mean of the GPUs that did not get one
//! ("+k more"). Also the shortest chart window worth offering at this size: one reading per
//! plot column at least, so a zoom never leaves a chart of a few dots. Pure geometry.

use ratatui::layout::Rect;

use super::layout::split_columns;

/// The narrowest chart: its title (`util GPU7 95% · 5m`), a 4-character axis label and a
/// plot of ~20 columns.
pub const CELL_MIN_W: u16 = 26;
/// The shortest chart: borders and three rows of plot.
pub const CELL_MIN_H: u16 = 5;
/// Columns a chart gives to things other than its plot: the borders, the y label (at most
/// `700W`) and its rule.
const CHROME_W: u16 = 2 + 4 + 1;

/// What one cell charts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shows {
    /// One GPU.
    One(u32),
    /// The mean of these GPUs (those that did not get a chart of their own).
    Rest(Vec<u32>),
}

/// One chart's place and what it charts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChartCell {
    pub area: Rect,
    pub shows: Shows,
}

/// The cells for `gpus` (in the order given) over `area`: as many columns and rows as fit,
/// balanced (4 GPUs on room for 3×2 read better as 2×2); no cell when not even one fits.
pub fn cells(area: Rect, gpus: &[u32]) -> Vec<ChartCell> {
    let n = gpus.len();
    let max_cols = usize::from(area.width / CELL_MIN_W);
    let max_rows = usize::from(area.height / CELL_MIN_H);
    let capacity = max_cols * max_rows;
    if n == 0 || capacity == 0 {
        return Vec::new();
    }
    let shown = n.min(capacity);
    let cols = max_cols.min(shown);
    let rows = shown.div_ceil(cols);
    let cols = shown.div_ceil(rows);
    let mut rects = Vec::with_capacity(shown);
    let (h, n_rows) = (u32::from(area.height), rows as u32);
    for r in 0..n_rows {
        // The remainder spread from the top, as `split_columns` spreads it from the left.
        let (y0, y1) = (h * r / n_rows, h * (r + 1) / n_rows);
        let row = Rect::new(area.x, area.y + y0 as u16, area.width, (y1 - y0) as u16);
        rects.extend(split_columns(row, cols));
    }
    rects.truncate(shown);
    let mut out: Vec<ChartCell> = rects
        .into_iter()
        .zip(gpus)
        .map(|(area, g)| ChartCell {
            area,
            shows: Shows::One(*g),
        })
        .collect();
    if n > shown
        && let Some(last) = out.last_mut()
    {
        last.shows = Shows::Rest(gpus[shown - 1..].to_vec());
    }
    out
}

/// Plot columns of a chart `width` wide.
pub fn plot_columns(width: u16) -> u16 {
    width.saturating_sub(CHROME_W)
}

/// The shortest window the charts in `area` for `gpus` are worth: the widest plot's columns
/// × the sampling interval (one reading per column at least). 0 when no chart is drawn.
pub fn window_floor_ms(area: Rect, gpus: &[u32], interval_ms: i64) -> i64 {
    let cols = cells(area, gpus)
        .iter()
        .map(|c| plot_columns(c.area.width))
        .max()
        .unwrap_or(0);
    i64::from(cols).saturating_mul(interval_ms.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(n: u32) -> Vec<u32> {
        (0..n).collect()
    }

    #[test]
    fn every_cell_is_readable_and_inside_the_area() {
        for (w, h) in [(80, 7), (80, 14), (120, 10), (200, 14), (60, 7), (26, 5)] {
            let area = Rect::new(3, 10, w, h);
            for n in 1..=16 {
                let cells = cells(area, &ids(n));
                assert!(!cells.is_empty(), "{w}x{h} n={n}");
                for c in &cells {
                    assert!(c.area.width >= CELL_MIN_W && c.area.height >= CELL_MIN_H);
                    assert_eq!(c.area.intersection(area), c.area);
                }
                // No two overlap.
                for (i, a) in cells.iter().enumerate() {
                    for b in &cells[i + 1..] {
                        assert!(a.area.intersection(b.area).is_empty(), "{w}x{h} n={n}");
                    }
                }
            }
        }
    }

    #[test]
    fn eight_gpus_at_80_columns_get_three_charts_and_a_mean_of_the_rest() {
        let cells = cells(Rect::new(0, 0, 80, 7), &ids(8));
        assert_eq!(cells.len(), 3);
        assert_eq!(cells[0].shows, Shows::One(0));
        assert_eq!(cells[1].shows, Shows::One(1));
        assert_eq!(cells[2].shows, Shows::Rest(ids(8)[2..].to_vec()));
        // Two rows of room: six cells, the last one for GPUs 5–7.
        let tall = super::cells(Rect::new(0, 0, 80, 14), &ids(8));
        assert_eq!(tall.len(), 6);
        assert_eq!(tall[5].shows, Shows::Rest(vec![5, 6, 7]));
    }

    #[test]
    fn few_gpus_share_the_row_and_fill_it() {
        let cells = cells(Rect::new(0, 0, 120, 14), &ids(2));
        assert_eq!(cells.len(), 2);
        assert_eq!(cells[0].area, Rect::new(0, 0, 60, 14));
        assert_eq!(cells[1].area, Rect::new(60, 0, 60, 14));
        let four = super::cells(Rect::new(0, 0, 120, 14), &ids(4));
        assert!(four.iter().all(|c| matches!(c.shows, Shows::One(_))));
        assert_eq!(four.len(), 4);
    }

    #[test]
    fn no_cells_where_none_fits() {
        assert!(cells(Rect::new(0, 0, 25, 10), &ids(1)).is_empty());
        assert!(cells(Rect::new(0, 0, 80, 4), &ids(1)).is_empty());
        assert!(cells(Rect::new(0, 0, 80, 7), &[]).is_empty());
    }

    #[test]
    fn the_window_floor_is_one_reading_per_plot_column() {
        let area = Rect::new(0, 0, 80, 7);
        // One GPU: the whole row, 73 plot columns at 1 s a reading.
        assert_eq!(window_floor_ms(area, &ids(1), 1_000), 73_000);
        // Three cells of 26–27 columns: 20 plot columns at 5 s.
        assert_eq!(window_floor_ms(area, &ids(8), 5_000), 100_000);
        assert_eq!(window_floor_ms(Rect::new(0, 0, 10, 7), &ids(1), 1_000), 0);
    }
}
