//! The process detail view (Enter on a selected process, as in nvitop): its PID, user, state
//! and start, its Kubernetes pod, namespace and container (where known), the whole command
//! line (sanitized at the source, as everywhere), its working directory and the GPU part of
//! its environment (`place`: read once when the view opened, see `process_view`), each GPU it
//! holds with its VRAM, SM share and pods and its own history there (`gpus`), its job (the
//! trainer and its workers) and the standing alerts that name it — wrapped to the overlay's
//! width and scrolled, at any terminal size, in the alert detail view's place.
//! Reads the engine through `&`; never mutates.

mod gpus;
mod place;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget};

use gpumeter_core::clock::{UtcStyle, utc_text};
use gpumeter_core::engine::Engine;
use gpumeter_core::units::{self, DurationStyle};
use gpumeter_model::{PodRef, ProcessReading};

use crate::ui::app::App;
use crate::ui::keys::KeyAction;
use crate::ui::process_view::ProcessDetail;
use crate::ui::rows::job::job_of;
use crate::ui::theme::Theme;
use crate::ui::widgets::alerts::detail::{inner, overlay, window};
use crate::ui::widgets::alerts::panel::wrapped;
use crate::ui::widgets::fmt::styled;

/// Whether `alert` names one of `pids` (in its id, `forgotten:22817`, or as a word of its text).
fn names_any(alert: &gpumeter_core::engine::rules::Alert, pids: &[u32]) -> bool {
    let words = |t: &str| {
        t.split(|c: char| !c.is_ascii_digit())
            .filter_map(|w| w.parse::<u32>().ok())
            .collect::<Vec<_>>()
    };
    let mut found = words(&alert.id);
    found.extend(words(&alert.title));
    found.extend(words(&alert.detail));
    for (_, v) in &alert.evidence {
        found.extend(words(v));
    }
    found.iter().any(|n| pids.contains(n))
}

/// Every line of the view of `pid` at `cols` wide.
pub fn lines(
    app: &App,
    engine: &Engine,
    detail: &ProcessDetail,
    cols: usize,
    now_ms: i64,
) -> Vec<Line<'static>> {
    let theme = &app.theme;
    let pid = detail.pid;
    let Some(snap) = engine.latest() else {
        return vec![Line::from(styled("no reading yet", theme.dim))];
    };
    let Some(p) = snap.processes.iter().find(|r| r.pid == pid) else {
        return vec![Line::from(styled(
            format!("PID {pid} is gone: it exited, or the last reading no longer lists it."),
            theme.dim,
        ))];
    };
    let label = |k: &str| Span::styled(format!("{k}: "), theme.label);
    let na = || "N/A".to_string();
    let mut out = Vec::new();
    let user = p.user.as_deref().map_or_else(na, str::to_string);
    let state = p.state.map_or_else(na, |c| c.to_string());
    let threads = p.threads.map_or_else(na, |t| t.to_string());
    let head = format!("user {user} · state {state} · {threads} threads");
    out.extend(wrapped(label(&format!("PID {pid}")), &head, cols));
    let started = match p.start_time_unix_s {
        Some(s) => format!(
            "{} ({} ago)",
            utc_text(s * 1000, UtcStyle::DayClock),
            units::duration(now_ms - s * 1000, DurationStyle::Words)
        ),
        None => na(),
    };
    out.extend(wrapped(label("Started"), &started, cols));
    let cpu = p.cpu_pct.map_or_else(na, |c| format!("{c:.1}%"));
    let rss = p.rss_bytes.map_or_else(na, units::bytes);
    out.extend(wrapped(label("CPU"), &format!("{cpu} · RSS {rss}"), cols));
    if let Some(pod) = &p.pod {
        out.extend(wrapped(label("Pod"), &pod_words(pod), cols));
    }
    let command = match (&p.command, p.visible) {
        (Some(c), _) => c.to_string(),
        (None, false) => crate::ui::INVISIBLE_LABEL.to_string(),
        (None, true) => p.name.as_deref().map_or_else(na, str::to_string),
    };
    out.extend(wrapped(label("Command"), &command, cols));
    place::place_lines(&mut out, app, detail, cols);
    out.push(Line::default());
    gpus::gpu_lines(&mut out, app, engine, p, cols, now_ms);
    out.push(Line::default());
    let job = job_of(snap, pid, false);
    let pids: Vec<u32> = job.iter().map(|r| r.pid).collect();
    job_lines(&mut out, &job, pid, cols, theme);
    let alerts: Vec<_> = engine
        .rules()
        .visible(now_ms)
        .into_iter()
        .filter(|a| names_any(a, &pids))
        .collect();
    out.push(Line::default());
    if alerts.is_empty() {
        out.push(Line::from(styled(
            "No standing alert names it or its job.",
            theme.dim,
        )));
    } else {
        out.push(Line::from(styled(
            "Alerts naming it or its job",
            theme.title,
        )));
        for a in alerts {
            out.extend(wrapped(
                Span::styled(
                    format!("  {} ", a.severity.name().to_uppercase()),
                    theme.severity(a.severity),
                ),
                &a.title,
                cols,
            ));
        }
    }
    out
}

/// `trainer-7f9c · namespace ml · container trainer`; a part not known is `N/A`, and the
/// pod's UID (from the cgroup path) follows its name when both are known.
fn pod_words(pod: &PodRef) -> String {
    let na = || "N/A".to_string();
    let name = match (&pod.pod, &pod.pod_uid) {
        (Some(name), Some(uid)) => format!("{name} (uid {uid})"),
        (Some(name), None) => name.to_string(),
        (None, Some(uid)) => format!("uid {uid}"),
        (None, None) => na(),
    };
    let namespace = pod.namespace.as_deref().map_or_else(na, str::to_string);
    let container = pod.container.as_deref().map_or_else(na, str::to_string);
    format!("{name} · namespace {namespace} · container {container}")
}

/// Its job: the trainer and its workers, with their CPU summed.
fn job_lines(
    out: &mut Vec<Line<'static>>,
    job: &[&ProcessReading],
    pid: u32,
    cols: usize,
    theme: &Theme,
) {
    let Some(root) = job.first() else {
        return;
    };
    let label = |k: &str| Span::styled(format!("{k}: "), theme.label);
    if job.len() == 1 {
        out.extend(wrapped(
            label("Job"),
            "no workers: a process of its own",
            cols,
        ));
        return;
    }
    let cpu: f64 = job.iter().filter_map(|r| r.cpu_pct).sum();
    let name = |r: &ProcessReading| r.name.as_deref().unwrap_or("?").to_string();
    let me = if root.pid == pid { " (this one)" } else { "" };
    out.extend(wrapped(
        label("Job"),
        &format!(
            "trainer {} {}{me} + {} workers · CPU {cpu:.0}% in all",
            root.pid,
            name(root),
            job.len() - 1
        ),
        cols,
    ));
    let workers: Vec<String> = job[1..]
        .iter()
        .map(|r| {
            let mark = if r.pid == pid { "*" } else { "" };
            format!("{}{mark}", r.pid)
        })
        .collect();
    out.extend(wrapped(
        Span::styled("  workers: ", theme.dim),
        &workers.join(" "),
        cols,
    ));
}

/// How far the view of `pid` can scroll on a screen of `area`.
pub fn max_scroll(
    area: Rect,
    app: &App,
    engine: &Engine,
    detail: &ProcessDetail,
    now_ms: i64,
) -> usize {
    let (rows, cols) = inner(area);
    lines(app, engine, detail, cols, now_ms)
        .len()
        .saturating_sub(rows)
}

/// The view of `detail`, drawn over its area.
pub struct ProcessDetailView<'a> {
    pub detail: &'a ProcessDetail,
    pub engine: &'a Engine,
    pub now_ms: i64,
    pub app: &'a App,
}

impl Widget for ProcessDetailView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let Self {
            detail,
            engine,
            now_ms,
            app,
        } = self;
        let theme = &app.theme;
        let rect = overlay(area);
        if rect.width < 8 || rect.height < 3 {
            return;
        }
        let (rows, cols) = inner(area);
        let body = lines(app, engine, detail, cols, now_ms);
        let (shown, position) = window(body, rows, detail.scroll);
        let k = |a: KeyAction| app.keymap.first_label(a);
        let footer = format!(
            " {} {} scroll · Esc close ",
            k(KeyAction::Up),
            k(KeyAction::Down)
        );
        let block = Block::bordered()
            .border_style(theme.border_selected)
            .title(Line::from(vec![
                styled(format!(" Process {} ", detail.pid), theme.title),
                styled(position, theme.dim),
            ]))
            .title_bottom(Line::from(styled(footer, theme.key)));
        Clear.render(rect, buf);
        Paragraph::new(shown).block(block).render(rect, buf);
    }
}
