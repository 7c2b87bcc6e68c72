//! The dashboard's colours: one struct of [`Style`]s the widgets read, a default colour theme and a
//! monochrome one (for `NO_COLOR` / `--no-color`), and the utilization thresholds that pick
//! green, yellow or red. Theme files (`themes/`) are read in [`file`] (styles as text in
//! [`style`]). Nothing here draws.

pub mod file;
mod style;

use ratatui::style::{Color, Modifier, Style};

use gpumeter_core::engine::rules::Severity;

/// A load (VRAM, power, host CPU) at or above this share is "warm" (yellow).
pub const WARM_PCT: f64 = 50.0;
/// A load at or above this share is "hot" (red).
pub const HOT_PCT: f64 = 80.0;
/// GPU work (util, SM activity) at or above this share is the GPU earning its rate: drawn cool.
pub const WORKING_PCT: f64 = 80.0;
/// GPU work at or above this, and below [`WORKING_PCT`], is partial use (warm); below it the
/// GPU does next to nothing and is drawn as plain text (the idle alert says what that costs).
pub const PARTIAL_PCT: f64 = 20.0;

/// Which way a share reads. On a tool about idle money a GPU at 98 % is good news and must
/// not wear the alarm's red; a VRAM or power share near its limit is a warning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// GPU work: util, SM activity, memory-controller util (high is good).
    Work,
    /// A load against a limit the host runs into: host CPU, iowait, load (high is a warning).
    Load,
    /// Memory that fills up by design (VRAM: allocators cache what they can): only nearly
    /// full is a warning, from [`FULL_WARM_PCT`]; the oom-soon rule judges the growth.
    Capacity,
}
/// A [`Scale::Capacity`] share at or above this is warm.
pub const FULL_WARM_PCT: f64 = 95.0;
/// A [`Scale::Capacity`] share at or above this is hot.
pub const FULL_HOT_PCT: f64 = 98.0;
/// Temperature at or above this is drawn hot.
pub const HOT_TEMP_C: u32 = 85;
/// Temperature at or above this is drawn warm.
pub const WARM_TEMP_C: u32 = 75;

/// Every style the widgets use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Theme {
    /// Whether colours are off (styles then use only bold/dim/reverse).
    pub monochrome: bool,
    pub text: Style,
    pub dim: Style,
    pub label: Style,
    pub title: Style,
    pub border: Style,
    /// Border of the GPU the process table is filtered to.
    pub border_selected: Style,
    /// A load below [`WARM_PCT`]; GPU work from [`WORKING_PCT`] up ([`Scale`]).
    pub cool: Style,
    /// A load from [`WARM_PCT`] to [`HOT_PCT`]; partial GPU work.
    pub warm: Style,
    /// A load from [`HOT_PCT`] up.
    pub hot: Style,
    /// Empty part of a bar.
    pub bar_empty: Style,
    /// `N/A` readings.
    pub na: Style,
    /// Lost GPUs, failing sources: must catch the eye.
    pub alarm: Style,
    pub table_header: Style,
    /// The column the table is sorted by.
    pub sort_column: Style,
    pub selected_row: Style,
    /// Key names in hints and help.
    pub key: Style,
    /// The filter input while it is being edited.
    pub input: Style,
    /// Alert severities: the label, the arrow before the next step, the panel's border.
    pub alert_high: Style,
    pub alert_moderate: Style,
    pub alert_info: Style,
    /// One colour per GPU in the charts (index modulo the length).
    pub series: Vec<Style>,
}

impl Default for Theme {
    fn default() -> Self {
        Self::colour()
    }
}

impl Theme {
    /// The default colour theme.
    pub fn colour() -> Self {
        let series = [
            Color::Cyan,
            Color::Magenta,
            Color::Yellow,
            Color::Green,
            Color::LightBlue,
            Color::LightRed,
            Color::White,
            Color::LightGreen,
        ]
        .into_iter()
        .map(|c| Style::new().fg(c))
        .collect();
        Self {
            monochrome: false,
            text: Style::new(),
            dim: Style::new().fg(Color::DarkGray),
            label: Style::new().fg(Color::Gray),
            title: Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            border: Style::new().fg(Color::DarkGray),
            border_selected: Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            cool: Style::new().fg(Color::Green),
            warm: Style::new().fg(Color::Yellow),
            hot: Style::new().fg(Color::Red),
            bar_empty: Style::new().fg(Color::DarkGray),
            na: Style::new().fg(Color::DarkGray),
            alarm: Style::new()
                .fg(Color::White)
                .bg(Color::Red)
                .add_modifier(Modifier::BOLD),
            table_header: Style::new().fg(Color::Black).bg(Color::Green),
            sort_column: Style::new()
                .fg(Color::Black)
                .bg(Color::Cyan)
                .add_modifier(Modifier::BOLD),
            selected_row: Style::new().bg(Color::Blue).add_modifier(Modifier::BOLD),
            key: Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            input: Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
            alert_high: Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
            alert_moderate: Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
            alert_info: Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            series,
        }
    }

    /// No colours at all: emphasis by bold, dim and reverse video only.
    pub fn monochrome() -> Self {
        let plain = Style::new();
        let bold = Style::new().add_modifier(Modifier::BOLD);
        let dim = Style::new().add_modifier(Modifier::DIM);
        let reverse = Style::new().add_modifier(Modifier::REVERSED);
        Self {
            monochrome: true,
            text: plain,
            dim,
            label: plain,
            title: bold,
            border: plain,
            border_selected: bold,
            cool: plain,
            warm: plain,
            hot: bold,
            bar_empty: dim,
            na: dim,
            alarm: reverse.add_modifier(Modifier::BOLD),
            table_header: reverse,
            sort_column: reverse.add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
            selected_row: reverse.add_modifier(Modifier::BOLD),
            key: bold,
            input: bold,
            alert_high: reverse.add_modifier(Modifier::BOLD),
            alert_moderate: bold,
            alert_info: bold,
            series: vec![plain],
        }
    }

    /// The theme to draw with: `chosen`, unless colours are off (`NO_COLOR` / `--no-color`
    /// win over any theme).
    pub fn for_options(no_color: bool, chosen: &Theme) -> Self {
        if no_color {
            Self::monochrome()
        } else {
            chosen.clone()
        }
    }

    /// The style for a share (0–100) read on `scale`.
    pub fn share(&self, pct: f64, scale: Scale) -> Style {
        match scale {
            Scale::Load => self.level(pct),
            Scale::Capacity if pct >= FULL_HOT_PCT => self.hot,
            Scale::Capacity if pct >= FULL_WARM_PCT => self.warm,
            Scale::Capacity => self.cool,
            Scale::Work if pct >= WORKING_PCT => self.cool,
            Scale::Work if pct >= PARTIAL_PCT => self.warm,
            Scale::Work => self.text,
        }
    }

    /// The style for a load (0–100): cool, warm or hot.
    pub fn level(&self, pct: f64) -> Style {
        if pct >= HOT_PCT {
            self.hot
        } else if pct >= WARM_PCT {
            self.warm
        } else {
            self.cool
        }
    }

    /// The style for a temperature.
    pub fn temperature(&self, celsius: u32) -> Style {
        if celsius >= HOT_TEMP_C {
            self.hot
        } else if celsius >= WARM_TEMP_C {
            self.warm
        } else {
            self.text
        }
    }

    /// The style of an alert's severity.
    pub fn severity(&self, s: Severity) -> Style {
        match s {
            Severity::High => self.alert_high,
            Severity::Moderate => self.alert_moderate,
            Severity::Info => self.alert_info,
        }
    }

    /// The chart colour of one GPU.
    pub fn series_style(&self, gpu_index: u32) -> Style {
        let n = self.series.len().max(1);
        self.series
            .get(gpu_index as usize % n)
            .copied()
            .unwrap_or_default()
    }
}

/// Whether the environment asks for no colour (`NO_COLOR` set and non-empty, see no-color.org).
pub fn no_color_env() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_follow_thresholds() {
        let t = Theme::colour();
        assert_eq!(t.level(10.0), t.cool);
        assert_eq!(t.level(50.0), t.warm);
        assert_eq!(t.level(79.9), t.warm);
        assert_eq!(t.level(80.0), t.hot);
        assert_eq!(t.hot.fg, Some(Color::Red));
        // GPU work reads the other way: a busy GPU is the good news, never the alarm's red.
        assert_eq!(t.share(98.0, Scale::Work), t.cool);
        assert_eq!(t.share(40.0, Scale::Work), t.warm);
        assert_eq!(t.share(3.0, Scale::Work), t.text);
        assert_eq!(t.share(98.0, Scale::Load), t.hot);
        // A training job's VRAM at 90 % is its allocator's cache, not a warning.
        assert_eq!(t.share(90.0, Scale::Capacity), t.cool);
        assert_eq!(t.share(96.0, Scale::Capacity), t.warm);
        assert_eq!(t.share(99.0, Scale::Capacity), t.hot);
    }

    #[test]
    fn monochrome_has_no_colours() {
        let t = Theme::monochrome();
        let styles = [
            t.text,
            t.dim,
            t.title,
            t.hot,
            t.warm,
            t.alarm,
            t.table_header,
            t.sort_column,
            t.selected_row,
            t.series_style(3),
            t.alert_high,
            t.alert_moderate,
            t.alert_info,
        ];
        assert!(styles.iter().all(|s| s.fg.is_none() && s.bg.is_none()));
        // Emphasis survives without colour.
        assert!(t.hot.add_modifier.contains(Modifier::BOLD));
        assert!(t.selected_row.add_modifier.contains(Modifier::REVERSED));
    }

    #[test]
    fn series_colours_wrap_around() {
        let t = Theme::colour();
        assert_eq!(t.series_style(0), t.series_style(8));
        assert_ne!(t.series_style(0), t.series_style(1));
    }
}
