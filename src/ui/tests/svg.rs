//! A ratatui [`Buffer`] as an SVG picture with its colours, for the screenshots in
//! `screenshots/`: backgrounds as rects, text as monospace runs with every glyph placed on its
//! own cell (so a font with other widths for box or braille characters cannot drift), named
//! colours from a fixed dark palette, reverse video swapped, XML escaped. Deterministic: sorted
//! attributes, integer coordinates, nothing from the clock or the machine. Test-only.

use std::fmt::Write;

use ratatui::buffer::{Buffer, Cell};
use ratatui::style::{Color, Modifier};
use unicode_width::UnicodeWidthStr;

/// A cell's size in pixels, and the font drawn in it: DejaVu Sans Mono (and Menlo) advance
/// 1233/2048 em, 9.0 px at this size, so even a renderer that ignores per-glyph x lines up.
const CELL_W: u32 = 9;
const CELL_H: u32 = 18;
const FONT_SIZE: &str = "14.95";
/// From a row's top to the text baseline.
const BASELINE: u32 = 14;
/// Margin around the terminal.
const PAD: u32 = 12;
const FONT: &str = "DejaVu Sans Mono, Menlo, Consolas, Liberation Mono, monospace";
const DEFAULT_FG: &str = "#cccccc";
const DEFAULT_BG: &str = "#1e1e1e";

/// The 16 ANSI colours in index order (VS Code's dark terminal palette).
const PALETTE: [&str; 16] = [
    "#000000", "#cd3131", "#0dbc79", "#e5e510", "#2472c8", "#bc3fbc", "#11a8cd", "#e5e5e5",
    "#666666", "#f14c4c", "#23d18b", "#f5f543", "#3b8eea", "#d670d6", "#29b8db", "#ffffff",
];

/// A colour as `#rrggbb`; `Reset` is `default`.
fn hex(c: Color, default: &str) -> String {
    let ansi = |i: usize| PALETTE[i].to_string();
    match c {
        Color::Reset => default.to_string(),
        Color::Black => ansi(0),
        Color::Red => ansi(1),
        Color::Green => ansi(2),
        Color::Yellow => ansi(3),
        Color::Blue => ansi(4),
        Color::Magenta => ansi(5),
        Color::Cyan => ansi(6),
        Color::Gray => ansi(7),
        Color::DarkGray => ansi(8),
        Color::LightRed => ansi(9),
        Color::LightGreen => ansi(10),
        Color::LightYellow => ansi(11),
        Color::LightBlue => ansi(12),
        Color::LightMagenta => ansi(13),
        Color::LightCyan => ansi(14),
        Color::White => ansi(15),
        Color::Rgb(r, g, b) => format!("#{r:02x}{g:02x}{b:02x}"),
        Color::Indexed(i) => indexed(i),
    }
}

/// An xterm-256 colour: the 16 ANSI ones, the 6×6×6 cube, then 24 grays.
fn indexed(i: u8) -> String {
    const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];
    match i {
        0..=15 => PALETTE[usize::from(i)].to_string(),
        16..=231 => {
            let n = usize::from(i - 16);
            let (r, g, b) = (LEVELS[n / 36], LEVELS[n / 6 % 6], LEVELS[n % 6]);
            format!("#{r:02x}{g:02x}{b:02x}")
        }
        _ => {
            let v = 8 + (i - 232) * 10;
            format!("#{v:02x}{v:02x}{v:02x}")
        }
    }
}

/// How a cell's text looks once reverse video is applied.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Look {
    fg: String,
    bg: String,
    modifier: Modifier,
}

impl Look {
    fn of(cell: &Cell) -> Look {
        let (mut fg, mut bg) = (hex(cell.fg, DEFAULT_FG), hex(cell.bg, DEFAULT_BG));
        if cell.modifier.contains(Modifier::REVERSED) {
            std::mem::swap(&mut fg, &mut bg);
        }
        Look {
            fg,
            bg,
            modifier: cell.modifier.difference(Modifier::REVERSED),
        }
    }

    /// Spaces show nothing but a background, underline or strike-through.
    fn blank_space(&self, symbol: &str) -> bool {
        symbol.trim().is_empty()
            && !self
                .modifier
                .intersects(Modifier::UNDERLINED | Modifier::CROSSED_OUT)
    }

    fn text_attrs(&self) -> Vec<(&'static str, String)> {
        let mut attrs = vec![("fill", self.fg.clone())];
        let m = self.modifier;
        if m.contains(Modifier::BOLD) {
            attrs.push(("font-weight", "bold".into()));
        }
        if m.contains(Modifier::ITALIC) {
            attrs.push(("font-style", "italic".into()));
        }
        if m.contains(Modifier::DIM) {
            attrs.push(("opacity", "0.6".into()));
        }
        let lines: Vec<&str> = [
            (Modifier::UNDERLINED, "underline"),
            (Modifier::CROSSED_OUT, "line-through"),
        ]
        .iter()
        .filter(|(flag, _)| m.contains(*flag))
        .map(|(_, name)| *name)
        .collect();
        if !lines.is_empty() {
            attrs.push(("text-decoration", lines.join(" ")));
        }
        attrs
    }
}

/// One glyph: its first column, how many columns it covers, its text and look.
struct Glyph {
    col: u32,
    width: u32,
    symbol: String,
    look: Look,
}

fn row_glyphs(buf: &Buffer, y: u16) -> Vec<Glyph> {
    let area = buf.area;
    let mut out = Vec::new();
    let mut x = area.left();
    while x < area.right() {
        let Some(cell) = buf.cell((x, y)) else { break };
        let symbol = cell.symbol();
        let width = u16::try_from(symbol.width()).unwrap_or(1).max(1);
        out.push(Glyph {
            col: u32::from(x - area.left()),
            width: u32::from(width),
            symbol: symbol.to_string(),
            look: Look::of(cell),
        });
        x = x.saturating_add(width);
    }
    out
}

/// XML text or attribute value: the five special characters escaped, control characters (not
/// allowed in XML 1.0) as U+FFFD.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if c.is_control() => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// `<name a="…" b="…">` with the attributes sorted by name (`/>` when `empty`).
fn tag(out: &mut String, name: &str, mut attrs: Vec<(&str, String)>, empty: bool) {
    attrs.sort_by(|a, b| a.0.cmp(b.0));
    out.push('<');
    out.push_str(name);
    for (k, v) in attrs {
        let _ = write!(out, " {k}=\"{}\"", escape(&v));
    }
    out.push_str(if empty { "/>" } else { ">" });
}

fn rect(out: &mut String, x: u32, y: u32, w: u32, h: u32, fill: &str) {
    let n = |v: u32| v.to_string();
    let attrs = vec![
        ("x", n(x)),
        ("y", n(y)),
        ("width", n(w)),
        ("height", n(h)),
        ("fill", fill.to_string()),
    ];
    tag(out, "rect", attrs, true);
    out.push('\n');
}

/// Background runs of one row: one rect per stretch of the same non-default colour.
fn backgrounds(out: &mut String, glyphs: &[Glyph], top: u32) {
    let mut i = 0;
    while i < glyphs.len() {
        let bg = &glyphs[i].look.bg;
        let mut j = i;
        while j < glyphs.len() && glyphs[j].look.bg == *bg {
            j += 1;
        }
        if bg != DEFAULT_BG {
            let (start, last) = (&glyphs[i], &glyphs[j - 1]);
            let cols = last.col + last.width - start.col;
            rect(
                out,
                PAD + start.col * CELL_W,
                top,
                cols * CELL_W,
                CELL_H,
                bg,
            );
        }
        i = j;
    }
}

/// Whether a glyph is drawn on its own: braille (the charts) is in no common monospace font, and
/// renderers that ignore per-glyph x (librsvg) would advance by the fallback font's width.
fn alone(symbol: &str) -> bool {
    symbol
        .chars()
        .any(|c| ('\u{2800}'..='\u{28ff}').contains(&c))
}

/// Text runs of one row: glyphs of one look, spaces joining whatever run they are in, each
/// glyph at its own x.
fn texts(out: &mut String, glyphs: &[Glyph], top: u32) {
    // (look, glyphs, whether the run takes more glyphs)
    let mut runs: Vec<(&Look, Vec<&Glyph>, bool)> = Vec::new();
    for g in glyphs {
        let blank = g.look.blank_space(&g.symbol);
        let single = alone(&g.symbol);
        match runs.last_mut() {
            Some((look, run, true)) if !single && (blank || **look == g.look) => run.push(g),
            _ if blank => {}
            _ => runs.push((&g.look, vec![g], !single)),
        }
    }
    for (look, mut run, _) in runs {
        while run.last().is_some_and(|g| g.look.blank_space(&g.symbol)) {
            run.pop();
        }
        if run.is_empty() || look.modifier.contains(Modifier::HIDDEN) {
            continue;
        }
        let mut xs = Vec::new();
        let mut text = String::new();
        for g in &run {
            for c in g.symbol.chars() {
                xs.push((PAD + g.col * CELL_W).to_string());
                text.push(c);
            }
        }
        let mut attrs = look.text_attrs();
        attrs.push(("x", xs.join(" ")));
        attrs.push(("y", (top + BASELINE).to_string()));
        tag(out, "text", attrs, false);
        out.push_str(&escape(&text));
        out.push_str("</text>\n");
    }
}

/// The whole buffer as an SVG document titled `title`.
pub fn to_svg(buf: &Buffer, title: &str) -> String {
    let (cols, rows) = (u32::from(buf.area.width), u32::from(buf.area.height));
    let (w, h) = (cols * CELL_W + 2 * PAD, rows * CELL_H + 2 * PAD);
    let mut out = String::new();
    let attrs = vec![
        ("xmlns", "http://www.w3.org/2000/svg".to_string()),
        ("width", w.to_string()),
        ("height", h.to_string()),
        ("viewBox", format!("0 0 {w} {h}")),
        ("font-family", FONT.to_string()),
        ("font-size", FONT_SIZE.to_string()),
        ("role", "img".to_string()),
        ("xml:space", "preserve".to_string()),
    ];
    tag(&mut out, "svg", attrs, false);
    out.push('\n');
    tag(&mut out, "title", Vec::new(), false);
    out.push_str(&escape(title));
    out.push_str("</title>\n");
    rect(&mut out, 0, 0, w, h, DEFAULT_BG);
    let rows: Vec<(u32, Vec<Glyph>)> = (buf.area.top()..buf.area.bottom())
        .map(|y| {
            let top = PAD + u32::from(y - buf.area.top()) * CELL_H;
            (top, row_glyphs(buf, y))
        })
        .collect();
    // All backgrounds first, so no rect covers text of the row above or below.
    for (top, glyphs) in &rows {
        backgrounds(&mut out, glyphs, *top);
    }
    for (top, glyphs) in &rows {
        texts(&mut out, glyphs, *top);
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::layout::Rect;
    use ratatui::style::Style;

    #[test]
    fn cells_become_rects_and_glyph_placed_text() {
        let mut buf = Buffer::empty(Rect::new(0, 0, 6, 2));
        let style = Style::new().fg(Color::Red).bg(Color::Blue).bold();
        buf.set_string(0, 0, "a<&b", style);
        buf.set_string(0, 1, "界x", Style::new().fg(Color::Rgb(1, 2, 255)));
        buf.set_string(4, 1, "R", Style::new().reversed().dim());
        let svg = to_svg(&buf, "a \"test\"");
        assert!(
            svg.starts_with(
                "<svg font-family=\"DejaVu Sans Mono, Menlo, Consolas, Liberation Mono, \
                 monospace\" font-size=\"14.95\" height=\"60\" role=\"img\" \
                 viewBox=\"0 0 78 60\" width=\"78\" xml:space=\"preserve\" \
                 xmlns=\"http://www.w3.org/2000/svg\">\n\
                 <title>a &quot;test&quot;</title>\n\
                 <rect fill=\"#1e1e1e\" height=\"60\" width=\"78\" x=\"0\" y=\"0\"/>\n"
            ),
            "{svg}"
        );
        // Blue background under the four cells, red bold text on it, each glyph on its cell.
        assert!(
            svg.contains("<rect fill=\"#2472c8\" height=\"18\" width=\"36\" x=\"12\" y=\"12\"/>")
        );
        assert!(svg.contains(
            "<text fill=\"#cd3131\" font-weight=\"bold\" x=\"12 21 30 39\" y=\"26\">a&lt;&amp;b</text>"
        ));
        // A wide glyph covers two cells; the next one starts after it.
        assert!(svg.contains("<text fill=\"#0102ff\" x=\"12 30\" y=\"44\">界x</text>"));
        // Reverse video swaps the default colours; dim is an opacity.
        assert!(
            svg.contains("<rect fill=\"#cccccc\" height=\"18\" width=\"9\" x=\"48\" y=\"30\"/>")
        );
        assert!(svg.contains("<text fill=\"#1e1e1e\" opacity=\"0.6\" x=\"48\" y=\"44\">R</text>"));
        assert!(svg.ends_with("</svg>\n"));
        // Blank cells draw nothing.
        assert_eq!(svg.matches("<text").count(), 3);
    }

    #[test]
    fn braille_glyphs_stand_alone() {
        let mut buf = Buffer::empty(Rect::new(0, 0, 5, 1));
        buf.set_string(0, 0, "ab⣿⡇c", Style::new());
        let svg = to_svg(&buf, "b");
        for want in [
            ">ab</text>",
            "x=\"30\" y=\"26\">⣿</text>",
            "x=\"39\" y=\"26\">⡇</text>",
            "x=\"48\" y=\"26\">c</text>",
        ] {
            assert!(svg.contains(want), "{want} in\n{svg}");
        }
    }

    #[test]
    fn colours_map_to_a_fixed_palette() {
        assert_eq!(hex(Color::DarkGray, DEFAULT_FG), "#666666");
        assert_eq!(hex(Color::Reset, DEFAULT_FG), DEFAULT_FG);
        assert_eq!(indexed(9), PALETTE[9]);
        assert_eq!(indexed(16), "#000000");
        assert_eq!(indexed(208), "#ff8700");
        assert_eq!(indexed(255), "#eeeeee");
        assert_eq!(
            escape("<a href='x'>\u{1b}"),
            "&lt;a href=&apos;x&apos;&gt;\u{fffd}"
        );
    }
}
