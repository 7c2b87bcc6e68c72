//! The loop driven with a `TestBackend`, a scripted event stream and a fake clock.

mod alert;
mod replay;

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use futures_util::stream;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tokio::sync::mpsc;

use super::*;
use crate::ui::tests::fixtures::{self as testing, buffer_to_string};
use gpumeter_core::clock::FakeClock;

type Events = std::pin::Pin<Box<dyn Stream<Item = io::Result<Event>>>>;

fn key(c: char) -> io::Result<Event> {
    Ok(Event::Key(KeyEvent::new(
        KeyCode::Char(c),
        KeyModifiers::NONE,
    )))
}

fn scripted() -> (mpsc::Sender<io::Result<Event>>, Events) {
    let (tx, rx) = mpsc::channel(8);
    let events = stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|e| (e, rx)) });
    (tx, Box::pin(events))
}

/// Long enough for the loop to draw a frame (the frame cap is 50 ms).
async fn settle() {
    tokio::time::sleep(Duration::from_millis(150)).await;
}

#[tokio::test(start_paused = true)]
async fn draws_collector_snapshots_and_quits_on_q() {
    let (keys, events) = scripted();
    let (tx, rx) = mpsc::channel(8);
    let clock = FakeClock::new(testing::NOW);
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
    let script = async {
        tx.send(CollectorEvent::Snapshot(Box::new(testing::snapshot(2))))
            .await
            .unwrap();
        settle().await;
        keys.send(key('q')).await.unwrap();
    };
    let options = testing::options();
    let (end, ()) = tokio::join!(
        drive(
            &mut terminal,
            events,
            rx,
            &clock,
            &options,
            std::future::pending()
        ),
        script
    );
    assert_eq!(end.unwrap().reason, EndReason::Quit);
    let screen = buffer_to_string(terminal.backend().buffer());
    assert!(screen.contains("gpu-box-01"), "{screen}");
    assert!(screen.contains("GPU1"), "{screen}");
}

#[tokio::test(start_paused = true)]
async fn the_live_screen_writer_draws_the_same_frames_as_a_test_backend() {
    // The loop on the writer the dashboard runs with, and on ratatui's test terminal: the same
    // frame in both, and the bytes written reproduce it on an emulated terminal.
    let mut frames = Vec::new();
    let mut written = Vec::new();
    for live in [true, false] {
        let (keys, events) = scripted();
        let (tx, rx) = mpsc::channel(8);
        let clock = FakeClock::new(testing::NOW);
        let script = async {
            tx.send(CollectorEvent::Snapshot(Box::new(testing::snapshot(2))))
                .await
                .unwrap();
            settle().await;
            tx.send(CollectorEvent::Snapshot(Box::new(testing::snapshot_at(
                3,
                testing::NOW + 1_000,
            ))))
            .await
            .unwrap();
            settle().await;
            keys.send(key('q')).await.unwrap();
        };
        let options = testing::options();
        if live {
            let mut screen = ScreenWriter::with_size(Vec::new(), 100, 30);
            let (end, ()) = tokio::join!(
                drive(
                    &mut screen,
                    events,
                    rx,
                    &clock,
                    &options,
                    std::future::pending()
                ),
                script
            );
            assert_eq!(end.unwrap().reason, EndReason::Quit);
            frames.push(screen.buffer().clone());
            written = std::mem::take(screen.writer_mut());
        } else {
            let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
            let (end, ()) = tokio::join!(
                drive(
                    &mut terminal,
                    events,
                    rx,
                    &clock,
                    &options,
                    std::future::pending()
                ),
                script
            );
            assert_eq!(end.unwrap().reason, EndReason::Quit);
            frames.push(terminal.backend().buffer().clone());
        }
    }
    assert_eq!(frames[0], frames[1]);
    let screen = buffer_to_string(&frames[0]);
    assert!(screen.contains("GPU2"), "{screen}");
    let mut emulated = vt100::Parser::new(30, 100, 0);
    emulated.process(&written);
    crate::ui::frame_writer::tests::assert_screen_shows(emulated.screen(), &frames[0]);
}

#[tokio::test(start_paused = true)]
async fn source_failure_is_shown_with_its_retry() {
    let (keys, events) = scripted();
    let (tx, rx) = mpsc::channel(8);
    let clock = FakeClock::new(testing::NOW);
    let mut terminal = Terminal::new(TestBackend::new(120, 30)).unwrap();
    let script = async {
        tx.send(CollectorEvent::Snapshot(Box::new(testing::snapshot(1))))
            .await
            .unwrap();
        tx.send(CollectorEvent::SourceFailed {
            message: "NVML: driver gone\u{1b}[2J".into(),
            retry_in_ms: 4_000,
        })
        .await
        .unwrap();
        settle().await;
        keys.send(key('q')).await.unwrap();
    };
    let options = testing::options();
    let (end, ()) = tokio::join!(
        drive(
            &mut terminal,
            events,
            rx,
            &clock,
            &options,
            std::future::pending()
        ),
        script
    );
    assert_eq!(end.unwrap().reason, EndReason::Quit);
    let screen = buffer_to_string(terminal.backend().buffer());
    assert!(
        screen.contains("SOURCE FAILING: NVML: driver gone "),
        "{screen}"
    );
    assert!(screen.contains("retry in 4.0s"), "{screen}");
    assert!(!screen.contains('\u{1b}'));
}

#[tokio::test(start_paused = true)]
async fn a_signal_ends_the_loop() {
    let (tx, rx) = mpsc::channel::<CollectorEvent>(1);
    let clock = FakeClock::new(testing::NOW);
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    let options = testing::options();
    let end = drive(
        &mut terminal,
        stream::pending(),
        rx,
        &clock,
        &options,
        tokio::time::sleep(Duration::from_millis(20)),
    )
    .await;
    drop(tx);
    assert_eq!(end.unwrap().reason, EndReason::Signal);
}

#[tokio::test(start_paused = true)]
async fn closed_input_ends_the_loop() {
    let (_tx, rx) = mpsc::channel::<CollectorEvent>(1);
    let clock = FakeClock::new(testing::NOW);
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    let options = testing::options();
    let end = drive(
        &mut terminal,
        stream::empty(),
        rx,
        &clock,
        &options,
        std::future::pending(),
    )
    .await;
    assert_eq!(end.unwrap().reason, EndReason::InputClosed);
}

#[tokio::test(start_paused = true)]
async fn a_stopped_collector_is_reported_not_spun_on() {
    let (keys, events) = scripted();
    let (tx, rx) = mpsc::channel(8);
    let clock = FakeClock::new(testing::NOW);
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
    let script = async move {
        tx.send(CollectorEvent::Snapshot(Box::new(testing::snapshot(1))))
            .await
            .unwrap();
        drop(tx);
        settle().await;
        keys.send(key('q')).await.unwrap();
    };
    let options = testing::options();
    let (end, ()) = tokio::join!(
        drive(
            &mut terminal,
            events,
            rx,
            &clock,
            &options,
            std::future::pending()
        ),
        script
    );
    assert_eq!(end.unwrap().reason, EndReason::Quit);
    let screen = buffer_to_string(terminal.backend().buffer());
    assert!(screen.contains("the collector stopped"), "{screen}");
}

mod billing {
    use super::*;
    use crate::ui::BillingSetup;
    use gpumeter_core::billing::{Budget, ClockStart, Pricing, Rate};
    use gpumeter_core::ledger::Ledger;
    use gpumeter_core::money::Money;

    /// A minute boundary, so 90 s of readings close one minute and leave one open.
    const START: i64 = testing::T0 - testing::T0 % 60_000;

    fn options(ledger: &std::path::Path) -> UiOptions {
        let mut pricing = Pricing::simple(Rate::parse("36/h").unwrap());
        pricing.clock_start = ClockStart::At(START);
        pricing.budget = Some(Budget::parse("1/run").unwrap());
        UiOptions {
            billing: Some(BillingSetup {
                pricing,
                ledger_path: Some(ledger.to_path_buf()),
            }),
            ..testing::options()
        }
    }

    /// 90 s of readings at $36/h ($0.90), then `end` (a key or a signal). Returns the screen.
    async fn run_billed(ledger: &std::path::Path, quit_by_key: bool) -> (Ended, String) {
        let (keys, events) = scripted();
        let (tx, rx) = mpsc::channel(8);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let clock = FakeClock::new(START + 90_400);
        let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
        let script = async move {
            for s in 0..=90 {
                let snap = testing::snapshot_at(1, START + s * 1_000);
                tx.send(CollectorEvent::Snapshot(Box::new(snap)))
                    .await
                    .unwrap();
            }
            settle().await;
            if quit_by_key {
                keys.send(key('q')).await.unwrap();
            } else {
                stop.send(()).unwrap();
            }
            // Keep the key channel open until the loop is gone.
            settle().await;
            drop(keys);
        };
        let options = options(ledger);
        let shutdown = async {
            let _ = stopped.await;
        };
        let (end, ()) = tokio::join!(
            drive(&mut terminal, events, rx, &clock, &options, shutdown),
            script
        );
        (end.unwrap(), buffer_to_string(terminal.backend().buffer()))
    }

    fn ledger_spend(path: &std::path::Path) -> Money {
        let (l, _) = Ledger::open(path, 0).unwrap();
        Money::from_micros(l.total_usage().unwrap().spend_micros)
    }

    #[tokio::test(start_paused = true)]
    async fn money_and_budget_crossings_show_once_and_q_writes_the_open_minute() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.sqlite");
        let (end, screen) = run_billed(&path, true).await;
        assert_eq!(end.reason, EndReason::Quit);
        assert!(end.notes.is_empty(), "{:?}", end.notes);
        assert!(screen.contains("spent $0.90"), "{screen}");
        // The crossing is the alert panel's, said once; the status line does not repeat it.
        assert_eq!(
            screen
                .matches("80 % of the budget spent: $0.80 of $1.00")
                .count(),
            1,
            "{screen}"
        );
        assert!(!screen.contains("budget: 80%"), "{screen}");
        // Both minutes: the closed one and the one open when q was pressed.
        assert_eq!(ledger_spend(&path), Money::parse("0.90").unwrap());
    }

    #[tokio::test(start_paused = true)]
    async fn a_signal_also_writes_the_open_minute() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.sqlite");
        let (end, _) = run_billed(&path, false).await;
        assert_eq!(end.reason, EndReason::Signal);
        assert_eq!(ledger_spend(&path), Money::parse("0.90").unwrap());
    }

    /// One reading with `options`, then `q`; returns the screen.
    async fn one_reading(options: &UiOptions) -> String {
        let (keys, events) = scripted();
        let (tx, rx) = mpsc::channel(8);
        let clock = FakeClock::new(START + 400);
        let mut terminal = Terminal::new(TestBackend::new(160, 30)).unwrap();
        let script = async {
            let snap = testing::snapshot_at(1, START);
            tx.send(CollectorEvent::Snapshot(Box::new(snap)))
                .await
                .unwrap();
            settle().await;
            keys.send(key('q')).await.unwrap();
        };
        let (end, ()) = tokio::join!(
            drive(
                &mut terminal,
                events,
                rx,
                &clock,
                options,
                std::future::pending()
            ),
            script
        );
        assert_eq!(end.unwrap().reason, EndReason::Quit);
        buffer_to_string(terminal.backend().buffer())
    }

    #[tokio::test(start_paused = true)]
    async fn a_second_instance_says_it_only_reads_the_ledger() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.sqlite");
        // Another gpumeter holds the writer lock.
        let (_writer, _) = Ledger::open(&path, START).unwrap();
        let screen = one_reading(&options(&path)).await;
        assert!(
            screen.contains("another gpumeter is writing the ledger"),
            "{screen}"
        );
        assert!(screen.contains("spent      $0.00"), "{screen}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_foreign_file_is_set_aside_and_said_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.sqlite");
        std::fs::write(&path, b"not a ledger, somebody's notes").unwrap();
        let screen = one_reading(&options(&path)).await;
        assert!(screen.contains("moved it to"), "{screen}");
        assert!(screen.contains("spent      $0.00"), "{screen}");
        // The old file is kept beside the new ledger.
        let kept = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(Result::ok)
            .any(|e| e.file_name().to_string_lossy().contains(".corrupt-"));
        assert!(kept);
    }
}

/// The first reading is drawn the moment it arrives, not when the frame cap next allows: the
/// waiting screen went out at 0 ms, the reading comes at 10 ms and `q` at 11 ms, before the
/// 50 ms cap would let a second frame out.
#[tokio::test(start_paused = true)]
async fn the_first_reading_is_drawn_at_once() {
    let (keys, events) = scripted();
    let (tx, rx) = mpsc::channel(8);
    let clock = FakeClock::new(testing::NOW);
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
    let script = async {
        tokio::time::sleep(Duration::from_millis(10)).await;
        tx.send(CollectorEvent::Snapshot(Box::new(testing::snapshot(2))))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(1)).await;
        keys.send(key('q')).await.unwrap();
    };
    let options = testing::options();
    let (end, ()) = tokio::join!(
        drive(
            &mut terminal,
            events,
            rx,
            &clock,
            &options,
            std::future::pending()
        ),
        script
    );
    assert_eq!(end.unwrap().reason, EndReason::Quit);
    let screen = buffer_to_string(terminal.backend().buffer());
    assert!(screen.contains("GPU1"), "{screen}");
    assert!(
        !screen.contains("waiting for the first reading"),
        "{screen}"
    );
}

/// Later readings still wait for the frame cap: one at 100 ms (drawn at once, the first) and
/// one at 110 ms with `q` at 111 ms leave the first one on screen.
#[tokio::test(start_paused = true)]
async fn later_readings_keep_the_frame_cap() {
    let (keys, events) = scripted();
    let (tx, rx) = mpsc::channel(8);
    let clock = FakeClock::new(testing::NOW);
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
    let script = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        tx.send(CollectorEvent::Snapshot(Box::new(testing::snapshot(1))))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(10)).await;
        tx.send(CollectorEvent::Snapshot(Box::new(testing::snapshot(2))))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(1)).await;
        keys.send(key('q')).await.unwrap();
    };
    let options = testing::options();
    let (end, ()) = tokio::join!(
        drive(
            &mut terminal,
            events,
            rx,
            &clock,
            &options,
            std::future::pending()
        ),
        script
    );
    assert_eq!(end.unwrap().reason, EndReason::Quit);
    let screen = buffer_to_string(terminal.backend().buffer());
    assert!(screen.contains("GPU0"), "{screen}");
    assert!(
        !screen.contains("GPU1"),
        "the second reading beat the frame cap:\n{screen}"
    );
}

/// Counts the frames shown.
struct Counting {
    inner: Terminal<TestBackend>,
    frames: Vec<Instant>,
}

impl Surface for Counting {
    fn area(&self) -> io::Result<Rect> {
        self.inner.area()
    }

    fn show(&mut self, render: &mut dyn FnMut(&mut ratatui::buffer::Buffer)) -> io::Result<()> {
        self.frames.push(Instant::now());
        self.inner.show(render)
    }
}

/// Frames drawn while a collector sends a reading every `period` (`count` of them from 100 ms
/// on), then stays silent for `silent`.
async fn frames_for(period: Duration, count: u32, silent: Duration) -> (Vec<Instant>, Instant) {
    let (keys, events) = scripted();
    let (tx, rx) = mpsc::channel(8);
    let clock = FakeClock::new(testing::NOW);
    let mut surface = Counting {
        inner: Terminal::new(TestBackend::new(100, 30)).unwrap(),
        frames: Vec::new(),
    };
    let start = Instant::now();
    let script = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        for i in 0..count {
            let gpus = 1 + i % 2;
            tx.send(CollectorEvent::Snapshot(Box::new(testing::snapshot(gpus))))
                .await
                .unwrap();
            tokio::time::sleep(period).await;
        }
        tokio::time::sleep(silent).await;
        keys.send(key('q')).await.unwrap();
    };
    let options = testing::options();
    let (end, ()) = tokio::join!(
        drive(
            &mut surface,
            events,
            rx,
            &clock,
            &options,
            std::future::pending()
        ),
        script
    );
    assert_eq!(end.unwrap().reason, EndReason::Quit);
    (surface.frames, start)
}

/// A collector a little late each second (as a real one is) draws once per reading: the age
/// tick waits a grace after the last reading, so it never draws the second frame that a tick
/// a bare second after the last frame drew whenever the reading was a millisecond late.
#[tokio::test(start_paused = true)]
async fn readings_a_little_late_each_second_draw_once_each() {
    let late = Duration::from_millis(1_007);
    let (frames, _) = frames_for(late, 10, Duration::ZERO).await;
    // The waiting screen, then one frame per reading.
    assert_eq!(frames.len(), 1 + 10, "{frames:?}");
}

/// Once readings stop, the age still moves: a frame each second after the grace.
#[tokio::test(start_paused = true)]
async fn the_age_still_moves_each_second_once_readings_stop() {
    let (frames, start) = frames_for(Duration::from_secs(1), 3, Duration::from_millis(4_500)).await;
    // Readings at 0.1, 1.1 and 2.1 s (3 frames after the waiting one); `q` at 7.6 s.
    let after: Vec<u128> = frames
        .iter()
        .map(|f| f.duration_since(start).as_millis())
        .filter(|&ms| ms > 2_200)
        .collect();
    // Ticks at 3.35 s (1 s + grace after the last reading), then each second to 7.35 s.
    assert_eq!(after.len(), 5, "{after:?}");
    assert!(after.windows(2).all(|w| w[1] - w[0] == 1_000), "{after:?}");
    assert!((3_300..3_400).contains(&after[0]), "{after:?}");
}
