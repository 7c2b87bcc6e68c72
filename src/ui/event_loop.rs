//! The dashboard's event loop: one task owns the [`App`] and the [`Session`] (the session core:
//! engine, billing, ledger, alert fan-out, autostop), and waits on the terminal's events, the
//! collector channel, a clock tick (the sample age moves) and SIGTERM/SIGHUP/SIGINT. It drains
//! everything pending, then draws at most once per frame interval, and only when something
//! changed. A thin front-end: each reading goes to [`Session::ingest`], and the [`Step`] it
//! returns is shown (notes on the status line, terminal channels' bytes to the terminal, the
//! stop command run once the terminal is back). Every way out restores the terminal and writes
//! the ledger's open minute (a panic loses at most that minute, like a kill -9).

use std::future::Future;
use std::io::{self, IsTerminal, Write};
use std::time::Duration;

use crossterm::event::{Event, EventStream, KeyEventKind};
use futures_util::{FutureExt, Stream, StreamExt};
use ratatui::Terminal;
use ratatui::backend::{Backend, CrosstermBackend};
use ratatui::layout::Rect;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc::Receiver;
use tokio::sync::mpsc::error::TryRecvError;
use tokio::time::{Instant, MissedTickBehavior};

use crate::clock::{Clock, SharedClock};
use crate::sanitize::sanitize;
use crate::session::{Refusal, Session, SessionConfig, Step};
use crate::source::collector::CollectorEvent;

use super::loop_alerts;
use super::process_action::{self, Acting};
use super::terminal::TerminalGuard;
use super::{Action, App, UiError, UiOptions};

/// At most 20 frames a second, however fast events come.
const FRAME: Duration = Duration::from_millis(50);
/// Redraw at least this often so the sample age and retry countdown move.
const TICK: Duration = Duration::from_secs(1);
/// Longest source-failure message kept.
const MAX_MESSAGE_CHARS: usize = 200;

/// Why the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    /// The user quit (q, Ctrl-C).
    Quit,
    /// SIGTERM, SIGHUP or SIGINT.
    Signal,
    /// The terminal's input closed.
    InputClosed,
    /// Autostop fired: the stop command in [`Ended::stop`] runs once the terminal is back.
    Autostop,
}

/// How the loop ended, and what to tell the user once the terminal is back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    pub reason: EndReason,
    /// Lines for stderr (a failed last ledger write).
    pub notes: Vec<String>,
    /// The autostop command to run (argv, no shell), when autostop fired.
    pub stop: Option<Vec<String>>,
}

/// Runs the dashboard until the user quits or a signal arrives, applying the collector's events
/// to an engine this loop owns (metered when `options.billing` is set). The terminal is
/// restored on every exit path (a panic included, through the guard's hook). Returns the lines
/// worth printing after the terminal is restored.
pub async fn run(
    rx: Receiver<CollectorEvent>,
    clock: SharedClock,
    options: UiOptions,
) -> Result<Vec<String>, UiError> {
    let mut term = signal(SignalKind::terminate()).map_err(|source| UiError::Signal {
        signal: "SIGTERM",
        source,
    })?;
    let mut hup = signal(SignalKind::hangup()).map_err(|source| UiError::Signal {
        signal: "SIGHUP",
        source,
    })?;
    let mut int = signal(SignalKind::interrupt()).map_err(|source| UiError::Signal {
        signal: "SIGINT",
        source,
    })?;
    let shutdown = async move {
        tokio::select! {
            _ = term.recv() => {},
            _ = hup.recv() => {},
            _ = int.recv() => {},
        }
    };

    // Without a terminal there is nothing to draw on (and cursor queries would time out).
    if !io::stdout().is_terminal() {
        return Err(UiError::NotATerminal);
    }
    // NO_COLOR (no-color.org) applies whoever builds the options.
    let options = UiOptions {
        no_color: options.no_color || super::theme::no_color_env(),
        ..options
    };
    let mut guard = TerminalGuard::enter()?;
    let result = async {
        let mut terminal = Terminal::new(CrosstermBackend::new(io::stdout()))?;
        terminal.clear()?;
        // Bell and OSC notifications go to the real terminal, between frames.
        drive_with(
            &mut terminal,
            EventStream::new(),
            rx,
            clock.as_ref(),
            &options,
            shutdown,
            Box::new(io::stdout()),
        )
        .await
    }
    .await;
    let restored = guard.restore();
    let ended = result?;
    restored?;
    let mut notes = ended.notes;
    if let Some(argv) = &ended.stop {
        notes.extend(loop_alerts::run_stop(argv));
    }
    Ok(notes)
}

/// What the loop owns.
struct State {
    app: App,
    session: Session,
    /// Where bell and OSC sequences go (the terminal; a sink in tests).
    term_out: Box<dyn Write>,
    /// Set when autostop fired.
    stop: Option<Vec<String>>,
}

/// The loop itself, over any backend and event stream (tests drive it with a `TestBackend`).
/// The ledger's open minute is written however the loop ends. Terminal notifications are
/// dropped.
#[cfg(test)]
pub(crate) async fn drive<B, S, F>(
    terminal: &mut Terminal<B>,
    events: S,
    rx: Receiver<CollectorEvent>,
    clock: &dyn Clock,
    options: &UiOptions,
    shutdown: F,
) -> Result<Ended, UiError>
where
    B: Backend,
    S: Stream<Item = io::Result<Event>> + Unpin,
    F: Future<Output = ()>,
{
    drive_with(
        terminal,
        events,
        rx,
        clock,
        options,
        shutdown,
        Box::new(io::sink()),
    )
    .await
}

/// [`drive`], with bell and OSC sequences written to `term_out`.
async fn drive_with<B, S, F>(
    terminal: &mut Terminal<B>,
    events: S,
    rx: Receiver<CollectorEvent>,
    clock: &dyn Clock,
    options: &UiOptions,
    shutdown: F,
    term_out: Box<dyn Write>,
) -> Result<Ended, UiError>
where
    B: Backend,
    S: Stream<Item = io::Result<Event>> + Unpin,
    F: Future<Output = ()>,
{
    let billing = options.billing.as_ref();
    let cfg = SessionConfig {
        pricing: billing.map(|b| b.pricing.clone()),
        ledger_path: billing.and_then(|b| b.ledger_path.clone()),
        interval_ms: billing.map_or(1_000, |b| b.interval_ms),
        // Read-only (shared boxes, demos): nothing is stopped and no command runs.
        alerts: if options.acting == Acting::ReadOnly {
            options.alerts.clone().without_actions()
        } else {
            options.alerts.clone()
        },
        // Someone is at the keyboard: a refused autostop is a note, not a failure.
        autostop_refusal: Refusal::TurnOff,
        terminal_channels: true,
        in_tmux: std::env::var_os("TMUX").is_some_and(|v| !v.is_empty()),
        ..SessionConfig::default()
    };
    let session = match Session::new(cfg) {
        Ok(s) => s,
        // Not reached under `Refusal::TurnOff`; said plainly should that change.
        Err(e) => return Err(UiError::Terminal(io::Error::other(e.to_string()))),
    };
    let mut state = State {
        app: App::new(options),
        session,
        term_out,
        stop: None,
    };
    let result = run_loop(terminal, events, rx, clock, shutdown, &mut state).await;
    let last = state.session.finish();
    Ok(Ended {
        reason: result?,
        notes: last.notes,
        stop: state.stop.take(),
    })
}

async fn run_loop<B, S, F>(
    terminal: &mut Terminal<B>,
    mut events: S,
    mut rx: Receiver<CollectorEvent>,
    clock: &dyn Clock,
    shutdown: F,
    state: &mut State,
) -> Result<EndReason, UiError>
where
    B: Backend,
    S: Stream<Item = io::Result<Event>> + Unpin,
    F: Future<Output = ()>,
{
    tokio::pin!(shutdown);
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut collector_open = true;
    let mut dirty = true;
    let mut last_draw: Option<Instant> = None;

    loop {
        if dirty && last_draw.is_none_or(|t| t.elapsed() >= FRAME) {
            let area = area_of(terminal)?;
            let now = clock.now_unix_ms();
            let State { app, session, .. } = state;
            let engine = session.engine();
            super::sync(app, engine, area, now);
            terminal
                .draw(|f| super::draw(f, app, engine, now))
                .map_err(backend_error)?;
            dirty = false;
            last_draw = Some(Instant::now());
        }
        let next_frame = last_draw.map_or_else(Instant::now, |t| t + FRAME);

        tokio::select! {
            () = &mut shutdown => return Ok(EndReason::Signal),
            ev = events.next() => match ev {
                Some(Ok(ev)) => match on_input(ev, state, terminal, clock)? {
                    Action::Quit => return Ok(EndReason::Quit),
                    Action::None => {}
                    _ => dirty = true,
                },
                Some(Err(e)) => return Err(e.into()),
                None => return Ok(EndReason::InputClosed),
            },
            msg = rx.recv(), if collector_open => {
                match msg {
                    Some(ev) => apply(ev, state, clock.now_unix_ms()),
                    None => {
                        collector_open = false;
                        state.app.set_status("the collector stopped: readings are frozen");
                    }
                }
                dirty = true;
            },
            // Only when nothing else drew for a whole tick: readings arriving each second
            // already move the age, and a second frame a second would double the cost.
            _ = tick.tick() => dirty |= last_draw.is_none_or(|t| t.elapsed() >= TICK),
            () = tokio::time::sleep_until(next_frame), if dirty => {},
        }

        // Drain what else is pending, so a burst costs one frame.
        while collector_open {
            match rx.try_recv() {
                Ok(ev) => {
                    apply(ev, state, clock.now_unix_ms());
                    dirty = true;
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    collector_open = false;
                    state
                        .app
                        .set_status("the collector stopped: readings are frozen");
                    dirty = true;
                }
            }
        }
        while let Some(next) = events.next().now_or_never() {
            match next {
                Some(Ok(ev)) => match on_input(ev, state, terminal, clock)? {
                    Action::Quit => return Ok(EndReason::Quit),
                    Action::None => {}
                    _ => dirty = true,
                },
                Some(Err(e)) => return Err(e.into()),
                None => return Ok(EndReason::InputClosed),
            }
        }

        if state.stop.is_some() {
            return Ok(EndReason::Autostop);
        }
    }
}

/// Folds one collector event into the engine (and the billing session).
fn apply(ev: CollectorEvent, state: &mut State, now_ms: i64) {
    match ev {
        CollectorEvent::Snapshot(s) => {
            let step = state.session.ingest(*s);
            show_step(state, step);
        }
        CollectorEvent::SourceFailed {
            message,
            retry_in_ms,
        } => {
            state
                .session
                .source_failed(sanitize(&message, MAX_MESSAGE_CHARS), now_ms, retry_in_ms);
            state.app.note_source_failure(now_ms);
        }
    }
}

/// Shows one step: its notes on the status line (budget crossings are the alert panel's, drawn
/// from the engine), the terminal channels' bytes to the terminal, and a stop to run.
fn show_step(state: &mut State, step: Step) {
    if !step.terminal.is_empty() {
        // A terminal that cannot take a bell is no reason to stop metering.
        let _ = state.term_out.write_all(&step.terminal);
        let _ = state.term_out.flush();
    }
    if !step.notes.is_empty() {
        state.app.set_status(step.notes.join(" · "));
    }
    if step.stop.is_some() {
        state.stop = step.stop;
    }
}

/// One key, mouse or resize event, acted on against what is on screen now.
fn on_input<B: Backend>(
    ev: Event,
    state: &mut State,
    terminal: &Terminal<B>,
    clock: &dyn Clock,
) -> Result<Action, UiError> {
    let area = area_of(terminal)?;
    let now = clock.now_unix_ms();
    // Keys act on the rows as they would be drawn now (a filter edit changes them).
    super::sync(&mut state.app, state.session.engine(), area, now);
    Ok(match ev {
        Event::Key(key) if key.kind != KeyEventKind::Release => {
            // Someone is here: any key cancels the autostop countdown, and still does its job.
            let step = state.session.cancel_autostop(now);
            show_step(state, step);
            let action = state.app.handle_key(key);
            if loop_alerts::apply_action(action, &mut state.app, &mut state.session, now)
                || process_action::apply(action, &mut state.app, state.session.engine().latest())
            {
                Action::Redraw
            } else {
                action
            }
        }
        Event::Key(key) => state.app.handle_key(key),
        Event::Mouse(m) => {
            let screen = super::screen_for(area, state.session.engine(), now);
            state.app.handle_mouse(m, &screen)
        }
        Event::Resize(..) => Action::Redraw,
        _ => Action::None,
    })
}

fn area_of<B: Backend>(terminal: &Terminal<B>) -> Result<Rect, UiError> {
    let size = terminal.size().map_err(backend_error)?;
    Ok(Rect::new(0, 0, size.width, size.height))
}

fn backend_error<E: std::error::Error>(e: E) -> UiError {
    UiError::Terminal(io::Error::other(e.to_string()))
}

#[cfg(test)]
#[path = "event_loop_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "event_loop_alert_tests.rs"]
mod alert_tests;
