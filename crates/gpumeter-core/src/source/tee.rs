//! `--record FILE`: any source, its readings also appended to a recording as they are taken.
//! A reading that cannot be recorded (disk full, a line over the cap) is still returned, with
//! a warning in the snapshot the first time; what was recorded before stays on disk.

use gpumeter_model::Snapshot;

use super::{Source, SourceError};
use crate::recording::Writer;

/// A source whose readings are recorded.
pub struct Tee {
    inner: Box<dyn Source>,
    writer: Writer,
    failing: bool,
}

impl std::fmt::Debug for Tee {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tee({:?})", self.writer)
    }
}

impl Tee {
    /// `inner`'s readings, each also appended to `writer`'s recording.
    pub fn new(inner: Box<dyn Source>, writer: Writer) -> Tee {
        Tee {
            inner,
            writer,
            failing: false,
        }
    }

    /// Readings recorded so far.
    pub fn recorded(&self) -> u64 {
        self.writer.written
    }

    /// Closes the recording cleanly (a zstd frame is ended).
    pub fn finish(self) -> Result<(), crate::recording::RecordError> {
        self.writer.finish()
    }
}

impl Source for Tee {
    fn sample(&mut self) -> Result<Snapshot, SourceError> {
        let mut snap = self.inner.sample()?;
        match self.writer.write(&snap) {
            Ok(()) => self.failing = false,
            Err(e) => {
                // Said once per failing stretch, in the reading itself.
                if !std::mem::replace(&mut self.failing, true) {
                    snap.warnings.push(format!("recording: {e}"));
                }
            }
        }
        Ok(snap)
    }

    fn label(&self) -> String {
        self.inner.label()
    }

    fn set_focus(&mut self, focus: super::focus::ProcessFocus) {
        self.inner.set_focus(focus);
    }
}
