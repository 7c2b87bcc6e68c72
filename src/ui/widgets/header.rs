//! The header: host, driver and CUDA versions, uptime, source and sample age on the first line;
//! host CPU, iowait, load, memory, disk and network on the second (when there are two rows).
//! A failing source replaces the second line (or takes the first) with a loud notice and the
//! retry countdown.

use gpumeter_model::Snapshot;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use gpumeter_core::engine::{Engine, SourceHealth};
use gpumeter_core::units::{self, NA};

use crate::ui::app::App;
use crate::ui::theme::{Scale, Theme};
use crate::ui::widgets::fmt::{self, styled};
use crate::ui::widgets::text::Lines;

/// A sample older than this is shown warm, and hot past [`STALE_HOT_MS`].
const STALE_WARM_MS: i64 = 5_000;
const STALE_HOT_MS: i64 = 30_000;

/// The header of `engine`'s readings at `now_ms`, in `app`'s theme.
pub struct Header<'a> {
    pub app: &'a App,
    pub engine: &'a Engine,
    pub now_ms: i64,
}

impl Widget for Header<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let Self {
            app,
            engine,
            now_ms,
        } = self;
        let theme = &app.theme;
        let width = usize::from(area.width);
        let mut lines = vec![identity_line(app, engine, now_ms, width)];
        let failing = failing_line(app, engine, now_ms);
        if area.height >= 2 {
            lines.push(match (failing, engine.latest()) {
                (Some(f), _) => f,
                (None, Some(s)) => host_line(s, theme, width),
                (None, None) => Line::default(),
            });
        } else if let Some(f) = failing {
            lines[0] = f;
        }
        Lines::new(lines).render(area, buf);
    }
}

fn sep(theme: &Theme) -> Span<'static> {
    styled(" │ ", theme.dim)
}

/// Name, host, source and sample age first; versions and uptime when there is room.
fn identity_line(app: &App, engine: &Engine, now_ms: i64, width: usize) -> Line<'static> {
    let theme = &app.theme;
    let name = styled("gpumeter", theme.title);
    let Some(snap) = engine.latest() else {
        let name = [vec![name], readonly_mark(app)].concat();
        let text = match &app.waiting {
            Some(what) => format!("waiting for {what}…"),
            None => format!("waiting for the first reading from {}…", app.source_label),
        };
        let waiting = vec![sep(theme), styled(text, theme.dim)];
        return Line::from([name, waiting].concat());
    };
    let sys = &snap.system;
    let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| NA.to_string());
    let source = if snap.source.is_empty() {
        app.source_label.clone()
    } else {
        snap.source.clone()
    };
    let age = engine.sample_age_ms(now_ms).unwrap_or(0);
    // A reading is drawn the moment it arrives, so a fresh one's age is always about 0 s and
    // says nothing: while readings keep coming the header gives their period; only a late one
    // shows its age, warm and then hot. A slow interval moves the marks out with it.
    let (warm_ms, hot_ms) = (
        STALE_WARM_MS.max(2 * app.interval_ms),
        STALE_HOT_MS.max(5 * app.interval_ms),
    );
    let (age_text, age_style) = if age >= hot_ms {
        (format!("{} ago", fmt::age(age)), theme.hot)
    } else if age >= warm_ms {
        (format!("{} ago", fmt::age(age)), theme.warm)
    } else {
        (
            format!("every {}", units::period(app.interval_ms)),
            theme.text,
        )
    };
    let place = sys
        .runs_in
        .as_ref()
        .filter(|r| r.kind != gpumeter_model::PlaceKind::Host)
        .map(|r| vec![styled(" in ", theme.label), styled(r.label(), theme.key)])
        .unwrap_or_default();
    // A replay's readings are as old as the recording: say when they were taken instead, and
    // how it plays.
    let when = if let Some(r) = &app.replay {
        let state = if r.paused {
            "PAUSED".to_string()
        } else if r.at_end {
            "END".to_string()
        } else {
            format!("{}×", r.speed)
        };
        vec![
            sep(theme),
            styled("REPLAY ", theme.warm),
            styled(
                // The date only where there is room for the rest too.
                gpumeter_core::clock::utc_text(
                    r.at_ms,
                    if width >= 110 {
                        gpumeter_core::clock::UtcStyle::FullSeconds
                    } else {
                        gpumeter_core::clock::UtcStyle::ClockSeconds
                    },
                ),
                theme.text,
            ),
            styled(
                format!(
                    " +{} ",
                    units::duration(r.at_ms - r.first_ms, units::DurationStyle::Compact)
                ),
                theme.dim,
            ),
            styled(state, theme.key),
        ]
    } else if source.starts_with("replay:") {
        vec![
            sep(theme),
            styled("REPLAY ", theme.warm),
            styled(
                gpumeter_core::clock::utc_text(
                    snap.taken_at_unix_ms,
                    gpumeter_core::clock::UtcStyle::Full,
                ),
                theme.text,
            ),
        ]
    } else {
        vec![
            sep(theme),
            styled("sample ", theme.label),
            styled(age_text, age_style),
        ]
    };
    let segments = vec![
        [
            vec![sep(theme), styled(opt(&sys.hostname), theme.text)],
            place,
        ]
        .concat(),
        vec![sep(theme), styled(source, theme.key)],
        when,
        vec![
            sep(theme),
            styled("driver ", theme.label),
            styled(opt(&sys.driver_version), theme.text),
        ],
        // Its own separator: when the driver segment does not fit, CUDA must not read as
        // part of the sample age.
        vec![
            sep(theme),
            styled("CUDA ", theme.label),
            styled(opt(&sys.cuda_driver_version), theme.text),
        ],
        vec![
            sep(theme),
            styled("up ", theme.label),
            styled(
                units::opt(sys.uptime_s, units::duration_of_secs),
                theme.text,
            ),
        ],
    ];
    let mut segments = segments;
    if app.replay.is_some() {
        // Where a replay is and how it plays matters more than the host's name.
        segments.swap(0, 2);
        segments.swap(1, 2);
    }
    fmt::fit([vec![name], readonly_mark(app)].concat(), segments, width)
}

/// ` READONLY` after the name when nothing may be acted on (it always fits: fixed, not a segment).
fn readonly_mark(app: &App) -> Vec<Span<'static>> {
    if app.acting == crate::ui::process_action::Acting::ReadOnly {
        vec![styled(" READONLY", app.theme.warm)]
    } else {
        Vec::new()
    }
}

/// The loud line while the source fails as a whole.
fn failing_line(app: &App, engine: &Engine, now_ms: i64) -> Option<Line<'static>> {
    let SourceHealth::Failing {
        message,
        since_unix_ms,
        retry_in_ms,
    } = engine.health()
    else {
        return None;
    };
    let theme = &app.theme;
    let retry = match app.last_failure_unix_ms {
        Some(at) => {
            let left = (at + *retry_in_ms as i64 - now_ms).max(0);
            format!("retry in {}", fmt::age(left))
        }
        None => format!("retrying every {}", fmt::age(*retry_in_ms as i64)),
    };
    let since = fmt::age(now_ms - since_unix_ms);
    let mut spans = vec![
        styled(format!(" ⚠ SOURCE FAILING: {} ", message), theme.alarm),
        styled(format!(" {retry}"), theme.hot),
        styled(format!(" · failing for {since}"), theme.dim),
    ];
    if engine.latest().is_some() {
        spans.push(styled(" · showing the last good reading", theme.dim));
    }
    Some(Line::from(spans))
}

fn host_line(s: &Snapshot, theme: &Theme, width: usize) -> Line<'static> {
    let h = &s.host;
    let mut cpu = vec![
        styled("host CPU ", theme.label),
        fmt::pct_span(h.cpu_util_pct, theme, Scale::Load),
    ];
    if let Some(n) = h.cpu_count {
        cpu.push(styled(format!(" of {n}"), theme.dim));
    }
    // Inside a cgroup with a quota the host's count misleads: say what may be used.
    if let Some(q) = h.cpu_quota_cores {
        cpu.push(styled("  quota ", theme.label));
        cpu.push(styled(format!("{q:.1} cores"), theme.text));
        if let Some(used) = h.cgroup.cpu_used_cores {
            cpu.push(styled(format!(" ({used:.1} used)"), theme.dim));
        }
        if let Some(t) = h.cgroup.cpu_throttled_pct {
            cpu.push(styled(" throttled ", theme.label));
            cpu.push(styled(format!("{t:.0}%"), theme.level(t * 2.0)));
        }
    }
    // iowait hurts early: 15 % already starves a GPU (the starved rule's default iowait_pct, see
    // docs/alerts.md), so scale it up for colour.
    let iowait = match h.iowait_pct {
        Some(v) => styled(format!("{v:.1}%"), theme.level(v * 5.0)),
        None => styled(NA, theme.na),
    };
    let rate = |v: Option<f64>| v.map_or_else(|| NA.to_string(), units::rate);
    let mut segments = vec![
        vec![styled("  iowait ", theme.label), iowait],
        vec![
            styled("  load ", theme.label),
            styled(
                h.load_avg_1m
                    .map_or_else(|| NA.to_string(), |l| format!("{l:.1}")),
                theme.text,
            ),
        ],
        vec![
            styled("  mem ", theme.label),
            styled(
                crate::ui::widgets::gpu_panel::vram_text(h.mem_used_bytes, h.mem_total_bytes),
                theme.text,
            ),
        ],
        vec![
            styled("  disk ", theme.label),
            styled(
                format!(
                    "R {} W {}",
                    rate(h.disk_read_bytes_per_s),
                    rate(h.disk_write_bytes_per_s)
                ),
                theme.text,
            ),
        ],
        vec![
            styled("  net ", theme.label),
            styled(
                format!(
                    "↓{} ↑{}",
                    rate(h.net_rx_bytes_per_s),
                    rate(h.net_tx_bytes_per_s)
                ),
                theme.text,
            ),
        ],
    ];
    if let Some(w) = s.warnings.first() {
        let more = s.warnings.len() - 1;
        let extra = if more > 0 {
            format!(" (+{more})")
        } else {
            String::new()
        };
        // A warning matters more than disk and network rates: put it before them.
        segments.insert(
            3,
            vec![styled(
                format!("  ⚠ {}{extra}", fmt::truncate(w, 60)),
                theme.warm,
            )],
        );
    }
    fmt::fit(cpu, segments, width)
}
