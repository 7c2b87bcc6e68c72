//! Layout decisions at the sizes that matter, with and without billing.

use super::*;

fn dash(w: u16, h: u16, n: usize) -> ScreenLayout {
    dash_billed(w, h, n, false)
}

fn dash_billed(w: u16, h: u16, n: usize, billing: bool) -> ScreenLayout {
    match compute(Rect::new(0, 0, w, h), n, billing) {
        Screen::Dashboard(l) => l,
        Screen::TooSmall(_) => panic!("{w}x{h} should fit a dashboard"),
    }
}

#[test]
fn tiny_sizes_are_too_small() {
    for (w, h) in [(0, 0), (1, 1), (10, 3), (39, 40), (200, 7)] {
        assert!(matches!(
            compute(Rect::new(0, 0, w, h), 8, true),
            Screen::TooSmall(_)
        ));
    }
}

#[test]
fn eighty_by_24_with_8_gpus_uses_lines_and_no_charts() {
    let l = dash(80, 24, 8);
    assert_eq!(l.gpu_mode, GpuMode::Lines);
    assert_eq!(l.gpu_cells.len(), 8);
    assert!(l.charts.is_none());
    assert!(l.table_body().height >= 8, "{:?}", l.table);
}

#[test]
fn eighty_by_24_with_one_or_two_gpus_uses_panels() {
    assert_eq!(dash(80, 24, 1).gpu_mode, GpuMode::Panels { columns: 1 });
    assert_eq!(dash(80, 24, 2).gpu_mode, GpuMode::Panels { columns: 2 });
}

#[test]
fn eighty_by_24_with_one_gpu_puts_its_chart_beside_the_panel() {
    let l = dash(80, 24, 1);
    assert_eq!(
        l.gpu_cells,
        vec![Rect::new(0, l.gpu_cells[0].y, 40, PANEL_HEIGHT)]
    );
    let chart = l.charts.expect("a chart beside the panel");
    assert_eq!(
        (chart.x, chart.y, chart.width, chart.height),
        (40, l.gpu_cells[0].y, 40, PANEL_HEIGHT)
    );
    // The table keeps its rows: the chart takes no height of its own.
    assert_eq!(l.table.y, l.gpu_cells[0].y + PANEL_HEIGHT);
    // Two GPUs fill the row: no room beside them, and no chart.
    assert!(dash(80, 24, 2).charts.is_none());
    // Below two panels' width there is nothing to share.
    let narrow = dash(79, 24, 1);
    assert!(narrow.charts.is_none());
    assert_eq!(narrow.gpu_cells[0].width, 79);
}

#[test]
fn one_twenty_by_40_panels_for_4_lines_for_8_and_charts() {
    let four = dash(120, 40, 4);
    assert_eq!(four.gpu_mode, GpuMode::Panels { columns: 2 });
    assert_eq!(four.charts.map(|r| r.width), Some(120));
    let eight = dash(120, 40, 8);
    assert_eq!(eight.gpu_mode, GpuMode::Lines);
    assert_eq!(eight.charts.map(|r| r.width), Some(120));
}

#[test]
fn two_hundred_by_60_uses_a_grid_and_side_by_side_charts() {
    let l = dash(200, 60, 8);
    assert_eq!(l.gpu_mode, GpuMode::Panels { columns: 4 });
    assert_eq!(l.gpu_cells.len(), 8);
    assert_eq!(l.charts.map(|r| r.width), Some(200));
    assert!(l.table_body().height >= 20);
}

#[test]
fn regions_stay_inside_the_screen_and_do_not_overlap() {
    let sizes = [
        (40, 8),
        (40, 12),
        (80, 24),
        (100, 30),
        (119, 40),
        (120, 40),
        (120, 20),
        (200, 60),
        (57, 13),
        (300, 90),
    ];
    for (w, h) in sizes {
        for n in [0, 1, 2, 4, 8, 16] {
            for billing in [false, true] {
                let area = Rect::new(0, 0, w, h);
                let l = dash_billed(w, h, n, billing);
                if !billing {
                    assert_eq!(l.spend, None);
                }
                let mut all = vec![l.header, l.table, l.status];
                all.extend(l.gpu_cells.iter().copied());
                all.extend(l.charts);
                all.extend(l.gpu_overflow.map(|(r, _)| r));
                all.extend(l.spend.map(Spend::area));
                for (i, a) in all.iter().enumerate() {
                    assert!(!a.is_empty(), "{w}x{h} n={n} {billing}: empty {i}");
                    assert_eq!(a.intersection(area), *a, "{w}x{h} n={n} {a:?}");
                    for b in &all[i + 1..] {
                        assert!(!a.intersects(*b), "{w}x{h} n={n}: {a:?} overlaps {b:?}");
                    }
                }
                assert!(
                    l.table.height >= 3,
                    "{w}x{h} n={n} {billing}: {:?}",
                    l.table
                );
            }
        }
    }
}

#[test]
fn eighty_by_24_shows_one_spend_line_under_the_header() {
    for n in [1, 2, 4, 8] {
        let l = dash_billed(80, 24, n, true);
        assert_eq!(l.spend, Some(Spend::Line(Rect::new(0, 2, 80, 1))), "n={n}");
        assert!(l.gpu_cells[0].y >= 3);
        assert!(l.table_body().height >= 7, "n={n}: {:?}", l.table);
    }
    // One or two GPUs still get full panels.
    assert_eq!(
        dash_billed(80, 24, 2, true).gpu_mode,
        GpuMode::Panels { columns: 2 }
    );
}

#[test]
fn wide_screens_put_the_full_panel_beside_the_charts() {
    for n in [1, 2, 4, 8] {
        let l = dash_billed(120, 40, n, true);
        let Some(Spend::Panel(p)) = l.spend else {
            panic!("n={n}: {:?}", l.spend);
        };
        assert_eq!((p.width, p.height, p.right()), (SPEND_PANEL_WIDTH, 10, 120));
        // The util chart stays, beside it.
        let c = l.charts.unwrap();
        assert_eq!((c.y, c.right()), (p.y, p.x), "n={n}");
    }
    let l = dash_billed(200, 60, 8, true);
    assert_eq!(l.charts.map(|r| r.width), Some(140));
    assert!(matches!(l.spend, Some(Spend::Panel(p)) if p.right() == 200));
    // Without pricing the charts keep the whole row.
    assert_eq!(dash(120, 40, 8).charts.map(|r| r.width), Some(120));
}

#[test]
fn wide_but_short_screens_fall_back_to_the_line_and_tiny_ones_to_nothing() {
    let l = dash_billed(200, 20, 8, true);
    assert!(matches!(l.spend, Some(Spend::Line(_))), "{:?}", l.spend);
    assert_eq!(dash_billed(80, 11, 2, true).spend, None);
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
