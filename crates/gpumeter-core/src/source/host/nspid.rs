//! The lines of `/proc/<pid>/status` the sampler needs: `Uid` (the effective uid, the owner
//! `ps` shows), `NSpid` (the pid in each nested PID namespace, outermost first) and
//! `Cpus_allowed_list` (its CPU affinity: the list, and how many cores it may use).
//!
//! Hand-parsed rather than through `procfs::process::Status`: that parser insists on some
//! thirty other fields and builds a map of all of them, and this runs for many processes.

use gpumeter_model::SharedStr;

/// What `status` says about one process.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct StatusInfo {
    pub(super) euid: Option<u32>,
    /// Outermost (this procfs's namespace) first; empty on kernels before 4.1.
    pub(super) nspid: Vec<u32>,
    /// CPUs in `Cpus_allowed_list`.
    pub(super) cpus_allowed: Option<u32>,
    /// `Cpus_allowed_list` itself (`0-7,16`), when well-formed.
    pub(super) cpus_allowed_list: Option<SharedStr>,
}

impl StatusInfo {
    /// The pid inside the process's own namespace, when it differs from `pid` (containers).
    pub(super) fn ns_pid(&self, pid: u32) -> Option<u32> {
        self.nspid.last().copied().filter(|&inner| inner != pid)
    }

    /// The pid in the namespace of this procfs, as `NSpid` states it.
    pub(super) fn outer_pid(&self) -> Option<u32> {
        self.nspid.first().copied()
    }
}

/// Parses the text of a status file; missing or malformed lines leave fields empty.
pub(super) fn parse_status(text: &[u8]) -> StatusInfo {
    let text = String::from_utf8_lossy(text);
    let mut info = StatusInfo::default();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("Uid:") {
            info.euid = rest.split_whitespace().nth(1).and_then(|s| s.parse().ok());
        } else if let Some(rest) = line.strip_prefix("NSpid:") {
            let parsed: Option<Vec<u32>> =
                rest.split_whitespace().map(|s| s.parse().ok()).collect();
            info.nspid = parsed.unwrap_or_default();
        } else if let Some(rest) = line.strip_prefix("Cpus_allowed_list:") {
            let list = rest.trim();
            info.cpus_allowed = count_cpu_list(list);
            info.cpus_allowed_list = info
                .cpus_allowed
                .map(|_| SharedStr::from(list.chars().take(1024).collect::<String>()));
        }
    }
    info
}

/// How many CPUs a kernel CPU list (`0-3,8,10-11`) names; `None` when malformed or empty.
pub(super) fn count_cpu_list(list: &str) -> Option<u32> {
    let mut n: u32 = 0;
    for part in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (lo, hi) = match part.split_once('-') {
            Some((lo, hi)) => (lo.parse::<u32>().ok()?, hi.parse::<u32>().ok()?),
            None => {
                let one = part.parse::<u32>().ok()?;
                (one, one)
            }
        };
        n = n.checked_add(hi.checked_sub(lo)?.checked_add(1)?)?;
    }
    (n > 0).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_process_has_inner_pid() {
        let s = parse_status(b"Name:\tpython\nUid:\t1000\t1001\t1000\t1000\nNSpid:\t48213\t7\n");
        assert_eq!(s.euid, Some(1001));
        assert_eq!(s.nspid, vec![48213, 7]);
        assert_eq!(s.ns_pid(48213), Some(7));
        assert_eq!(s.outer_pid(), Some(48213));
    }

    #[test]
    fn host_process_has_no_ns_pid() {
        let s = parse_status(b"Uid:\t0\t0\t0\t0\nNSpid:\t1234\n");
        assert_eq!(s.ns_pid(1234), None);
        assert_eq!(s.euid, Some(0));
    }

    #[test]
    fn affinity_counts_the_allowed_cpus() {
        let s =
            parse_status(b"Uid:\t0\t0\t0\t0\nCpus_allowed:\tff\nCpus_allowed_list:\t0-3,8,10-11\n");
        assert_eq!(s.cpus_allowed, Some(7));
        assert_eq!(s.cpus_allowed_list.as_deref(), Some("0-3,8,10-11"));
        assert_eq!(count_cpu_list("5"), Some(1));
        assert_eq!(count_cpu_list(""), None);
        assert_eq!(count_cpu_list("3-1"), None);
        assert_eq!(count_cpu_list("0-x"), None);
    }

    #[test]
    fn old_kernels_and_garbage_leave_fields_empty() {
        let s = parse_status(b"Name:\tx\nUid:\tabc\nNSpid:\t12\tx\n");
        assert_eq!(s, StatusInfo::default());
        assert_eq!(s.ns_pid(12), None);
        assert_eq!(s.outer_pid(), None);
    }
}
