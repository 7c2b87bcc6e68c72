//! Where a replay starts (`--start 90s`, `--start 03:10`): shared by the dashboard's replay and
//! the command line that parses it.

/// Where `--start` puts a replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartAt {
    /// This long after the first reading (`90s`, `2h`).
    After(i64),
    /// The first time this UTC time of day (`03:10`, in minutes) comes on or after the first
    /// reading.
    Clock(i64),
}

/// Reads `--start`: a duration (`90s`, `5m`) or a UTC time of day (`HH:MM`).
pub fn parse_start(s: &str) -> Result<StartAt, String> {
    if let Some((h, m)) = s.split_once(':') {
        let bad = || format!("'{s}' is not a time of day (HH:MM, UTC, e.g. 03:10)");
        let h: i64 = h.trim().parse().map_err(|_| bad())?;
        let m: i64 = m.trim().parse().map_err(|_| bad())?;
        if !(0..24).contains(&h) || !(0..60).contains(&m) {
            return Err(bad());
        }
        return Ok(StartAt::Clock(h * 60 + m));
    }
    let d = crate::units::parse_duration(s)?;
    Ok(StartAt::After(
        i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
    ))
}

impl StartAt {
    /// The recorded time this names, for a recording whose first reading is at `first_ms`.
    pub fn resolve(self, first_ms: i64) -> i64 {
        const DAY: i64 = 86_400_000;
        match self {
            StartAt::After(ms) => first_ms.saturating_add(ms),
            StartAt::Clock(min) => {
                let at = first_ms - first_ms.rem_euclid(DAY) + min * 60_000;
                if at < first_ms { at + DAY } else { at }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 09:00 UTC (2026-01-05).
    const T0: i64 = 1_767_603_600_000;

    #[test]
    fn start_parses_and_resolves() {
        assert_eq!(parse_start("90s"), Ok(StartAt::After(90_000)));
        assert_eq!(parse_start("03:10"), Ok(StartAt::Clock(190)));
        assert!(parse_start("25:00").unwrap_err().contains("HH:MM"));
        assert!(parse_start("soon").is_err());
        // 08:59 comes next on the following day for a recording that starts at 09:00.
        assert_eq!(
            StartAt::Clock(8 * 60 + 59).resolve(T0),
            T0 + 86_400_000 - 60_000
        );
        assert_eq!(StartAt::Clock(9 * 60).resolve(T0), T0);
    }
}
