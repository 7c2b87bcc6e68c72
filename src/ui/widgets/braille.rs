//! Line plots in braille dots (2×4 a cell), several series in one area, each in its own style;
//! where two series share a cell the later one shows, as with ratatui's canvas layers. Drawn
//! straight into the buffer: ratatui's `Chart` builds and merges a full canvas grid per series,
//! which made the three history charts most of a frame's cost. Reads only what it is given.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

/// Bit of each dot in a braille cell, by (column, row) within the cell.
const DOT: [[u8; 4]; 2] = [[0x01, 0x02, 0x04, 0x40], [0x08, 0x10, 0x20, 0x80]];

/// Plots each series' points (x, y), joined by lines, over `area`: `x` and `y` are the
/// bounds the area's edges stand for; points outside them are clamped to the edge.
pub fn plot<'a>(
    buf: &mut Buffer,
    area: Rect,
    series: impl IntoIterator<Item = (Style, &'a [(f64, f64)])>,
    x: [f64; 2],
    y: [f64; 2],
) {
    let area = buf.area.intersection(area);
    if area.is_empty() {
        return;
    }
    let (w, h) = (usize::from(area.width), usize::from(area.height));
    let (dots_w, dots_h) = (w * 2, h * 4);
    let mut cells = vec![0u8; w * h];
    // The cells a series set, so that writing them out and clearing them for the next series
    // visits those cells only, not the whole area.
    let mut touched: Vec<usize> = Vec::new();
    for (style, points) in series {
        let to_dot =
            |&(px, py): &(f64, f64)| (scale(px, x, dots_w, false), scale(py, y, dots_h, true));
        let mut prev: Option<(usize, usize)> = None;
        for p in points {
            let dot = to_dot(p);
            match prev {
                Some(from) => line(from, dot, |dx, dy| set(&mut cells, &mut touched, w, dx, dy)),
                None => set(&mut cells, &mut touched, w, dot.0, dot.1),
            }
            prev = Some(dot);
        }
        for i in touched.drain(..) {
            let Some(mask) = cells.get_mut(i).map(std::mem::take) else {
                continue;
            };
            let pos = (area.x + (i % w) as u16, area.y + (i / w) as u16);
            if let (Some(cell), Some(c)) =
                (buf.cell_mut(pos), char::from_u32(0x2800 + u32::from(mask)))
            {
                super::glyph::set_char(cell, c).set_style(style);
            }
        }
    }
}

/// A value's dot index along an axis of `n` dots (row 0 at the top when `flip`).
fn scale(v: f64, [lo, hi]: [f64; 2], n: usize, flip: bool) -> usize {
    let span = hi - lo;
    let f = if span > 0.0 && v.is_finite() {
        ((v - lo) / span).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let last = n.saturating_sub(1) as f64;
    let i = round_non_negative(f * last);
    if flip { n.saturating_sub(1) - i } else { i }
}

/// `v.round() as usize` for `0 ≤ v` (the dot scale's range) without the libm call `round` is
/// on x86-64 (two per point, ten thousand points a frame): the integer part, plus one when the
/// fraction is at least a half (the subtraction is exact below 2⁵²).
fn round_non_negative(v: f64) -> usize {
    let whole = v as usize;
    if v - whole as f64 >= 0.5 {
        whole + 1
    } else {
        whole
    }
}

fn set(cells: &mut [u8], touched: &mut Vec<usize>, w: usize, dx: usize, dy: usize) {
    let i = (dy / 4) * w + dx / 2;
    if let Some(c) = cells.get_mut(i) {
        if *c == 0 {
            touched.push(i);
        }
        *c |= DOT[dx % 2][dy % 4];
    }
}

/// Every dot on the straight line between two dots, ends included (Bresenham).
fn line(from: (usize, usize), to: (usize, usize), mut dot: impl FnMut(usize, usize)) {
    let (mut x, mut y) = (from.0 as i64, from.1 as i64);
    let (x1, y1) = (to.0 as i64, to.1 as i64);
    let (dx, dy) = ((x1 - x).abs(), -(y1 - y).abs());
    let (sx, sy) = (if x < x1 { 1 } else { -1 }, if y < y1 { 1 } else { -1 });
    let mut err = dx + dy;
    loop {
        dot(x as usize, y as usize);
        if x == x1 && y == y1 {
            break;
        }
        let e2 = 2 * err;
        if e2 >= dy {
            err += dy;
            x += sx;
        }
        if e2 <= dx {
            err += dx;
            y += sy;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::Color;

    fn text(buf: &Buffer) -> Vec<String> {
        (0..buf.area.height)
            .map(|y| {
                (0..buf.area.width)
                    .map(|x| buf[(x, y)].symbol().to_string())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_rising_line_runs_from_the_bottom_left_to_the_top_right() {
        let mut buf = Buffer::empty(Rect::new(0, 0, 2, 1));
        let pts = [(0.0, 0.0), (1.0, 100.0)];
        let area = buf.area;
        plot(
            &mut buf,
            area,
            [(Style::new(), &pts[..])],
            [0.0, 1.0],
            [0.0, 100.0],
        );
        // 4 dots wide, 4 high: (0,3) (1,2) | (2,1) (3,0).
        assert_eq!(text(&buf), vec!["\u{2860}\u{280a}".to_string()]);
    }

    #[test]
    fn a_flat_line_at_the_top_and_values_beyond_the_bounds_clamp() {
        let mut buf = Buffer::empty(Rect::new(0, 0, 3, 2));
        let pts = [(-5.0, 250.0), (0.5, 100.0), (9.0, 100.0)];
        let area = buf.area;
        plot(
            &mut buf,
            area,
            [(Style::new(), &pts[..])],
            [0.0, 1.0],
            [0.0, 100.0],
        );
        assert_eq!(text(&buf), vec!["⠉⠉⠉".to_string(), "   ".to_string()]);
    }

    #[test]
    fn the_later_series_owns_a_shared_cell_and_brings_its_style() {
        let mut buf = Buffer::empty(Rect::new(0, 0, 1, 1));
        let low = [(0.0, 0.0), (1.0, 0.0)];
        let high = [(0.0, 1.0), (1.0, 1.0)];
        let (red, blue) = (Style::new().fg(Color::Red), Style::new().fg(Color::Blue));
        let area = buf.area;
        plot(
            &mut buf,
            area,
            [(red, &low[..]), (blue, &high[..])],
            [0.0, 1.0],
            [0.0, 1.0],
        );
        assert_eq!(buf[(0, 0)].symbol(), "⠉");
        assert_eq!(buf[(0, 0)].fg, Color::Blue);
    }

    #[test]
    fn nothing_is_drawn_outside_the_area_or_for_no_points() {
        let mut buf = Buffer::empty(Rect::new(0, 0, 4, 2));
        let pts = [(0.0, 0.0), (1.0, 1.0)];
        plot(
            &mut buf,
            Rect::new(2, 1, 10, 10),
            [(Style::new(), &pts[..]), (Style::new(), &[][..])],
            [0.0, 1.0],
            [0.0, 1.0],
        );
        assert_eq!(text(&buf)[0], "    ");
        assert_ne!(text(&buf)[1], "    ");
    }

    /// The plot as first written: each series drawn into a cleared grid, then every cell of
    /// the area scanned.
    fn plot_by_scan(
        buf: &mut Buffer,
        area: Rect,
        series: &[(Style, Vec<(f64, f64)>)],
        x: [f64; 2],
        y: [f64; 2],
    ) {
        let area = buf.area.intersection(area);
        if area.is_empty() {
            return;
        }
        let (w, h) = (usize::from(area.width), usize::from(area.height));
        let mut cells = vec![0u8; w * h];
        let mut scratch = Vec::new();
        for (style, points) in series {
            cells.fill(0);
            let mut prev: Option<(usize, usize)> = None;
            for &(px, py) in points {
                let dot = (scale(px, x, w * 2, false), scale(py, y, h * 4, true));
                match prev {
                    Some(from) => {
                        line(from, dot, |dx, dy| set(&mut cells, &mut scratch, w, dx, dy))
                    }
                    None => set(&mut cells, &mut scratch, w, dot.0, dot.1),
                }
                prev = Some(dot);
            }
            for (i, &mask) in cells.iter().enumerate().filter(|(_, m)| **m != 0) {
                let pos = (area.x + (i % w) as u16, area.y + (i / w) as u16);
                let c = char::from_u32(0x2800 + u32::from(mask)).unwrap();
                buf.cell_mut(pos).unwrap().set_char(c).set_style(*style);
            }
        }
    }

    #[test]
    fn the_same_cells_as_scanning_the_whole_area_for_many_series() {
        let mut seed = 7u64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as f64 / (1u64 << 31) as f64
        };
        let colours = [
            Color::Red,
            Color::Rgb(1, 2, 3),
            Color::Indexed(9),
            Color::Reset,
        ];
        for round in 0..40u16 {
            let series: Vec<(Style, Vec<(f64, f64)>)> = (0..usize::from(1 + round % 9))
                .map(|k| {
                    let n = (next() * 120.0) as usize;
                    let pts = (0..n)
                        .map(|j| (j as f64 / 100.0 - 0.1, next() * 130.0 - 10.0))
                        .collect();
                    (Style::new().fg(colours[k % 4]), pts)
                })
                .collect();
            let area = Rect::new(1 + round % 3, 1, 5 + round * 2, 1 + round % 7);
            let mut want = Buffer::empty(Rect::new(0, 0, 60, 8));
            want.set_string(0, 2, "x".repeat(60), Style::new().bg(Color::Blue));
            let mut got = want.clone();
            plot_by_scan(&mut want, area, &series, [0.0, 1.0], [0.0, 100.0]);
            let refs = series.iter().map(|(s, p)| (*s, p.as_slice()));
            plot(&mut got, area, refs, [0.0, 1.0], [0.0, 100.0]);
            assert_eq!(got, want, "round {round}");
        }
    }

    #[test]
    fn rounding_is_f64_round_on_the_scale() {
        let mut vals = vec![
            0.0,
            0.5,
            1.5,
            2.5,
            0.49999999999999994,
            1e15 + 0.5,
            4503599627370495.5,
        ];
        let mut seed = 3u64;
        for _ in 0..100_000 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            let f = (seed >> 11) as f64 / (1u64 << 53) as f64;
            vals.push(f * 2000.0);
            vals.push((f * 400.0).floor() + 0.5);
            vals.push(f64::from_bits((0.5f64).to_bits() - (seed % 4)));
        }
        for v in vals {
            assert_eq!(round_non_negative(v), v.round() as usize, "{v:?}");
        }
    }
}
