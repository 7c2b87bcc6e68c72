//! `fleet --once` as text: the totals line, then one aligned line per host (a down host's
//! numbers replaced by when it was last seen and the error).

use std::fmt::Write;

use gpumeter_core::fleet::cells::{self, HEADERS};
use gpumeter_core::fleet::view::{HostRow, Totals};
use gpumeter_core::units::{pad_right, width};

/// The whole table, newline-terminated.
pub fn render(rows: &[HostRow], totals: &Totals) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", cells::totals_line(totals));
    let grid: Vec<Vec<String>> = rows.iter().map(cells::cells).collect();
    let mut widths: Vec<usize> = HEADERS.iter().map(|h| width(h)).collect();
    for (r, c) in rows.iter().zip(&grid) {
        // A down host only fills its name and state.
        let n = if cells::has_numbers(r) { c.len() } else { 2 };
        for (w, cell) in widths.iter_mut().zip(c).take(n) {
            *w = (*w).max(width(cell));
        }
    }
    let line = |cols: &[String], n: usize, tail: Option<String>| {
        let mut s = String::new();
        for (i, (c, w)) in cols.iter().zip(&widths).take(n).enumerate() {
            // The last column is free text: no padding after it.
            if i + 1 == HEADERS.len() {
                s.push_str(c);
            } else {
                s.push_str(&pad_right(c, *w));
                s.push_str("  ");
            }
        }
        if let Some(t) = tail {
            s.push_str(&t);
        }
        s.trim_end().to_string()
    };
    let head: Vec<String> = HEADERS.iter().map(|h| (*h).to_string()).collect();
    let _ = writeln!(out, "{}", line(&head, head.len(), None));
    for (r, c) in rows.iter().zip(&grid) {
        let text = if cells::has_numbers(r) {
            line(c, c.len(), None)
        } else {
            line(c, 2, Some(cells::down_text(r)))
        };
        let _ = writeln!(out, "{text}");
    }
    out
}
