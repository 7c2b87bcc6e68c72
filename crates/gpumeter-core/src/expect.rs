//! What the user says was paid for (`--expect 8xH100`): a GPU count, a model, or both. Parsed
//! where the command line is read; judged against the GPUs by `gpumeter check`.

/// `--expect 8xH100`: how many GPUs of which model were paid for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expect {
    /// How many GPUs were paid for (`8` in `8xH100`); `None` when only a model is given.
    pub count: Option<u32>,
    /// Matched case-insensitively against the board's name, e.g. `H100`.
    pub model: Option<String>,
}

impl Expect {
    /// `8xH100`, `8×H100`, `8`, `H100`, `4xA100-80GB`.
    pub fn parse(text: &str) -> Result<Expect, String> {
        let t = text.trim();
        let (count, model) = match t.split_once(['x', 'X', '×', '*']) {
            Some((n, m)) if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) => {
                (Some(n), Some(m))
            }
            _ if t.chars().all(|c| c.is_ascii_digit()) => (Some(t), None),
            _ => (None, Some(t)),
        };
        let count = count
            .map(|n| {
                n.parse::<u32>()
                    .map_err(|_| format!("'{n}' is not a GPU count"))
            })
            .transpose()?;
        let model = model.map(str::trim).filter(|m| !m.is_empty());
        if count == Some(0) || (count.is_none() && model.is_none()) {
            return Err(format!(
                "'{text}' is not an expectation (examples: 8xH100, 4xA100, 8, H100)"
            ));
        }
        // Every NVIDIA board name carries its number (H100, A10G, L4, RTX 4090), TITANs aside;
        // a word without one is a typo or a misplaced argument, not a model to match.
        if let Some(m) = model {
            let titan = m.to_ascii_lowercase().contains("titan");
            if !titan && !m.chars().any(|c| c.is_ascii_digit()) {
                return Err(format!(
                    "'{m}' does not name a GPU model (examples: 8xH100, 4xA100, L4, RTX4090)"
                ));
            }
        }
        Ok(Expect {
            count,
            model: model.map(str::to_string),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expectations_parse() {
        let e = Expect::parse("8xH100").unwrap();
        assert_eq!((e.count, e.model.as_deref()), (Some(8), Some("H100")));
        let e = Expect::parse("4×A100-80GB").unwrap();
        assert_eq!((e.count, e.model.as_deref()), (Some(4), Some("A100-80GB")));
        assert_eq!(Expect::parse("8").unwrap().model, None);
        assert_eq!(Expect::parse("H100").unwrap().count, None);
        assert!(Expect::parse("0xH100").is_err());
        assert!(Expect::parse("").is_err());
        assert_eq!(Expect::parse("TITAN RTX").unwrap().count, None);
        assert_eq!(Expect::parse("2xRTX 4090").unwrap().count, Some(2));
        for junk in ["banana", "8xbanana", "x"] {
            let e = Expect::parse(junk).unwrap_err();
            assert!(e.contains("not") && e.contains("8xH100"), "{junk}: {e}");
        }
    }
}
