//! The spend panel: what the machine has cost, what it burns now, the budget and when its
//! ceiling comes, how much of the watched time the GPUs sat idle, where the day and month will
//! end, and the cost per busy GPU-hour against the list price. Renders a [`BillingView`] (computed by the engine) into a
//! buffer in the theme's styles; reads nothing else and never mutates.
//!
//! Small areas degrade by dropping the less important lines from the bottom (the order of
//! [`lines`]), then by clipping; no size panics.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Widget};

use crate::ui::theme::Theme;
use gpumeter_core::billing::{BillingView, BudgetView};
use gpumeter_core::clock::{UtcStyle, utc_text};
use gpumeter_core::money::Currency;
use gpumeter_core::units::{DurationStyle, NA, duration};

const LABEL_WIDTH: usize = 11;

fn hhmm_utc(unix_ms: i64) -> String {
    utc_text(unix_ms, UtcStyle::Clock)
}

fn day_month_utc(unix_ms: i64) -> String {
    utc_text(unix_ms, UtcStyle::DayClock)
}

/// Severity of a line, for colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tone {
    Plain,
    Warn,
    Alarm,
}

fn line(label: &str, value: String, tone: Tone, theme: &Theme) -> Line<'static> {
    let style = match tone {
        Tone::Plain => theme.text,
        Tone::Warn => theme.warm,
        Tone::Alarm => theme.hot.add_modifier(Modifier::BOLD),
    };
    Line::from(vec![
        Span::styled(format!("{label:<LABEL_WIDTH$}"), theme.dim),
        Span::styled(value, style),
    ])
}

/// Alarm once the budget is spent; a warning from 80 % or when the forecast passes it.
pub(crate) fn budget_tone(b: &BudgetView) -> Tone {
    if b.share >= 1.0 {
        Tone::Alarm
    } else if b.share >= 0.8 || b.forecast.is_some_and(|f| f >= b.amount) {
        Tone::Warn
    } else {
        Tone::Plain
    }
}

/// When the budget ceiling comes at the current burn: `reached`, `in 7h07m at 16:07Z` (with
/// its date when that is not today's, `now_ms`'s UTC day: `in 14h19m at Dec 08 03:27Z`), or
/// `not reached this day`.
pub(crate) fn ceiling(b: &BudgetView, now_ms: i64) -> String {
    const DAY_MS: i64 = 86_400_000;
    match (b.ceiling_in_ms, b.ceiling_at_unix_ms) {
        (Some(0), _) => "reached".to_string(),
        (Some(ms), Some(at)) => {
            let at = if at.div_euclid(DAY_MS) == now_ms.div_euclid(DAY_MS) {
                hhmm_utc(at)
            } else {
                day_month_utc(at)
            };
            format!("in {} at {at}", duration(ms, DurationStyle::Compact))
        }
        _ => format!("not reached this {}", b.period),
    }
}

/// The panel's lines, most important first.
pub fn lines(view: &BillingView, theme: &Theme) -> Vec<Line<'static>> {
    let c: Currency = view.currency;
    let money = |m| c.format(m);
    let mut out = Vec::new();
    out.push(line(
        "spent",
        format!("{}  (today {})", money(view.spent), money(view.spent_today)),
        Tone::Plain,
        theme,
    ));
    out.push(line(
        "burn",
        format!(
            "{}  ({}, billed {})",
            c.per_hour(view.burn_per_hour),
            gpumeter_core::billing::rate_text(&view.rate, c),
            view.granularity.name()
        ),
        Tone::Plain,
        theme,
    ));
    // Egress gets its own line once it is more than a sliver (2 %) of the spend or the burn:
    // the bill beside the GPUs' that users are surprised by.
    let sliver = |part: gpumeter_core::money::Money, whole: gpumeter_core::money::Money| {
        part.micros() > 0 && part.micros().saturating_mul(50) >= whole.micros()
    };
    if sliver(view.egress_cost, view.spent) || sliver(view.egress_per_hour, view.burn_per_hour) {
        out.push(line(
            "egress",
            format!(
                "{} so far, {} now  ({:.1} GB out)",
                money(view.egress_cost),
                c.per_hour(view.egress_per_hour),
                view.egress_bytes as f64 / 1e9
            ),
            Tone::Plain,
            theme,
        ));
    }
    if let Some(s) = &view.stopped_storage {
        // What stopping the box does not save, and where the figure came from.
        out.push(line(
            "stopped",
            format!("{} of catalogued storage bills on:", c.per_hour(s.per_hour)),
            Tone::Plain,
            theme,
        ));
        for l in &s.lines {
            out.push(line("", l.clone(), Tone::Plain, theme));
        }
    }
    if let gpumeter_core::billing::RateSource::ListPrice(l) = &view.rate_source {
        // A guessed price is said to be one, with how to give the real one.
        let catalog = if l.catalog.is_empty() {
            String::new()
        } else {
            format!(", catalog {}", l.catalog)
        };
        out.push(line(
            "rate",
            format!("list price{catalog} — set yours with --rate"),
            Tone::Warn,
            theme,
        ));
        out.push(line("priced as", l.what.clone(), Tone::Plain, theme));
    }
    if let Some(b) = &view.budget {
        let tone = budget_tone(b);
        out.push(line(
            "budget",
            format!(
                "{:.0}% of {}/{}",
                (b.share * 100.0).round(),
                money(b.amount),
                b.period
            ),
            tone,
            theme,
        ));
        out.push(line("ceiling", ceiling(b, view.at_unix_ms), tone, theme));
    }
    let (idle_text, idle_tone) = match view.idle_share {
        Some(s) => (
            format!(
                "{:.0}% of the watched time ({})",
                s * 100.0,
                money(view.idle_cost)
            ),
            if s >= 0.5 { Tone::Warn } else { Tone::Plain },
        ),
        None => (NA.to_string(), Tone::Plain),
    };
    out.push(line("idle", idle_text, idle_tone, theme));
    let proj = |m: Option<_>| m.map_or_else(|| NA.to_string(), money);
    out.push(line(
        "projected",
        format!(
            "{} end of day, {} end of month",
            proj(view.projected_end_of_day),
            proj(view.projected_end_of_month)
        ),
        Tone::Plain,
        theme,
    ));
    let busy = match (view.cost_per_busy_gpu_hour, view.list_per_gpu_hour) {
        (Some(actual), Some(list)) => {
            let tone = if actual.micros() > list.micros().saturating_mul(2) {
                Tone::Warn
            } else {
                Tone::Plain
            };
            (format!("{} vs list {}", money(actual), money(list)), tone)
        }
        (Some(actual), None) => (money(actual), Tone::Plain),
        (None, _) => ("N/A (no busy GPU time yet)".to_string(), Tone::Plain),
    };
    out.push(line("busy GPU-h", busy.0, busy.1, theme));
    if let Some(kwh) = view.energy_kwh {
        let cost = view
            .energy_cost
            .map_or(String::new(), |m| format!("  {}", money(m)));
        out.push(line(
            "energy",
            format!("{kwh:.2} kWh{cost}"),
            Tone::Plain,
            theme,
        ));
    }
    out
}

/// The panel of `view`, drawn into its area (clipped to the buffer).
pub struct SpendPanel<'a> {
    pub view: &'a BillingView,
    pub theme: &'a Theme,
}

impl Widget for SpendPanel<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let Self { view, theme } = self;
        let area = area.intersection(buf.area);
        if area.is_empty() {
            return;
        }
        let body = lines(view, theme);
        // A border only when there is room for it and at least one line inside.
        let (inner, block) = if area.height >= 3 && area.width >= 12 {
            let block = Block::default().borders(Borders::ALL).title(" Spend ");
            (block.inner(area), Some(block))
        } else {
            (area, None)
        };
        if let Some(block) = block {
            block.render(area, buf);
        }
        let keep = usize::from(inner.height).min(body.len());
        Paragraph::new(body.into_iter().take(keep).collect::<Vec<_>>()).render(inner, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::Color;

    fn view() -> BillingView {
        crate::ui::tests::fixtures::billing_view()
    }

    fn render(buf: &mut Buffer, area: Rect, view: &BillingView, theme: &Theme) {
        SpendPanel { view, theme }.render(area, buf);
    }

    fn text(buf: &Buffer) -> String {
        let a = buf.area;
        (a.top()..a.bottom())
            .map(|y| {
                (a.left()..a.right())
                    .map(|x| buf[(x, y)].symbol().to_string())
                    .collect::<String>()
                    .trim_end()
                    .to_string()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn a_list_price_is_said_to_be_one_and_a_users_rate_is_not_labelled() {
        let area = Rect::new(0, 0, 80, 12);
        let mut buf = Buffer::empty(area);
        render(&mut buf, area, &view(), &Theme::colour());
        assert!(!text(&buf).contains("list price"));
        let mut listed = view();
        listed.rate_source =
            gpumeter_core::billing::RateSource::ListPrice(gpumeter_core::billing::ListPrice {
                what: "AWS p5.48xlarge on-demand us-east-1".into(),
                catalog: "2025-05".into(),
                url: "https://aws.amazon.com/ec2/pricing/on-demand/".into(),
            });
        let mut buf = Buffer::empty(area);
        render(&mut buf, area, &listed, &Theme::colour());
        let t = text(&buf);
        assert!(
            t.contains("rate       list price, catalog 2025-05 — set yours with --rate")
                && t.contains("priced as  AWS p5.48xlarge on-demand us-east-1"),
            "{t}"
        );
        let one = crate::ui::widgets::spend_line::line(&listed, &Theme::colour(), 120);
        let one: String = one.spans.iter().map(|s| s.content.as_ref()).collect();
        assert!(one.contains("(list price: set --rate)"), "{one}");
    }

    #[test]
    fn catalogued_storage_says_what_bills_while_stopped_and_where_the_figure_is_from() {
        let area = Rect::new(0, 0, 80, 16);
        let draw = |v: &BillingView| {
            let mut buf = Buffer::empty(area);
            render(&mut buf, area, v, &Theme::colour());
            text(&buf)
        };
        assert!(!draw(&view()).contains("stopped"));
        let mut v = view();
        v.stopped_storage = Some(gpumeter_core::billing::StoppedStorage {
            per_hour: gpumeter_core::money::Money::from_micros(219_178),
            what: "2 × 1000 GB EBS gp3 at the catalogued $0.08/GB-month".into(),
            lines: vec!["2 × 1000 GB EBS gp3 at $0.08/GB-month".into()],
        });
        let t = draw(&v);
        assert!(
            t.contains("stopped    $0.22/h of catalogued storage bills on:")
                && t.contains("           2 × 1000 GB EBS gp3 at $0.08/GB-month"),
            "{t}"
        );
    }

    #[test]
    fn egress_gets_a_line_only_when_it_is_more_than_a_sliver() {
        use gpumeter_core::money::Money;
        let area = Rect::new(0, 0, 80, 14);
        let draw = |v: &BillingView| {
            let mut buf = Buffer::empty(area);
            render(&mut buf, area, v, &Theme::colour());
            text(&buf)
        };
        assert!(!draw(&view()).contains("egress"));
        // 14 GB out at $0.09/GB: $1.26 of $279 spent is a sliver, but sending at $3.00/h now
        // against a $31/h burn is not.
        let mut v = view();
        v.egress_bytes = 14_000_000_000;
        v.egress_cost = Money::from_micros(1_260_000);
        assert!(!draw(&v).contains("egress"), "{}", draw(&v));
        v.egress_per_hour = Money::from_micros(3_000_000);
        let t = draw(&v);
        assert!(
            t.contains("egress     $1.26 so far, $3.00/h now  (14.0 GB out)"),
            "{t}"
        );
    }

    #[test]
    fn shows_the_money_lines() {
        let area = Rect::new(0, 0, 80, 10);
        let mut buf = Buffer::empty(area);
        render(&mut buf, area, &view(), &Theme::colour());
        let t = text(&buf);
        for want in [
            "Spend",
            "spent      $279.00  (today $279.00)",
            "burn       $31.00/h  ($31.00/h, billed per-second-min-60s)",
            "budget     56% of $500.00/day",
            "ceiling    in 7h07m at 16:07Z",
            "idle       78% of the watched time ($217.62)",
            "projected  $744.00 end of day, $23,064.00 end of month",
            "busy GPU-h $17.66 vs list $3.88",
            "energy     41.25 kWh",
        ] {
            assert!(t.contains(want), "missing {want:?} in\n{t}");
        }
        // Idle share over half is a warning, in colour only when colour is on.
        let idle_row = (0..10)
            .find(|&y| text(&buf).lines().nth(y).unwrap().contains("idle"))
            .unwrap();
        let cell = &buf[(12, u16::try_from(idle_row).unwrap())];
        assert_eq!(cell.fg, Color::Yellow);
        let mut plain = Buffer::empty(area);
        render(&mut plain, area, &view(), &Theme::monochrome());
        assert_eq!(
            plain[(12, u16::try_from(idle_row).unwrap())].fg,
            Color::Reset
        );
    }

    #[test]
    fn small_areas_keep_the_most_important_lines_and_never_panic() {
        for w in 0..=50 {
            for h in 0..=12 {
                let mut buf = Buffer::empty(Rect::new(0, 0, 50, 12));
                render(&mut buf, Rect::new(0, 0, w, h), &view(), &Theme::colour());
            }
        }
        // An area partly outside the buffer is clipped, not a panic.
        let mut buf = Buffer::empty(Rect::new(0, 0, 20, 4));
        render(
            &mut buf,
            Rect::new(10, 2, 40, 10),
            &view(),
            &Theme::colour(),
        );
        let area = Rect::new(0, 0, 40, 3);
        let mut buf = Buffer::empty(area);
        render(&mut buf, area, &view(), &Theme::monochrome());
        let t = text(&buf);
        assert!(t.contains("spent"), "{t}");
        assert!(!t.contains("burn"), "{t}");
        let area = Rect::new(0, 0, 30, 2);
        let mut buf = Buffer::empty(area);
        render(&mut buf, area, &view(), &Theme::monochrome());
        assert!(
            text(&buf).starts_with("spent      $279.00"),
            "{}",
            text(&buf)
        );
    }

    #[test]
    fn a_ceiling_past_midnight_gives_its_date() {
        // 13:07Z now, the ceiling 14h19m on: tomorrow's 03:26Z, which says so.
        let now = 1_767_272_820_000; // 2026-01-01 13:07Z
        let mut b = view().budget.unwrap();
        b.ceiling_in_ms = Some((14 * 60 + 19) * 60_000);
        b.ceiling_at_unix_ms = Some(now + (14 * 60 + 19) * 60_000);
        assert_eq!(ceiling(&b, now), "in 14h19m at Jan 02 03:26Z");
        // Later today: the time alone.
        b.ceiling_in_ms = Some(3 * 3_600_000);
        b.ceiling_at_unix_ms = Some(now + 3 * 3_600_000);
        assert_eq!(ceiling(&b, now), "in 3h at 16:07Z");
    }

    #[test]
    fn a_reached_budget_is_an_alarm_and_missing_numbers_read_na() {
        let mut v = view();
        let b = v.budget.as_mut().unwrap();
        b.share = 1.2;
        b.ceiling_in_ms = Some(0);
        v.cost_per_busy_gpu_hour = None;
        v.idle_share = None;
        let t: Vec<String> = lines(&v, &Theme::monochrome())
            .iter()
            .map(|l| l.to_string())
            .collect();
        assert!(t.iter().any(|l| l.contains("120% of $500.00/day")), "{t:?}");
        assert!(t.iter().any(|l| l == "ceiling    reached"), "{t:?}");
        assert!(
            t.iter().any(|l| l.contains("N/A (no busy GPU time yet)")),
            "{t:?}"
        );
        assert!(t.iter().any(|l| l.starts_with("idle       N/A")), "{t:?}");
        let colored = lines(&v, &Theme::colour());
        assert_eq!(colored[2].spans[1].style.fg, Some(Color::Red));
        assert_eq!(colored[3].spans[1].style.fg, Some(Color::Red));
    }
}
