//! The detail view's place lines: the process's working directory and the GPU part of its
//! environment, as `process_view` read them when the view opened (a demo's process is not
//! read, and says so).

use ratatui::text::{Line, Span};

use crate::ui::app::App;
use crate::ui::process_action::Acting;
use crate::ui::process_view::ProcessDetail;
use crate::ui::widgets::alerts::panel::wrapped;

/// Its working directory and the GPU part of its environment, as read when the view opened.
pub(super) fn place_lines(
    out: &mut Vec<Line<'static>>,
    app: &App,
    detail: &ProcessDetail,
    cols: usize,
) {
    let theme = &app.theme;
    let label = |k: &str| Span::styled(format!("{k}: "), theme.label);
    let inspection = match &detail.inspection {
        Some(Ok(i)) => i,
        Some(Err(why)) => {
            out.extend(wrapped(label("Directory"), &format!("N/A ({why})"), cols));
            return;
        }
        None => {
            let why = match app.acting {
                Acting::NotLocal => "N/A (a demo's or a recording's process: nothing to read here)",
                _ => "N/A",
            };
            out.extend(wrapped(label("Directory"), why, cols));
            return;
        }
    };
    let cwd = match &inspection.cwd {
        Ok(dir) => dir.clone(),
        Err(why) => format!("N/A ({why})"),
    };
    out.extend(wrapped(label("Directory"), &cwd, cols));
    match &inspection.environment {
        Err(why) => out.extend(wrapped(label("Environment"), &format!("N/A ({why})"), cols)),
        Ok(env) => {
            let rest = match env.hidden {
                0 => String::new(),
                n => format!("; {n} others not shown (they can hold secrets)"),
            };
            let text = match env.shown.len() {
                0 => format!("no GPU-related variables{rest}"),
                n => format!("{n} GPU-related{rest}"),
            };
            out.extend(wrapped(label("Environment"), &text, cols));
            for (name, value) in &env.shown {
                out.extend(wrapped(
                    Span::styled(format!("  {name}="), theme.dim),
                    value,
                    cols,
                ));
            }
        }
    }
}
