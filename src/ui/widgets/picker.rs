//! A small list picker in a box centred on the screen: a title, the items with the cursor on
//! one, and a footer saying what Enter and Esc do; as many items as fit, scrolled so the cursor
//! shows. Drawn for the user filter (`u`, as in htop) and the sort menu (`F6`).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Clear, Paragraph, Widget};

use crate::ui::app::App;
use crate::ui::layout::centered;
use crate::ui::theme::Theme;
use crate::ui::widgets::fmt::{pad_right, styled, width};

/// A picker, drawn over its area.
pub struct Picker<'a> {
    pub title: &'a str,
    pub footer: &'a str,
    pub items: &'a [String],
    pub cursor: usize,
    /// What it says with no item.
    pub empty: &'a str,
    pub theme: &'a Theme,
}

impl Widget for Picker<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let Self {
            title,
            footer,
            items,
            cursor,
            empty,
            theme,
        } = self;
        let name_w = items.iter().map(|u| width(u)).max().unwrap_or(0);
        let inner_w = (name_w + 2)
            .max(width(title))
            .max(width(footer))
            .max(width(empty) + 1);
        let rows = items.len().max(1);
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
        let lines: Vec<Line<'static>> = if items.is_empty() {
            vec![Line::from(styled(format!(" {empty}"), theme.dim))]
        } else {
            items
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
            .title(Line::from(styled(title.to_string(), theme.title)))
            .title_bottom(Line::from(styled(footer.to_string(), theme.key)));
        Clear.render(rect, buf);
        Paragraph::new(lines).block(block).render(rect, buf);
    }
}

/// The open picker of `app`, if any (the user filter's or the sort menu's), drawn over `area`.
pub fn render_open(app: &App, area: Rect, buf: &mut Buffer) {
    let theme = &app.theme;
    if let Some(cursor) = app.users.picking {
        Picker {
            title: " Show one user's processes ",
            footer: " Enter shows · Esc all users ",
            items: app.users.users(),
            cursor,
            empty: "no user in this reading",
            theme,
        }
        .render(area, buf);
    }
    if let Some(cursor) = app.sort_menu.picking {
        let items = app.sort_menu.items(app.sort, app.sort_desc);
        Picker {
            title: " Sort by ",
            footer: " Enter sorts · Esc keeps ",
            items: &items,
            cursor,
            empty: "no column",
            theme,
        }
        .render(area, buf);
    }
}
