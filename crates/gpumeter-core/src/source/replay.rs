//! `--replay FILE`: a recording as a source. Each `sample` is the next recorded reading, with
//! its recorded time (so the meter and the rules run on the recorded clock) and `source` set to
//! `replay:<file name>`. The end of the recording, or a damaged tail, is a final
//! [`SourceError::Ended`] that says how many readings were read and where it stopped. A
//! recording with no readable reading is refused when opened ([`ReadError::Empty`]): a replay
//! of nothing is an error, not a quiet success.

use std::path::Path;

use gpumeter_model::Snapshot;

use super::{Source, SourceError};
use crate::recording::{ReadError, Reader};

/// A recording played back.
#[derive(Debug)]
pub struct ReplaySource {
    reader: Reader,
    label: String,
    /// The first reading, read when opened to know there is one.
    first: Option<Snapshot>,
}

impl ReplaySource {
    /// Opens a recording and reads its first reading; [`ReadError::Empty`] when it has none.
    pub fn open(path: &Path) -> Result<ReplaySource, ReadError> {
        let mut reader = Reader::open(path)?;
        let Some(first) = reader.next_reading() else {
            return Err(ReadError::Empty {
                path: path.to_path_buf(),
                why: reader
                    .tail()
                    .map_or_else(|| "only its header".to_string(), ToString::to_string),
            });
        };
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        Ok(ReplaySource {
            reader,
            label: format!("replay:{}", crate::sanitize::sanitize(&name, 64)),
            first: Some(first),
        })
    }

    /// The recording's header (host, interval, start).
    pub fn header(&self) -> &crate::recording::Header {
        self.reader.header()
    }
}

impl Source for ReplaySource {
    fn sample(&mut self) -> Result<Snapshot, SourceError> {
        if let Some(mut snap) = self.first.take().or_else(|| self.reader.next_reading()) {
            snap.source = self.label.clone();
            return Ok(snap);
        }
        let file = self.reader.path().display();
        Err(SourceError::Ended(match self.reader.tail() {
            Some(t) => format!("{file}: {t}"),
            None => format!(
                "{file}: end of the recording ({} readings)",
                self.reader.readings()
            ),
        }))
    }

    fn label(&self) -> String {
        self.label.clone()
    }
}
