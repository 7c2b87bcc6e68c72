//! Files read again and again, kept open: reading one again is one `pread` from its start,
//! where reading by path is a path lookup, an open, a read (two, to see the end) and a close.
//! Holds the plain-read helpers every per-tick read of this room goes through.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use rustix::buffer::spare_capacity;

/// A file under /proc or /sys read every tick.
#[derive(Debug)]
pub(super) struct KeptFile {
    path: PathBuf,
    file: Option<File>,
    /// Many records (one per device): only a read of 0 ends it (see [`pread_records`]).
    records: bool,
}

impl KeptFile {
    /// A file of one record (`stat`, `meminfo`, `loadavg`, a cgroup counter file).
    pub(super) fn new(path: PathBuf) -> Self {
        Self {
            path,
            file: None,
            records: false,
        }
    }

    /// A file of many records (`diskstats`, `net/dev`).
    pub(super) fn records(path: PathBuf) -> Self {
        Self {
            records: true,
            ..Self::new(path)
        }
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// The whole file into `buf`. A kept file that fails to read is opened again once (it may
    /// have been replaced); one that cannot be opened is tried again next time.
    pub(super) fn read_into(&mut self, buf: &mut Vec<u8>) -> io::Result<()> {
        let read = if self.records {
            pread_records
        } else {
            pread_into
        };
        if let Some(file) = &self.file {
            if read(file, buf).is_ok() {
                return Ok(());
            }
            self.file = None;
        }
        let file = File::open(&self.path)?;
        read(&file, buf)?;
        self.file = Some(file);
        Ok(())
    }

    /// The file as text (`None`: unreadable or not UTF-8).
    pub(super) fn text<'b>(&mut self, buf: &'b mut Vec<u8>) -> Option<&'b str> {
        self.read_into(buf).ok()?;
        std::str::from_utf8(buf).ok()
    }
}

/// The whole file into `buf` (cleared first): one open, then as `pread_into`.
pub(super) fn read_into(path: &Path, buf: &mut Vec<u8>) -> io::Result<()> {
    pread_into(&File::open(path)?, buf)
}

/// The whole of an open file, from its start, into `buf` (cleared first). Plain reads, not
/// `read_to_end`, whose size hint costs a `statx` and an `lseek` each time; a read that does not
/// fill the buffer is the end (a /proc file of one record, such as `stat`, hands out all it has
/// in one read that fits, a regular file too), which spares the read that would return 0.
pub(super) fn pread_into(file: &File, buf: &mut Vec<u8>) -> io::Result<()> {
    pread_until(file, buf, true)
}

/// As [`pread_into`] for files of many records (`children`, one per pid; `diskstats`,
/// `net/dev`). The kernel's `seq_file` hands those out a page at most per read, and stops short
/// of the page only at the end or where the next record would not fit in it; so a read that
/// left room for the longest record was the last (the read that would return 0 is spared: at an
/// offset past the start it makes the kernel generate the whole file again). A longer file
/// takes one read per page, then the read of 0.
pub(super) fn pread_records(file: &File, buf: &mut Vec<u8>) -> io::Result<()> {
    pread_until(file, buf, false)
}

/// What a `seq_file` fills per read at the least when more follows: a page (4 KiB; more on
/// 64 KiB-page kernels), or what was asked if less.
const SEQ_PAGE: usize = 4096;
/// More than the longest record this room reads (a `diskstats` line is at most ~450 bytes, a
/// `net/dev` one ~350, a `children` entry 11).
const LONGEST_RECORD: usize = 1024;

fn pread_until(file: &File, buf: &mut Vec<u8>, short_is_end: bool) -> io::Result<()> {
    buf.clear();
    if !short_is_end && buf.capacity() < SEQ_PAGE {
        // Room for a page in the first read, so a file of less than a page ends there.
        buf.reserve(SEQ_PAGE);
    }
    loop {
        if buf.capacity() - buf.len() < 512 {
            buf.reserve(1024);
        }
        let len = buf.len();
        let want = buf.capacity() - len;
        // Into the spare capacity as it is: zeroing it first (a `&mut [u8]` to read into) cost
        // a page's worth of writes for every short read.
        match rustix::io::pread(file, spare_capacity(buf), len as u64) {
            Ok(n) => {
                // Room left for a whole record, in the page and in what was asked: the end.
                let records_end = !short_is_end && n + LONGEST_RECORD <= want.min(SEQ_PAGE);
                if n == 0 || (short_is_end && n < want) || records_end {
                    return Ok(());
                }
            }
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_longer_than_the_buffer_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let text: Vec<u8> = (0..5000u32).map(|i| b'a' + (i % 26) as u8).collect();
        std::fs::write(&path, &text).unwrap();
        let mut buf = Vec::with_capacity(16);
        read_into(&path, &mut buf).unwrap();
        assert_eq!(buf, text);
        std::fs::write(&path, b"short").unwrap();
        read_into(&path, &mut buf).unwrap();
        assert_eq!(buf, b"short");
        assert!(read_into(&dir.path().join("gone"), &mut buf).is_err());
    }

    #[test]
    fn a_kept_file_reads_its_new_content_and_is_reopened_when_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cpu.stat");
        std::fs::write(&path, "usage_usec 1\n").unwrap();
        let mut kept = KeptFile::new(path.clone());
        let mut buf = Vec::new();
        assert_eq!(kept.text(&mut buf), Some("usage_usec 1\n"));
        std::fs::write(&path, "usage_usec 22\n").unwrap();
        assert_eq!(kept.text(&mut buf), Some("usage_usec 22\n"));
        // Gone: unreadable (the kept one reads on, as a regular file does; /proc's errors).
        std::fs::remove_file(&path).unwrap();
        let mut fresh = KeptFile::records(path.clone());
        assert_eq!(fresh.text(&mut buf), None);
        std::fs::write(&path, "usage_usec 3\n").unwrap();
        assert_eq!(
            fresh.text(&mut buf),
            Some("usage_usec 3\n"),
            "opened when it is back"
        );
    }

    #[test]
    fn a_records_file_of_many_pages_is_read_whole_and_one_of_a_page_in_one_read() {
        // kallsyms: a seq_file of megabytes that does not change while read (no module loads).
        let path = Path::new("/proc/kallsyms");
        let whole = std::fs::read(path).unwrap();
        assert!(whole.len() > 64 * 1024, "{} bytes", whole.len());
        let file = File::open(path).unwrap();
        let mut buf = Vec::new();
        pread_records(&file, &mut buf).unwrap();
        assert_eq!(buf.len(), whole.len());
        assert!(buf == whole, "the same bytes as a plain read to the end");
        // A small one (this thread's children, three sleepers) ends at its first read; this
        // thread's own count of read calls says how many it made.
        let mut sleepers: Vec<_> = (0..3)
            .map(|_| {
                std::process::Command::new("sleep")
                    .arg("30")
                    .spawn()
                    .unwrap()
            })
            .collect();
        let tid = rustix::thread::gettid().as_raw_nonzero();
        let children = File::open(format!("/proc/self/task/{tid}/children")).unwrap();
        let mut io = KeptFile::new(PathBuf::from("/proc/thread-self/io"));
        let mut io_buf = Vec::new();
        let mut reads = || -> u64 {
            let text = io.text(&mut io_buf).unwrap();
            let line = text.lines().find(|l| l.starts_with("syscr:")).unwrap();
            line[6..].trim().parse().unwrap()
        };
        let (a, b) = (reads(), reads());
        let own = b - a; // reading the count itself
        let mut small = Vec::new();
        pread_records(&children, &mut small).unwrap();
        let c = reads();
        let listed: Vec<u32> = std::str::from_utf8(&small)
            .unwrap()
            .split_whitespace()
            .map(|p| p.parse().unwrap())
            .collect();
        for s in &mut sleepers {
            s.kill().unwrap();
            s.wait().unwrap();
        }
        assert_eq!(listed, sleepers.iter().map(|s| s.id()).collect::<Vec<_>>());
        assert_eq!(c - b - own, 1, "one read for a file of less than a page");
    }

    #[test]
    fn a_live_proc_file_kept_open_reads_fresh_each_time() {
        // /proc/self/io counts the bytes this process read: the first read shows in the second.
        let mut kept = KeptFile::new(PathBuf::from("/proc/self/io"));
        let mut buf = Vec::new();
        let rchar = |text: &str| -> u64 {
            let line = text.lines().find(|l| l.starts_with("rchar:")).unwrap();
            line[6..].trim().parse().unwrap()
        };
        let first = rchar(kept.text(&mut buf).unwrap());
        let second = rchar(kept.text(&mut buf).unwrap());
        assert!(second > first, "rchar {first} then {second}");
    }
}
