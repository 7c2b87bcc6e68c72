//! The process table's sort columns, in the order `s` cycles through them, with the direction
//! each starts in (numbers biggest first, names A–Z). The pod is in the cycle only while the
//! table shows its column (a reading names some pod).

/// A column the process table can be sorted by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortColumn {
    Pid,
    User,
    Pod,
    Gpu,
    Vram,
    Sm,
    Cpu,
    Rss,
    Runtime,
    Command,
}

impl SortColumn {
    /// Every column, in cycling order.
    pub const ALL: [SortColumn; 10] = [
        SortColumn::Pid,
        SortColumn::User,
        SortColumn::Pod,
        SortColumn::Gpu,
        SortColumn::Vram,
        SortColumn::Sm,
        SortColumn::Cpu,
        SortColumn::Rss,
        SortColumn::Runtime,
        SortColumn::Command,
    ];

    /// The next column `s` moves to; the pod is passed over unless `pods` (the table shows
    /// the POD column), so `s` off Kubernetes never lands on a column that is not there.
    pub fn next(self, pods: bool) -> SortColumn {
        let i = Self::ALL.iter().position(|c| *c == self).unwrap_or(0);
        let next = Self::ALL[(i + 1) % Self::ALL.len()];
        if next == SortColumn::Pod && !pods {
            next.next(pods)
        } else {
            next
        }
    }

    /// Whether this column starts sorted biggest first (numbers) rather than A–Z.
    pub fn descending_by_default(self) -> bool {
        matches!(
            self,
            SortColumn::Vram
                | SortColumn::Sm
                | SortColumn::Cpu
                | SortColumn::Rss
                | SortColumn::Runtime
        )
    }

    /// Name for the status line and help.
    pub fn name(self) -> &'static str {
        match self {
            SortColumn::Pid => "PID",
            SortColumn::User => "user",
            SortColumn::Pod => "pod",
            SortColumn::Gpu => "GPU",
            SortColumn::Vram => "VRAM",
            SortColumn::Sm => "SM%",
            SortColumn::Cpu => "CPU%",
            SortColumn::Rss => "RSS",
            SortColumn::Runtime => "runtime",
            SortColumn::Command => "command",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_visits_every_column_and_wraps() {
        let mut c = SortColumn::Pid;
        let mut seen = vec![c];
        for _ in 0..SortColumn::ALL.len() - 1 {
            c = c.next(true);
            seen.push(c);
        }
        assert_eq!(seen, SortColumn::ALL.to_vec());
        assert_eq!(c.next(true), SortColumn::Pid);
    }

    #[test]
    fn without_pods_next_passes_over_the_pod() {
        assert_eq!(SortColumn::User.next(true), SortColumn::Pod);
        assert_eq!(SortColumn::User.next(false), SortColumn::Gpu);
        // Sorted by pod (`O`) with no POD column shown, `s` still moves on.
        assert_eq!(SortColumn::Pod.next(false), SortColumn::Gpu);
        let mut c = SortColumn::Pid;
        for _ in 0..SortColumn::ALL.len() {
            c = c.next(false);
            assert_ne!(c, SortColumn::Pod);
        }
        assert!(!SortColumn::Pod.descending_by_default());
    }

    #[test]
    fn numbers_start_descending_names_ascending() {
        assert!(SortColumn::Vram.descending_by_default());
        assert!(!SortColumn::User.descending_by_default());
        assert!(!SortColumn::Pid.descending_by_default());
    }
}
