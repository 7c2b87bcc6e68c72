//! The process table: PID, user, Kubernetes pod, container, GPU, VRAM, SM %, CPU %, host RSS,
//! runtime and command, with the sort column marked in the header (a click on a header sorts
//! by it: see [`column_at`]), tagged rows marked (`*`), the selected row highlighted (with `e`, its whole command line
//! wrapped under it), and the rows scrolled. Narrow terminals drop the least useful columns
//! first ([`columns`]).

mod columns;

use gpumeter_model::{ProcessReading, Snapshot};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Widget};

use gpumeter_core::units::{self, NA};

use crate::ui::app::App;
use crate::ui::rows::ProcRow;
use crate::ui::theme::{Scale, Theme};
use crate::ui::widgets::fmt::{self, styled};
use crate::ui::widgets::frame_box::TopRule;
use crate::ui::widgets::text::Lines;
use columns::{Col, columns, command_width};
pub use columns::{Optional, column_at};

/// Most lines `e` adds under the selected row for its command line.
const MAX_CONTINUATION: usize = 8;
/// Shown for a value that does not apply (a worker holds no VRAM), as opposed to `N/A`.
const NOT_APPLICABLE: &str = "-";

/// The optional columns the table for `rows` of `snap` shows: the container when a row has
/// one, the pod when any process or GPU of the reading is known to be in one.
pub fn optional(rows: &[ProcRow<'_>], snap: Option<&Snapshot>) -> Optional {
    let pod = snap.is_some_and(|s| {
        s.processes
            .iter()
            .filter_map(|p| p.pod.as_ref())
            .chain(s.gpus.iter().flat_map(|g| &g.pods))
            .any(|p| p.short_name().is_some())
    });
    Optional {
        container: rows.iter().any(|r| r.proc.container.is_some()),
        pod,
    }
}

/// The table of `rows` (title line, column header, rows), as `app` views it.
pub struct ProcessTable<'a> {
    pub rows: &'a [ProcRow<'a>],
    pub app: &'a App,
    /// Whether a reading has come (an empty table says what it waits for).
    pub has_reading: bool,
    /// The optional columns to show ([`optional`]).
    pub optional: Optional,
    pub now_ms: i64,
}

impl Widget for ProcessTable<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let Self {
            rows,
            app,
            has_reading,
            optional,
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
        let cols = columns(width, optional);
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
        let wrapped = rows
            .get(selected)
            .filter(|_| app.full_command)
            .and_then(|row| wrapped_command(row, &cols, width));
        let more = match (rows.get(selected), &wrapped) {
            (Some(row), Some(pieces)) => continuation(row, pieces, &cols, width, theme),
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
            // The selected row's command ends at a word when `e` wraps it, not with `…`.
            let first = wrapped
                .as_ref()
                .filter(|_| i == selected)
                .and_then(|w| w.first());
            let tagged = app.tags.contains(row.proc.pid);
            let mut line = row_line(row, &cols, width, theme, now_ms, first.map(String::as_str));
            if tagged {
                line = tag_mark(line, theme);
            }
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
    if !app.tags.is_empty() {
        spans.push(styled(format!("· {} tagged ", app.tags.len()), theme.input));
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

fn row_line(
    row: &ProcRow<'_>,
    cols: &[Col],
    width: usize,
    theme: &Theme,
    now_ms: i64,
    command: Option<&str>,
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
            let text = match command {
                Some(piece) => fmt::pad_right(piece, rest),
                None => fmt::truncate(&row.command_text_for(rest), rest),
            };
            spans.push(styled(text, style));
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

/// A tagged row: in the tag colour, with `*` in its first cell when that cell is blank (a
/// right-aligned PID leaves it so below a million), so the mark reads without colour too.
fn tag_mark(line: Line<'static>, theme: &Theme) -> Line<'static> {
    let mut line = line.patch_style(theme.input);
    if let Some(first) = line.spans.first_mut()
        && first.content.starts_with(' ')
    {
        first.content = format!("*{}", &first.content[1..]).into();
    }
    line
}

/// `row`'s whole command line wrapped at spaces to the command column (a word longer than the
/// column is cut where it must be): the first piece goes on the row itself, the rest under it
/// (at most [`MAX_CONTINUATION`] lines). `None` when the line fits on its row.
fn wrapped_command(row: &ProcRow<'_>, cols: &[Col], width: usize) -> Option<Vec<String>> {
    let cmd_w = command_width(cols, width);
    let room = cmd_w.saturating_sub(fmt::width(&row.tree_prefix));
    if room < 4 {
        return None;
    }
    let text = row.command_text_for(room);
    if fmt::width(&text) <= room {
        return None;
    }
    let mut lines = fmt::wrap_words(&text, room);
    lines.truncate(MAX_CONTINUATION + 1);
    Some(lines)
}

/// The lines under the selected row: the wrapped command's pieces after the first, indented
/// to the command column.
fn continuation(
    row: &ProcRow<'_>,
    pieces: &[String],
    cols: &[Col],
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let indent = width.saturating_sub(command_width(cols, width));
    let pad = " ".repeat(indent + fmt::width(&row.tree_prefix));
    pieces
        .iter()
        .skip(1)
        .map(|l| Line::from(vec![Span::raw(pad.clone()), styled(l.clone(), theme.text)]))
        .collect()
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
        Col::Pod => match p.pod.as_ref().and_then(|pod| pod.short_name()) {
            Some(name) => (name.to_string(), theme.text),
            None if p.visible => not_applicable(),
            None => na(),
        },
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
            // No limit to read it against (a trainer at 150 % is normal); a pegged worker is
            // the starved alert's evidence, not a colour here.
            (format!("{v:.1}"), theme.text)
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
