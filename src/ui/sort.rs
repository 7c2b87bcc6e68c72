//! The process table's sort columns, in the order `s` cycles through them, with the direction
//! each starts in (numbers biggest first, names A–Z).

/// A column the process table can be sorted by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortColumn {
    Pid,
    User,
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
    pub const ALL: [SortColumn; 9] = [
        SortColumn::Pid,
        SortColumn::User,
        SortColumn::Gpu,
        SortColumn::Vram,
        SortColumn::Sm,
        SortColumn::Cpu,
        SortColumn::Rss,
        SortColumn::Runtime,
        SortColumn::Command,
    ];

    /// The next column `s` moves to.
    pub fn next(self) -> SortColumn {
        let i = Self::ALL.iter().position(|c| *c == self).unwrap_or(0);
        Self::ALL[(i + 1) % Self::ALL.len()]
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
            c = c.next();
            seen.push(c);
        }
        assert_eq!(seen, SortColumn::ALL.to_vec());
        assert_eq!(c.next(), SortColumn::Pid);
    }

    #[test]
    fn numbers_start_descending_names_ascending() {
        assert!(SortColumn::Vram.descending_by_default());
        assert!(!SortColumn::User.descending_by_default());
        assert!(!SortColumn::Pid.descending_by_default());
    }
}
