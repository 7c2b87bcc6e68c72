//! Recordings: a run's readings in a file, to replay later (`gpumeter record`, `--record FILE`,
//! `--replay FILE`). The format is versioned NDJSON: one header line ([`Header`]), then one
//! [`Snapshot`](gpumeter_model::Snapshot) per line, with an index line every
//! [`INDEX_EVERY`] readings for seeking; zstd-compressed when the name ends in `.zst`. This
//! room holds the format ([`format`](mod@format)), the append-only writer ([`writer`]) and the
//! robust reader ([`reader`]); it touches the model and the file system only.

pub mod format;
pub mod reader;
pub mod start;
pub mod writer;

#[cfg(test)]
mod tests;

pub use format::{FORMAT_VERSION, Header, INDEX_EVERY, IndexEntry, MAX_LINE_BYTES};
pub use reader::{ReadError, Reader, Tail};
pub use start::{StartAt, parse_start};
pub use writer::{RecordError, RecordOptions, Writer};
