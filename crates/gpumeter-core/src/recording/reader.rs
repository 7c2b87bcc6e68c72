//! Reading a recording robustly: the header is checked (a file that is not a recording, or one
//! from a newer gpumeter, is an error naming the file); readings are read one line at a time,
//! each line capped at [`MAX_LINE_BYTES`] (a hostile file cannot make us allocate without
//! bound, and the zstd window is capped too); a truncated or corrupt tail ends the readable
//! part, and [`Reader::tail`] says how many readings were read and where it stopped.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use gpumeter_model::{SCHEMA_VERSION, Snapshot};

use super::format::{FORMAT_VERSION, Header, Line, MAX_LINE_BYTES};

/// zstd's frame magic, little-endian on disk.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
/// Largest zstd window accepted (2^27 = 128 MiB, zstd's own default limit).
const ZSTD_WINDOW_LOG_MAX: u32 = 27;

/// Why a recording cannot be read at all.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file could not be opened or read.
    #[error("cannot read the recording {path}: {source}")]
    Io {
        /// The recording file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The file does not start with a recording header.
    #[error("{path} is not a gpumeter recording ({why})")]
    NotARecording {
        /// The file.
        path: PathBuf,
        /// Why its first line is not a recording header.
        why: String,
    },
    /// A header and nothing readable after it: nothing to play.
    #[error("{path} holds no reading to play ({why})")]
    Empty {
        /// The recording file.
        path: PathBuf,
        /// Why the first reading could not be read.
        why: String,
    },
    /// The header names a format or schema newer than this build reads.
    #[error(
        "{path} was written by a newer gpumeter (recording format {format}, snapshot schema \
         {schema}); this one reads format {FORMAT_VERSION}, schema {SCHEMA_VERSION}"
    )]
    TooNew {
        /// The recording file.
        path: PathBuf,
        /// The header's recording format version.
        format: u32,
        /// The header's snapshot schema version.
        schema: u32,
    },
}

/// Where reading stopped before the end of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tail {
    /// Readings read before the damage.
    pub readings: u64,
    /// The 1-based line that could not be read.
    pub line: u64,
    /// What was wrong with that line.
    pub why: String,
}

impl std::fmt::Display for Tail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "read {} readings; stopped at line {}: {}",
            self.readings, self.line, self.why
        )
    }
}

/// An open recording. See the module docs.
pub struct Reader {
    path: PathBuf,
    header: Header,
    lines: Box<dyn BufRead + Send>,
    line_no: u64,
    readings: u64,
    tail: Option<Tail>,
    done: bool,
}

impl std::fmt::Debug for Reader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Reader({}, line {})", self.path.display(), self.line_no)
    }
}

/// One line, at most `MAX_LINE_BYTES`: `Ok(None)` at a clean end of file.
fn read_line(r: &mut dyn BufRead, buf: &mut Vec<u8>) -> Result<Option<()>, String> {
    buf.clear();
    let cap = MAX_LINE_BYTES as u64 + 1;
    let n = r
        .take(cap)
        .read_until(b'\n', buf)
        .map_err(|e| format!("the file is damaged ({e})"))?;
    if n == 0 {
        return Ok(None);
    }
    if buf.len() > MAX_LINE_BYTES {
        return Err(format!("a line is longer than {MAX_LINE_BYTES} bytes"));
    }
    if buf.last() != Some(&b'\n') {
        return Err("the last line is cut off (the writer was stopped mid-line)".into());
    }
    Ok(Some(()))
}

impl Reader {
    /// Opens `path` (plain or zstd, told by its first bytes) and checks its header.
    pub fn open(path: &Path) -> Result<Reader, ReadError> {
        let io = |e: std::io::Error| ReadError::Io {
            path: path.to_path_buf(),
            source: e,
        };
        let not = |why: &str| ReadError::NotARecording {
            path: path.to_path_buf(),
            why: why.to_string(),
        };
        let mut file = BufReader::new(
            crate::textfile::open_regular(path)
                .map_err(|e| io(e.into()))?
                .0,
        );
        let zstd = file.fill_buf().map_err(io)?.starts_with(&ZSTD_MAGIC);
        let mut lines: Box<dyn BufRead + Send> = if zstd {
            let mut dec = zstd::stream::read::Decoder::with_buffer(file).map_err(io)?;
            dec.window_log_max(ZSTD_WINDOW_LOG_MAX).map_err(io)?;
            Box::new(BufReader::new(dec))
        } else {
            Box::new(file)
        };
        let mut buf = Vec::new();
        match read_line(lines.as_mut(), &mut buf) {
            Ok(Some(())) => {}
            Ok(None) => return Err(not("it is empty")),
            Err(why) => return Err(not(&why)),
        }
        let value: serde_json::Value =
            serde_json::from_slice(&buf).map_err(|_| not("its first line is not JSON"))?;
        let format = value
            .get("gpumeter_recording")
            .and_then(serde_json::Value::as_u64)
            .ok_or_else(|| not("its first line is not a recording header"))?;
        let schema = value
            .get("schema")
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0);
        let (format, schema) = (
            u32::try_from(format).unwrap_or(u32::MAX),
            u32::try_from(schema).unwrap_or(u32::MAX),
        );
        if format > FORMAT_VERSION || schema > SCHEMA_VERSION {
            return Err(ReadError::TooNew {
                path: path.to_path_buf(),
                format,
                schema,
            });
        }
        let header: Header =
            serde_json::from_value(value).map_err(|e| not(&format!("its header is bad: {e}")))?;
        Ok(Reader {
            path: path.to_path_buf(),
            header,
            lines,
            line_no: 1,
            readings: 0,
            tail: None,
            done: false,
        })
    }

    /// The file's header line.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The recording file being read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Readings returned so far.
    pub fn readings(&self) -> u64 {
        self.readings
    }

    /// Where a damaged file stopped being readable (None: read to its end, or not yet there).
    pub fn tail(&self) -> Option<&Tail> {
        self.tail.as_ref()
    }

    /// Whether the end (or a damaged tail) was reached.
    pub fn done(&self) -> bool {
        self.done
    }

    /// The next reading; `None` at the end or at a damaged tail (see [`Reader::tail`]).
    pub fn next_reading(&mut self) -> Option<Snapshot> {
        let mut buf = Vec::new();
        while !self.done {
            self.line_no += 1;
            let stop = |r: &mut Reader, why: String| {
                r.done = true;
                r.tail = Some(Tail {
                    readings: r.readings,
                    line: r.line_no,
                    why,
                });
            };
            match read_line(self.lines.as_mut(), &mut buf) {
                Ok(None) => self.done = true,
                Err(why) => stop(self, why),
                Ok(Some(())) => match serde_json::from_slice::<Line>(&buf) {
                    Ok(Line::Index { .. }) => {}
                    Ok(Line::Reading(snap)) if snap.schema > SCHEMA_VERSION => stop(
                        self,
                        format!("a reading of snapshot schema {} (newer)", snap.schema),
                    ),
                    Ok(Line::Reading(snap)) => {
                        self.readings += 1;
                        return Some(*snap);
                    }
                    Err(_) => stop(self, "a line is not a reading (corrupt)".into()),
                },
            }
        }
        None
    }
}
