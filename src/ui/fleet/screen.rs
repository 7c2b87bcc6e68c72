//! The fleet screen: the totals on top, one line per host (sorted; the selected one
//! highlighted; a down host's numbers replaced by when it was last seen and why it fails), the
//! key hints at the bottom. Draws from `&` only.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::widgets::Widget;

use crate::ui::theme::Theme;
use crate::ui::widgets::fmt::{self, styled};
use gpumeter_core::fleet::cells::{self, HEADERS};
use gpumeter_core::fleet::view::{HostRow, RowState, SortKey, Totals};

/// Lines the screen keeps for itself: totals, a blank, the header, the hints.
pub const CHROME_ROWS: u16 = 4;

/// The header title of the column a key sorts by.
fn sort_header(key: SortKey) -> &'static str {
    match key {
        SortKey::IdleBurn => "IDLE/H",
        SortKey::Burn => "BURN/H",
        SortKey::SpentToday => "TODAY",
        SortKey::Util => "UTIL",
        SortKey::Alert => "ALERT",
        SortKey::Age => "AGE",
        SortKey::Name => "HOST",
    }
}

/// What one frame of the fleet screen shows, drawn into its area.
pub struct FleetScreen<'a> {
    pub rows: &'a [HostRow],
    pub totals: &'a Totals,
    pub selected: usize,
    pub scroll: usize,
    pub sort: SortKey,
    pub descending: bool,
    pub status: Option<&'a str>,
    pub theme: &'a Theme,
}

/// Rows of hosts that fit in `area`.
pub fn page_rows(area: Rect) -> usize {
    usize::from(area.height.saturating_sub(CHROME_ROWS)).max(1)
}

/// Columns given up, in this order, when the screen is too narrow for all of them: what can be
/// read on the host's own screen goes first; the host, its state, the money and the alert stay.
const DROP_ORDER: [usize; 5] = [9, 4, 2, 8, 3]; // AGE, VRAM, GPUS, BUDGET, UTIL
/// The alert column keeps at least this much before another column is given up.
const ALERT_MIN: usize = 16;
/// The host name keeps at least this much (cut with `…` below its full width).
const HOST_MIN: usize = 12;

/// Column widths: each the widest of its header and its cells (a down row fills only its
/// name and state); 0 for a column given up to fit (see [`DROP_ORDER`]), the host name cut
/// next, and the last column takes what is left.
fn widths(rows: &[HostRow], grid: &[Vec<String>], total: usize) -> Vec<usize> {
    let mut w: Vec<usize> = HEADERS.iter().map(|h| fmt::width(h) + 2).collect();
    for (r, c) in rows.iter().zip(grid) {
        let n = if cells::has_numbers(r) { c.len() } else { 2 };
        for (wi, cell) in w.iter_mut().zip(c).take(n) {
            *wi = (*wi).max(fmt::width(cell));
        }
    }
    let last = HEADERS.len() - 1;
    let used =
        |w: &[usize]| -> usize { w.iter().take(last).filter(|x| **x > 0).map(|x| x + 2).sum() };
    for i in DROP_ORDER {
        if used(&w) + ALERT_MIN.min(w[last]) <= total {
            break;
        }
        w[i] = 0;
    }
    let over = (used(&w) + ALERT_MIN.min(w[last])).saturating_sub(total);
    if over > 0 && w[0] > HOST_MIN {
        w[0] = w[0].saturating_sub(over).max(HOST_MIN);
    }
    w[last] = total.saturating_sub(used(&w));
    w
}

fn state_style(s: &RowState, theme: &Theme) -> Style {
    match s {
        RowState::Up => theme.cool,
        RowState::Waiting => theme.dim,
        RowState::Stale => theme.warm,
        RowState::Down(_) => theme.hot,
    }
}

fn alert_style(r: &HostRow, theme: &Theme) -> Style {
    match r.alert.as_ref().map(|a| a.severity.as_str()) {
        Some("high") => theme.alert_high,
        Some("moderate") => theme.alert_moderate,
        Some(_) => theme.alert_info,
        None => theme.dim,
    }
}

/// Cell `i` padded (or cut with `…`) to its width, with the gap after it; nothing for a
/// column given up.
fn cell_span(w: &[usize], i: usize, text: &str, style: Style) -> Span<'static> {
    let width = w.get(i).copied().unwrap_or(0);
    if width == 0 {
        return Span::raw("");
    }
    let gap = if i + 1 < HEADERS.len() { "  " } else { "" };
    styled(format!("{}{gap}", fmt::pad_right(text, width)), style)
}

fn host_line(r: &HostRow, w: &[usize], selected: bool, theme: &Theme) -> Line<'static> {
    let c = cells::cells(r);
    let mut spans: Vec<Span<'static>> = Vec::new();
    let cell = |i: usize, text: &str, style: Style| cell_span(w, i, text, style);
    spans.push(cell(0, &c[0], theme.text));
    spans.push(cell(1, &c[1], state_style(&r.state, theme)));
    if cells::has_numbers(r) {
        for (i, text) in c.iter().enumerate().skip(2) {
            if w.get(i).copied().unwrap_or(0) == 0 {
                continue;
            }
            let style = match i {
                6 if r.idle_burn_per_hour.is_some_and(|m| m.micros() > 0) => theme.warm,
                10 => alert_style(r, theme),
                _ if text == gpumeter_core::units::NA => theme.na,
                _ => theme.text,
            };
            spans.push(cell(i, text, style));
        }
    } else {
        let rest: usize = w
            .iter()
            .skip(2)
            .filter(|x| **x > 0)
            .map(|x| x + 2)
            .sum::<usize>()
            .saturating_sub(2);
        spans.push(styled(
            fmt::pad_right(&cells::down_text(r), rest),
            theme.hot,
        ));
    }
    if selected {
        for s in &mut spans {
            s.style = s.style.patch(theme.selected_row);
        }
    }
    Line::from(spans)
}

impl Widget for FleetScreen<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let f = &self;
        if area.width == 0 || area.height == 0 {
            return;
        }
        let theme = f.theme;
        let total = usize::from(area.width);
        let line_at = |buf: &mut Buffer, y: u16, line: Line<'static>| {
            if y < area.y + area.height {
                Paragraph::new(line).render(Rect::new(area.x, y, area.width, 1), buf);
            }
        };
        let title = format!(" gpumeter fleet · {} hosts · ", f.totals.hosts);
        let room = total.saturating_sub(fmt::width(&title));
        let totals_style = if f.totals.down > 0 {
            theme.warm
        } else {
            theme.text
        };
        line_at(
            buf,
            area.y,
            Line::from(vec![
                styled(title, theme.title),
                styled(
                    fmt::truncate(&cells::totals_line(f.totals), room),
                    totals_style,
                ),
            ]),
        );

        let grid: Vec<Vec<String>> = f.rows.iter().map(cells::cells).collect();
        let w = widths(f.rows, &grid, total);
        let arrow = if f.descending { "▼" } else { "▲" };
        let marked = sort_header(f.sort);
        let head: Vec<Span<'static>> = HEADERS
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let (text, style) = if *h == marked {
                    (format!("{h}{arrow}"), theme.sort_column)
                } else {
                    ((*h).to_string(), theme.table_header)
                };
                cell_span(&w, i, &text, style)
            })
            .collect();
        line_at(buf, area.y + 2, Line::from(head));

        let page = page_rows(area);
        for (n, (i, r)) in f
            .rows
            .iter()
            .enumerate()
            .skip(f.scroll)
            .take(page)
            .enumerate()
        {
            let y = area.y + 3 + u16::try_from(n).unwrap_or(u16::MAX);
            line_at(buf, y, host_line(r, &w, i == f.selected, theme));
        }

        let bottom = area.y + area.height - 1;
        let line = match f.status {
            Some(s) => fmt::fit(
                vec![styled(fmt::truncate(s, total), theme.warm)],
                Vec::new(),
                total,
            ),
            None => {
                let sort = format!("sort: {} {arrow}", f.sort.label());
                let hints: [(&str, &str); 5] = [
                    ("q", "quit"),
                    ("Enter", "open the host"),
                    ("s", &sort),
                    ("S", "reverse"),
                    ("↑↓", "select"),
                ];
                let segments = hints
                    .iter()
                    .map(|(k, what)| {
                        vec![
                            styled(format!(" {k}"), theme.key),
                            styled(format!(" {what} "), theme.dim),
                        ]
                    })
                    .collect();
                fmt::fit(Vec::new(), segments, total)
            }
        };
        if bottom > area.y + 2 {
            line_at(buf, bottom, line);
        }
    }
}
