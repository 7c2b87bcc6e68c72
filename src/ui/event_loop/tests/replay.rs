//! The loop playing a recorded `cpu-starved` run (the dashboard's own player, no collector):
//! the header says REPLAY, the recorded time and how it plays; play, pause, step and seek move
//! the shown time and values; the footer lists the replay keys.

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use futures_util::stream;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tokio::sync::mpsc;

use super::super::*;
use crate::ui::replay::ReplaySetup;
use crate::ui::replay::tests::{T0, recording};
use crate::ui::tests::fixtures::{self as testing, buffer_to_string};
use gpumeter_core::clock::FakeClock;
use gpumeter_core::recording::StartAt;

type Events = std::pin::Pin<Box<dyn Stream<Item = io::Result<Event>>>>;

fn key(code: KeyCode) -> io::Result<Event> {
    Ok(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

fn scripted() -> (mpsc::Sender<io::Result<Event>>, Events) {
    let (tx, rx) = mpsc::channel(8);
    let events = stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|e| (e, rx)) });
    (tx, Box::pin(events))
}

/// Plays the recording at `path` from `start`: waits `wait` of (virtual) wall time, presses
/// each key 150 ms apart, quits, and returns the last screen (120×40). Keep `q` off the
/// instant a reading is due plus a frame: a key and a frame deadline at the same instant race
/// in the loop's select, and the quit could win before the last reading is drawn.
async fn play(
    path: &std::path::Path,
    start: Option<StartAt>,
    wait_ms: u64,
    keys: &[KeyCode],
) -> String {
    let (tx, events) = scripted();
    let clock = FakeClock::new(testing::NOW);
    let options = testing::options();
    let player = Player::open(
        ReplaySetup {
            path: path.to_path_buf(),
            start,
        },
        session_config(&options),
    )
    .unwrap();
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
    let script = async {
        tokio::time::sleep(Duration::from_millis(wait_ms)).await;
        for k in keys {
            tx.send(key(*k)).await.unwrap();
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
        tx.send(key(KeyCode::Char('q'))).await.unwrap();
    };
    let (end, ()) = tokio::join!(
        drive_feed(
            &mut terminal,
            events,
            Feed::Replay(Box::new(player)),
            &clock,
            &options,
            std::future::pending()
        ),
        script
    );
    assert_eq!(end.unwrap().reason, EndReason::Quit);
    buffer_to_string(terminal.backend().buffer())
}

/// The GPU 0 line's text in the charts' util title (`util mean 41% `), a value that moves.
fn util_title(screen: &str) -> String {
    let line = screen.lines().find(|l| l.contains(" util ")).unwrap_or("");
    let at = line.find(" util ").unwrap_or(0);
    line[at..].chars().take(18).collect()
}

#[tokio::test(start_paused = true)]
async fn plays_pauses_steps_and_seeks_on_the_recorded_clock() {
    let dir = tempfile::tempdir().unwrap();
    let path = recording(dir.path(), "cpu-starved", 400);

    // Playing at 1×: 10 s of wall time are 10 recorded seconds.
    let s = play(&path, None, 10_200, &[]).await;
    assert!(s.contains("REPLAY 2026-01-05 09:00:10Z +10s 1×"), "{s}");
    assert!(
        s.contains("Space pause"),
        "the footer lists the replay keys:\n{s}"
    );

    // Paused at once: the time stands; a step shows the next reading and stays paused.
    let paused = play(&path, None, 0, &[KeyCode::Char(' ')]).await;
    assert!(
        paused.contains("REPLAY 2026-01-05 09:00:00Z +0s PAUSED"),
        "{paused}"
    );
    let stepped = play(
        &path,
        None,
        0,
        &[KeyCode::Char(' '), KeyCode::Right, KeyCode::Right],
    )
    .await;
    assert!(stepped.contains("09:00:02Z +2s PAUSED"), "{stepped}");
    let back = play(
        &path,
        None,
        0,
        &[
            KeyCode::Char(' '),
            KeyCode::Right,
            KeyCode::Right,
            KeyCode::Left,
        ],
    )
    .await;
    assert!(back.contains("09:00:01Z +1s PAUSED"), "{back}");

    // Faster: 4× for ~5 s of wall time.
    let fast = play(&path, None, 0, &[KeyCode::Char('>'), KeyCode::Char('>')]).await;
    assert!(fast.contains(" 4×"), "{fast}");

    // Seek: ] twice is two minutes on; [ one back; the values are the recording's there.
    let sought = play(
        &path,
        None,
        0,
        &[
            KeyCode::Char(' '),
            KeyCode::Char(']'),
            KeyCode::Char(']'),
            KeyCode::Char('['),
        ],
    )
    .await;
    assert!(sought.contains("09:01:00Z +1m"), "{sought}");
    let started = play(
        &path,
        Some(StartAt::After(60_000)),
        0,
        &[KeyCode::Char(' ')],
    )
    .await;
    assert!(started.contains("09:01:00Z +1m"), "{started}");
    assert_eq!(
        util_title(&sought),
        util_title(&started),
        "{sought}\n{started}"
    );
    assert_ne!(
        util_title(&paused),
        util_title(&sought),
        "the values moved too"
    );

    // The end: said on the status line, the header says END.
    let end = play(&path, None, 0, &[KeyCode::Char('}')]).await;
    assert!(end.contains("09:06:39Z"), "{end}");
    assert!(end.contains("END"), "{end}");
    assert!(
        end.contains("replay: ") && end.contains("end of the recording (400 readings)"),
        "{end}"
    );
    let _ = T0;
}
