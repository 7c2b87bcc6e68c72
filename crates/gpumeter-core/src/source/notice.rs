//! Any source, each reading carrying the spot interruption notice the watch thread last read
//! ([`crate::cloud::watch`]): the tick never waits on the metadata service.

use gpumeter_model::Snapshot;

use super::{Source, SourceError};
use crate::cloud::watch::NoticeWatch;

/// A source whose readings carry the spot notice.
pub struct Noticed {
    inner: Box<dyn Source>,
    watch: NoticeWatch,
}

impl Noticed {
    /// `inner`'s readings, each carrying the notice `watch` last read.
    pub fn new(inner: Box<dyn Source>, watch: NoticeWatch) -> Noticed {
        Noticed { inner, watch }
    }
}

impl Source for Noticed {
    fn sample(&mut self) -> Result<Snapshot, SourceError> {
        let mut snap = self.inner.sample()?;
        if let Some(n) = self.watch.latest() {
            snap.system.interruption = Some(n);
        }
        Ok(snap)
    }

    fn label(&self) -> String {
        self.inner.label()
    }

    fn set_focus(&mut self, focus: super::focus::ProcessFocus) {
        self.inner.set_focus(focus);
    }

    fn catching_up(&self) -> bool {
        self.inner.catching_up()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpumeter_model::Interruption;

    struct Empty;
    impl Source for Empty {
        fn sample(&mut self) -> Result<Snapshot, SourceError> {
            Ok(Snapshot::empty("t", 1_000))
        }
        fn label(&self) -> String {
            "t".into()
        }
    }

    #[test]
    fn readings_carry_the_notice_once_the_watch_has_one() {
        let watch = NoticeWatch::default();
        let mut s = Noticed::new(Box::new(Empty), watch.clone());
        assert_eq!(s.sample().unwrap().system.interruption, None);
        let n = Interruption {
            provider: "AWS".into(),
            action: "terminate".into(),
            at_unix_ms: Some(121_000),
        };
        watch.set(n.clone());
        assert_eq!(s.sample().unwrap().system.interruption, Some(n));
    }
}
