//! The loop driven with a `TestBackend`, a scripted event stream and a fake clock.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use futures_util::stream;
use ratatui::backend::TestBackend;
use tokio::sync::mpsc;

use super::*;
use crate::clock::FakeClock;
use crate::ui::testing::{self, buffer_to_string};

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

#[tokio::test]
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
    assert_eq!(end.unwrap(), EndReason::Quit);
    let screen = buffer_to_string(terminal.backend().buffer());
    assert!(screen.contains("gpu-box-01"), "{screen}");
    assert!(screen.contains("GPU1"), "{screen}");
}

#[tokio::test]
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
    assert_eq!(end.unwrap(), EndReason::Quit);
    let screen = buffer_to_string(terminal.backend().buffer());
    assert!(
        screen.contains("SOURCE FAILING: NVML: driver gone "),
        "{screen}"
    );
    assert!(screen.contains("retry in 4.0s"), "{screen}");
    assert!(!screen.contains('\u{1b}'));
}

#[tokio::test]
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
    assert_eq!(end.unwrap(), EndReason::Signal);
}

#[tokio::test]
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
    assert_eq!(end.unwrap(), EndReason::InputClosed);
}

#[tokio::test]
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
    assert_eq!(end.unwrap(), EndReason::Quit);
    let screen = buffer_to_string(terminal.backend().buffer());
    assert!(screen.contains("the collector stopped"), "{screen}");
}
