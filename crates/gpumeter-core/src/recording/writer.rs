//! Writing a recording: append-only, one line per reading, flushed after each so that a crash
//! or kill -9 loses at most the reading being written (with zstd, each reading ends a flushed
//! block). Files are created with mode 0600 and never opened through a symlink or over an
//! existing file. With a size cap the file rotates (`FILE` → `FILE.1` → … up to `max_files`,
//! the oldest dropped), each file starting with its own header; a line over the cap is
//! refused, not written.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use gpumeter_model::{SCHEMA_VERSION, Snapshot};

use super::format::{FORMAT_VERSION, Header, INDEX_EVERY, IndexEntry, MAX_LINE_BYTES};

/// Why a reading could not be recorded.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The target file exists already; it is never overwritten.
    #[error("{path} already exists: gpumeter never writes over a file (pick another name)")]
    Exists {
        /// The file that exists.
        path: PathBuf,
    },
    /// Creating, writing or rotating the file failed.
    #[error("cannot write the recording {path}: {source}")]
    Io {
        /// The recording file (the current one, with rotation).
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// One reading encodes to more than [`MAX_LINE_BYTES`]; it is skipped.
    #[error("a reading of {bytes} bytes is over the {cap}-byte line cap: not recorded")]
    LineTooLong {
        /// The encoded reading's size, bytes.
        bytes: usize,
        /// The cap, bytes.
        cap: usize,
    },
    /// A reading could not be encoded as JSON.
    #[error("encoding a reading: {0}")]
    Encode(#[from] serde_json::Error),
}

/// Size caps and the interval the header records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordOptions {
    /// Rotate before a file grows past this many bytes (on disk); `None`: one file.
    pub max_size: Option<u64>,
    /// Files kept with rotation, the current one included.
    pub max_files: u32,
    /// The sampling interval written to the header, ms.
    pub interval_ms: i64,
}

impl Default for RecordOptions {
    fn default() -> Self {
        RecordOptions {
            max_size: None,
            max_files: 5,
            interval_ms: 1000,
        }
    }
}

/// Counts what reaches the file.
struct Counted {
    file: File,
    bytes: u64,
}

impl Write for Counted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.file.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

enum Sink {
    Plain(BufWriter<Counted>),
    Zstd(zstd::stream::write::Encoder<'static, Counted>),
}

impl Sink {
    fn open(path: &Path) -> Result<Sink, RecordError> {
        let file = OpenOptions::new()
            .write(true)
            // create_new: O_CREAT|O_EXCL, which neither follows a symlink nor reuses a file.
            .create_new(true)
            .mode(0o600)
            .open(path)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => RecordError::Exists {
                    path: path.to_path_buf(),
                },
                _ => RecordError::Io {
                    path: path.to_path_buf(),
                    source: e,
                },
            })?;
        let counted = Counted { file, bytes: 0 };
        if path.extension().is_some_and(|e| e == "zst") {
            let enc =
                zstd::stream::write::Encoder::new(counted, 3).map_err(|e| RecordError::Io {
                    path: path.to_path_buf(),
                    source: e,
                })?;
            Ok(Sink::Zstd(enc))
        } else {
            Ok(Sink::Plain(BufWriter::new(counted)))
        }
    }

    fn write_line(&mut self, line: &[u8]) -> std::io::Result<()> {
        match self {
            Sink::Plain(w) => {
                w.write_all(line)?;
                w.flush()
            }
            Sink::Zstd(w) => {
                w.write_all(line)?;
                w.flush()
            }
        }
    }

    fn on_disk(&self) -> u64 {
        match self {
            Sink::Plain(w) => w.get_ref().bytes,
            Sink::Zstd(w) => w.get_ref().bytes,
        }
    }

    fn finish(self) -> std::io::Result<()> {
        match self {
            Sink::Plain(mut w) => w.flush(),
            Sink::Zstd(w) => w.finish().and_then(|mut c| c.flush()),
        }
    }
}

/// The current file of a recording.
struct Current {
    sink: Sink,
    /// Uncompressed bytes written (for index offsets).
    stream: u64,
    readings: u64,
}

/// An open recording. See the module docs.
pub struct Writer {
    path: PathBuf,
    opts: RecordOptions,
    current: Option<Current>,
    /// Readings written over all files.
    pub written: u64,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Writer({}, {} readings)",
            self.path.display(),
            self.written
        )
    }
}

impl Writer {
    /// Creates the file now (so a bad path fails before anything runs); the header is written
    /// with the first reading, which names the host and the start.
    pub fn create(path: &Path, opts: RecordOptions) -> Result<Writer, RecordError> {
        let sink = Sink::open(path)?;
        Ok(Writer {
            path: path.to_path_buf(),
            opts,
            current: Some(Current {
                sink,
                stream: 0,
                readings: 0,
            }),
            written: 0,
        })
    }

    /// The file the writer was created for (the newest file, with rotation).
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn io(&self, e: std::io::Error) -> RecordError {
        RecordError::Io {
            path: self.path.clone(),
            source: e,
        }
    }

    /// Appends one reading (and the header first, and an index line when due).
    pub fn write(&mut self, snap: &Snapshot) -> Result<(), RecordError> {
        let mut line = serde_json::to_vec(snap)?;
        line.push(b'\n');
        let cap = self.opts.max_size.map_or(MAX_LINE_BYTES, |m| {
            MAX_LINE_BYTES.min(usize::try_from(m).unwrap_or(usize::MAX))
        });
        if line.len() > cap {
            return Err(RecordError::LineTooLong {
                bytes: line.len(),
                cap,
            });
        }
        let full = self.current.as_ref().is_some_and(|c| {
            c.readings > 0
                && self
                    .opts
                    .max_size
                    .is_some_and(|m| c.sink.on_disk() + line.len() as u64 > m)
        });
        if full || self.current.is_none() {
            self.rotate()?;
        }
        let Some(cur) = self.current.as_mut() else {
            return Err(self.io(std::io::Error::other("no open file")));
        };
        let mut out = Vec::new();
        if cur.readings == 0 {
            let header = Header {
                gpumeter_recording: FORMAT_VERSION,
                schema: SCHEMA_VERSION,
                version: env!("CARGO_PKG_VERSION").to_string(),
                host: snap.system.hostname.clone(),
                source: snap.source.clone(),
                interval_ms: self.opts.interval_ms,
                start_unix_ms: snap.taken_at_unix_ms,
            };
            out.extend(serde_json::to_vec(&header)?);
            out.push(b'\n');
        } else if cur.readings % INDEX_EVERY == 0 {
            let entry = IndexEntry {
                reading: cur.readings,
                offset: cur.stream,
                taken_at_unix_ms: snap.taken_at_unix_ms,
            };
            let mut index = serde_json::to_vec(&serde_json::json!({ "index": entry }))?;
            index.push(b'\n');
            out.extend(index);
        }
        out.extend(line);
        let written = cur.sink.write_line(&out);
        if let Err(e) = written {
            return Err(self.io(e));
        }
        cur.stream += out.len() as u64;
        cur.readings += 1;
        self.written += 1;
        Ok(())
    }

    /// Closes the current file, shifts the older ones, and opens a fresh `FILE`.
    fn rotate(&mut self) -> Result<(), RecordError> {
        if let Some(cur) = self.current.take() {
            cur.sink.finish().map_err(|e| self.io(e))?;
        }
        let keep = self.opts.max_files.max(1);
        let numbered = |k: u32| PathBuf::from(format!("{}.{k}", self.path.display()));
        if keep == 1 {
            std::fs::remove_file(&self.path).map_err(|e| self.io(e))?;
        } else {
            let _ = std::fs::remove_file(numbered(keep - 1));
            for k in (1..keep - 1).rev() {
                let from = numbered(k);
                if from.exists() {
                    std::fs::rename(&from, numbered(k + 1)).map_err(|e| self.io(e))?;
                }
            }
            std::fs::rename(&self.path, numbered(1)).map_err(|e| self.io(e))?;
        }
        self.current = Some(Current {
            sink: Sink::open(&self.path)?,
            stream: 0,
            readings: 0,
        });
        Ok(())
    }

    /// Ends the recording cleanly (a zstd frame is closed).
    pub fn finish(mut self) -> Result<(), RecordError> {
        match self.current.take() {
            Some(cur) => cur.sink.finish().map_err(|e| self.io(e)),
            None => Ok(()),
        }
    }
}

impl Drop for Writer {
    /// A writer dropped without [`Writer::finish`] still closes its zstd frame; what it cannot
    /// write now was flushed with each reading anyway.
    fn drop(&mut self) {
        if let Some(cur) = self.current.take() {
            let _ = cur.sink.finish();
        }
    }
}
