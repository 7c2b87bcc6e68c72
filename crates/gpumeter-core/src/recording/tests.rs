//! Round trips, damage and caps, on demo readings.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;

use gpumeter_model::Snapshot;
use gpumeter_sim::Scenario;

use super::*;
use crate::clock::FakeClock;
use crate::source::Source;
use crate::source::sim::SimSource;

fn readings(name: &str, n: usize) -> Vec<Snapshot> {
    let clock = FakeClock::new(1_767_603_600_000);
    let mut src = SimSource::new(Scenario::builtin(name).unwrap(), Arc::new(clock.clone()));
    (0..n)
        .map(|_| {
            let s = src.sample().unwrap();
            clock.advance_ms(1_000);
            s
        })
        .collect()
}

fn record(path: &Path, snaps: &[Snapshot], opts: RecordOptions) {
    let mut w = Writer::create(path, opts).unwrap();
    for s in snaps {
        w.write(s).unwrap();
    }
    w.finish().unwrap();
}

fn read_all(path: &Path) -> (Vec<Snapshot>, Option<Tail>) {
    let mut r = Reader::open(path).unwrap();
    let mut out = Vec::new();
    while let Some(s) = r.next_reading() {
        out.push(s);
    }
    (out, r.tail().cloned())
}

#[test]
fn plain_and_zstd_recordings_read_back_equal_field_by_field() {
    let dir = tempfile::tempdir().unwrap();
    let snaps = readings("mixed", 40);
    for name in ["run.ndjson", "run.ndjson.zst"] {
        let path = dir.path().join(name);
        record(&path, &snaps, RecordOptions::default());
        let (back, tail) = read_all(&path);
        assert_eq!(tail, None, "{name}");
        assert_eq!(back, snaps, "{name}");
        let r = Reader::open(&path).unwrap();
        assert_eq!(r.header().source, "demo:mixed");
        assert_eq!(r.header().start_unix_ms, snaps[0].taken_at_unix_ms);
        assert_eq!(r.header().host, snaps[0].system.hostname);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{name}");
    }
    let zst = std::fs::read(dir.path().join("run.ndjson.zst")).unwrap();
    let plain = std::fs::read(dir.path().join("run.ndjson")).unwrap();
    assert!(
        zst.len() * 4 < plain.len(),
        "{} vs {}",
        zst.len(),
        plain.len()
    );
}

#[test]
fn index_lines_point_at_themselves_and_the_reading_follows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.ndjson");
    let snaps: Vec<Snapshot> = (0..(INDEX_EVERY as i64 * 2 + 5))
        .map(|k| Snapshot::empty("t", 1_000 + k * 1_000))
        .collect();
    record(&path, &snaps, RecordOptions::default());
    let text = std::fs::read_to_string(&path).unwrap();
    let index: Vec<IndexEntry> = text
        .lines()
        .filter(|l| l.starts_with("{\"index\""))
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|v| serde_json::from_value(v["index"].clone()).unwrap())
        .collect();
    assert_eq!(index.len(), 2);
    for e in &index {
        let at = &text[usize::try_from(e.offset).unwrap()..];
        assert!(at.starts_with("{\"index\""));
        let next = at.lines().nth(1).unwrap();
        let snap: Snapshot = serde_json::from_str(next).unwrap();
        assert_eq!(snap, snaps[usize::try_from(e.reading).unwrap()]);
        assert_eq!(snap.taken_at_unix_ms, e.taken_at_unix_ms);
    }
    assert_eq!(read_all(&path).0, snaps);
}

#[test]
fn a_plain_file_cut_at_every_byte_of_its_last_lines_keeps_every_whole_reading() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("full.ndjson");
    // Small readings (one GPU) keep the cuts to a few thousand.
    let snaps: Vec<Snapshot> = readings("forgotten", 6)
        .into_iter()
        .map(|mut s| {
            s.gpus.truncate(1);
            s.processes.clear();
            s.host.per_cpu_util_pct.clear();
            s
        })
        .collect();
    record(&path, &snaps, RecordOptions::default());
    let bytes = std::fs::read(&path).unwrap();
    let ends: Vec<usize> = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .map(|(i, _)| i + 1)
        .collect();
    let cut_path = dir.path().join("cut.ndjson");
    // Every cut inside the last two readings.
    for cut in ends[ends.len() - 3]..bytes.len() {
        std::fs::write(&cut_path, &bytes[..cut]).unwrap();
        let whole = ends.iter().filter(|e| **e <= cut).count() - 1;
        let (back, tail) = read_all(&cut_path);
        assert_eq!(back.len(), whole, "cut at {cut}");
        assert_eq!(back[..], snaps[..whole]);
        let at_boundary = ends.contains(&cut);
        assert_eq!(tail.is_none(), at_boundary, "cut at {cut}: {tail:?}");
        if let Some(t) = tail {
            assert_eq!(t.readings as usize, whole);
            assert!(t.why.contains("cut off"), "{}", t.why);
        }
    }
}

#[test]
fn a_zstd_file_cut_anywhere_reads_a_prefix_and_reports_the_tail() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("full.ndjson.zst");
    let snaps = readings("io-starved", 8);
    // Unfinished, as after kill -9: each reading is a flushed block, no frame end.
    let mut w = Writer::create(&path, RecordOptions::default()).unwrap();
    for s in &snaps {
        w.write(s).unwrap();
    }
    let bytes = std::fs::read(&path).unwrap();
    drop(w);
    let unfinished = dir.path().join("unfinished.ndjson.zst");
    std::fs::write(&unfinished, &bytes).unwrap();
    let (all, _) = read_all(&unfinished);
    assert_eq!(
        all.len(),
        snaps.len(),
        "every flushed reading is readable without the frame end"
    );
    let (finished, tail) = read_all(&path);
    assert_eq!(
        (finished.len(), tail),
        (snaps.len(), None),
        "a dropped writer ends its frame"
    );
    let cut_path = dir.path().join("cut.ndjson.zst");
    let mut last = 0;
    // Cuts across the last third of the compressed bytes, a few hundred of them.
    let step = (bytes.len() / 3 / 300).max(1);
    for cut in ((bytes.len() * 2 / 3)..bytes.len()).step_by(step) {
        std::fs::write(&cut_path, &bytes[..cut]).unwrap();
        let Ok(mut r) = Reader::open(&cut_path) else {
            continue;
        };
        let mut n = 0;
        while let Some(s) = r.next_reading() {
            assert_eq!(s, snaps[n]);
            n += 1;
        }
        assert!(
            n >= last,
            "a longer prefix never reads less ({n} < {last} at {cut})"
        );
        last = n;
        assert!(n < snaps.len() || r.tail().is_none());
    }
    assert!(last >= snaps.len() - 1);
}

#[test]
fn bit_flips_never_panic_and_never_invent_readings() {
    let dir = tempfile::tempdir().unwrap();
    let snaps = readings("idle", 3);
    for name in ["flip.ndjson", "flip.ndjson.zst"] {
        let path = dir.path().join(name);
        record(&path, &snaps, RecordOptions::default());
        let bytes = std::fs::read(&path).unwrap();
        let flipped = dir.path().join(format!("x-{name}"));
        let step = (bytes.len() / 300).max(1);
        for at in (0..bytes.len()).step_by(step) {
            for bit in [0u8, 3, 7] {
                let mut b = bytes.clone();
                b[at] ^= 1 << bit;
                std::fs::write(&flipped, &b).unwrap();
                match Reader::open(&flipped) {
                    Ok(mut r) => {
                        let mut n = 0;
                        while r.next_reading().is_some() {
                            n += 1;
                        }
                        assert!(n <= snaps.len(), "{name} byte {at} bit {bit}");
                    }
                    Err(e) => assert!(e.to_string().contains("x-flip"), "{e}"),
                }
            }
        }
    }
}

#[test]
fn wrong_files_are_clear_errors_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    std::fs::write(p("empty"), b"").unwrap();
    std::fs::write(p("text"), b"hello world\n").unwrap();
    std::fs::write(
        p("snapshot.json"),
        format!(
            "{}\n",
            serde_json::to_string(&Snapshot::empty("t", 1)).unwrap()
        ),
    )
    .unwrap();
    std::fs::write(
        p("future"),
        b"{\"gpumeter_recording\":7,\"schema\":2,\"version\":\"9.0\",\"host\":null,\"source\":\"nvml\",\"interval_ms\":1000,\"start_unix_ms\":0}\n",
    )
    .unwrap();
    std::fs::write(
        p("future-schema"),
        b"{\"gpumeter_recording\":1,\"schema\":99,\"version\":\"9.0\",\"host\":null,\"source\":\"nvml\",\"interval_ms\":1000,\"start_unix_ms\":0}\n",
    )
    .unwrap();
    for (name, says) in [
        ("empty", "is empty"),
        ("text", "not JSON"),
        ("snapshot.json", "not a recording header"),
        ("future", "newer gpumeter"),
        ("future-schema", "snapshot schema 99"),
        ("missing", "No such file"),
    ] {
        let e = Reader::open(&p(name)).unwrap_err().to_string();
        assert!(e.contains(name) && e.contains(says), "{name}: {e}");
    }
}

#[test]
fn existing_files_and_symlinks_are_never_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("precious");
    std::fs::write(&target, b"keep me").unwrap();
    let link = dir.path().join("link.ndjson");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    for path in [&target, &link] {
        let e = Writer::create(path, RecordOptions::default()).unwrap_err();
        assert!(matches!(e, RecordError::Exists { .. }), "{e}");
    }
    assert_eq!(std::fs::read(&target).unwrap(), b"keep me");
}

#[test]
fn size_caps_rotate_files_and_refuse_a_line_over_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rot.ndjson");
    let snaps = readings("training", 12);
    let one = serde_json::to_vec(&snaps[0]).unwrap().len() as u64;
    let opts = RecordOptions {
        max_size: Some(one * 3),
        max_files: 3,
        interval_ms: 1000,
    };
    record(&path, &snaps, opts);
    let numbered = |k: u32| dir.path().join(format!("rot.ndjson.{k}"));
    assert!(path.exists() && numbered(1).exists() && numbered(2).exists());
    assert!(!numbered(3).exists(), "only max_files are kept");
    let mut total = 0;
    for p in [numbered(2), numbered(1), path.clone()] {
        let (back, tail) = read_all(&p);
        assert!(tail.is_none());
        assert!(!back.is_empty() && std::fs::metadata(&p).unwrap().len() <= one * 3 + 400);
        total += back.len();
    }
    // The newest files hold the newest readings, in order.
    let (last, _) = read_all(&path);
    assert_eq!(last.last(), snaps.last());
    assert!(total < snaps.len());

    let tiny = dir.path().join("tiny.ndjson");
    let mut w = Writer::create(
        &tiny,
        RecordOptions {
            max_size: Some(100),
            ..RecordOptions::default()
        },
    )
    .unwrap();
    let e = w.write(&snaps[0]).unwrap_err();
    assert!(matches!(e, RecordError::LineTooLong { .. }), "{e}");
    assert_eq!(w.written, 0);
}
