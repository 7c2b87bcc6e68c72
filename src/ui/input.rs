//! Terminal input on a thread of its own: it blocks in crossterm's `event::read` and sends each
//! key, mouse or resize event over a channel the event loop awaits, so the loop wakes only when
//! something arrived.
//!
//! Why not crossterm's `EventStream`: its poll takes the global event-reader lock that its own
//! helper thread holds while it waits, and the loop asks it again after every wake-up (a reading,
//! a timer); each ask spun on that lock with a dozen `sched_yield`s, ~40 a second for nothing.
//! Here only the input thread touches the reader. Touches crossterm's input only.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use crossterm::event::Event;
use futures_util::Stream;
use tokio::sync::mpsc::{Receiver, Sender, channel};

/// Events waiting to be handled before the reader blocks (a pasted burst).
const QUEUE: usize = 256;

/// The events the input thread reads, as a stream; it ends after a read error (sent first).
#[derive(Debug)]
pub struct InputStream {
    rx: Receiver<io::Result<Event>>,
}

impl Stream for InputStream {
    type Item = io::Result<Event>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.rx.poll_recv(cx)
    }
}

/// Starts the input thread. It stops after a read error, or at the first event after the
/// stream is dropped (nobody waits for it: it holds nothing but the reader).
pub fn spawn() -> io::Result<InputStream> {
    let (tx, rx) = channel(QUEUE);
    std::thread::Builder::new()
        .name("gpumeter-input".into())
        .spawn(move || pump(crossterm::event::read, &tx))?;
    Ok(InputStream { rx })
}

/// Reads with `read` and sends until a read fails (that error is sent) or the receiver is gone.
fn pump(mut read: impl FnMut() -> io::Result<Event>, tx: &Sender<io::Result<Event>>) {
    loop {
        let ev = read();
        let failed = ev.is_err();
        if tx.blocking_send(ev).is_err() || failed {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::{KeyCode, KeyEvent};
    use futures_util::StreamExt;

    fn key(c: char) -> Event {
        Event::Key(KeyEvent::from(KeyCode::Char(c)))
    }

    #[tokio::test]
    async fn events_arrive_in_order_then_the_error_ends_the_stream() {
        let (tx, rx) = channel(QUEUE);
        let mut script = vec![
            Ok(key('a')),
            Ok(key('b')),
            Err(io::Error::other("tty gone")),
        ];
        script.reverse();
        let reader = std::thread::spawn(move || {
            pump(|| script.pop().unwrap_or_else(|| Ok(key('z'))), &tx);
        });
        let mut stream = InputStream { rx };
        assert_eq!(stream.next().await.unwrap().unwrap(), key('a'));
        assert_eq!(stream.next().await.unwrap().unwrap(), key('b'));
        let err = stream.next().await.unwrap().unwrap_err();
        assert_eq!(err.to_string(), "tty gone");
        assert!(
            stream.next().await.is_none(),
            "the stream ends after the error"
        );
        reader.join().unwrap();
    }

    #[test]
    fn the_thread_stops_once_nobody_listens() {
        let (tx, rx) = channel(QUEUE);
        drop(rx);
        let mut reads = 0;
        pump(
            || {
                reads += 1;
                Ok(key('x'))
            },
            &tx,
        );
        assert_eq!(reads, 1, "one read, then the closed channel stops it");
    }
}
