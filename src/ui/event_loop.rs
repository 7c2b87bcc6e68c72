//! The dashboard's event loop: one task owns the [`Engine`] and the [`App`], and waits on the
//! terminal's events, the collector channel, a clock tick (the sample age moves) and
//! SIGTERM/SIGHUP/SIGINT. It drains everything pending, then draws at most once per frame
//! interval, and only when something changed. Every way out restores the terminal.

use std::future::Future;
use std::io::{self, IsTerminal};
use std::time::Duration;

use crossterm::event::{Event, EventStream};
use futures_util::{FutureExt, Stream, StreamExt};
use ratatui::Terminal;
use ratatui::backend::{Backend, CrosstermBackend};
use ratatui::layout::Rect;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc::Receiver;
use tokio::sync::mpsc::error::TryRecvError;
use tokio::time::{Instant, MissedTickBehavior};

use crate::clock::{Clock, SharedClock};
use crate::engine::Engine;
use crate::sanitize::sanitize;
use crate::source::collector::CollectorEvent;

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
}

/// Runs the dashboard until the user quits or a signal arrives, applying the collector's events
/// to an engine this loop owns. The terminal is restored on every exit path (a panic included,
/// through the guard's hook).
pub async fn run(
    rx: Receiver<CollectorEvent>,
    clock: SharedClock,
    options: UiOptions,
) -> Result<(), UiError> {
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
        drive(
            &mut terminal,
            EventStream::new(),
            rx,
            clock.as_ref(),
            &options,
            shutdown,
        )
        .await
    }
    .await;
    let restored = guard.restore();
    result?;
    restored?;
    Ok(())
}

/// The loop itself, over any backend and event stream (tests drive it with a `TestBackend`).
pub(crate) async fn drive<B, S, F>(
    terminal: &mut Terminal<B>,
    mut events: S,
    mut rx: Receiver<CollectorEvent>,
    clock: &dyn Clock,
    options: &UiOptions,
    shutdown: F,
) -> Result<EndReason, UiError>
where
    B: Backend,
    S: Stream<Item = io::Result<Event>> + Unpin,
    F: Future<Output = ()>,
{
    tokio::pin!(shutdown);
    let mut app = App::new(options);
    let mut engine = Engine::new();
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut collector_open = true;
    let mut dirty = true;
    let mut last_draw: Option<Instant> = None;

    loop {
        if dirty && last_draw.is_none_or(|t| t.elapsed() >= FRAME) {
            let area = area_of(terminal)?;
            let now = clock.now_unix_ms();
            super::sync(&mut app, &engine, area, now);
            terminal
                .draw(|f| super::draw(f, &app, &engine, now))
                .map_err(backend_error)?;
            dirty = false;
            last_draw = Some(Instant::now());
        }
        let next_frame = last_draw.map_or_else(Instant::now, |t| t + FRAME);

        tokio::select! {
            () = &mut shutdown => return Ok(EndReason::Signal),
            ev = events.next() => match ev {
                Some(Ok(ev)) => match on_input(ev, &mut app, &engine, terminal, clock)? {
                    Action::Quit => return Ok(EndReason::Quit),
                    Action::Redraw => dirty = true,
                    Action::None => {}
                },
                Some(Err(e)) => return Err(e.into()),
                None => return Ok(EndReason::InputClosed),
            },
            msg = rx.recv(), if collector_open => {
                match msg {
                    Some(ev) => apply(ev, &mut engine, &mut app, clock.now_unix_ms()),
                    None => {
                        collector_open = false;
                        app.set_status("the collector stopped: readings are frozen");
                    }
                }
                dirty = true;
            },
            _ = tick.tick() => dirty = true,
            () = tokio::time::sleep_until(next_frame), if dirty => {},
        }

        // Drain what else is pending, so a burst costs one frame.
        while collector_open {
            match rx.try_recv() {
                Ok(ev) => {
                    apply(ev, &mut engine, &mut app, clock.now_unix_ms());
                    dirty = true;
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    collector_open = false;
                    app.set_status("the collector stopped: readings are frozen");
                    dirty = true;
                }
            }
        }
        while let Some(next) = events.next().now_or_never() {
            match next {
                Some(Ok(ev)) => match on_input(ev, &mut app, &engine, terminal, clock)? {
                    Action::Quit => return Ok(EndReason::Quit),
                    Action::Redraw => dirty = true,
                    Action::None => {}
                },
                Some(Err(e)) => return Err(e.into()),
                None => return Ok(EndReason::InputClosed),
            }
        }
    }
}

/// Folds one collector event into the engine.
fn apply(ev: CollectorEvent, engine: &mut Engine, app: &mut App, now_ms: i64) {
    match ev {
        CollectorEvent::Snapshot(s) => engine.ingest(*s),
        CollectorEvent::SourceFailed {
            message,
            retry_in_ms,
        } => {
            engine.source_failed(sanitize(&message, MAX_MESSAGE_CHARS), now_ms, retry_in_ms);
            app.note_source_failure(now_ms);
        }
    }
}

/// One key, mouse or resize event, acted on against what is on screen now.
fn on_input<B: Backend>(
    ev: Event,
    app: &mut App,
    engine: &Engine,
    terminal: &Terminal<B>,
    clock: &dyn Clock,
) -> Result<Action, UiError> {
    let area = area_of(terminal)?;
    // Keys act on the rows as they would be drawn now (a filter edit changes them).
    super::sync(app, engine, area, clock.now_unix_ms());
    Ok(match ev {
        Event::Key(key) => app.handle_key(key),
        Event::Mouse(m) => app.handle_mouse(m, &super::screen_for(area, engine)),
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
