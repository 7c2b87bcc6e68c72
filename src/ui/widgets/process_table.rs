//! The process table: PID, user, container, GPU, VRAM, SM %, CPU %, host RSS, runtime and
//! command, with the sort column marked in the header (a click on a header sorts by it: see
//! [`column_at`]), the selected row highlighted (with `e`, its whole command line wrapped under
//! it), and the rows scrolled. Narrow terminals drop the least useful columns first.

use gpumeter_model::ProcessReading;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Widget};

use gpumeter_core::units::{self, NA};

use crate::ui::app::App;
use crate::ui::rows::ProcRow;
use crate::ui::sort::SortColumn;
use crate::ui::theme::{Scale, Theme};
use crate::ui::widgets::fmt::{self, styled};
use crate::ui::widgets::frame_box::TopRule;
use crate::ui::widgets::text::Lines;

/// The command column keeps at least this many cells, other columns going first: it is what
/// tells one python process from the next (at 80 columns TIME and RSS give way to it).
const MIN_COMMAND: usize = 30;
/// Most lines `e` adds under the selected row for its command line.
const MAX_CONTINUATION: usize = 8;
/// Shown for a value that does not apply (a worker holds no VRAM), as opposed to `N/A`.
const NOT_APPLICABLE: &str = "-";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Col {
    Pid,
    User,
    Container,
    Gpu,
    Vram,
    Sm,
    Cpu,
    Rss,
    Time,
    Command,
}

impl Col {
    /// Display order.
    const ORDER: [Col; 10] = [
        Col::Pid,
        Col::User,
        Col::Container,
        Col::Gpu,
        Col::Vram,
        Col::Sm,
        Col::Cpu,
        Col::Rss,
        Col::Time,
        Col::Command,
    ];
    /// Dropped first when the terminal is narrow.
    const DROP_ORDER: [Col; 7] = [
        Col::Container,
        Col::Time,
        Col::Rss,
        Col::User,
        Col::Cpu,
        Col::Sm,
        Col::Gpu,
    ];

    fn width(self) -> usize {
        match self {
            Col::Pid => 7,
            Col::User => 9,
            Col::Container => 12,
            Col::Gpu => 4,
            Col::Vram => 9,
            Col::Sm => 4,
            Col::Cpu => 6,
            Col::Rss => 8,
            Col::Time => 7,
            Col::Command => 0,
        }
    }

    fn title(self) -> &'static str {
        match self {
            Col::Pid => "PID",
            Col::User => "USER",
            Col::Container => "CONTAINER",
            Col::Gpu => "GPU",
            Col::Vram => "VRAM",
            Col::Sm => "SM%",
            Col::Cpu => "CPU%",
            Col::Rss => "RSS",
            Col::Time => "TIME",
            Col::Command => "COMMAND",
        }
    }

    fn right_aligned(self) -> bool {
        !matches!(self, Col::User | Col::Container | Col::Gpu | Col::Command)
    }

    fn sorts_by(self) -> Option<SortColumn> {
        Some(match self {
            Col::Pid => SortColumn::Pid,
            Col::User => SortColumn::User,
            Col::Gpu => SortColumn::Gpu,
            Col::Vram => SortColumn::Vram,
            Col::Sm => SortColumn::Sm,
            Col::Cpu => SortColumn::Cpu,
            Col::Rss => SortColumn::Rss,
            Col::Time => SortColumn::Runtime,
            Col::Command => SortColumn::Command,
            Col::Container => return None,
        })
    }
}

/// The columns that fit `width`, in display order.
fn columns(width: usize, any_container: bool) -> Vec<Col> {
    let mut cols: Vec<Col> = Col::ORDER
        .into_iter()
        .filter(|c| *c != Col::Container || any_container)
        .collect();
    let need = |cols: &[Col]| cols.iter().map(|c| c.width() + 1).sum::<usize>() + MIN_COMMAND;
    for drop in Col::DROP_ORDER {
        if need(&cols) <= width {
            break;
        }
        cols.retain(|c| *c != drop);
    }
    cols
}

/// The sort column under cell `x` of the header of a table `width` wide (`None`: a gap, or a
/// column that does not sort).
pub fn column_at(width: usize, any_container: bool, x: usize) -> Option<SortColumn> {
    let cols = columns(width, any_container);
    let cmd_w = command_width(&cols, width);
    let mut left = 0;
    for c in cols {
        let w = if c == Col::Command { cmd_w } else { c.width() };
        if x < left + w {
            return c.sorts_by();
        }
        left += w + 1;
        if x < left {
            return None;
        }
    }
    None
}

/// Whether the table for `rows` shows the container column.
pub fn any_container(rows: &[ProcRow<'_>]) -> bool {
    rows.iter().any(|r| r.proc.container.is_some())
}

/// The table of `rows` (title line, column header, rows), as `app` views it.
pub struct ProcessTable<'a> {
    pub rows: &'a [ProcRow<'a>],
    pub app: &'a App,
    /// Whether a reading has come (an empty table says what it waits for).
    pub has_reading: bool,
    pub now_ms: i64,
}

impl Widget for ProcessTable<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let Self {
            rows,
            app,
            has_reading,
            now_ms,
        } = self;
        if area.height == 0 || area.width == 0 {
            return;
        }
        let theme = &app.theme;
        let width = usize::from(area.width);
        // Title line and column header take two rows; the rest are process rows.
        let body_h = usize::from(area.height.saturating_sub(2));
        let scroll = app.scroll.min(rows.len().saturating_sub(body_h));
        let position = (rows.len() > body_h && body_h > 0).then(|| {
            let last = (scroll + body_h).min(rows.len());
            let position = format!(" {}–{last} of {} ", scroll + 1, rows.len());
            Line::from(styled(position, theme.dim)).right_aligned()
        });
        let inner = Block::new().borders(Borders::TOP).inner(area);
        // A top border and its titles are all of the block: drawn on its one row, not restyling
        // the whole table's area with the (empty) block style first.
        let title = title(rows.len(), app);
        TopRule {
            border: theme.border,
            left: title,
            right: position,
        }
        .render(area, buf);
        if inner.height == 0 {
            return;
        }
        let any_container = rows.iter().any(|r| r.proc.container.is_some());
        let cols = columns(width, any_container);
        let mut lines = vec![header_line(&cols, width, app)];

        if rows.is_empty() {
            let note = if !has_reading {
                "waiting for the first reading…".to_string()
            } else if !app.filter.is_empty() {
                format!(
                    "no process matches \"{}\" (Esc clears the filter)",
                    app.filter
                )
            } else if let Some(u) = app.users.user() {
                format!("no process of user {u} (u: pick another; Esc in the list shows all)")
            } else if let Some(g) = app.gpu_filter {
                format!("no processes on GPU{g} (Tab shows the next GPU)")
            } else {
                "no GPU processes".to_string()
            };
            lines.push(Line::from(styled(format!(" {note}"), theme.dim)));
        }
        let selected = app.selected.min(rows.len().saturating_sub(1));
        // `e`: the selected row's whole command line, wrapped under it in the command column.
        let more = match rows.get(selected) {
            Some(row) if app.full_command => continuation(row, &cols, width, theme),
            _ => Vec::new(),
        };
        // Room for those lines too: scroll on so the selected row keeps them on screen.
        let mut scroll = scroll;
        let bottom = selected + 1 + more.len().min(body_h.saturating_sub(1));
        if selected >= scroll && bottom > scroll + body_h {
            scroll = (bottom - body_h).min(selected);
        }
        let mut used = 0;
        for (i, row) in rows.iter().enumerate().skip(scroll) {
            if used >= body_h {
                break;
            }
            let mut line = row_line(row, &cols, width, theme, now_ms);
            if i == selected {
                line = line.patch_style(theme.selected_row);
                // Fill the highlight to the edge.
                let pad = width.saturating_sub(line.width());
                line.push_span(Span::styled(" ".repeat(pad), theme.selected_row));
                lines.push(line);
                used += 1;
                for extra in &more {
                    if used >= body_h {
                        break;
                    }
                    lines.push(extra.clone());
                    used += 1;
                }
                continue;
            }
            lines.push(line);
            used += 1;
        }
        Lines::new(lines).render(inner, buf);
    }
}

fn title(count: usize, app: &App) -> Line<'static> {
    let theme = &app.theme;
    let arrow = if app.sort_desc { "▼" } else { "▲" };
    let mut spans = vec![
        styled(" Processes ", theme.title),
        styled(format!("{count} "), theme.text),
        styled(format!("· sort {} {arrow} ", app.sort.name()), theme.dim),
    ];
    if app.tree {
        spans.push(styled("· tree ", theme.dim));
    }
    if let Some(g) = app.gpu_filter {
        spans.push(styled(format!(" GPU{g} only "), theme.sort_column));
        spans.push(styled(" ", theme.dim));
    }
    if let Some(u) = app.users.user() {
        spans.push(styled(format!("· user {u} "), theme.input));
    }
    if !app.filter.is_empty() {
        spans.push(styled(format!("· filter \"{}\" ", app.filter), theme.input));
    }
    Line::from(spans)
}

fn header_line(cols: &[Col], width: usize, app: &App) -> Line<'static> {
    let theme = &app.theme;
    let arrow = if app.sort_desc { "▼" } else { "▲" };
    let cmd_w = command_width(cols, width);
    let mut spans = Vec::with_capacity(cols.len() * 2);
    for &c in cols {
        let sorted = c.sorts_by() == Some(app.sort);
        let name = if sorted {
            format!("{}{arrow}", c.title())
        } else {
            c.title().to_string()
        };
        let w = if c == Col::Command { cmd_w } else { c.width() };
        let text = if c.right_aligned() {
            fmt::pad_left(&name, w)
        } else {
            fmt::pad_right(&name, w)
        };
        spans.push(styled(
            text,
            if sorted {
                theme.sort_column
            } else {
                theme.table_header
            },
        ));
        if c != Col::Command {
            spans.push(styled(" ", theme.table_header));
        }
    }
    Line::from(spans)
}

fn command_width(cols: &[Col], width: usize) -> usize {
    let fixed: usize = cols
        .iter()
        .filter(|c| **c != Col::Command)
        .map(|c| c.width() + 1)
        .sum();
    width.saturating_sub(fixed)
}

fn row_line(
    row: &ProcRow<'_>,
    cols: &[Col],
    width: usize,
    theme: &Theme,
    now_ms: i64,
) -> Line<'static> {
    let p = row.proc;
    let cmd_w = command_width(cols, width);
    let mut spans = Vec::with_capacity(cols.len() * 2 + 1);
    for &c in cols {
        if c == Col::Command {
            let prefix = fmt::truncate(&row.tree_prefix, cmd_w);
            let rest = cmd_w.saturating_sub(fmt::width(&prefix));
            let style = if p.visible { theme.text } else { theme.warm };
            spans.push(styled(prefix, theme.dim));
            spans.push(styled(
                fmt::truncate(&row.command_text_for(rest), rest),
                style,
            ));
            continue;
        }
        let (text, style) = cell(c, p, theme, now_ms);
        let text = if c.right_aligned() {
            fmt::pad_left(&text, c.width())
        } else {
            fmt::pad_right(&text, c.width())
        };
        spans.push(styled(text, style));
        spans.push(styled(" ", theme.text));
    }
    Line::from(spans)
}

/// The rest of `row`'s command line after what its row shows, wrapped to the command column
/// (at most [`MAX_CONTINUATION`] lines).
fn continuation(
    row: &ProcRow<'_>,
    cols: &[Col],
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let cmd_w = command_width(cols, width);
    let indent = width.saturating_sub(cmd_w);
    let room = cmd_w.saturating_sub(fmt::width(&row.tree_prefix));
    if room < 4 {
        return Vec::new();
    }
    let text = row.command_text_for(room);
    // What the row shows: `room` cells, the last one an ellipsis when cut.
    let shown = fmt::truncate(&text, room);
    if shown == *text {
        return Vec::new();
    }
    let kept = shown.trim_end_matches('…');
    let rest: String = text.chars().skip(kept.chars().count()).collect();
    let mut out = Vec::new();
    let mut piece = String::new();
    let pad = " ".repeat(indent + fmt::width(&row.tree_prefix));
    // Wrapped at spaces (a word longer than the column is cut where it must be).
    let mut lines: Vec<String> = Vec::new();
    for word in rest.split_inclusive(' ') {
        if fmt::width(&piece) + fmt::width(word.trim_end()) > room && !piece.is_empty() {
            lines.push(std::mem::take(&mut piece));
        }
        for c in word.chars() {
            if fmt::width(&piece) + unicode_width::UnicodeWidthChar::width(c).unwrap_or(0) > room {
                lines.push(std::mem::take(&mut piece));
            }
            piece.push(c);
        }
    }
    if !piece.is_empty() {
        lines.push(piece);
    }
    for l in lines {
        let l = l.trim().to_string();
        out.push(Line::from(vec![
            Span::raw(pad.clone()),
            styled(l, theme.text),
        ]));
    }
    if out.len() > MAX_CONTINUATION {
        out.truncate(MAX_CONTINUATION);
    }
    out
}

/// One cell's text and style. `N/A` when unknown; `-` when it does not apply.
fn cell(c: Col, p: &ProcessReading, theme: &Theme, now_ms: i64) -> (String, Style) {
    let na = || (NA.to_string(), theme.na);
    let not_applicable = || (NOT_APPLICABLE.to_string(), theme.dim);
    match c {
        Col::Pid => (p.pid.to_string(), theme.text),
        Col::User => p
            .user
            .as_deref()
            .map_or_else(na, |u| (u.to_string(), theme.text)),
        Col::Container => match &p.container {
            Some(c) => (c.to_string(), theme.text),
            None if p.visible => not_applicable(),
            None => na(),
        },
        Col::Gpu => {
            if p.gpu.is_empty() {
                return not_applicable();
            }
            let mut ids: Vec<u32> = p.gpu.iter().map(|g| g.gpu_index).collect();
            ids.sort_unstable();
            ids.dedup();
            let list: Vec<String> = ids.iter().map(u32::to_string).collect();
            (list.join(","), theme.text)
        }
        Col::Vram if p.gpu.is_empty() => not_applicable(),
        Col::Vram => p
            .gpu_memory_bytes()
            .map_or_else(na, |b| (units::bytes(b), theme.text)),
        Col::Sm if p.gpu.is_empty() => not_applicable(),
        Col::Sm => p.sm_util_pct().map_or_else(na, |v| {
            (v.to_string(), theme.share(f64::from(v), Scale::Work))
        }),
        Col::Cpu => p.cpu_pct.map_or_else(na, |v| {
            (
                format!("{v:.1}"),
                if v >= 95.0 { theme.hot } else { theme.text },
            )
        }),
        Col::Rss => p
            .rss_bytes
            .map_or_else(na, |b| (units::bytes(b), theme.text)),
        Col::Time => p.start_time_unix_s.map_or_else(na, |s| {
            let secs = (now_ms / 1000 - s).max(0) as u64;
            (units::duration_of_secs(secs), theme.text)
        }),
        Col::Command => (String::new(), theme.text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_tables_drop_columns_but_keep_pid_vram_and_command() {
        let wide = columns(200, true);
        assert_eq!(wide.len(), Col::ORDER.len());
        let eighty = columns(80, true);
        assert!(!eighty.contains(&Col::Container));
        assert!(eighty.contains(&Col::Vram) && eighty.contains(&Col::Cpu));
        let forty = columns(40, true);
        assert!(forty.contains(&Col::Pid) && forty.contains(&Col::Vram));
        assert!(forty.contains(&Col::Command));
        for w in [20, 40, 60, 80, 100, 140] {
            let cols = columns(w, true);
            let fixed: usize = cols
                .iter()
                .filter(|c| **c != Col::Command)
                .map(|c| c.width() + 1)
                .sum();
            // Columns leave the command its minimum, unless only PID and VRAM are left.
            assert!(
                fixed + MIN_COMMAND <= w || cols.len() == 3,
                "w={w}: {cols:?}"
            );
        }
    }

    #[test]
    fn container_column_only_when_someone_has_one() {
        assert!(!columns(200, false).contains(&Col::Container));
        assert!(columns(200, true).contains(&Col::Container));
    }
}
