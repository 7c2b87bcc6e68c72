//! How far back the charts look: one of [`STEPS`] (1 m … 24 h; the zoom keys move along them).
//! The engine's history tiers serve each one: 1 s points up to 15 min, 10 s points up to 6 h,
//! 1 min points beyond. A window shorter than the floor the screen sets (one reading per plot
//! column, [`chart_grid::window_floor_ms`](super::chart_grid::window_floor_ms)) is not
//! offered: the shortest step at or above it stands in. Nor is one longer than the history
//! held needs (the first step that covers it): zooming out on two minutes of readings would
//! squeeze them into the chart's last column. Pure view state.

use super::app::Action;

/// The windows, shortest first.
pub const STEPS: [i64; 6] = [
    60_000,
    5 * 60_000,
    15 * 60_000,
    60 * 60_000,
    6 * 60 * 60_000,
    24 * 60 * 60_000,
];
/// The window the dashboard opens with (5 min).
const DEFAULT_STEP: usize = 1;

/// The charts' window. See the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChartWindow {
    /// The step chosen.
    step: usize,
    /// The shortest window worth showing at the current size (0: any).
    floor_ms: i64,
    /// How far back the history reaches (`None`: unknown, any step is offered).
    held_ms: Option<i64>,
}

impl Default for ChartWindow {
    fn default() -> Self {
        ChartWindow {
            step: DEFAULT_STEP,
            floor_ms: 0,
            held_ms: None,
        }
    }
}

impl ChartWindow {
    /// The window's length: the step chosen, or the shortest one the floor allows.
    pub fn span_ms(&self) -> i64 {
        STEPS
            .get(self.effective_step())
            .copied()
            .unwrap_or(STEPS[DEFAULT_STEP])
    }

    /// Sets the shortest window worth showing (the event loop, from the screen's size).
    pub fn set_floor(&mut self, floor_ms: i64) {
        self.floor_ms = floor_ms.max(0);
    }

    /// Sets how far back the history reaches (the event loop, from the engine).
    pub fn set_held(&mut self, held_ms: Option<i64>) {
        self.held_ms = held_ms.map(|h| h.max(0));
    }

    /// The first step at or above `ms` (the longest when none reaches it).
    fn step_at_or_above(ms: i64) -> usize {
        STEPS
            .iter()
            .position(|s| *s >= ms)
            .unwrap_or(STEPS.len() - 1)
    }

    fn floor_step(&self) -> usize {
        Self::step_at_or_above(self.floor_ms)
    }

    /// The longest step worth offering: the first that covers the history held, never under
    /// the default (the first minutes keep the window they open with instead of growing).
    fn ceiling_step(&self) -> usize {
        self.held_ms.map_or(STEPS.len() - 1, |h| {
            Self::step_at_or_above(h).max(DEFAULT_STEP)
        })
    }

    /// The step chosen, within the ceiling; the floor wins over the ceiling (a chart needs a
    /// reading per column more than it needs to be full).
    fn effective_step(&self) -> usize {
        self.step.min(self.ceiling_step()).max(self.floor_step())
    }

    /// The window as the chart titles say it (`5m`, `1h`).
    pub fn label(&self) -> String {
        gpumeter_core::units::duration(self.span_ms(), gpumeter_core::units::DurationStyle::Compact)
    }

    /// One step longer, unless the current one already covers the history held.
    pub fn wider(&mut self) -> Action {
        let step = self.effective_step();
        if step + 1 >= STEPS.len() || step >= self.ceiling_step() {
            return Action::None;
        }
        self.step = step + 1;
        Action::Redraw
    }

    /// One step shorter, unless that is under the floor.
    pub fn narrower(&mut self) -> Action {
        let step = self.effective_step();
        if step == 0 || step <= self.floor_step() {
            return Action::None;
        }
        self.step = step - 1;
        Action::Redraw
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plus_and_minus_walk_the_steps_and_stop_at_the_ends() {
        let mut w = ChartWindow::default();
        assert_eq!(w.span_ms(), 300_000);
        assert_eq!(w.narrower(), Action::Redraw);
        assert_eq!(w.span_ms(), 60_000);
        assert_eq!(w.narrower(), Action::None);
        for _ in 0..10 {
            w.wider();
        }
        assert_eq!(w.span_ms(), 86_400_000);
        assert_eq!(w.wider(), Action::None);
        assert_eq!(w.label(), "1d");
    }

    #[test]
    fn a_window_longer_than_the_history_is_not_offered() {
        let mut w = ChartWindow::default();
        // Two minutes of readings: 5 m covers them, so zooming out stops there.
        w.set_held(Some(120_000));
        assert_eq!(w.wider(), Action::None);
        assert_eq!(w.span_ms(), 300_000);
        // The history grows past an hour: 6 h is offered, 1 d is not yet.
        w.set_held(Some(2 * 3_600_000));
        for _ in 0..10 {
            w.wider();
        }
        assert_eq!(w.span_ms(), 6 * 3_600_000);
        // Less history again (a replay sought back): the window shrinks to what covers it,
        // never under the default.
        w.set_held(Some(10 * 60_000));
        assert_eq!(w.span_ms(), 15 * 60_000);
        w.set_held(Some(1_000));
        assert_eq!(w.span_ms(), 300_000);
        // The floor still wins: one reading per column before a full chart.
        w.set_floor(20 * 60_000);
        assert_eq!(w.span_ms(), 3_600_000);
    }

    #[test]
    fn a_window_under_the_floor_is_not_offered() {
        let mut w = ChartWindow::default();
        // 73 plot columns at 1 s: 1 m would leave columns without a reading.
        w.set_floor(73_000);
        assert_eq!(w.span_ms(), 300_000);
        assert_eq!(w.narrower(), Action::None);
        assert_eq!(w.span_ms(), 300_000);
        // A slow interval raises the floor past the chosen window: the next step stands in,
        // and zooming out goes on from there.
        w.set_floor(20 * 60_000);
        assert_eq!(w.span_ms(), 3_600_000);
        assert_eq!(w.wider(), Action::Redraw);
        assert_eq!(w.span_ms(), 6 * 3_600_000);
        // Back to a small floor: the chosen step again, and down to 1 m.
        w.set_floor(0);
        assert_eq!(w.narrower(), Action::Redraw);
        assert_eq!(w.span_ms(), 3_600_000);
        // A floor beyond every step: the longest.
        w.set_floor(i64::MAX);
        assert_eq!(w.span_ms(), 86_400_000);
        assert_eq!(w.narrower(), Action::None);
    }
}
