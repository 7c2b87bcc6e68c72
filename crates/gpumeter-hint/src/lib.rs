//! Did-you-mean for gpumeter's TOML files (config, themes, scenarios): serde's
//! `unknown field `x`, expected one of `a`, `b`` (from `deny_unknown_fields`) and
//! `unknown variant …` messages said again with the table they are in and the nearest valid
//! name ("unknown key `budjet` in [pricing]; did you mean `budget`?"), and the TOML table a
//! byte offset sits in. Text in, text out: no I/O, no knowledge of any file's schema.

/// The closest of `candidates` to `word`, when it is close enough to be a likely typo.
pub fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let word_l = word.to_lowercase();
    candidates
        .iter()
        .map(|c| (*c, strsim::damerau_levenshtein(&word_l, &c.to_lowercase())))
        // A third of the longer name may be wrong (budjet→budget, colours→colors, utl→util).
        .filter(|(c, d)| *d * 3 <= word.chars().count().max(c.chars().count()) + 1)
        .min_by_key(|(_, d)| *d)
        .map(|(c, _)| c)
}

/// What serde said about a name it did not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unknown {
    /// `field` (a key) or `variant` (a value of a fixed set).
    pub what: &'static str,
    /// The name as written.
    pub name: String,
    /// The names serde would have accepted, in its order.
    pub expected: Vec<String>,
}

impl Unknown {
    /// Reads serde's `unknown field `x`, expected …` or `unknown variant `x`, expected …`.
    pub fn parse(message: &str) -> Option<Unknown> {
        let (what, rest) = if let Some(r) = message.strip_prefix("unknown field `") {
            ("field", r)
        } else if let Some(r) = message.strip_prefix("unknown variant `") {
            ("variant", r)
        } else {
            return None;
        };
        let (name, tail) = rest.split_once('`')?;
        // serde lists the accepted names between backticks after "expected".
        let expected = tail
            .split_once("expected")
            .map(|(_, list)| {
                list.split('`')
                    .skip(1)
                    .step_by(2)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        Some(Unknown {
            what,
            name: name.to_string(),
            expected,
        })
    }

    /// The nearest accepted name, if one is near.
    pub fn suggestion(&self) -> Option<&str> {
        let names: Vec<&str> = self.expected.iter().map(String::as_str).collect();
        closest(&self.name, &names)
    }

    /// "unknown {noun} `x` in [table]; did you mean `y`?", or the accepted names when none
    /// is near. `noun` is how the file calls its keys (`key`, `role`); a variant is a `value`.
    pub fn explain(&self, noun: &str, table: Option<&str>) -> String {
        let noun = if self.what == "variant" {
            "value"
        } else {
            noun
        };
        let place = match table {
            Some(t) if !t.is_empty() => format!(" in [{t}]"),
            _ => String::new(),
        };
        let head = format!("unknown {noun} `{}`{place}", self.name);
        match (self.suggestion(), self.expected.as_slice()) {
            (Some(s), _) => format!("{head}; did you mean `{s}`?"),
            (None, []) => head,
            (None, all) => {
                let list: Vec<String> = all.iter().map(|n| format!("`{n}`")).collect();
                format!("{head}; expected one of {}", list.join(", "))
            }
        }
    }
}

/// `message` said the did-you-mean way when it is serde's unknown-name message, else as is.
pub fn explain(message: &str, noun: &str, table: Option<&str>) -> String {
    match Unknown::parse(message) {
        Some(u) => u.explain(noun, table),
        None => message.to_string(),
    }
}

/// The table the key at byte `offset` of TOML `text` belongs to: the name of the last
/// `[table]` or `[[array]]` header above its line (`alerts.idle`, `gpu`); on a header line, the
/// header's parent (`[alerts.idel]` is the key `idel` of `[alerts]`); `None` at the top.
pub fn table_at(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let start = text.get(..offset)?.rfind('\n').map_or(0, |i| i + 1);
    let line = text.get(start..)?.lines().next().unwrap_or("");
    if let Some(name) = header(line) {
        return name
            .rsplit_once('.')
            .map(|(parent, _)| parent.trim().to_string());
    }
    text.get(..start)?.lines().rev().find_map(header)
}

/// The name in a `[table]` or `[[array]]` header line.
pub fn header(line: &str) -> Option<String> {
    let l = line.trim();
    let inner = l.strip_prefix("[[").or_else(|| l.strip_prefix('['))?;
    let name = inner.split(']').next()?.trim();
    // `[1, 2]` or `["a"]` is a value on a continued line, not a header.
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit() || c == '"' || c == '-') {
        return None;
    }
    Some(name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_gets_the_nearest_key_with_its_table() {
        let msg =
            "unknown field `budjet`, expected one of `rate`, `currency`, `budget`, `granularity`";
        assert_eq!(
            explain(msg, "key", Some("pricing")),
            "unknown key `budjet` in [pricing]; did you mean `budget`?"
        );
    }

    #[test]
    fn nothing_near_lists_what_is_accepted() {
        let msg = "unknown field `zzzzzz`, expected `theme` or `readonly`";
        assert_eq!(
            explain(msg, "key", Some("ui")),
            "unknown key `zzzzzz` in [ui]; expected one of `theme`, `readonly`"
        );
        let msg = "unknown field `pricng`, expected one of `pricing`, `ledger`";
        assert_eq!(
            explain(msg, "key", None),
            "unknown key `pricng`; did you mean `pricing`?"
        );
    }

    #[test]
    fn variants_are_values() {
        let msg =
            "unknown variant `NO_PERMISION`, expected one of `NOT_SUPPORTED`, `NO_PERMISSION`";
        assert_eq!(
            explain(msg, "key", Some("fault")),
            "unknown value `NO_PERMISION` in [fault]; did you mean `NO_PERMISSION`?"
        );
    }

    #[test]
    fn other_messages_pass_through() {
        assert_eq!(
            explain("invalid type: integer", "key", None),
            "invalid type: integer"
        );
    }

    #[test]
    fn closeness_is_bounded() {
        assert_eq!(closest("colours", &["colors", "theme"]), Some("colors"));
        assert_eq!(closest("utl", &["util", "power"]), Some("util"));
        assert_eq!(closest("x", &["rate", "budget"]), None);
        assert_eq!(closest("electricity", &["egress_per_gb"]), None);
    }

    #[test]
    fn the_table_is_the_last_header_above() {
        let text = "a = 1\n[pricing]\nrate = 2\n\n[[gpu]]\nutl = { const = 3 }\nx = [1,\n  2]\n";
        assert_eq!(table_at(text, 0), None);
        assert_eq!(
            table_at(text, text.find("rate").unwrap()).as_deref(),
            Some("pricing")
        );
        assert_eq!(
            table_at(text, text.find("utl").unwrap()).as_deref(),
            Some("gpu")
        );
        assert_eq!(
            table_at(text, text.find("  2]").unwrap()).as_deref(),
            Some("gpu")
        );
        assert_eq!(table_at(text, text.find("[pricing]").unwrap()), None);
        let text = "[alerts]\nbell = true\n[alerts.idel]\n";
        assert_eq!(
            table_at(text, text.find("idel").unwrap()).as_deref(),
            Some("alerts")
        );
    }
}
