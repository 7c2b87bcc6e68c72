//! The fleet screen's loop: one task owns the [`FleetUi`] and waits on the terminal's events,
//! the poller's answers, a one-second tick (ages move, stale hosts turn stale) and
//! SIGTERM/SIGHUP/SIGINT. It drains what is pending, then draws at most once per frame
//! interval, only when something changed. The network is the poller threads' business: a
//! host that never answers costs this loop nothing. The terminal is restored on every exit.

use std::future::Future;
use std::io;
use std::time::Duration;

use crossterm::event::Event;
use futures_util::{FutureExt, Stream, StreamExt};
use tokio::sync::mpsc::Receiver;
use tokio::time::{Instant, MissedTickBehavior};

use super::{FleetOptions, FleetUi};
use crate::ui::screen_writer::{ScreenWriter, Surface};
use crate::ui::terminal;
use crate::ui::{Action, UiError};
use gpumeter_core::clock::{Clock, SharedClock};
use gpumeter_core::fleet::poll::PollEvent;

const FRAME: Duration = Duration::from_millis(50);
const TICK: Duration = Duration::from_secs(1);

/// Runs the fleet screen until the user quits or a signal arrives.
pub async fn run(
    rx: Receiver<PollEvent>,
    clock: SharedClock,
    options: FleetOptions,
) -> Result<(), UiError> {
    let shutdown = terminal::shutdown_signals()?;
    let options = FleetOptions {
        no_color: options.no_color || crate::ui::theme::no_color_env(),
        ..options
    };
    terminal::on_terminal(|| async {
        // The dashboard's screen writer: each frame's changes in one write; its first frame
        // clears the screen.
        let mut terminal = ScreenWriter::new(io::stdout());
        let mut ui = FleetUi::new(&options);
        drive(
            &mut terminal,
            crate::ui::input::spawn()?,
            rx,
            clock.as_ref(),
            &mut ui,
            shutdown,
        )
        .await
    })
    .await
}

/// The loop over any backend and event stream (tests drive it with a `TestBackend`).
pub(crate) async fn drive<T, S, F>(
    terminal: &mut T,
    mut events: S,
    mut rx: Receiver<PollEvent>,
    clock: &dyn Clock,
    ui: &mut FleetUi,
    shutdown: F,
) -> Result<(), UiError>
where
    T: Surface,
    S: Stream<Item = io::Result<Event>> + Unpin,
    F: Future<Output = ()>,
{
    tokio::pin!(shutdown);
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut poller_open = true;
    let mut dirty = true;
    let mut last_draw: Option<Instant> = None;
    loop {
        if dirty && last_draw.is_none_or(|t| t.elapsed() >= FRAME) {
            let area = terminal.area()?;
            let now = clock.now_unix_ms();
            ui.sync(area, now);
            terminal.show(&mut |buf| ui.draw(buf, now))?;
            dirty = false;
            last_draw = Some(Instant::now());
        }
        let next_frame = last_draw.map_or_else(Instant::now, |t| t + FRAME);
        tokio::select! {
            () = &mut shutdown => return Ok(()),
            ev = events.next() => match ev {
                Some(Ok(ev)) => {
                    if on_input(ev, ui, terminal, clock)? == Action::Quit {
                        return Ok(());
                    }
                    dirty = true;
                }
                Some(Err(e)) => return Err(e.into()),
                None => return Ok(()),
            },
            msg = rx.recv(), if poller_open => {
                match msg {
                    Some(ev) => ui.apply(ev),
                    None => poller_open = false,
                }
                dirty = true;
            },
            _ = tick.tick() => dirty |= last_draw.is_none_or(|t| t.elapsed() >= TICK),
            () = tokio::time::sleep_until(next_frame), if dirty => {},
        }
        // A burst of answers costs one frame.
        while poller_open {
            match rx.try_recv() {
                Ok(ev) => {
                    ui.apply(ev);
                    dirty = true;
                }
                Err(tokio::sync::mpsc::error::TryRecvError::Empty) => break,
                Err(tokio::sync::mpsc::error::TryRecvError::Disconnected) => {
                    poller_open = false;
                }
            }
        }
        while let Some(next) = events.next().now_or_never() {
            match next {
                Some(Ok(ev)) => {
                    if on_input(ev, ui, terminal, clock)? == Action::Quit {
                        return Ok(());
                    }
                    dirty = true;
                }
                Some(Err(e)) => return Err(e.into()),
                None => return Ok(()),
            }
        }
    }
}

fn on_input(
    ev: Event,
    ui: &mut FleetUi,
    terminal: &impl Surface,
    clock: &dyn Clock,
) -> Result<Action, UiError> {
    let now = clock.now_unix_ms();
    ui.sync(terminal.area()?, now);
    Ok(match ev {
        Event::Key(key) => ui.handle_key(key, now),
        Event::Resize(..) => Action::Redraw,
        _ => Action::None,
    })
}
