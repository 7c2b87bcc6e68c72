//! Taking over the terminal and giving it back: raw mode, the alternate screen and mouse capture
//! on entry; everything undone by [`TerminalGuard`]'s `Drop` (never unwrapping) and by a panic
//! hook that restores first and then runs the previous hook, so a panic message lands on a sane
//! screen. Restoring twice is harmless. [`on_terminal`] and [`shutdown_signals`] are the set-up
//! every screen (the dashboard, the fleet) runs its loop in.

use std::io;
use std::sync::Once;

use crossterm::cursor::{Hide, Show};
use crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};

/// The terminal changes a guard makes and undoes (a seam so tests need no real terminal).
pub trait TerminalControl {
    fn enter(&mut self) -> io::Result<()>;
    fn leave(&mut self) -> io::Result<()>;
}

/// The real terminal on stdout, through crossterm.
#[derive(Debug, Default, Clone, Copy)]
pub struct Crossterm;

impl TerminalControl for Crossterm {
    fn enter(&mut self) -> io::Result<()> {
        enable_raw_mode()?;
        execute!(io::stdout(), EnterAlternateScreen, EnableMouseCapture, Hide)
    }

    fn leave(&mut self) -> io::Result<()> {
        restore()
    }
}

/// Undoes [`Crossterm::enter`], trying every step even when one fails; safe to call again.
pub fn restore() -> io::Result<()> {
    let raw = disable_raw_mode();
    let screen = execute!(
        io::stdout(),
        DisableMouseCapture,
        LeaveAlternateScreen,
        Show
    );
    raw.and(screen)
}

/// Holds the terminal in dashboard mode; dropping it (or [`TerminalGuard::restore`]) gives it
/// back.
#[derive(Debug)]
pub struct TerminalGuard<C: TerminalControl = Crossterm> {
    control: C,
    active: bool,
}

impl TerminalGuard<Crossterm> {
    /// Installs the restoring panic hook, then takes over the real terminal.
    pub fn enter() -> io::Result<Self> {
        install_panic_hook();
        Self::enter_with(Crossterm)
    }
}

impl<C: TerminalControl> TerminalGuard<C> {
    /// Takes over through `control`; a half-done entry is undone before the error returns.
    pub fn enter_with(mut control: C) -> io::Result<Self> {
        if let Err(e) = control.enter() {
            let _ = control.leave();
            return Err(e);
        }
        Ok(Self {
            control,
            active: true,
        })
    }

    /// Gives the terminal back now. Later calls (and the drop) do nothing.
    pub fn restore(&mut self) -> io::Result<()> {
        if !self.active {
            return Ok(());
        }
        self.active = false;
        self.control.leave()
    }

    /// Whether the terminal is still held.
    pub fn is_active(&self) -> bool {
        self.active
    }
}

impl<C: TerminalControl> Drop for TerminalGuard<C> {
    fn drop(&mut self) {
        // Nothing sensible to do with an error while dropping; never panic here.
        let _ = self.restore();
    }
}

/// SIGTERM, SIGHUP or SIGINT, whichever comes first: every screen's way to end cleanly.
/// Installed now (so a signal from here on is caught), awaited by the loop.
pub fn shutdown_signals() -> Result<impl std::future::Future<Output = ()>, super::UiError> {
    use tokio::signal::unix::{SignalKind, signal};
    let on = |kind: SignalKind, name: &'static str| {
        signal(kind).map_err(|source| super::UiError::Signal {
            signal: name,
            source,
        })
    };
    let mut term = on(SignalKind::terminate(), "SIGTERM")?;
    let mut hup = on(SignalKind::hangup(), "SIGHUP")?;
    let mut int = on(SignalKind::interrupt(), "SIGINT")?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => {},
            _ = hup.recv() => {},
            _ = int.recv() => {},
        }
    })
}

/// Runs a screen's loop on the real terminal: refuses when stdout is none (nothing to draw on,
/// and cursor queries would time out), takes the terminal over, and gives it back on every
/// exit, the loop's error first, then the restore's.
pub async fn on_terminal<T, F>(body: impl FnOnce() -> F) -> Result<T, super::UiError>
where
    F: std::future::Future<Output = Result<T, super::UiError>>,
{
    use std::io::IsTerminal;
    if !io::stdout().is_terminal() {
        return Err(super::UiError::NotATerminal);
    }
    let mut guard = TerminalGuard::enter()?;
    let result = body().await;
    let restored = guard.restore();
    let value = result?;
    restored?;
    Ok(value)
}

/// Chains a hook that restores the terminal before the previous hook prints the panic.
/// Installed once however often it is called.
pub fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let _ = restore();
            previous(info);
        }));
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    #[derive(Default)]
    struct Log {
        calls: Vec<&'static str>,
        fail_enter: bool,
        fail_leave: bool,
    }

    #[derive(Clone, Default)]
    struct Fake(Rc<RefCell<Log>>);

    impl TerminalControl for Fake {
        fn enter(&mut self) -> io::Result<()> {
            let mut log = self.0.borrow_mut();
            log.calls.push("enter");
            if log.fail_enter {
                return Err(io::Error::other("no tty"));
            }
            Ok(())
        }
        fn leave(&mut self) -> io::Result<()> {
            let mut log = self.0.borrow_mut();
            log.calls.push("leave");
            if log.fail_leave {
                return Err(io::Error::other("gone"));
            }
            Ok(())
        }
    }

    #[test]
    fn drop_restores_once() {
        let fake = Fake::default();
        {
            let _g = TerminalGuard::enter_with(fake.clone()).unwrap();
        }
        assert_eq!(fake.0.borrow().calls, ["enter", "leave"]);
    }

    #[test]
    fn restoring_twice_then_dropping_is_harmless() {
        let fake = Fake::default();
        let mut g = TerminalGuard::enter_with(fake.clone()).unwrap();
        g.restore().unwrap();
        g.restore().unwrap();
        assert!(!g.is_active());
        drop(g);
        assert_eq!(fake.0.borrow().calls, ["enter", "leave"]);
    }

    #[test]
    fn failed_entry_undoes_itself() {
        let fake = Fake::default();
        fake.0.borrow_mut().fail_enter = true;
        assert!(TerminalGuard::enter_with(fake.clone()).is_err());
        assert_eq!(fake.0.borrow().calls, ["enter", "leave"]);
    }

    #[test]
    fn a_failing_restore_in_drop_does_not_panic() {
        let fake = Fake::default();
        fake.0.borrow_mut().fail_leave = true;
        let g = TerminalGuard::enter_with(fake.clone()).unwrap();
        drop(g);
        assert_eq!(fake.0.borrow().calls, ["enter", "leave"]);
    }

    #[test]
    fn guard_restores_while_unwinding_from_a_panic() {
        let fake = Fake::default();
        let inner = fake.clone();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            let _g = TerminalGuard::enter_with(inner).unwrap();
            panic!("boom");
        }));
        assert!(result.is_err());
        assert_eq!(fake.0.borrow().calls, ["enter", "leave"]);
    }
}
