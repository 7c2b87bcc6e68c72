//! The lines of a recording. The header comes first and says what follows; readings are the
//! snapshot schema as is; an index line (`{"index": {…}}`) holds its own byte offset in the
//! uncompressed stream of this file, and the reading it names comes right after it.

use gpumeter_model::Snapshot;
use serde::{Deserialize, Serialize};

/// Version of the recording format (the header and the line kinds). Readings carry their own
/// snapshot schema.
pub const FORMAT_VERSION: u32 = 1;
/// An index line after every this many readings.
pub const INDEX_EVERY: u64 = 600;
/// Longest line written or read (a reading of ~5 000 processes is ~2.5 MB).
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// The first line of every recording file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// The format version ([`FORMAT_VERSION`]); its key marks the file as a recording.
    pub gpumeter_recording: u32,
    /// The snapshot schema of the readings.
    pub schema: u32,
    /// The gpumeter that wrote it.
    pub version: String,
    /// The host name the readings came from; `None` when it was unknown.
    pub host: Option<String>,
    /// The source recorded (`nvml`, `demo:cpu-starved`).
    pub source: String,
    /// The sampling interval.
    pub interval_ms: i64,
    /// When the first reading of this file was taken.
    pub start_unix_ms: i64,
}

/// Where a reading can be found: seek to `offset` (this index line), the reading follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexEntry {
    /// Readings before it in this file.
    pub reading: u64,
    /// The index line's byte offset in the uncompressed stream.
    pub offset: u64,
    /// When the reading after it was taken, ms since the Unix epoch.
    pub taken_at_unix_ms: i64,
}

/// One line after the header.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Line {
    /// An index line, written every so many readings for seeking.
    Index {
        /// Where the next reading is.
        index: IndexEntry,
    },
    /// One snapshot.
    Reading(Box<Snapshot>),
}
