//! How a theme file writes a style: colour names (`dark-gray`, `#rrggbb`, an xterm-256 index,
//! `default`) and modifier names (`bold`, `reversed`, …), parsed into ratatui values. Pure text
//! to value; the file format and its errors live in [`crate::ui::theme::file`].

use ratatui::style::{Color, Modifier};

/// The colour names a theme may use, with what they mean (`default` = the terminal's own).
pub const COLOUR_NAMES: [(&str, Color); 16] = [
    ("black", Color::Black),
    ("red", Color::Red),
    ("green", Color::Green),
    ("yellow", Color::Yellow),
    ("blue", Color::Blue),
    ("magenta", Color::Magenta),
    ("cyan", Color::Cyan),
    ("gray", Color::Gray),
    ("dark-gray", Color::DarkGray),
    ("light-red", Color::LightRed),
    ("light-green", Color::LightGreen),
    ("light-yellow", Color::LightYellow),
    ("light-blue", Color::LightBlue),
    ("light-magenta", Color::LightMagenta),
    ("light-cyan", Color::LightCyan),
    ("white", Color::White),
];

/// The modifier names a theme may use.
pub const MODIFIER_NAMES: [(&str, Modifier); 9] = [
    ("bold", Modifier::BOLD),
    ("dim", Modifier::DIM),
    ("italic", Modifier::ITALIC),
    ("underlined", Modifier::UNDERLINED),
    ("slow-blink", Modifier::SLOW_BLINK),
    ("rapid-blink", Modifier::RAPID_BLINK),
    ("reversed", Modifier::REVERSED),
    ("hidden", Modifier::HIDDEN),
    ("crossed-out", Modifier::CROSSED_OUT),
];

/// Lower case, `_` and spaces as `-`, and `grey` as `gray`, so `Dark_Grey` reads as `dark-gray`.
fn normalise(s: &str) -> String {
    s.trim()
        .to_ascii_lowercase()
        .replace(['_', ' '], "-")
        .replace("grey", "gray")
}

/// A colour: a name from [`COLOUR_NAMES`], `#rrggbb`, an xterm-256 index (`"208"`), or
/// `default` (no colour: the terminal's own), which is `None`.
pub fn parse_colour(text: &str) -> Result<Option<Color>, String> {
    let name = normalise(text);
    if name == "default" || name == "reset" {
        return Ok(None);
    }
    if let Some(hex) = name.strip_prefix('#') {
        let valid = hex.len() == 6 && hex.chars().all(|c| c.is_ascii_hexdigit());
        let byte = |i: usize| u8::from_str_radix(hex.get(i..i + 2).unwrap_or(""), 16).ok();
        return match (valid, byte(0), byte(2), byte(4)) {
            (true, Some(r), Some(g), Some(b)) => Ok(Some(Color::Rgb(r, g, b))),
            _ => Err(format!(
                "'{text}' is not a colour: write #rrggbb with six hex digits"
            )),
        };
    }
    if !name.is_empty() && name.chars().all(|c| c.is_ascii_digit()) {
        return name
            .parse::<u8>()
            .map(|i| Some(Color::Indexed(i)))
            .map_err(|_| format!("'{text}' is not a colour: an xterm index is 0 to 255"));
    }
    COLOUR_NAMES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, c)| Some(*c))
        .ok_or_else(|| {
            let names: Vec<&str> = COLOUR_NAMES.iter().map(|(n, _)| *n).collect();
            format!(
                "unknown colour '{text}' (use {}, #rrggbb, an xterm index 0-255, or default)",
                names.join(", ")
            )
        })
}

/// A modifier name from [`MODIFIER_NAMES`].
pub fn parse_modifier(text: &str) -> Result<Modifier, String> {
    let name = normalise(text);
    MODIFIER_NAMES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, m)| *m)
        .ok_or_else(|| {
            let names: Vec<&str> = MODIFIER_NAMES.iter().map(|(n, _)| *n).collect();
            format!("unknown modifier '{text}' (use {})", names.join(", "))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_by_name_hex_index_and_default() {
        assert_eq!(parse_colour("dark-gray").unwrap(), Some(Color::DarkGray));
        assert_eq!(parse_colour("Dark_Grey").unwrap(), Some(Color::DarkGray));
        assert_eq!(
            parse_colour("#FDF6e3").unwrap(),
            Some(Color::Rgb(0xfd, 0xf6, 0xe3))
        );
        assert_eq!(parse_colour("208").unwrap(), Some(Color::Indexed(208)));
        assert_eq!(parse_colour("default").unwrap(), None);
        assert!(
            parse_colour("#12345")
                .unwrap_err()
                .contains("six hex digits")
        );
        assert!(
            parse_colour("#12345g")
                .unwrap_err()
                .contains("six hex digits")
        );
        assert!(parse_colour("256").unwrap_err().contains("0 to 255"));
        let err = parse_colour("mauve").unwrap_err();
        assert!(err.contains("unknown colour 'mauve'") && err.contains("light-cyan"));
        assert!(parse_colour("").is_err());
    }

    #[test]
    fn modifiers_by_name() {
        assert_eq!(parse_modifier("bold").unwrap(), Modifier::BOLD);
        assert_eq!(
            parse_modifier("Crossed_Out").unwrap(),
            Modifier::CROSSED_OUT
        );
        let err = parse_modifier("blinking").unwrap_err();
        assert!(err.contains("unknown modifier 'blinking'") && err.contains("reversed"));
    }
}
