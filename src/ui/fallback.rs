//! What a finished frame becomes on a lesser terminal: colours reduced to what it can show
//! ([`ColourDepth`], detected from `COLORTERM` and `TERM`), and every glyph reduced to ASCII for
//! `--ascii` (PuTTY with a legacy font, serial consoles, web terminals). Both work on the drawn
//! buffer, after every widget, so nothing drawn escapes them: a theme's 24-bit colours, a
//! chart's braille, a border's box-drawing, a process name in another script. Widgets stay
//! written for the best terminal; this room knows nothing of them.

use ratatui::buffer::Buffer;
use ratatui::style::Color;

/// How many colours the terminal shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ColourDepth {
    /// 24-bit RGB (`COLORTERM=truecolor`).
    #[default]
    TrueColour,
    /// The xterm 256-colour palette (`TERM=*-256color`).
    Ansi256,
    /// The 16 ANSI colours (the Linux console, `TERM=xterm`, `vt100`, …).
    Ansi16,
}

impl ColourDepth {
    /// From the values of `COLORTERM` and `TERM`; a terminal that says nothing gets 16.
    pub fn detect(colorterm: Option<&str>, term: Option<&str>) -> ColourDepth {
        let ct = colorterm.unwrap_or("").to_ascii_lowercase();
        let term = term.unwrap_or("").to_ascii_lowercase();
        if ct == "truecolor" || ct == "24bit" || term.contains("direct") {
            ColourDepth::TrueColour
        } else if term.contains("256") {
            ColourDepth::Ansi256
        } else {
            ColourDepth::Ansi16
        }
    }

    /// From this process's environment.
    pub fn from_env() -> ColourDepth {
        let var = |n: &str| std::env::var(n).ok();
        ColourDepth::detect(var("COLORTERM").as_deref(), var("TERM").as_deref())
    }

    /// Whether this depth shows `colour` as another: when neither of a cell's colours changes,
    /// the pair is shown as it is (two colours that stay apart stay apart).
    fn changes(self, colour: Color) -> bool {
        match self {
            ColourDepth::TrueColour => false,
            ColourDepth::Ansi256 => matches!(colour, Color::Rgb(..)),
            ColourDepth::Ansi16 => matches!(colour, Color::Rgb(..) | Color::Indexed(_)),
        }
    }

    /// `colour` as this depth shows it.
    pub fn reduce(self, colour: Color) -> Color {
        match (self, colour) {
            (ColourDepth::TrueColour, c) => c,
            (ColourDepth::Ansi256, Color::Rgb(r, g, b)) => {
                Color::Indexed(ansi_colours::ansi256_from_rgb((r, g, b)))
            }
            (ColourDepth::Ansi256, c) => c,
            (ColourDepth::Ansi16, Color::Rgb(r, g, b)) => nearest_16(r, g, b),
            (ColourDepth::Ansi16, Color::Indexed(i)) => match NAMED_16.get(usize::from(i)) {
                Some(named) => *named,
                None => {
                    let (r, g, b) = ansi_colours::rgb_from_ansi256(i);
                    nearest_16(r, g, b)
                }
            },
            (ColourDepth::Ansi16, c) => c,
        }
    }
}

/// The 16 ANSI colours in palette order (index 0–15).
const NAMED_16: [Color; 16] = [
    Color::Black,
    Color::Red,
    Color::Green,
    Color::Yellow,
    Color::Blue,
    Color::Magenta,
    Color::Cyan,
    Color::Gray,
    Color::DarkGray,
    Color::LightRed,
    Color::LightGreen,
    Color::LightYellow,
    Color::LightBlue,
    Color::LightMagenta,
    Color::LightCyan,
    Color::White,
];

/// The ANSI colour of the same hue (and a gray for an unsaturated colour), light or dark by
/// brightness. By hue rather than by distance: the nearest colour by distance of a dark blue is
/// black, which a dark terminal cannot show on its background, and a theme's meaning (good is
/// blue, bad is orange) lives in its hues.
fn nearest_16(r: u8, g: u8, b: u8) -> Color {
    let (r, g, b) = (i32::from(r), i32::from(g), i32::from(b));
    let max = r.max(g).max(b);
    let min = r.min(g).min(b);
    let chroma = max - min;
    if chroma < 48 {
        return match (max + min) / 2 {
            l if l < 48 => Color::Black,
            l if l < 150 => Color::DarkGray,
            l if l < 215 => Color::Gray,
            _ => Color::White,
        };
    }
    let hue = if max == r {
        60.0 * (f64::from(g - b) / f64::from(chroma)).rem_euclid(6.0)
    } else if max == g {
        60.0 * (f64::from(b - r) / f64::from(chroma) + 2.0)
    } else {
        60.0 * (f64::from(r - g) / f64::from(chroma) + 4.0)
    };
    let light = max >= 225;
    let pick = |dark: Color, bright: Color| if light { bright } else { dark };
    match hue {
        h if !(30.0..330.0).contains(&h) => pick(Color::Red, Color::LightRed),
        h if h < 65.0 => pick(Color::Yellow, Color::LightYellow),
        h if h < 150.0 => pick(Color::Green, Color::LightGreen),
        // Solarized's and most themes' "blue" sits near 205°: blue, not cyan.
        h if h < 195.0 => pick(Color::Cyan, Color::LightCyan),
        h if h < 270.0 => pick(Color::Blue, Color::LightBlue),
        _ => pick(Color::Magenta, Color::LightMagenta),
    }
}

/// Reduces every cell's colours to `depth`.
pub fn reduce_colours(buf: &mut Buffer, depth: ColourDepth) {
    if depth == ColourDepth::TrueColour {
        return;
    }
    // 12 000 cells a frame at 200×60 and a handful of distinct pairs: a pair this depth shows
    // as it is (blanks, named colours) is passed over, and the last few answers are kept.
    let mut recent = Recent::default();
    for cell in &mut buf.content {
        if !depth.changes(cell.fg) && !depth.changes(cell.bg) {
            continue;
        }
        let key = (cell.fg, cell.bg);
        (cell.fg, cell.bg) = recent.get(key, |k| reduce_pair(depth, k));
    }
}

/// A cell's (fg, bg).
type Pair = (Color, Color);

/// The last few pairs reduced and their answers, the oldest replaced first.
#[derive(Default)]
struct Recent {
    pairs: [Option<(Pair, Pair)>; 8],
    next: usize,
}

impl Recent {
    fn get(&mut self, key: Pair, reduce: impl FnOnce(Pair) -> Pair) -> Pair {
        if let Some((_, v)) = self.pairs.iter().flatten().find(|(k, _)| *k == key) {
            return *v;
        }
        let v = reduce(key);
        self.pairs[self.next] = Some((key, v));
        self.next = (self.next + 1) % self.pairs.len();
        v
    }
}

/// One cell's (fg, bg) at `depth`: two colours that fell on one get a contrasting text colour,
/// so the text still shows on its background.
fn reduce_pair(depth: ColourDepth, (fg0, bg0): (Color, Color)) -> (Color, Color) {
    let (fg, bg) = (depth.reduce(fg0), depth.reduce(bg0));
    let fg = if fg == bg && fg0 != bg0 && fg != Color::Reset {
        contrast(bg)
    } else {
        fg
    };
    (fg, bg)
}

/// Black on a light ANSI background, white on a dark one.
fn contrast(bg: Color) -> Color {
    match bg {
        Color::Gray
        | Color::White
        | Color::Yellow
        | Color::Cyan
        | Color::Green
        | Color::LightRed
        | Color::LightGreen
        | Color::LightYellow
        | Color::LightBlue
        | Color::LightMagenta
        | Color::LightCyan => Color::Black,
        _ => Color::White,
    }
}

/// Replaces every glyph that is not ASCII: box-drawing by `+ - |`, braille by a mark at the
/// height of its dots, block elements by `#`, `=` and `_`, punctuation by its ASCII cousin, and
/// anything else by `?`.
pub fn to_ascii(buf: &mut Buffer) {
    for cell in &mut buf.content {
        let sym = cell.symbol();
        if sym.is_ascii() {
            continue;
        }
        let mut out = String::new();
        for c in sym.chars() {
            if c.is_ascii() {
                out.push(c);
            } else if let Some(a) = ascii_of(c) {
                out.push(a);
                // One replacement per cell: combining marks after it are dropped.
                break;
            }
        }
        if out.is_empty() {
            out.push('?');
        }
        cell.set_symbol(&out);
    }
}

/// One character's ASCII stand-in (`None` for a combining mark, which has no width of its own).
fn ascii_of(c: char) -> Option<char> {
    let u = u32::from(c);
    Some(match c {
        '\u{0300}'..='\u{036f}' | '\u{200b}'..='\u{200d}' | '\u{fe0f}' => return None,
        // Box drawing.
        '─' | '━' | '═' | '┄' | '┅' | '┈' | '┉' | '╌' | '╍' | '╴' | '╶' | '╸' | '╺' => {
            '-'
        }
        '│' | '┃' | '║' | '┆' | '┇' | '┊' | '┋' | '╎' | '╏' | '╵' | '╷' | '╹' | '╻' => {
            '|'
        }
        '└' | '╰' | '┗' | '╚' => '`',
        '\u{2500}'..='\u{257f}' => '+',
        // Braille: the height of its dots.
        '\u{2800}'..='\u{28ff}' => braille_level(u - 0x2800),
        // Block elements: full and upper/lower eighths, shades.
        '█' | '▇' | '▆' | '▉' | '▊' | '▋' => '#',
        '▅' | '▄' | '▌' | '▍' | '▀' => '=',
        '▃' | '▂' | '▁' | '▎' | '▏' => '_',
        '░' => '.',
        '▒' | '▓' => ':',
        '\u{2580}'..='\u{259f}' => '#',
        '…' => '~',
        '·' | '•' | '∙' | '⋅' => '.',
        '—' | '–' | '‒' | '−' | '‐' => '-',
        '×' => 'x',
        '↑' | '▲' | '▴' => '^',
        '↓' | '▼' | '▾' => 'v',
        '→' | '▶' | '▸' | '≥' | '›' | '»' => '>',
        '←' | '◀' | '◂' | '≤' | '‹' | '«' => '<',
        '°' => 'o',
        'µ' | 'μ' => 'u',
        '€' => 'E',
        '£' => 'L',
        '¥' => 'Y',
        '✓' | '✔' => 'v',
        '✗' | '✘' => 'x',
        '“' | '”' | '„' => '"',
        '‘' | '’' | '‚' => '\'',
        '\u{a0}' | '\u{2000}'..='\u{200a}' => ' ',
        _ => '?',
    })
}

/// A braille cell drawn as a mark where its dots are: `'` high, `-` in the middle, `.` low,
/// `|` when they span the cell, `:` when they sit high and low; blank when empty.
fn braille_level(bits: u32) -> char {
    // Dot rows: bits 0,3 → row 0; 1,4 → row 1; 2,5 → row 2; 6,7 → row 3.
    let rows = [0b0000_1001, 0b0001_0010, 0b0010_0100, 0b1100_0000];
    let set: Vec<usize> = (0..4).filter(|r| bits & rows[*r] != 0).collect();
    match (set.first(), set.last()) {
        (None, _) | (_, None) => ' ',
        (Some(&top), Some(&bottom)) if bottom - top >= 2 && set.len() >= 3 => '|',
        (Some(&top), Some(&bottom)) if bottom - top >= 2 => ':',
        (Some(0), _) => '\'',
        (Some(_), Some(3)) => '.',
        _ => '-',
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_comes_from_colorterm_then_term() {
        let d = ColourDepth::detect;
        assert_eq!(
            d(Some("truecolor"), Some("xterm-256color")),
            ColourDepth::TrueColour
        );
        assert_eq!(d(Some("24bit"), None), ColourDepth::TrueColour);
        assert_eq!(d(None, Some("xterm-256color")), ColourDepth::Ansi256);
        assert_eq!(d(None, Some("tmux-256color")), ColourDepth::Ansi256);
        assert_eq!(d(None, Some("xterm-direct")), ColourDepth::TrueColour);
        assert_eq!(d(None, Some("linux")), ColourDepth::Ansi16);
        assert_eq!(d(None, Some("vt100")), ColourDepth::Ansi16);
        assert_eq!(d(None, None), ColourDepth::Ansi16);
    }

    #[test]
    fn sixteen_colours_keep_the_hue_and_never_go_black_for_a_colour() {
        let r = |c| ColourDepth::Ansi16.reduce(c);
        assert_eq!(r(Color::Rgb(0x26, 0x8b, 0xd2)), Color::Blue);
        assert_eq!(r(Color::Rgb(0x56, 0xb4, 0xe9)), Color::LightBlue);
        assert_eq!(r(Color::Rgb(0xdc, 0x32, 0x2f)), Color::Red);
        assert_eq!(r(Color::Rgb(0x85, 0x99, 0x00)), Color::Green);
        assert_eq!(r(Color::Rgb(0xb5, 0x89, 0x00)), Color::Yellow);
        assert_eq!(r(Color::Rgb(0x00, 0x77, 0x00)), Color::Green);
        assert_eq!(r(Color::Rgb(0x00, 0x2b, 0x36)), Color::Cyan);
        assert_eq!(r(Color::Rgb(0x58, 0x6e, 0x75)), Color::DarkGray);
        assert_eq!(r(Color::Rgb(0xfd, 0xf6, 0xe3)), Color::White);
        assert_eq!(r(Color::Indexed(9)), Color::LightRed);
        assert_eq!(r(Color::Indexed(21)), Color::LightBlue);
        assert_eq!(r(Color::Cyan), Color::Cyan);
        assert_eq!(r(Color::Reset), Color::Reset);
    }

    #[test]
    fn colours_that_fall_on_one_still_read() {
        let mut buf = Buffer::with_lines(["ab"]);
        for cell in &mut buf.content {
            cell.fg = Color::Rgb(0x00, 0x2b, 0x36);
            cell.bg = Color::Rgb(0x2a, 0xa1, 0x98);
        }
        buf.content[1].fg = Color::Cyan;
        buf.content[1].bg = Color::Cyan;
        reduce_colours(&mut buf, ColourDepth::Ansi16);
        assert_eq!(
            (buf.content[0].fg, buf.content[0].bg),
            (Color::Black, Color::Cyan)
        );
        // What the theme asked for itself is left alone.
        assert_eq!(buf.content[1].fg, Color::Cyan);
    }

    #[test]
    fn runs_and_changes_of_pairs_reduce_as_each_cell_alone() {
        // The kept last answer must not leak into a cell whose pair differs.
        let pairs = [
            (Color::Rgb(0x00, 0x2b, 0x36), Color::Rgb(0x2a, 0xa1, 0x98)),
            (Color::Rgb(0x00, 0x2b, 0x36), Color::Rgb(0x2a, 0xa1, 0x98)),
            (Color::Rgb(0xdc, 0x32, 0x2f), Color::Reset),
            (Color::Rgb(0x00, 0x2b, 0x36), Color::Rgb(0x2a, 0xa1, 0x98)),
            (Color::Cyan, Color::Cyan),
            (Color::Indexed(21), Color::Rgb(0xfd, 0xf6, 0xe3)),
            (Color::Indexed(21), Color::Rgb(0xfd, 0xf6, 0xe3)),
        ];
        for depth in [ColourDepth::Ansi16, ColourDepth::Ansi256] {
            let mut buf = Buffer::with_lines(["abcdefg"]);
            for (cell, &(fg, bg)) in buf.content.iter_mut().zip(&pairs) {
                (cell.fg, cell.bg) = (fg, bg);
            }
            reduce_colours(&mut buf, depth);
            for (cell, &pair) in buf.content.iter().zip(&pairs) {
                let mut one = Buffer::with_lines(["a"]);
                (one.content[0].fg, one.content[0].bg) = pair;
                reduce_colours(&mut one, depth);
                assert_eq!(
                    (cell.fg, cell.bg),
                    (one.content[0].fg, one.content[0].bg),
                    "{depth:?} {pair:?}"
                );
            }
            assert_eq!(buf.content[2].fg, depth.reduce(pairs[2].0));
        }
    }

    #[test]
    fn more_pairs_than_are_kept_still_reduce_as_each_cell_alone() {
        // Twelve pairs in turn: more than the answers kept, so each is reduced again after it
        // was dropped; named colours and blanks among them are passed over.
        let pairs: Vec<(Color, Color)> = (0u8..12)
            .map(|i| match i % 4 {
                0 => (
                    Color::Rgb(i * 20, 0x2b, 0x36),
                    Color::Rgb(0x2a, i * 20, 0x98),
                ),
                1 => (Color::Indexed(i * 20), Color::Rgb(0x26, 0x8b, i * 20)),
                2 => (Color::Cyan, Color::Indexed(i)),
                _ => (Color::Reset, Color::Reset),
            })
            .collect();
        for depth in [ColourDepth::Ansi16, ColourDepth::Ansi256] {
            let mut buf = Buffer::empty(ratatui::layout::Rect::new(0, 0, 60, 1));
            for (cell, &(fg, bg)) in buf.content.iter_mut().zip(pairs.iter().cycle()) {
                (cell.fg, cell.bg) = (fg, bg);
            }
            reduce_colours(&mut buf, depth);
            for (cell, &pair) in buf.content.iter().zip(pairs.iter().cycle()) {
                assert_eq!(
                    (cell.fg, cell.bg),
                    reduce_pair(depth, pair),
                    "{depth:?} {pair:?}"
                );
            }
        }
    }

    #[test]
    fn two_hundred_fifty_six_colours_index_rgb_and_keep_the_rest() {
        let r = |c| ColourDepth::Ansi256.reduce(c);
        assert_eq!(r(Color::Rgb(0xff, 0x87, 0x00)), Color::Indexed(208));
        assert_eq!(r(Color::Rgb(0, 0, 0)), Color::Indexed(16));
        assert_eq!(r(Color::Indexed(33)), Color::Indexed(33));
        assert_eq!(r(Color::Green), Color::Green);
    }

    #[test]
    fn ascii_stand_ins() {
        let mut buf = Buffer::with_lines(["┌─┐│└├…·—×↑↓█▏⣿⠉⣀ ≥€ü日"]);
        to_ascii(&mut buf);
        let text: String = buf.content.iter().map(|c| c.symbol()).collect();
        assert!(text.is_ascii(), "{text}");
        assert!(text.starts_with("+-+|`+~.-x^v#_|'. >E??"), "{text}");
    }

    #[test]
    fn braille_marks_follow_the_dots() {
        assert_eq!(braille_level(0), ' ');
        assert_eq!(braille_level(0b0000_0001), '\'');
        assert_eq!(braille_level(0b0001_0010), '-');
        assert_eq!(braille_level(0b1000_0000), '.');
        assert_eq!(braille_level(0xff), '|');
        assert_eq!(braille_level(0b1000_0001), ':');
    }
}
