//! The dashboard's event loop: one task owns the [`App`] and the [`Session`] (the session core:
//! engine, billing, ledger, alert fan-out, autostop), and waits on the terminal's events, the
//! collector channel, a clock tick (the sample age moves) and SIGTERM/SIGHUP/SIGINT. It drains
//! everything pending, then draws at most once per frame interval, and only when something
//! changed. A thin front-end: each reading goes to [`Session::ingest`], and the [`Step`] it
//! returns is shown (notes on the status line, terminal channels' bytes to the terminal, the
//! stop command run once the terminal is back). Every way out restores the terminal and writes
//! the ledger's open minute (a panic loses at most that minute, like a kill -9).

use std::future::Future;
use std::io::{self, Write};
use std::time::Duration;

use crossterm::event::{Event, KeyEventKind};
use futures_util::{FutureExt, Stream, StreamExt};
use ratatui::layout::Rect;
use ratatui::widgets::Widget;
use tokio::sync::mpsc::Receiver;
use tokio::sync::mpsc::error::TryRecvError;
use tokio::time::Instant;

use gpumeter_core::clock::{Clock, SharedClock};
use gpumeter_core::sanitize::sanitize;
use gpumeter_core::session::{Refusal, Session, SessionConfig, Step};
use gpumeter_core::source::collector::CollectorEvent;

use super::loop_alerts;
use super::process_action::{self, Acting};
use super::replay::Player;
use super::screen_writer::{ScreenWriter, Surface};
use super::terminal;
use super::{Action, App, UiError, UiOptions};

/// At most 20 frames a second, however fast events come.
const FRAME: Duration = Duration::from_millis(50);
/// Redraw at least this often so the sample age and retry countdown move.
const TICK: Duration = Duration::from_secs(1);
/// How late a reading may come after a tick's worth of time and still be the frame that moves
/// the age: a collector a few milliseconds late each second otherwise lost the race to the
/// tick, and that second drew twice (a quarter of all frames, measured at 1 s readings).
const READING_GRACE: Duration = Duration::from_millis(250);
/// Longest source-failure message kept.
const MAX_MESSAGE_CHARS: usize = 200;

/// Where the readings come from: the collector thread, or a recording the loop plays itself
/// (paused, sped up, stepped and sought by keys).
#[derive(Debug)]
pub enum Feed {
    Live(Receiver<CollectorEvent>),
    Replay(Box<Player>),
}

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
    feed: Feed,
    clock: SharedClock,
    options: UiOptions,
) -> Result<Vec<String>, UiError> {
    let shutdown = terminal::shutdown_signals()?;
    // NO_COLOR (no-color.org) applies whoever builds the options.
    let options = UiOptions {
        no_color: options.no_color || super::theme::no_color_env(),
        ..options
    };
    let ended = terminal::on_terminal(|| async {
        // One cell buffer and a record of the screen; each frame's changes go out in one
        // write. Its first frame clears the screen (without asking the terminal anything: no
        // round trip before the first paint).
        let mut terminal = ScreenWriter::new(io::stdout());
        // Bell and OSC notifications go to the real terminal, between frames.
        drive_with(
            &mut terminal,
            super::input::spawn()?,
            feed,
            clock.as_ref(),
            &options,
            shutdown,
            Box::new(io::stdout()),
        )
        .await
    })
    .await?;
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
    /// The recording being played, when the feed is a replay.
    player: Option<Box<Player>>,
    /// The end of the replay has been said on the status line.
    end_said: bool,
}

impl State {
    /// The time the view is drawn at: the replay's recorded time, else the clock's.
    fn now(&self, clock: &dyn Clock) -> i64 {
        self.player
            .as_ref()
            .map_or_else(|| clock.now_unix_ms(), |p| p.at_ms())
    }
}

/// The loop itself, over any backend and event stream (tests drive it with a `TestBackend`).
/// The ledger's open minute is written however the loop ends. Terminal notifications are
/// dropped.
#[cfg(test)]
pub(crate) async fn drive<T, S, F>(
    terminal: &mut T,
    events: S,
    rx: Receiver<CollectorEvent>,
    clock: &dyn Clock,
    options: &UiOptions,
    shutdown: F,
) -> Result<Ended, UiError>
where
    T: Surface,
    S: Stream<Item = io::Result<Event>> + Unpin,
    F: Future<Output = ()>,
{
    drive_with(
        terminal,
        events,
        Feed::Live(rx),
        clock,
        options,
        shutdown,
        Box::new(io::sink()),
    )
    .await
}

/// [`drive`] on any feed (a replay).
#[cfg(test)]
pub(crate) async fn drive_feed<T, S, F>(
    terminal: &mut T,
    events: S,
    feed: Feed,
    clock: &dyn Clock,
    options: &UiOptions,
    shutdown: F,
) -> Result<Ended, UiError>
where
    T: Surface,
    S: Stream<Item = io::Result<Event>> + Unpin,
    F: Future<Output = ()>,
{
    drive_with(
        terminal,
        events,
        feed,
        clock,
        options,
        shutdown,
        Box::new(io::sink()),
    )
    .await
}

/// The session the dashboard runs for `options` (a replay makes it quiet: see
/// [`super::replay`]).
pub fn session_config(options: &UiOptions) -> SessionConfig {
    let billing = options.billing.as_ref();
    SessionConfig {
        pricing: billing.map(|b| b.pricing.clone()),
        ledger_path: billing.and_then(|b| b.ledger_path.clone()),
        // A gap over ten intervals is not billed as observed time.
        interval_ms: options.interval_ms,
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
    }
}

/// [`drive`], with bell and OSC sequences written to `term_out`.
async fn drive_with<T, S, F>(
    terminal: &mut T,
    events: S,
    feed: Feed,
    clock: &dyn Clock,
    options: &UiOptions,
    shutdown: F,
    term_out: Box<dyn Write>,
) -> Result<Ended, UiError>
where
    T: Surface,
    S: Stream<Item = io::Result<Event>> + Unpin,
    F: Future<Output = ()>,
{
    let (rx, player) = match feed {
        Feed::Live(rx) => (Some(rx), None),
        Feed::Replay(p) => (None, Some(p)),
    };
    let made = match &player {
        Some(p) => p.session(),
        None => Session::new(session_config(options)),
    };
    let session = match made {
        Ok(s) => s,
        // Not reached under `Refusal::TurnOff`; said plainly should that change.
        Err(e) => return Err(UiError::Terminal(io::Error::other(e.to_string()))),
    };
    let mut state = State {
        app: App::new(options),
        session,
        term_out,
        stop: None,
        player,
        end_said: false,
    };
    if let Some(p) = state.player.as_mut() {
        let steps = p.start(&mut state.session, Instant::now());
        state.app.replay = Some(p.status());
        for step in steps {
            show_step(&mut state, step);
        }
    }
    let result = run_loop(terminal, events, rx, clock, shutdown, &mut state).await;
    let last = state.session.finish();
    Ok(Ended {
        reason: result?,
        notes: last.notes,
        stop: state.stop.take(),
    })
}

async fn run_loop<T, S, F>(
    terminal: &mut T,
    mut events: S,
    mut rx: Option<Receiver<CollectorEvent>>,
    clock: &dyn Clock,
    shutdown: F,
    state: &mut State,
) -> Result<EndReason, UiError>
where
    T: Surface,
    S: Stream<Item = io::Result<Event>> + Unpin,
    F: Future<Output = ()>,
{
    tokio::pin!(shutdown);
    let mut collector_open = rx.is_some();
    let mut dirty = true;
    let mut last_draw: Option<Instant> = None;
    let mut last_reading: Option<Instant> = None;
    // The first reading is drawn the moment it arrives, whatever the frame cap says: the
    // screen before it only says what it is waiting for.
    let mut reading_drawn = false;

    loop {
        let first_reading = !reading_drawn && state.session.engine().latest().is_some();
        if dirty && (first_reading || last_draw.is_none_or(|t| t.elapsed() >= FRAME)) {
            let area = area_of(terminal)?;
            let now = state.now(clock);
            let State {
                app,
                session,
                player,
                ..
            } = state;
            app.replay = player.as_ref().map(|p| p.status());
            let engine = session.engine();
            let rows = super::sync_rows(app, engine, area, now);
            terminal.show(&mut |buf| {
                let area = buf.area;
                super::Dashboard::new(app, engine, now)
                    .with_rows(&rows)
                    .render(area, buf);
            })?;
            dirty = false;
            last_draw = Some(Instant::now());
            reading_drawn |= first_reading;
        }
        let next_frame = last_draw.map_or_else(Instant::now, |t| t + FRAME);
        // The age tick: a second after the last frame, and a second and a grace after the last
        // reading, so readings each second (which draw) leave it nothing to do even when they
        // come a little late; it ticks each second only once they stop.
        let next_tick = match (last_draw, last_reading) {
            (None, _) => Instant::now(),
            (Some(d), None) => d + TICK,
            (Some(d), Some(r)) => (d + TICK).max(r + TICK + READING_GRACE),
        };
        let due = state.player.as_ref().and_then(|p| p.due());

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
            msg = recv(&mut rx), if collector_open => {
                match msg {
                    Some(ev) => {
                        if is_reading(&ev) {
                            last_reading = Some(Instant::now());
                        }
                        apply(ev, state, clock.now_unix_ms())?;
                    }
                    None => {
                        collector_open = false;
                        state.app.set_status("the collector stopped: readings are frozen");
                    }
                }
                dirty = true;
            },
            // Only when nothing else drew for a whole tick: readings arriving each second
            // already move the age, and a second frame a second would double the cost.
            () = tokio::time::sleep_until(next_tick), if !dirty => dirty = true,
            () = tokio::time::sleep_until(next_frame), if dirty => {},
            () = sleep_until_some(due), if due.is_some() => {
                if let Some(p) = state.player.as_mut() {
                    let steps = p.pump(&mut state.session, Instant::now());
                    for step in steps {
                        show_step(state, step);
                    }
                    say_end(state);
                }
                dirty = true;
            },
        }

        // Drain what else is pending, so a burst costs one frame.
        while collector_open && let Some(rx) = rx.as_mut() {
            match rx.try_recv() {
                Ok(ev) => {
                    if is_reading(&ev) {
                        last_reading = Some(Instant::now());
                    }
                    apply(ev, state, clock.now_unix_ms())?;
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

/// A reading, or a failed one: what comes each interval while the collector runs.
fn is_reading(ev: &CollectorEvent) -> bool {
    matches!(
        ev,
        CollectorEvent::Snapshot(_) | CollectorEvent::SourceFailed { .. }
    )
}

/// The next collector event; never, without a collector.
async fn recv(rx: &mut Option<Receiver<CollectorEvent>>) -> Option<CollectorEvent> {
    match rx.as_mut() {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

/// Sleeps until `at`; never, without one.
async fn sleep_until_some(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Says once on the status line that the replay reached its end (and how it ended).
fn say_end(state: &mut State) {
    let end = state.player.as_ref().and_then(|p| p.end_reached());
    match end {
        Some(note) if !state.end_said => {
            state.app.set_status(format!("replay: {note}"));
            state.end_said = true;
        }
        Some(_) => {}
        None => state.end_said = false,
    }
}

/// Folds one collector event into the engine (and the billing session); a source that could
/// not be opened ends the loop.
fn apply(ev: CollectorEvent, state: &mut State, now_ms: i64) -> Result<(), UiError> {
    match ev {
        CollectorEvent::Waiting(what) => state.app.waiting = Some(what),
        CollectorEvent::OpenFailed(message) => return Err(UiError::SourceUnavailable(message)),
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
    Ok(())
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
fn on_input<T: Surface>(
    ev: Event,
    state: &mut State,
    terminal: &T,
    clock: &dyn Clock,
) -> Result<Action, UiError> {
    let area = area_of(terminal)?;
    let now = state.now(clock);
    // Keys act on the rows as they would be drawn now (a filter edit changes them).
    super::sync(&mut state.app, state.session.engine(), area, now);
    Ok(match ev {
        Event::Key(key) if key.kind != KeyEventKind::Release => {
            // Someone is here: any key cancels the autostop countdown, and still does its job.
            let step = state.session.cancel_autostop(now);
            show_step(state, step);
            let action = state.app.handle_key(key);
            // Enter on a process: its directory and environment are read now, once.
            super::process_view::inspect_opened(&mut state.app, state.session.engine().latest());
            if let Action::Replay(act) = action {
                replay_key(act, state);
                Action::Redraw
            } else if loop_alerts::apply_action(action, &mut state.app, &mut state.session, now)
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

/// A replay key, applied to the player and the session it feeds.
fn replay_key(act: crate::ui::keys::KeyAction, state: &mut State) {
    let Some(p) = state.player.as_mut() else {
        return;
    };
    let (steps, note) = p.command(act, &mut state.session, Instant::now());
    state.app.replay = Some(p.status());
    for step in steps {
        show_step(state, step);
    }
    if let Some(n) = note {
        state.app.set_status(format!("replay: {n}"));
    }
    say_end(state);
}

fn area_of<T: Surface>(terminal: &T) -> Result<Rect, UiError> {
    Ok(terminal.area()?)
}

#[cfg(test)]
mod tests;
