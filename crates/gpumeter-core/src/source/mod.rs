//! Where snapshots come from. Each source produces immutable [`Snapshot`]s and knows nothing of
//! the engine or the terminal:
//! - [`local`]: this machine, NVML for the GPUs ([`nvml`]) plus /proc for the host ([`host`]);
//! - [`sim`]: the built-in demo scenarios (the `gpumeter-sim` crate);
//! - [`inspect`]: a one-time look at the GPUs' health and wiring for `gpumeter check`;
//! - [`replay`]: a recording played back (`--replay FILE`), and [`tee`]: any source whose
//!   readings are also recorded (`--record FILE`); [`notice`]: any source whose readings carry
//!   the spot interruption notice;
//! - [`collector`]: runs any source on its own thread and sends snapshots over a channel, so a
//!   slow or hung driver call never blocks the dashboard;
//! - [`fast_forward`]: a demo started later in its scenario (`--start`), the moments before
//!   played without waiting;
//! - [`focus`]: which GPU processes the front-end shows every reading (the host sampler reads
//!   the others less often).

pub mod collector;
pub mod fast_forward;
pub mod focus;
pub mod host;
pub mod inspect;
pub mod local;
pub mod notice;
pub mod nvml;
pub mod replay;
pub mod sim;
pub mod tee;

use gpumeter_model::Snapshot;

/// A producer of snapshots.
pub trait Source: Send {
    /// Takes one reading. Problems with one device or one reading go into the snapshot
    /// (`None`, a lost marker, a warning); an `Err` means the whole source failed this time
    /// (the collector retries with backoff).
    fn sample(&mut self) -> Result<Snapshot, SourceError>;

    /// A short label for the header: `nvml`, `demo:training`.
    fn label(&self) -> String;

    /// Which processes the front-end shows every reading (see [`focus`]); sources that read
    /// no processes ignore it.
    fn set_focus(&mut self, _focus: focus::ProcessFocus) {}

    /// Whether the source is behind the wall clock and wants its next reading at once
    /// ([`fast_forward`]); the collector then does not wait the interval.
    fn catching_up(&self) -> bool {
        false
    }
}

/// A whole-source failure.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The NVML library could not be loaded or initialised.
    #[error("{0}")]
    NvmlUnavailable(String),
    /// NVML was loaded but a whole-library call failed.
    #[error("NVML: {0}")]
    Nvml(String),
    /// A demo scenario could not be loaded.
    #[error("scenario: {0}")]
    Scenario(String),
    /// The source has nothing more to give (a replay reached its end): final, no retry helps.
    #[error("{0}")]
    Ended(String),
}

impl SourceError {
    /// Whether retrying is pointless (the readings are over).
    pub fn is_final(&self) -> bool {
        matches!(self, SourceError::Ended(_))
    }
}
