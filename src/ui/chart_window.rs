//! How far back the charts look: one of [`STEPS`] (1 m … 24 h; `+`/`-` move along them). The
//! engine's history tiers serve each one: 1 s points up to 15 min, 10 s points up to 6 h,
//! 1 min points beyond. Pure view state.

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
    step: usize,
}

impl Default for ChartWindow {
    fn default() -> Self {
        ChartWindow { step: DEFAULT_STEP }
    }
}

impl ChartWindow {
    /// The window's length.
    pub fn span_ms(&self) -> i64 {
        STEPS.get(self.step).copied().unwrap_or(STEPS[DEFAULT_STEP])
    }

    /// The window as the chart titles say it (`5m`, `1h`).
    pub fn label(&self) -> String {
        gpumeter_core::units::duration(self.span_ms(), gpumeter_core::units::DurationStyle::Compact)
    }

    pub fn wider(&mut self) -> Action {
        if self.step + 1 >= STEPS.len() {
            return Action::None;
        }
        self.step += 1;
        Action::Redraw
    }

    pub fn narrower(&mut self) -> Action {
        if self.step == 0 {
            return Action::None;
        }
        self.step -= 1;
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
}
