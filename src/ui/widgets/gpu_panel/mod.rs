//! One GPU as a bordered panel, its title ([`title`]: the card, its Kubernetes pods) over
//! util and memory-controller bars (and GPM's SM activity between
//! them where the card has GPM, the title saying so), VRAM, power and energy,
//! temperature and fan, SM/memory clocks against their maximum, PCIe traffic and link, throttle
//! reasons (slowdowns highlighted) and VRAM another tenant holds. A lost GPU gets a panel that says so; every absent reading
//! reads `N/A`.

use gpumeter_model::{GpuReading, GpuState};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use gpumeter_core::units::{self, NA};

use crate::ui::theme::{Scale, Theme};
use crate::ui::widgets::fmt::{self, styled};
use crate::ui::widgets::frame_box::FrameBox;
use crate::ui::widgets::text::Lines;
pub use title::short_name;

mod title;

/// One GPU's panel, drawn into a [`crate::ui::layout::PANEL_HEIGHT`]-row cell.
pub struct GpuPanel<'a> {
    /// The reading drawn.
    pub gpu: &'a GpuReading,
    /// VRAM no process visible here holds (another tenant), shown on the last line.
    pub hidden: Option<u64>,
    /// The view is narrowed to this GPU: the border is highlighted.
    pub selected: bool,
    pub theme: &'a Theme,
}

impl Widget for GpuPanel<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let Self {
            gpu,
            hidden,
            selected,
            theme,
        } = self;
        let problem = state_problem(gpu.state);
        let border = match (problem.is_some(), selected) {
            (true, _) => theme.hot,
            (false, true) => theme.border_selected,
            (false, false) => theme.border,
        };
        let room = usize::from(area.width.saturating_sub(2));
        let title = title::title(gpu, problem.is_some(), room, theme);
        let inner = FrameBox::inner(area);
        FrameBox::new(border, title).render(area, buf);
        if inner.width == 0 || inner.height == 0 {
            return;
        }
        let lines = match problem {
            Some((headline, detail)) => problem_lines(headline, detail, inner.height, theme),
            None => reading_lines(gpu, hidden, usize::from(inner.width), theme),
        };
        Lines::new(lines).render(inner, buf);
    }
}

/// What to say instead of readings for a GPU that does not answer.
pub fn state_problem(state: GpuState) -> Option<(&'static str, &'static str)> {
    match state {
        GpuState::Lost => Some((
            "LOST — fell off the bus",
            "no readings; the other GPUs go on",
        )),
        GpuState::ResetRequired => {
            Some(("RESET REQUIRED", "the GPU needs a reset before it answers"))
        }
        GpuState::Ok | GpuState::Error => None,
    }
}

fn problem_lines(
    headline: &'static str,
    detail: &'static str,
    height: u16,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let mut lines = vec![Line::default(); usize::from(height.saturating_sub(2) / 2)];
    lines.push(Line::from(styled(format!(" {headline} "), theme.alarm)).centered());
    lines.push(Line::from(styled(detail, theme.dim)).centered());
    lines
}

fn label(s: &str, theme: &Theme) -> Span<'static> {
    styled(s.to_string(), theme.label)
}

fn na(theme: &Theme) -> Span<'static> {
    styled(NA, theme.na)
}

fn reading_lines(
    g: &GpuReading,
    hidden: Option<u64>,
    w: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    vec![
        util_line(g, w, theme),
        vram_line(g, w, theme),
        power_line(g, w, theme),
        clock_line(g, w, theme),
        pcie_line(g, w, theme),
        throttle_line(g, hidden, w, theme),
    ]
}

/// `util ████──── 78%  mem ██────── 23%`, split in two halves; with GPM, thirds with the SM
/// activity between them (`util ██ 99% SM act █ 84% mem █ 52%`: the GPU's SM activity, not
/// the processes' SM share the table's `SM%` shows).
fn util_line(g: &GpuReading, w: usize, theme: &Theme) -> Line<'static> {
    if let Some(sm) = g.sm_active_pct {
        let third = w / 3;
        let mut spans = gauge("util ", g.util_gpu_pct.map(f64::from), third, theme);
        spans.extend(gauge(" SM act ", Some(sm), third, theme));
        spans.extend(gauge(
            " mem ",
            g.util_memory_pct.map(f64::from),
            w - 2 * third,
            theme,
        ));
        return Line::from(spans);
    }
    let left = w / 2;
    let right = w - left;
    let mut spans = gauge("util ", g.util_gpu_pct.map(f64::from), left, theme);
    spans.extend(gauge(
        " mem ",
        g.util_memory_pct.map(f64::from),
        right,
        theme,
    ));
    Line::from(spans)
}

/// A labelled bar with its percentage, `width` cells in all.
fn gauge(name: &str, v: Option<f64>, width: usize, theme: &Theme) -> Vec<Span<'static>> {
    let mut spans = vec![label(name, theme)];
    let Some(v) = v else {
        // No bar for an absent reading: `N/A` once, in the bar's place.
        spans.push(styled(
            fmt::pad_right(NA, width.saturating_sub(fmt::width(name))),
            theme.na,
        ));
        return spans;
    };
    let bar_w = width.saturating_sub(fmt::width(name) + 5);
    spans.extend(fmt::bar(Some(v), bar_w, theme, Scale::Work));
    let value = fmt::pct_span(Some(v), theme, Scale::Work);
    spans.push(styled(fmt::pad_left(&value.content, 5), value.style));
    spans
}

fn vram_line(g: &GpuReading, w: usize, theme: &Theme) -> Line<'static> {
    let text = vram_text(g.memory_used_bytes, g.memory_total_bytes);
    let bar_w = w.saturating_sub(5 + 1 + fmt::width(&text));
    let mut spans = vec![label("VRAM ", theme)];
    spans.extend(fmt::bar(g.memory_used_pct(), bar_w, theme, Scale::Capacity));
    spans.push(styled(format!(" {text}"), theme.text));
    Line::from(spans)
}

/// `71.2/80.0GiB`, `N/A/80.0GiB`, `N/A`.
pub fn vram_text(used: Option<u64>, total: Option<u64>) -> String {
    match (used, total) {
        (None, None) => NA.to_string(),
        (Some(u), None) => format!("{}/{NA}", units::bytes(u)),
        (None, Some(t)) => format!("{NA}/{}", units::bytes(t)),
        (Some(u), Some(t)) => {
            let (us, ts) = (units::bytes(u), units::bytes(t));
            // Same unit on both sides: say it once.
            let unit_of = |s: &str| {
                s.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.')
                    .to_string()
            };
            if unit_of(&us) == unit_of(&ts) {
                format!(
                    "{}/{ts}",
                    us.trim_end_matches(|c: char| c.is_ascii_alphabetic())
                )
            } else {
                format!("{us}/{ts}")
            }
        }
    }
}

/// `pwr 355/700W  1.20kWh  58°C  fan N/A`, dropping from the right what does not fit.
fn power_line(g: &GpuReading, w: usize, theme: &Theme) -> Line<'static> {
    let share = match (g.power_watts, g.power_limit_watts) {
        (Some(p), Some(l)) if l > 0.0 => Some(p * 100.0 / l),
        _ => None,
    };
    let draw = match g.power_watts {
        Some(p) => styled(
            format!("{p:.0}"),
            // A GPU drawing near its cap is working: read like util, not like a limit.
            share.map_or(theme.text, |s| theme.share(s, Scale::Work)),
        ),
        None => na(theme),
    };
    let limit = g
        .power_limit_watts
        .map_or_else(|| NA.to_string(), fmt::watts);
    let fixed = vec![
        label("pwr ", theme),
        draw,
        styled(format!("/{limit}"), theme.dim),
    ];
    let segments = vec![
        vec![
            label("  ", theme),
            // A bare `N/A` would not say what is missing: name it.
            match g.energy_millijoules {
                Some(mj) => styled(fmt::energy(mj), theme.text),
                None => styled(format!("energy {NA}"), theme.na),
            },
        ],
        vec![
            label("  temp ", theme),
            match g.temperature_celsius {
                Some(t) => styled(format!("{t}°C"), theme.temperature(t)),
                None => na(theme),
            },
        ],
        vec![
            label("  fan ", theme),
            match g.fan_speed_pct {
                Some(f) => styled(format!("{f}%"), theme.text),
                None => na(theme),
            },
        ],
    ];
    fmt::fit(fixed, segments, w)
}

/// The clocks; the video engines after them when they fit (whole, never cut).
fn clock_line(g: &GpuReading, w: usize, theme: &Theme) -> Line<'static> {
    let slow = |cur: Option<u32>, max: Option<u32>| match (cur, max) {
        (Some(c), Some(m)) if m > 0 && c * 10 < m * 9 => theme.warm,
        (None, _) => theme.na,
        _ => theme.text,
    };
    let fixed = vec![
        label("SM ", theme),
        styled(
            fmt::clock_pair(g.clock_sm_mhz, g.clock_sm_max_mhz),
            slow(g.clock_sm_mhz, g.clock_sm_max_mhz),
        ),
        label("  mem ", theme),
        styled(
            fmt::clock_pair(g.clock_memory_mhz, g.clock_memory_max_mhz),
            slow(g.clock_memory_mhz, g.clock_memory_max_mhz),
        ),
        label(" MHz", theme),
    ];
    // The video engines, on the cards that report them (NVENC/NVDEC: a transcoding or a
    // video-decoding input pipeline shows here, not in the SM utilization).
    let mut segments = Vec::new();
    if g.encoder_util_pct.is_some() || g.decoder_util_pct.is_some() {
        let pct = |v: Option<u32>| match v {
            Some(p) => styled(format!("{p}%"), theme.text),
            None => na(theme),
        };
        segments.push(vec![
            label("  enc ", theme),
            pct(g.encoder_util_pct),
            label(" dec ", theme),
            pct(g.decoder_util_pct),
        ]);
    }
    fmt::fit(fixed, segments, w)
}

/// The PCIe traffic; the link after it when it fits whole (a cut `Gen4 x16` would read `x1`).
fn pcie_line(g: &GpuReading, w: usize, theme: &Theme) -> Line<'static> {
    let rate = |v: Option<u64>| match v {
        Some(b) => styled(units::rate(b as f64), theme.text),
        None => na(theme),
    };
    let fixed = vec![
        label("PCIe RX ", theme),
        rate(g.pcie_rx_bytes_per_s),
        label(" TX ", theme),
        rate(g.pcie_tx_bytes_per_s),
    ];
    let room = w.saturating_sub(fmt::spans_width(&fixed) + 2);
    let link = link_span(g, theme);
    // A link below its maximum keeps its warning without the `(max …)` when that is too long.
    let link = match link.content.split_once(" (max ") {
        Some((now, _)) if fmt::width(&link.content) > room => styled(now.to_string(), link.style),
        _ => link,
    };
    fmt::fit(fixed, vec![vec![label("  ", theme), link]], w)
}

/// `Gen5 x16`; below the card's maximum, `Gen3 x8 (max Gen5 x16)` in the warm colour.
pub fn link_span(g: &GpuReading, theme: &Theme) -> Span<'static> {
    let part = |prefix: &str, v: Option<u32>| {
        v.map_or_else(|| format!("{prefix}{NA}"), |v| format!("{prefix}{v}"))
    };
    if g.pcie_link_gen.is_none() && g.pcie_link_width.is_none() {
        return styled(format!("link {NA}"), theme.na);
    }
    let now = format!(
        "{} {}",
        part("Gen", g.pcie_link_gen),
        part("x", g.pcie_link_width)
    );
    let below =
        |cur: Option<u32>, max: Option<u32>| matches!((cur, max), (Some(c), Some(m)) if c < m);
    if below(g.pcie_link_gen, g.pcie_link_gen_max)
        || below(g.pcie_link_width, g.pcie_link_width_max)
    {
        let max = format!(
            "{} {}",
            part("Gen", g.pcie_link_gen_max),
            part("x", g.pcie_link_width_max)
        );
        styled(format!("{now} (max {max})"), theme.warm)
    } else {
        styled(now, theme.text)
    }
}

fn throttle_line(g: &GpuReading, hidden: Option<u64>, w: usize, theme: &Theme) -> Line<'static> {
    let mut fixed = vec![label("throttle ", theme)];
    fixed.extend(throttle_spans(g, theme));
    // Another tenant's memory (the driver lists no PID we can see): said, never blamed, and
    // kept whole or not at all.
    let segments = hidden
        .map(|h| {
            vec![
                label("  hidden VRAM ", theme),
                styled(units::bytes(h), theme.warm),
            ]
        })
        .into_iter()
        .collect();
    fmt::fit(fixed, segments, w)
}

/// The throttle reasons: slowdowns hot, harmless ones dim, `none` or `N/A`.
pub fn throttle_spans(g: &GpuReading, theme: &Theme) -> Vec<Span<'static>> {
    match &g.throttle_reasons {
        None => vec![na(theme)],
        Some(r) if r.is_empty() => vec![styled("none", theme.dim)],
        Some(reasons) => {
            let mut spans = Vec::with_capacity(reasons.len() * 2);
            for (i, r) in reasons.iter().enumerate() {
                if i > 0 {
                    spans.push(styled(" ", theme.text));
                }
                let style = if r.is_slowdown() {
                    theme.hot
                } else {
                    theme.dim
                };
                spans.push(styled(r.label(), style));
            }
            spans
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vram_text_states_the_unit_once_and_na_when_absent() {
        let gib = 1u64 << 30;
        assert_eq!(vram_text(Some(40 * gib), Some(80 * gib)), "40.0/80.0GiB");
        assert_eq!(vram_text(Some(512 << 20), Some(80 * gib)), "512MiB/80.0GiB");
        assert_eq!(vram_text(None, Some(80 * gib)), "N/A/80.0GiB");
        assert_eq!(vram_text(None, None), "N/A");
        assert_eq!(vram_text(Some(0), Some(8 * gib)), "0B/8.0GiB");
    }

    #[test]
    fn link_below_max_says_so() {
        let theme = Theme::colour();
        let mut g = GpuReading {
            pcie_link_gen: Some(3),
            pcie_link_gen_max: Some(5),
            pcie_link_width: Some(16),
            pcie_link_width_max: Some(16),
            ..GpuReading::default()
        };
        let s = link_span(&g, &theme);
        assert_eq!(s.content, "Gen3 x16 (max Gen5 x16)");
        assert_eq!(s.style, theme.warm);
        g.pcie_link_gen = Some(5);
        assert_eq!(link_span(&g, &theme).content, "Gen5 x16");
        assert_eq!(
            link_span(&GpuReading::default(), &theme).content,
            "link N/A"
        );
    }

    #[test]
    fn the_pcie_line_keeps_the_link_whole_or_drops_only_its_maximum() {
        let theme = Theme::colour();
        let text = |g: &GpuReading, w: usize| -> String {
            pcie_line(g, w, &theme)
                .spans
                .iter()
                .map(|s| s.content.as_ref())
                .collect()
        };
        let mut g = GpuReading {
            pcie_rx_bytes_per_s: Some(28_700),
            pcie_tx_bytes_per_s: Some(9_200),
            pcie_link_gen: Some(1),
            pcie_link_width: Some(16),
            pcie_link_gen_max: Some(5),
            pcie_link_width_max: Some(16),
            ..GpuReading::default()
        };
        assert!(
            text(&g, 80).ends_with("Gen1 x16 (max Gen5 x16)"),
            "{}",
            text(&g, 80)
        );
        // 48 cells (a 200-column grid of four): the link now, still in the warm colour.
        assert!(
            text(&g, 48).ends_with("TX 9.2KB/s  Gen1 x16"),
            "{}",
            text(&g, 48)
        );
        let last = pcie_line(&g, 48, &theme).spans.last().map(|s| s.style);
        assert_eq!(last, Some(theme.warm));
        // Too narrow for the link at all: the rates only, never `Gen1 x1`.
        g.pcie_rx_bytes_per_s = Some(691_100_000);
        assert!(text(&g, 36).ends_with("TX 9.2KB/s"), "{}", text(&g, 36));
    }

    #[test]
    fn the_video_engines_show_where_the_card_reports_them() {
        let theme = Theme::colour();
        let text = |g: &GpuReading| -> String {
            clock_line(g, 200, &theme)
                .spans
                .iter()
                .map(|s| s.content.as_ref())
                .collect()
        };
        let mut g = GpuReading::default();
        assert!(!text(&g).contains("enc"), "{}", text(&g));
        g.decoder_util_pct = Some(41);
        assert!(text(&g).ends_with("enc N/A dec 41%"), "{}", text(&g));
        g.encoder_util_pct = Some(0);
        assert!(text(&g).ends_with("enc 0% dec 41%"), "{}", text(&g));
    }
}
