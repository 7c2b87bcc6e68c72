//! The part of `/proc/<pid>/stat` the host sampler keeps, and its parser: byte-wise, with no
//! allocation but a new comm (this runs for every stat a tick reads; see `scan`). Pure: reads no
//! file.

use std::sync::Arc;

/// The part of `/proc/<pid>/stat` the sampler keeps.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ProcStat {
    pub(super) ppid: u32,
    /// Shared: a member's stat is carried (cloned) every tick between its reads.
    pub(super) comm: Arc<str>,
    pub(super) state: char,
    pub(super) threads: Option<u32>,
    pub(super) rss_pages: u64,
    /// Ticks after boot.
    pub(super) start_ticks: u64,
    /// utime + stime, in ticks.
    pub(super) cpu_ticks: u64,
}

/// Parses one stat line: `pid (comm) state ppid …`, the comm possibly holding spaces and
/// parentheses (hence the last `)`). Byte-wise, stopping after field 24: this runs for every
/// stat a tick reads.
pub(super) fn parse_stat(text: &[u8]) -> Option<ProcStat> {
    parse_stat_reusing(text, None)
}

/// As [`parse_stat`], its comm the `known` one when that reads the same (a process's comm
/// rarely changes: no string is made per read).
pub(super) fn parse_stat_reusing(text: &[u8], known: Option<&Arc<str>>) -> Option<ProcStat> {
    let f = parse_stat_fields(text)?;
    let comm = match known {
        Some(k) if k.as_bytes() == f.comm => Arc::clone(k),
        _ => Arc::from(&*String::from_utf8_lossy(f.comm)),
    };
    Some(ProcStat {
        ppid: f.ppid,
        comm,
        state: f.state,
        threads: f.threads,
        rss_pages: f.rss_pages,
        start_ticks: f.start_ticks,
        cpu_ticks: f.cpu_ticks,
    })
}

/// A stat line's fields, its comm still the raw bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct StatFields<'a> {
    pub(super) ppid: u32,
    pub(super) comm: &'a [u8],
    pub(super) state: char,
    pub(super) threads: Option<u32>,
    pub(super) rss_pages: u64,
    pub(super) start_ticks: u64,
    pub(super) cpu_ticks: u64,
}

/// The fields [`parse_stat`] keeps, allocating nothing.
pub(super) fn parse_stat_fields(text: &[u8]) -> Option<StatFields<'_>> {
    let open = text.iter().position(|&b| b == b'(')?;
    let close = text.iter().rposition(|&b| b == b')')?;
    let comm = text.get(open + 1..close)?;
    let rest = text.get(close + 1..)?;
    // Fields 3 (state) to 24 (rss) of proc(5), picked in one pass over the bytes (no list
    // built per read), stopping after the last one kept.
    let mut f: [&[u8]; 22] = [b""; 22];
    let mut seen = 0;
    let mut start = None;
    for (i, &b) in rest.iter().enumerate() {
        match (b.is_ascii_whitespace(), start) {
            (false, None) => start = Some(i),
            (true, Some(s)) => {
                f[seen] = &rest[s..i];
                seen += 1;
                start = None;
                if seen == f.len() {
                    break;
                }
            }
            _ => {}
        }
    }
    if let (Some(s), true) = (start, seen < f.len()) {
        f[seen] = &rest[s..];
        seen += 1;
    }
    if seen < f.len() {
        return None;
    }
    let at = |n: usize| f[n - 3];
    let num = |n: usize| decimal(at(n));
    let signed = |n: usize| match at(n) {
        [b'-', digits @ ..] => decimal(digits)
            .and_then(|v| i64::try_from(v).ok())
            .map(|v| -v),
        digits => decimal(digits).and_then(|v| i64::try_from(v).ok()),
    };
    let state = *at(3).first()?;
    Some(StatFields {
        ppid: u32::try_from(signed(4)?).unwrap_or(0),
        comm,
        state: state.is_ascii().then_some(char::from(state))?,
        threads: signed(20).and_then(|t| u32::try_from(t).ok()),
        rss_pages: u64::try_from(signed(24)?).unwrap_or(0),
        start_ticks: num(22)?,
        cpu_ticks: num(14)?.saturating_add(num(15)?),
    })
}

/// An unsigned decimal (digits only; `None` for anything else or an overflow).
fn decimal(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |acc, &b| {
        let d = b.checked_sub(b'0').filter(|d| *d < 10)?;
        acc.checked_mul(10)?.checked_add(u64::from(d))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &[u8] = b"4242 (py (x) y) S 41 4242 4242 0 -1 4194560 100 0 0 0 \
        250 50 0 0 20 0 7 0 123456 1000000 2048 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 \
        17 3 0 0 0 0 0\n";

    #[test]
    fn parses_the_fields_kept_with_a_hostile_comm() {
        let s = parse_stat(LINE).unwrap();
        assert_eq!(&*s.comm, "py (x) y");
        assert_eq!((s.state, s.ppid, s.threads), ('S', 41, Some(7)));
        assert_eq!(
            (s.cpu_ticks, s.start_ticks, s.rss_pages),
            (300, 123456, 2048)
        );
    }

    #[test]
    fn a_cut_line_is_no_reading() {
        assert_eq!(parse_stat(&LINE[..60]), None);
        assert_eq!(parse_stat(b"4242 py S 1"), None);
    }

    #[test]
    fn numbers_are_digits_only_and_a_negative_rss_is_zero() {
        let line = |ppid: &str, rss: &str, start: &str| {
            format!("7 (w) R {ppid} 7 7 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 {start} 1000 {rss} 1 1 0\n")
        };
        let s = parse_stat(line("1", "-3", "99").as_bytes()).unwrap();
        assert_eq!(
            (s.ppid, s.rss_pages, s.start_ticks, s.cpu_ticks),
            (1, 0, 99, 3)
        );
        assert_eq!(s.state, 'R');
        // A negative parent (none) reads as 0, as before.
        assert_eq!(
            parse_stat(line("-1", "5", "99").as_bytes()).unwrap().ppid,
            0
        );
        for bad in [line("1", "5", "9x"), line("1", "5", "+9")] {
            assert_eq!(parse_stat(bad.as_bytes()), None, "{bad}");
        }
        assert_eq!(
            parse_stat(line("1", "5", "99999999999999999999999").as_bytes()),
            None,
            "an overflow is no reading"
        );
    }
}
