//! The process table's columns: their order, widths, titles and sort keys, which of them fit
//! a width (narrow terminals drop the least useful first, the command keeping its minimum),
//! and which column a header cell belongs to.

use crate::ui::sort::SortColumn;

/// The command column keeps at least this many cells, other columns going first: it is what
/// tells one python process from the next (at 80 columns TIME and RSS give way to it).
pub(super) const MIN_COMMAND: usize = 30;

/// The columns shown only while some row has something for them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Optional {
    /// Some process runs in a container.
    pub container: bool,
    /// Some process or GPU is known to belong to a Kubernetes pod.
    pub pod: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Col {
    Pid,
    User,
    Pod,
    Container,
    Gpu,
    Vram,
    Sm,
    Cpu,
    Rss,
    Time,
    Command,
}

impl Col {
    /// Display order.
    const ORDER: [Col; 11] = [
        Col::Pid,
        Col::User,
        Col::Pod,
        Col::Container,
        Col::Gpu,
        Col::Vram,
        Col::Sm,
        Col::Cpu,
        Col::Rss,
        Col::Time,
        Col::Command,
    ];
    /// Dropped first when the terminal is narrow. The pod goes first: the GPU panel names each
    /// GPU's pod and the process detail (Enter) the process's, so little is lost.
    const DROP_ORDER: [Col; 8] = [
        Col::Pod,
        Col::Container,
        Col::Time,
        Col::Rss,
        Col::User,
        Col::Cpu,
        Col::Sm,
        Col::Gpu,
    ];

    pub(super) fn width(self) -> usize {
        match self {
            Col::Pid => 7,
            Col::User => 9,
            // Fits every column at 120 cells; a longer name is cut with an ellipsis.
            Col::Pod => 13,
            Col::Container => 12,
            Col::Gpu => 4,
            Col::Vram => 9,
            Col::Sm => 4,
            Col::Cpu => 6,
            Col::Rss => 8,
            Col::Time => 7,
            Col::Command => 0,
        }
    }

    pub(super) fn title(self) -> &'static str {
        match self {
            Col::Pid => "PID",
            Col::User => "USER",
            Col::Pod => "POD",
            Col::Container => "CONTAINER",
            Col::Gpu => "GPU",
            Col::Vram => "VRAM",
            Col::Sm => "SM%",
            Col::Cpu => "CPU%",
            Col::Rss => "RSS",
            Col::Time => "TIME",
            Col::Command => "COMMAND",
        }
    }

    pub(super) fn right_aligned(self) -> bool {
        !matches!(
            self,
            Col::User | Col::Pod | Col::Container | Col::Gpu | Col::Command
        )
    }

    pub(super) fn sorts_by(self) -> Option<SortColumn> {
        Some(match self {
            Col::Pid => SortColumn::Pid,
            Col::User => SortColumn::User,
            Col::Pod => SortColumn::Pod,
            Col::Gpu => SortColumn::Gpu,
            Col::Vram => SortColumn::Vram,
            Col::Sm => SortColumn::Sm,
            Col::Cpu => SortColumn::Cpu,
            Col::Rss => SortColumn::Rss,
            Col::Time => SortColumn::Runtime,
            Col::Command => SortColumn::Command,
            Col::Container => return None,
        })
    }
}

/// The columns that fit `width`, in display order.
pub(super) fn columns(width: usize, optional: Optional) -> Vec<Col> {
    let mut cols: Vec<Col> = Col::ORDER
        .into_iter()
        .filter(|c| match c {
            Col::Container => optional.container,
            Col::Pod => optional.pod,
            _ => true,
        })
        .collect();
    let need = |cols: &[Col]| cols.iter().map(|c| c.width() + 1).sum::<usize>() + MIN_COMMAND;
    for drop in Col::DROP_ORDER {
        if need(&cols) <= width {
            break;
        }
        cols.retain(|c| *c != drop);
    }
    cols
}

/// The sort column under cell `x` of the header of a table `width` wide (`None`: a gap, or a
/// column that does not sort).
pub fn column_at(width: usize, optional: Optional, x: usize) -> Option<SortColumn> {
    let cols = columns(width, optional);
    let cmd_w = command_width(&cols, width);
    let mut left = 0;
    for c in cols {
        let w = if c == Col::Command { cmd_w } else { c.width() };
        if x < left + w {
            return c.sorts_by();
        }
        left += w + 1;
        if x < left {
            return None;
        }
    }
    None
}

pub(super) fn command_width(cols: &[Col], width: usize) -> usize {
    let fixed: usize = cols
        .iter()
        .filter(|c| **c != Col::Command)
        .map(|c| c.width() + 1)
        .sum();
    width.saturating_sub(fixed)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: Optional = Optional {
        container: true,
        pod: true,
    };

    #[test]
    fn narrow_tables_drop_columns_but_keep_pid_vram_and_command() {
        let wide = columns(200, ALL);
        assert_eq!(wide.len(), Col::ORDER.len());
        let eighty = columns(80, ALL);
        assert!(!eighty.contains(&Col::Container) && !eighty.contains(&Col::Pod));
        assert!(eighty.contains(&Col::Vram) && eighty.contains(&Col::Cpu));
        let forty = columns(40, ALL);
        assert!(forty.contains(&Col::Pid) && forty.contains(&Col::Vram));
        assert!(forty.contains(&Col::Command));
        for w in [20, 40, 60, 80, 100, 140] {
            let cols = columns(w, ALL);
            let fixed: usize = cols
                .iter()
                .filter(|c| **c != Col::Command)
                .map(|c| c.width() + 1)
                .sum();
            // Columns leave the command its minimum, unless only PID and VRAM are left.
            assert!(
                fixed + MIN_COMMAND <= w || cols.len() == 3,
                "w={w}: {cols:?}"
            );
        }
    }

    #[test]
    fn optional_columns_only_when_someone_has_one() {
        let none = Optional::default();
        assert!(!columns(200, none).contains(&Col::Container));
        assert!(!columns(200, none).contains(&Col::Pod));
        assert!(columns(200, ALL).contains(&Col::Container));
        assert!(columns(200, ALL).contains(&Col::Pod));
    }

    #[test]
    fn the_pod_is_the_first_column_to_go() {
        // Every column fits at 120; one cell less and only the pod has gone.
        assert_eq!(columns(120, ALL).len(), Col::ORDER.len());
        let less = columns(119, ALL);
        assert!(!less.contains(&Col::Pod));
        assert_eq!(less.len(), Col::ORDER.len() - 1);
        // Without containers the pod stays down to 107 cells.
        let pods = Optional {
            container: false,
            pod: true,
        };
        assert!(columns(107, pods).contains(&Col::Pod));
        assert!(!columns(106, pods).contains(&Col::Pod));
    }

    #[test]
    fn a_click_on_the_pod_header_sorts_by_pod() {
        // PID (7) and a gap, USER (9) and a gap: the pod's header starts at cell 18, 13 wide.
        assert_eq!(column_at(120, ALL, 18), Some(SortColumn::Pod));
        assert_eq!(column_at(120, ALL, 30), Some(SortColumn::Pod));
        assert_eq!(column_at(120, ALL, 31), None);
        // The container's does not sort.
        assert_eq!(column_at(120, ALL, 32), None);
        assert_eq!(column_at(120, ALL, 8), Some(SortColumn::User));
        // Its place is the GPU's once it is dropped (PID, USER, GPU at 80 cells).
        assert_eq!(column_at(80, ALL, 18), Some(SortColumn::Gpu));
    }
}
