//! The bounded storage probe behind `--data PATH`: sequential throughput and 4 KiB random-read
//! IOPS, in at most ~2 s and 256 MiB. It reads existing files read-only (largest first) and
//! asks the kernel to drop them from the page cache first, so the figure is the disk's; only
//! when the directory holds too little data does it write a temporary file in a temporary
//! directory there, which it deletes.

use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustix::fs::{Advice, fadvise};

use super::facts::Probe;

/// The probe's bounds.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_bytes: u64,
    pub write_time: Duration,
    pub seq_time: Duration,
    pub random_time: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: 256 << 20,
            write_time: Duration::from_millis(400),
            seq_time: Duration::from_millis(1100),
            random_time: Duration::from_millis(500),
        }
    }
}

const CHUNK: usize = 1 << 20;
const BLOCK: u64 = 4096;
/// Less existing data than this and a temporary file is written instead.
const ENOUGH_BYTES: u64 = 32 << 20;
/// Size of that temporary file.
const TEMP_BYTES: u64 = 64 << 20;
/// Directory entries looked at when searching for files to read.
const MAX_ENTRIES: usize = 4000;

/// Probes the directory (or file) `path`.
pub fn probe(path: &Path, limits: Limits) -> Result<Probe, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{e}"))?;
    let mut files = if meta.is_file() {
        vec![(path.to_path_buf(), meta.len())]
    } else {
        find_files(path)
    };
    files.sort_by_key(|f| std::cmp::Reverse(f.1));
    let existing: u64 = files.iter().map(|f| f.1).sum();
    // Keeps the temporary directory alive while it is read; deleted on drop.
    let mut _temp = None;
    let existing_files = existing >= ENOUGH_BYTES;
    if !existing_files {
        let (dir, file, size) = write_temp(path, limits.write_time)?;
        files = vec![(file, size)];
        _temp = Some(dir);
    }
    let random_budget = limits.max_bytes / 8;
    let (seq_bytes, seq_s, uncached) =
        sequential(&files, limits.max_bytes - random_budget, limits.seq_time);
    if seq_bytes == 0 {
        return Err("nothing could be read".into());
    }
    let random_iops = files
        .first()
        .filter(|(_, size)| *size >= 16 * BLOCK)
        .and_then(|(p, size)| random(p, *size, random_budget, limits.random_time));
    Ok(Probe {
        seq_bytes_per_s: seq_bytes as f64 / seq_s.max(1e-6),
        seq_bytes,
        random_iops,
        uncached,
        existing_files,
    })
}

/// Regular files under `dir` (three levels deep, a few thousand entries at most).
fn find_files(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), 0)];
    let mut seen = 0;
    while let Some((d, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return out;
            }
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_file() {
                if let Ok(m) = e.metadata() {
                    out.push((e.path(), m.len()));
                }
            } else if ft.is_dir() && depth < 3 {
                stack.push((e.path(), depth + 1));
            }
        }
    }
    out
}

/// Writes up to `TEMP_BYTES` (or what `time` allows) into a fresh temporary directory inside
/// `dir`, synced so that dropping it from the cache makes the reads hit the disk.
fn write_temp(dir: &Path, time: Duration) -> Result<(tempfile::TempDir, PathBuf, u64), String> {
    let tmp = tempfile::Builder::new()
        .prefix(".gpumeter-check-")
        .tempdir_in(dir)
        .map_err(|e| {
            format!("too little data to read and cannot write a temporary file there ({e})")
        })?;
    let path = tmp.path().join("probe.bin");
    let mut f = File::create(&path).map_err(|e| e.to_string())?;
    let mut block = vec![0u8; CHUNK];
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for b in block.iter_mut() {
        // Not zeros: a compressing file system would make zeros look fast.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = x.to_le_bytes()[0];
    }
    let start = Instant::now();
    let mut written = 0;
    while written < TEMP_BYTES && start.elapsed() < time {
        f.write_all(&block).map_err(|e| e.to_string())?;
        written += CHUNK as u64;
    }
    f.sync_all().map_err(|e| e.to_string())?;
    Ok((tmp, path, written))
}

/// Drops a file's pages from the cache; false when the kernel refused.
fn drop_cache(f: &File) -> bool {
    fadvise(f, 0, None, Advice::DontNeed).is_ok()
}

/// Reads files front to back until `max_bytes` or `time`; (bytes, seconds, all uncached).
fn sequential(files: &[(PathBuf, u64)], max_bytes: u64, time: Duration) -> (u64, f64, bool) {
    let mut buf = vec![0u8; CHUNK];
    let mut total = 0u64;
    let mut uncached = true;
    let start = Instant::now();
    'files: for (path, _) in files {
        let Ok(mut f) = File::open(path) else {
            continue;
        };
        uncached &= drop_cache(&f);
        loop {
            if total >= max_bytes || start.elapsed() >= time {
                break 'files;
            }
            match f.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => total += n as u64,
            }
        }
    }
    (total, start.elapsed().as_secs_f64(), uncached)
}

/// 4 KiB reads at pseudo-random aligned offsets; reads per second.
fn random(path: &Path, size: u64, max_bytes: u64, time: Duration) -> Option<f64> {
    let f = File::open(path).ok()?;
    drop_cache(&f);
    let blocks = size / BLOCK;
    let mut buf = vec![0u8; BLOCK as usize];
    let mut x: u64 = 0x2545_F491_4F6C_DD1D ^ size;
    let (mut reads, mut bytes) = (0u64, 0u64);
    let start = Instant::now();
    while start.elapsed() < time && bytes < max_bytes {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let offset = (x % blocks) * BLOCK;
        f.read_at(&mut buf, offset).ok()?;
        reads += 1;
        bytes += BLOCK;
    }
    Some(reads as f64 / start.elapsed().as_secs_f64().max(1e-6))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_dir_gets_a_temporary_file_that_is_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let p = probe(dir.path(), Limits::default()).unwrap();
        assert!(!p.existing_files);
        assert!(p.seq_bytes > 0 && p.seq_bytes <= 256 << 20);
        assert!(p.seq_bytes_per_s > 0.0);
        assert!(p.random_iops.is_some_and(|i| i > 0.0));
        // Nothing left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn existing_files_are_read_not_written_and_bounds_hold() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("shards");
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(sub.join("a.bin"), vec![7u8; 40 << 20]).unwrap();
        std::fs::write(dir.path().join("b.txt"), b"small").unwrap();
        let before: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        let limits = Limits {
            max_bytes: 8 << 20,
            ..Limits::default()
        };
        let p = probe(dir.path(), limits).unwrap();
        assert!(p.existing_files);
        // The byte bound holds (the random share is an eighth of it).
        assert!(p.seq_bytes <= 8 << 20, "{}", p.seq_bytes);
        let after: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        assert_eq!(before.len(), after.len());
    }

    #[test]
    fn a_missing_path_is_an_error_naming_it() {
        let e = probe(Path::new("/nonexistent/data"), Limits::default()).unwrap_err();
        assert!(e.contains("No such file"), "{e}");
    }
}
