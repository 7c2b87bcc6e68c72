//! The one-line spend summary, for screens too small for the spend panel: spent, burn, idle
//! share, the budget and when its ceiling comes, the cost per busy GPU-hour — as much as fits,
//! most important first, each part in its longest wording that fits. Renders a [`BillingView`].

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use gpumeter_core::billing::BillingView;
use gpumeter_core::units::NA;

use crate::ui::theme::Theme;
use crate::ui::widgets::fmt::{spans_width, styled};
use crate::ui::widgets::spend_panel::{Tone, budget_tone, ceiling};

fn tone_style(tone: Tone, theme: &Theme) -> Style {
    match tone {
        Tone::Plain => theme.text,
        Tone::Warn => theme.warm,
        Tone::Alarm => theme.alarm,
    }
}

/// The summary for `width` columns.
pub fn line(view: &BillingView, theme: &Theme, width: usize) -> Line<'static> {
    let money = |m| view.currency.format(m);
    let dot = || styled(" · ", theme.dim);
    let fixed = vec![
        styled("spent ", theme.label),
        styled(money(view.spent), theme.title),
    ];
    // Each part: its wordings, longest first.
    let burn = || styled(view.currency.per_hour(view.burn_per_hour), theme.text);
    let mut parts: Vec<Vec<Vec<Span<'static>>>> = if view.rate_source.is_list_price() {
        vec![vec![
            vec![
                dot(),
                burn(),
                styled(" (list price: set --rate)", theme.warm),
            ],
            vec![dot(), burn(), styled(" (list price)", theme.warm)],
            vec![dot(), burn()],
        ]]
    } else {
        vec![vec![vec![dot(), burn()]]]
    };
    let (idle, idle_style) = match view.idle_share {
        Some(s) => (
            format!("{:.0}%", s * 100.0),
            if s >= 0.5 { theme.warm } else { theme.text },
        ),
        None => (NA.to_string(), theme.na),
    };
    parts.push(vec![vec![
        dot(),
        styled("idle ", theme.label),
        styled(idle, idle_style),
    ]]);
    if let Some(b) = &view.budget {
        let style = tone_style(budget_tone(b), theme);
        let share = format!("{:.0}%", (b.share * 100.0).round());
        let of = format!("{share} of {}/{}", money(b.amount), b.period);
        let when = ceiling(b, view.at_unix_ms);
        let short_when = when.split(" at ").next().unwrap_or_default().to_string();
        let (when, short_when) = if b.ceiling_in_ms.is_some_and(|ms| ms > 0) {
            (format!("ceiling {when}"), format!("ceiling {short_when}"))
        } else {
            (when, short_when)
        };
        let budget =
            |text: String| vec![dot(), styled("budget ", theme.label), styled(text, style)];
        parts.push(vec![
            budget(format!("{of}, {when}")),
            budget(format!("{share}, {short_when}")),
            budget(share),
        ]);
    }
    if let Some(c) = view.cost_per_busy_gpu_hour {
        parts.push(vec![vec![
            dot(),
            styled(format!("{}/busy GPU-h", money(c)), theme.text),
        ]]);
    }
    let mut used = spans_width(&fixed);
    let mut spans = fixed;
    for wordings in parts {
        if let Some(fits) = wordings
            .into_iter()
            .find(|w| used + spans_width(w) <= width)
        {
            used += spans_width(&fits);
            spans.extend(fits);
        }
    }
    Line::from(spans)
}

/// The summary, drawn into the first row of its area.
pub struct SpendLine<'a> {
    pub view: &'a BillingView,
    pub theme: &'a Theme,
}

impl Widget for SpendLine<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if area.is_empty() {
            return;
        }
        let row = Rect::new(area.x, area.y, area.width, 1);
        Paragraph::new(line(self.view, self.theme, usize::from(area.width))).render(row, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view() -> BillingView {
        BillingView {
            energy_kwh: None,
            ..crate::ui::tests::fixtures::billing_view()
        }
    }

    fn text(width: usize) -> String {
        line(&view(), &Theme::monochrome(), width).to_string()
    }

    #[test]
    fn wide_shows_everything_narrow_keeps_the_most_important() {
        assert_eq!(
            text(200),
            "spent $279.00 · $31.00/h · idle 78% · budget 56% of $500.00/day, ceiling in \
             7h07m at 16:07Z · $17.66/busy GPU-h"
        );
        assert_eq!(
            text(80),
            "spent $279.00 · $31.00/h · idle 78% · budget 56%, ceiling in 7h07m"
        );
        assert_eq!(text(50), "spent $279.00 · $31.00/h · idle 78% · budget 56%");
        assert_eq!(text(20), "spent $279.00");
        for w in 0..120 {
            assert!(spans_width(&line(&view(), &Theme::colour(), w).spans) <= w.max(13));
        }
    }

    #[test]
    fn a_warning_budget_is_coloured_and_missing_numbers_read_na() {
        let mut v = view();
        v.idle_share = None;
        v.cost_per_busy_gpu_hour = None;
        v.budget = None;
        let t = line(&v, &Theme::monochrome(), 200).to_string();
        assert_eq!(t, "spent $279.00 · $31.00/h · idle N/A");
        let theme = Theme::colour();
        let warm = line(&view(), &theme, 200);
        let budget = warm
            .spans
            .iter()
            .find(|s| s.content.starts_with("56%"))
            .unwrap();
        // Forecast $744 over a $500 budget: a warning.
        assert_eq!(budget.style, theme.warm);
    }
}
