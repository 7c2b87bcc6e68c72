//! Reading a small text file the user names (a config, a theme, a scenario, a hosts list):
//! only a regular file, opened without blocking (a FIFO with no writer, a device), read up to a
//! cap. Every error is one line that names the path's problem. May touch: the file system.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The largest text file read whole (config files are a few KB; a scenario at most a few
/// hundred).
pub const MAX_TEXT_FILE: u64 = 16 << 20;

/// Why a file could not be read, worded to follow "cannot read PATH: ".
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TextFileError {
    /// The file could not be opened or read (the reason, worded for the user).
    #[error("{0}")]
    Io(String),
    /// A directory, FIFO or device: refused without reading.
    #[error("not a regular file (a directory, FIFO or device)")]
    NotRegular,
    /// Over the `max` bytes the caller allows.
    #[error("larger than {} MiB", MAX_TEXT_FILE >> 20)]
    TooLarge,
    /// The bytes are not valid UTF-8.
    #[error("not UTF-8 text")]
    NotText,
}

const NOT_REGULAR: &str = "not a regular file (a directory, FIFO or device)";

/// Why [`open_regular`] refused a path.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// Opening or inspecting the file failed.
    #[error("{}", io_reason(.0))]
    Io(std::io::Error),
    /// The path is a directory, FIFO or device.
    #[error("{NOT_REGULAR}")]
    NotRegular,
}

impl From<OpenError> for std::io::Error {
    fn from(e: OpenError) -> Self {
        match e {
            OpenError::Io(e) => e,
            OpenError::NotRegular => {
                std::io::Error::new(std::io::ErrorKind::InvalidInput, NOT_REGULAR)
            }
        }
    }
}

/// Opens a regular file for reading, refusing anything else at once (for files read in
/// pieces, such as a recording or a token file).
pub fn open_regular(path: &Path) -> Result<(std::fs::File, std::fs::Metadata), OpenError> {
    // O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever (it changes
    // nothing for a regular file).
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
        .map_err(OpenError::Io)?;
    let meta = file.metadata().map_err(OpenError::Io)?;
    if !meta.file_type().is_file() {
        return Err(OpenError::NotRegular);
    }
    Ok((file, meta))
}

/// The file's text; `max` bytes at most.
pub fn read_text(path: &Path, max: u64) -> Result<String, TextFileError> {
    let io = |e: std::io::Error| TextFileError::Io(io_reason(&e));
    let (file, meta) = open_regular(path).map_err(|e| match e {
        OpenError::NotRegular => TextFileError::NotRegular,
        OpenError::Io(e) => io(e),
    })?;
    if meta.len() > max {
        return Err(TextFileError::TooLarge);
    }
    // One byte past the cap: the file can grow after the metadata call.
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > max {
        return Err(TextFileError::TooLarge);
    }
    String::from_utf8(bytes).map_err(|_| TextFileError::NotText)
}

/// An I/O error's reason without Rust's " (os error N)" suffix repeated by callers.
fn io_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_are_read_and_everything_else_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let ok = dir.path().join("a.toml");
        std::fs::write(&ok, "x = 1\n").unwrap();
        assert_eq!(read_text(&ok, MAX_TEXT_FILE).unwrap(), "x = 1\n");
        assert_eq!(
            read_text(dir.path(), MAX_TEXT_FILE),
            Err(TextFileError::NotRegular)
        );
        let fifo = dir.path().join("fifo");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
        )
        .unwrap();
        // Returns at once (no writer): refused, not waited on.
        assert_eq!(
            read_text(&fifo, MAX_TEXT_FILE),
            Err(TextFileError::NotRegular)
        );
        assert_eq!(
            read_text(Path::new("/dev/zero"), MAX_TEXT_FILE),
            Err(TextFileError::NotRegular)
        );
        assert_eq!(read_text(&ok, 3), Err(TextFileError::TooLarge));
        let missing = read_text(&dir.path().join("nope"), MAX_TEXT_FILE).unwrap_err();
        assert_eq!(missing.to_string(), "No such file or directory");
        let bin = dir.path().join("bin");
        std::fs::write(&bin, [0xff, 0xfe, 0x00]).unwrap();
        assert_eq!(read_text(&bin, MAX_TEXT_FILE), Err(TextFileError::NotText));
    }
}
