//! The bottom line: the filter input while it is open, else a status message (ledger notes,
//! channel warnings, a stopped collector; budget crossings are the alert panel's), else key
//! hints (as many as fit), with the keys the key map binds: during a replay, its keys first.
//! In the first minutes the hints follow what the rules still wait for ("judging: 20s of 1m
//! for starved …"), so a quiet screen is not read as a healthy one.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Span;
use ratatui::widgets::Widget;

use gpumeter_core::engine::rules::judging::Judging;
use gpumeter_core::units;

use crate::ui::app::App;
use crate::ui::keys::{BINDINGS, KeyAction};
use crate::ui::widgets::fmt::{self, styled};
use crate::ui::widgets::text::Lines;

/// The actions the footer names during a replay, before the rest.
const REPLAY_FIRST: [KeyAction; 4] = [
    KeyAction::Pause,
    KeyAction::Faster,
    KeyAction::StepForward,
    KeyAction::SeekBack,
];

/// The rest, most useful first.
const FOOTER: [KeyAction; 10] = [
    KeyAction::Quit,
    KeyAction::Help,
    KeyAction::Filter,
    KeyAction::Sort,
    KeyAction::Reverse,
    KeyAction::Tree,
    KeyAction::NextGpu,
    KeyAction::Down,
    KeyAction::History,
    KeyAction::AlertDetail,
];

/// (key, word) hints, most useful first.
fn hints(app: &App) -> Vec<(String, &'static str)> {
    let mut out: Vec<(String, &'static str)> = Vec::new();
    let label = |a: KeyAction| match a {
        // Both directions in one hint.
        KeyAction::SeekBack => format!(
            "{}{}",
            app.keymap.first_label(KeyAction::SeekBack),
            app.keymap.first_label(KeyAction::SeekForward)
        ),
        KeyAction::Faster => format!(
            "{}{}",
            app.keymap.first_label(KeyAction::Slower),
            app.keymap.first_label(KeyAction::Faster)
        ),
        KeyAction::Down => format!(
            "{}{}",
            app.keymap.first_label(KeyAction::Up),
            app.keymap.first_label(KeyAction::Down)
        ),
        _ => app.keymap.first_label(a),
    };
    let replay: &[KeyAction] = if app.replay.is_some() {
        &REPLAY_FIRST
    } else {
        &[]
    };
    // With an alert standing, how to read it comes right after quit and help (the strip of a
    // small terminal has no room for it).
    let alert: &[KeyAction] = if app.alerts.selected_id().is_some() {
        &[KeyAction::AlertDetail]
    } else {
        &[]
    };
    let rest = FOOTER
        .iter()
        .filter(|a| !alert.contains(a))
        .collect::<Vec<_>>();
    // During a replay its keys and how to read an alert come first.
    let order: Vec<&KeyAction> = if replay.is_empty() {
        FOOTER[..2]
            .iter()
            .chain(alert)
            .chain(rest.into_iter().skip(2))
            .collect()
    } else {
        replay.iter().chain(alert).chain(rest).collect()
    };
    for a in order {
        if let Some(h) = BINDINGS
            .iter()
            .find(|b| b.action == *a)
            .and_then(|b| b.hint)
        {
            // Enter opens what was selected last: say which.
            let h = if *a == KeyAction::AlertDetail && app.enter_opens_process() {
                "process details"
            } else {
                h
            };
            out.push((label(*a), h));
        }
    }
    out
}

/// "judging: 20s of 1m for starved, throttle; 2m for idle, hung".
pub fn judging_text(j: &Judging) -> String {
    let d = |ms: i64| units::duration(ms, units::DurationStyle::Compact);
    let groups: Vec<String> = j
        .waiting
        .iter()
        .map(|(w, names)| format!("{} for {}", d(*w), names.join(", ")))
        .collect();
    format!("judging: {} of {}", d(j.watched_ms), groups.join("; "))
}

/// The line; a running autostop `countdown` takes it over (only the filter input wins).
pub struct StatusLine<'a> {
    pub app: &'a App,
    /// A running autostop's countdown.
    pub countdown: Option<&'a str>,
    /// What the rules still wait for (see [`judging_text`]).
    pub judging: Option<&'a str>,
}

impl Widget for StatusLine<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let Self {
            app,
            countdown,
            judging,
        } = self;
        if area.width == 0 || area.height == 0 {
            return;
        }
        let theme = &app.theme;
        let width = usize::from(area.width);
        let line = if app.filter_active {
            // A long filter shows its end, where the typing happens.
            let room = width.saturating_sub(9);
            let count = app.filter.chars().count();
            let shown: String = app
                .filter
                .chars()
                .skip(count.saturating_sub(room))
                .collect();
            let fixed = vec![
                styled("filter: ", theme.label),
                styled(format!("{shown}█"), theme.input),
            ];
            let hints = vec![vec![styled("   Enter keeps · Esc clears", theme.dim)]];
            fmt::fit(fixed, hints, width)
        } else if let Some(c) = countdown {
            fmt::fit(
                vec![styled(fmt::truncate(c, width), theme.hot)],
                Vec::new(),
                width,
            )
        } else if let Some(msg) = &app.status {
            fmt::fit(
                vec![styled(fmt::truncate(msg, width), theme.warm)],
                Vec::new(),
                width,
            )
        } else {
            let segments = hints(app)
                .into_iter()
                .enumerate()
                .map(|(i, (k, a))| {
                    let lead = if i == 0 { "" } else { "  " };
                    vec![
                        Span::raw(lead),
                        styled(k, theme.key),
                        styled(format!(" {a}"), theme.dim),
                    ]
                })
                .collect();
            // What the rules wait for comes first; the hints take the room left.
            let fixed = judging.map_or_else(Vec::new, |j| {
                vec![styled(fmt::truncate(j, width), theme.dim), Span::raw("  ")]
            });
            fmt::fit(fixed, segments, width)
        };
        Lines::new(vec![line]).render(area, buf);
    }
}
