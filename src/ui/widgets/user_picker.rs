//! The user picker (`u`, as in htop): the users of the processes read now, the cursor on one,
//! and what Enter and Esc do, in a small box centred on the screen. As many names as fit,
//! scrolled so the cursor shows.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Clear, Paragraph, Widget};

use crate::ui::app::App;
use crate::ui::layout::centered;
use crate::ui::widgets::fmt::{pad_right, styled, width};

/// The picker, drawn over its area.
pub struct UserPicker<'a> {
    pub app: &'a App,
}

impl Widget for UserPicker<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let theme = &app.theme;
        let Some(cursor) = app.users.picking else {
            return;
        };
        let users = app.users.users();
        let footer = " Enter shows · Esc all users ";
        let title = " Show one user's processes ";
        let name_w = users.iter().map(|u| width(u)).max().unwrap_or(0);
        let inner_w = (name_w + 2).max(width(title)).max(width(footer));
        let rows = users.len().max(1);
        let rect = centered(
            area,
            u16::try_from(inner_w + 2).unwrap_or(u16::MAX),
            u16::try_from(rows + 2).unwrap_or(u16::MAX),
        );
        if rect.width < 3 || rect.height < 3 {
            return;
        }
        let shown = usize::from(rect.height - 2);
        let skip = (cursor + 1).saturating_sub(shown);
        let lines: Vec<Line<'static>> = if users.is_empty() {
            vec![Line::from(styled(" no user in this reading", theme.dim))]
        } else {
            users
                .iter()
                .enumerate()
                .skip(skip)
                .take(shown)
                .map(|(i, u)| {
                    let text = format!(" {}", pad_right(u, inner_w - 1));
                    let style = if i == cursor {
                        theme.selected_row
                    } else {
                        theme.text
                    };
                    Line::from(styled(text, style))
                })
                .collect()
        };
        let block = Block::bordered()
            .border_style(theme.border_selected)
            .title(Line::from(styled(title, theme.title)))
            .title_bottom(Line::from(styled(footer, theme.key)));
        Clear.render(rect, buf);
        Paragraph::new(lines).block(block).render(rect, buf);
    }
}
