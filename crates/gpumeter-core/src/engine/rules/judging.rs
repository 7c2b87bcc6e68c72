//! How long the rules still watch before they can judge. A quiet screen in the first minutes
//! reads as healthy unless it says that nothing has been judged yet: this lists the rules
//! whose window has not yet passed since the first reading, shortest first. Reads only the
//! rules' settings and the readings' times.

use super::config::RulesConfig;

/// Rules still filling their window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judging {
    /// Readings' time since the first one.
    pub watched_ms: i64,
    /// Each window still to fill and the rules that wait for it, shortest first.
    pub waiting: Vec<(i64, Vec<&'static str>)>,
}

/// The rules of `config` that wait longer than `watched_ms` for their first verdict; `None`
/// once every one of them can judge. The rules judged at once (XIDs, a lost GPU) and those
/// that wait for a trend over many minutes (VRAM, forgotten allocations) are left out: the
/// line is about the first minutes.
pub fn judging(config: &RulesConfig, watched_ms: i64) -> Option<Judging> {
    let rules: [(&'static str, bool, i64); 5] = [
        ("starved", config.starved.enabled, config.starved.window_ms),
        (
            "throttle",
            config.throttle.enabled,
            config.throttle.window_ms,
        ),
        ("shared", config.shared.enabled, config.shared.window_ms),
        ("idle", config.idle.enabled, config.idle.window_ms),
        ("hung", config.hung.enabled, config.hung.window_ms),
    ];
    let mut waiting: Vec<(i64, Vec<&'static str>)> = Vec::new();
    for (name, enabled, window) in rules {
        if !enabled || window <= watched_ms {
            continue;
        }
        match waiting.iter_mut().find(|(w, _)| *w == window) {
            Some((_, names)) => names.push(name),
            None => waiting.push((window, vec![name])),
        }
    }
    waiting.sort_by_key(|(w, _)| *w);
    (!waiting.is_empty()).then_some(Judging {
        watched_ms,
        waiting,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rules_wait_for_their_windows_shortest_first_then_nothing() {
        let c = RulesConfig::default();
        let j = judging(&c, 20_000).unwrap();
        assert_eq!(j.watched_ms, 20_000);
        assert_eq!(
            j.waiting,
            vec![
                (60_000, vec!["starved", "throttle", "shared"]),
                (120_000, vec!["idle", "hung"]),
            ]
        );
        let j = judging(&c, 60_000).unwrap();
        assert_eq!(j.waiting, vec![(120_000, vec!["idle", "hung"])]);
        assert_eq!(judging(&c, 120_000), None);
        let mut off = c.clone();
        off.idle.enabled = false;
        off.hung.enabled = false;
        assert_eq!(judging(&off, 60_000), None);
    }
}
