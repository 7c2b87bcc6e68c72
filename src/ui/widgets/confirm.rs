//! The confirmation before a signal or renice: the question, then who it reaches (pid, user,
//! command, GPUs, the VRAM it frees), the whole-job switch (or that the tagged processes
//! are the scope) and the keys. Long commands wrap;
//! the box fits the screen.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Clear, Paragraph, Widget, Wrap};

use crate::ui::layout::centered;
use crate::ui::process_action::{Ask, Pending, vram_text};
use crate::ui::theme::Theme;
use crate::ui::widgets::fmt::styled;

/// Widest the box grows.
const MAX_WIDTH: u16 = 90;
/// Processes of a job listed by name before "and N more".
const LISTED: usize = 6;

/// The dialog for `pending`, drawn centred in its area.
pub struct Confirm<'a> {
    pub pending: &'a Pending,
    pub theme: &'a Theme,
}

impl Widget for Confirm<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let Self { pending, theme } = self;
        let subjects = pending.subjects();
        let gpus = pending.gpus();
        let gpu_text = if gpus.is_empty() {
            "none (feeds a GPU process)".to_string()
        } else {
            gpus.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut lines = vec![
            Line::from(styled(pending.question(), theme.hot)),
            Line::default(),
        ];
        for s in subjects.iter().take(LISTED) {
            lines.push(Line::from(vec![
                styled(format!("pid {:<8}", s.target.pid), theme.label),
                styled(format!("{:<12} ", s.user), theme.text),
                styled(s.command.clone(), theme.text),
            ]));
        }
        if subjects.len() > LISTED {
            lines.push(Line::from(styled(
                format!("… and {} more", subjects.len() - LISTED),
                theme.dim,
            )));
        }
        lines.push(Line::from(vec![
            styled("GPU ", theme.label),
            styled(gpu_text, theme.text),
            styled("   VRAM it frees ", theme.label),
            styled(vram_text(pending.vram_bytes()), theme.text),
        ]));
        let tagged = !pending.tagged.is_empty();
        let job = pending.job.len();
        let scope = match (job, pending.whole_job) {
            _ if tagged => "scope: the tagged processes".to_string(),
            (1, _) => "w  whole job: this process has no workers shown".to_string(),
            (n, true) => format!("w  whole job: ON ({n} processes)"),
            (n, false) => format!("w  whole job: off (its job has {n} processes)"),
        };
        lines.push(Line::from(styled(scope, theme.dim)));
        lines.push(Line::default());
        let keys = match pending.ask {
            Ask::Signal(s) if tagged => format!("Enter/y send {s} · any other key cancels"),
            Ask::Signal(s) => format!("Enter/y send {s} · w whole job · any other key cancels"),
            Ask::Renice { .. } => {
                "+/- change the value · Enter/y renice · any other key cancels".into()
            }
        };
        lines.push(Line::from(styled(keys, theme.key)));

        let want = lines.iter().map(Line::width).max().unwrap_or(0) as u16 + 4;
        let width = want.min(MAX_WIDTH).min(area.width);
        let inner = usize::from(width.saturating_sub(2)).max(1);
        // Wrapped lines need more rows than there are lines.
        let rows: usize = lines.iter().map(|l| l.width().div_ceil(inner).max(1)).sum();
        let height = (rows as u16 + 2).min(area.height);
        let rect = centered(area, width, height);
        if rect.width < 3 || rect.height < 3 {
            return;
        }
        let block = Block::bordered()
            .border_style(theme.border_selected)
            .title(Line::from(styled(" confirm ", theme.title)));
        Clear.render(rect, buf);
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false })
            .render(rect, buf);
    }
}
