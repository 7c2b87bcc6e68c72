//! How the rules name a process in one short phrase: `python train.py`, from the command line
//! (the program's file name and its first argument that is not an option), or the process name
//! when the command is unknown. The snapshot's strings are already sanitized; this only
//! shortens them.

use gpumeter_model::ProcessReading;

/// Longest phrase returned, in characters.
const MAX_CHARS: usize = 60;

fn base(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// `python train.py`, `torchrun train.py`, `python -m vllm.entrypoints…`, or the name.
pub fn short_command(p: &ProcessReading) -> String {
    let from_cmd = p.command.as_deref().and_then(|cmd| {
        let mut words = cmd.split_whitespace();
        let prog = base(words.next()?);
        let mut out = prog.to_string();
        while let Some(w) = words.next() {
            if w == "-m" {
                if let Some(module) = words.next() {
                    out.push_str(" -m ");
                    out.push_str(module);
                }
                break;
            }
            if !w.starts_with('-') {
                out.push(' ');
                out.push_str(base(w));
                break;
            }
        }
        Some(out)
    });
    let text = from_cmd
        .or_else(|| p.name.as_deref().map(str::to_string))
        .unwrap_or_else(|| "(not visible)".into());
    text.chars().take(MAX_CHARS).collect()
}

/// `python train.py (pid 4242)`.
pub fn process_label(p: &ProcessReading) -> String {
    format!("{} (pid {})", short_command(p), p.pid)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(cmd: Option<&str>, name: Option<&str>) -> ProcessReading {
        let mut p = ProcessReading::invisible(4242);
        p.command = cmd.map(Into::into);
        p.name = name.map(Into::into);
        p
    }

    #[test]
    fn names_the_program_and_its_script() {
        let p = with(
            Some("/opt/conda/bin/python -u train.py --config a.yaml"),
            Some("python"),
        );
        assert_eq!(process_label(&p), "python train.py (pid 4242)");
        let m = with(
            Some("python3 -m vllm.entrypoints.api_server --port 1"),
            None,
        );
        assert_eq!(short_command(&m), "python3 -m vllm.entrypoints.api_server");
        assert_eq!(short_command(&with(None, Some("python"))), "python");
        assert_eq!(short_command(&with(None, None)), "(not visible)");
        let long = "x".repeat(200);
        assert_eq!(short_command(&with(Some(&long), None)).chars().count(), 60);
    }
}
