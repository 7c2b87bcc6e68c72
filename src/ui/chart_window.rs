//! How far back the charts look: one of [`STEPS`] (1 m … 24 h; the zoom keys move along them).
//! The engine's history tiers serve each one: 1 s points up to 15 min, 10 s points up to 6 h,
//! 1 min points beyond. A window shorter than the floor the screen sets (one reading per plot
//! column, [`chart_grid::window_floor_ms`](super::chart_grid::window_floor_ms)) is not
//! offered: the shortest step at or above it stands in. Pure view state.

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
}

impl Default for ChartWindow {
    fn default() -> Self {
        ChartWindow {
            step: DEFAULT_STEP,
            floor_ms: 0,
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

    /// The first step at or above the floor (the longest when none reaches it).
    fn floor_step(&self) -> usize {
        STEPS
            .iter()
            .position(|s| *s >= self.floor_ms)
            .unwrap_or(STEPS.len() - 1)
    }

    fn effective_step(&self) -> usize {
        self.step.max(self.floor_step())
    }

    /// The window as the chart titles say it (`5m`, `1h`).
    pub fn label(&self) -> String {
        gpumeter_core::units::duration(self.span_ms(), gpumeter_core::units::DurationStyle::Compact)
    }

    pub fn wider(&mut self) -> Action {
        let step = self.effective_step();
        if step + 1 >= STEPS.len() {
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
