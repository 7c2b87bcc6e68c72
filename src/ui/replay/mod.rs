//! The dashboard's replay player: a recording played into the session at 1× or faster
//! ([`SPEEDS`]), paused, stepped one reading at a time, and sought (±1 min, the start, the end,
//! `--start 90s|HH:MM`). Playing runs on the recorded clock: reading *n* is due when
//! `(its time − the anchor's) ÷ speed` has passed on the wall clock since the anchor.
//!
//! Seeking re-derives everything from the readings: forward feeds the readings in between to
//! the session as playing would; backward starts a fresh session and feeds it from the first
//! reading. Verdicts (windows, hysteresis), the alert history and the spend all depend on the
//! whole path, so a session fed from the start to T is the only one that equals "played up to
//! T"; the file's index lines say where a reading is, not what the session looked like there.
//! The replayed session is quiet: no ledger (it is not this machine's spend, and a re-feed
//! would count it twice), no bell, webhooks, hooks or autostop.
//!
//! May touch: the recording reader (through the replay source), the session. No terminal code.

use std::path::PathBuf;

use gpumeter_model::Snapshot;
use tokio::time::{Duration, Instant};

use gpumeter_core::recording::StartAt;
use gpumeter_core::session::{AutostopSetupError, Session, SessionConfig, Step};
use gpumeter_core::source::replay::ReplaySource;
use gpumeter_core::source::{Source, SourceError};

use super::keys::KeyAction;

/// The speeds `>` and `<` step through.
pub const SPEEDS: [u32; 7] = [1, 2, 4, 8, 15, 30, 60];
/// How far `[` and `]` seek.
pub const SEEK_MS: i64 = 60_000;
/// Most readings fed in one go while playing, so a burst (60×, a slow frame) never starves the
/// keys; the rest follow on the next turn of the loop.
const MAX_PER_PUMP: usize = 600;

/// What the dashboard replays, and from where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplaySetup {
    pub path: PathBuf,
    pub start: Option<StartAt>,
}

/// What the header and the footer show of the player.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayStatus {
    pub speed: u32,
    pub paused: bool,
    /// The last reading has been played.
    pub at_end: bool,
    /// The shown reading's recorded time, and the first reading's.
    pub at_ms: i64,
    pub first_ms: i64,
}

/// The session a replay runs: the front-end's, made quiet (see the module docs).
pub fn quiet(mut cfg: SessionConfig) -> SessionConfig {
    cfg.ledger_path = None;
    cfg.terminal_channels = false;
    cfg.alerts.notify.webhook = None;
    cfg.alerts.notify.hooks.clear();
    cfg.alerts.autostop.enabled = false;
    cfg
}

/// See the module docs.
#[derive(Debug)]
pub struct Player {
    setup: ReplaySetup,
    cfg: SessionConfig,
    source: ReplaySource,
    /// The next reading, read ahead so its time is known.
    next: Option<Snapshot>,
    /// How the recording ended (its last reading, or where a damaged tail stopped it).
    end_note: Option<String>,
    /// The recorded times of the readings fed so far, in order.
    times: Vec<i64>,
    speed: usize,
    paused: bool,
    /// The wall instant and recorded time the playing clock counts from.
    anchor: (Instant, i64),
    /// A seek that could not reopen the file (said once on the status line).
    problem: Option<String>,
}

/// Why a replay cannot start.
pub type OpenError = gpumeter_core::recording::ReadError;

impl Player {
    /// Opens the recording; nothing is fed until [`Player::start`].
    pub fn open(setup: ReplaySetup, cfg: SessionConfig) -> Result<Player, OpenError> {
        let source = ReplaySource::open(&setup.path)?;
        let mut p = Player {
            setup,
            cfg: quiet(cfg),
            source,
            next: None,
            end_note: None,
            times: Vec::new(),
            speed: 0,
            paused: false,
            anchor: (Instant::now(), 0),
            problem: None,
        };
        p.read_ahead();
        Ok(p)
    }

    /// A fresh session for this replay (autostop is off in it, so the guard has nothing to
    /// refuse).
    pub fn session(&self) -> Result<Session, AutostopSetupError> {
        Session::new(self.cfg.clone())
    }

    /// Feeds the first reading (or up to `--start`) and starts playing at 1×; returns what to
    /// tell the user.
    pub fn start(&mut self, session: &mut Session, now: Instant) -> Vec<Step> {
        let mut steps = self.feed_one(session).into_iter().collect::<Vec<_>>();
        if let (Some(start), Some(first)) = (self.setup.start, self.times.first().copied()) {
            let target = start.resolve(first);
            steps.extend(self.feed_until(session, target, usize::MAX));
        }
        self.anchor = (now, self.at_ms());
        steps
    }

    /// What the header shows.
    pub fn status(&self) -> ReplayStatus {
        ReplayStatus {
            speed: SPEEDS[self.speed.min(SPEEDS.len() - 1)],
            paused: self.paused,
            at_end: self.next.is_none(),
            at_ms: self.at_ms(),
            first_ms: self.times.first().copied().unwrap_or(0),
        }
    }

    /// The recorded time now shown: the last reading fed.
    pub fn at_ms(&self) -> i64 {
        self.times.last().copied().unwrap_or(0)
    }

    /// How the recording ended, once its last reading is shown.
    pub fn end_reached(&self) -> Option<String> {
        (self.next.is_none() && !self.times.is_empty())
            .then(|| self.end_note.clone())
            .flatten()
    }

    /// When the next reading is due on the wall clock (None: paused or at the end).
    pub fn due(&self) -> Option<Instant> {
        if self.paused {
            return None;
        }
        let next = self.next.as_ref()?.taken_at_unix_ms;
        let speed = i64::from(SPEEDS[self.speed.min(SPEEDS.len() - 1)]);
        let wait_ms = (next - self.anchor.1).max(0) / speed.max(1);
        Some(self.anchor.0 + Duration::from_millis(u64::try_from(wait_ms).unwrap_or(0)))
    }

    /// Feeds every reading due by `now` (at most [`MAX_PER_PUMP`]).
    pub fn pump(&mut self, session: &mut Session, now: Instant) -> Vec<Step> {
        if self.paused {
            return Vec::new();
        }
        let speed = i64::from(SPEEDS[self.speed.min(SPEEDS.len() - 1)]);
        let elapsed = i64::try_from(now.saturating_duration_since(self.anchor.0).as_millis())
            .unwrap_or(i64::MAX);
        let target = self.anchor.1.saturating_add(elapsed.saturating_mul(speed));
        self.feed_until(session, target, MAX_PER_PUMP)
    }

    /// One replay key; the steps to show and a line for the status bar.
    pub fn command(
        &mut self,
        act: KeyAction,
        session: &mut Session,
        now: Instant,
    ) -> (Vec<Step>, Option<String>) {
        // The playing clock continues from what is shown now.
        let _ = self.pump(session, now);
        let steps = match act {
            KeyAction::Pause => {
                self.paused = !self.paused;
                Vec::new()
            }
            KeyAction::Faster => {
                self.speed = (self.speed + 1).min(SPEEDS.len() - 1);
                Vec::new()
            }
            KeyAction::Slower => {
                self.speed = self.speed.saturating_sub(1);
                Vec::new()
            }
            KeyAction::StepForward => {
                self.paused = true;
                self.feed_one(session).into_iter().collect()
            }
            KeyAction::StepBack => {
                self.paused = true;
                match self.times.len().checked_sub(2).map(|i| self.times[i]) {
                    Some(t) => self.seek(session, t),
                    None => Vec::new(),
                }
            }
            KeyAction::SeekBack => {
                let t = self.at_ms().saturating_sub(SEEK_MS);
                self.seek(session, t)
            }
            KeyAction::SeekForward => {
                let t = self.at_ms().saturating_add(SEEK_MS);
                self.seek(session, t)
            }
            KeyAction::ReplayStart => self.seek(session, i64::MIN),
            KeyAction::ReplayEnd => self.seek(session, i64::MAX),
            _ => Vec::new(),
        };
        self.anchor = (now, self.at_ms());
        let note = self.problem.take().or_else(|| self.end_reached());
        (steps, note)
    }

    /// Shows the reading at recorded time `target` (the last one at or before it; the first
    /// one when `target` is before it): forward by feeding on, backward by feeding a fresh
    /// session from the start.
    fn seek(&mut self, session: &mut Session, target: i64) -> Vec<Step> {
        if target < self.at_ms() {
            let fresh = ReplaySource::open(&self.setup.path)
                .map_err(|e| e.to_string())
                .and_then(|src| Ok((src, self.session().map_err(|e| e.to_string())?)));
            match fresh {
                Ok((src, s)) => {
                    self.source = src;
                    *session = s;
                }
                // The file went away under us: stay where we are, and say so.
                Err(e) => {
                    self.problem = Some(e);
                    return Vec::new();
                }
            }
            self.times.clear();
            self.next = None;
            self.end_note = None;
            self.read_ahead();
            // Only the last step's notes matter to the user; the rest replay history.
            let mut steps: Vec<Step> = self.feed_one(session).into_iter().collect();
            steps.extend(self.feed_until(session, target, usize::MAX));
            return steps.pop().into_iter().collect();
        }
        let mut steps = self.feed_until(session, target, usize::MAX);
        steps.pop().into_iter().collect()
    }

    /// Feeds readings up to `target` (inclusive), at most `cap`.
    fn feed_until(&mut self, session: &mut Session, target: i64, cap: usize) -> Vec<Step> {
        let mut steps = Vec::new();
        while steps.len() < cap
            && self
                .next
                .as_ref()
                .is_some_and(|n| n.taken_at_unix_ms <= target)
        {
            steps.extend(self.feed_one(session));
        }
        steps
    }

    fn feed_one(&mut self, session: &mut Session) -> Option<Step> {
        let snap = self.next.take()?;
        self.times.push(snap.taken_at_unix_ms);
        let step = session.ingest(snap);
        self.read_ahead();
        Some(step)
    }

    fn read_ahead(&mut self) {
        if self.next.is_some() || self.end_note.is_some() {
            return;
        }
        match self.source.sample() {
            Ok(s) => self.next = Some(s),
            Err(SourceError::Ended(note)) => self.end_note = Some(note),
            Err(e) => self.end_note = Some(e.to_string()),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
