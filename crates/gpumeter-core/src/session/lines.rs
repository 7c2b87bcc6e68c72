//! A [`Step`] as lines of text, the one printer of `watch` and `serve`: the minute (spend,
//! burn, busy GPUs), a budget crossing, an alert transition (fired ones with their evidence and
//! next step, indented), an autostop event, and the run's total. Pure text from `&` references:
//! the session decided what happened, this only says it ([`print_step`] also runs the stop
//! command a step asks for, after the lines before it are out).

use std::io::Write;

use crate::billing::{BillingView, BudgetEvent};
use crate::clock::{UtcStyle, utc_text};
use crate::engine::autostop::{AutostopConfig, AutostopEvent, ignored_note};
use crate::engine::rules::{AlertKind, Transition};
use crate::ledger::FlushedMinute;
use crate::money::{Currency, Money};

use super::{Session, Step};

/// The time at the start of every line: `2026-01-05 14:05Z`.
pub fn at(unix_ms: i64) -> String {
    utc_text(unix_ms, UtcStyle::Full)
}

/// A closed minute with the billing picture after it.
pub fn minute(m: &FlushedMinute, view: &BillingView) -> String {
    let c = view.currency;
    let idle = view
        .idle_share
        .map_or(crate::units::NA.into(), |s| format!("{:.0}%", s * 100.0));
    format!(
        "{}  spent {}  burn {}  busy {}/{} GPUs  idle {} of spend",
        at(m.minute * 60_000),
        c.format(Money::from_micros(m.total.spend_micros)),
        c.per_hour(view.burn_per_hour),
        view.busy_gpus,
        view.gpus,
        idle
    )
}

/// A budget crossing.
pub fn budget(e: &BudgetEvent, c: Currency) -> String {
    format!("{}  {}", at(e.at_unix_ms), e.sentence(c))
}

/// One alert transition (fired ones with their evidence and next step on indented lines).
pub fn transition(out: &mut dyn Write, t: &Transition, now: i64) -> std::io::Result<()> {
    let a = t.alert();
    writeln!(
        out,
        "{}  alert {} [{}] {}: {}",
        at(now),
        t.name(),
        a.severity.name(),
        a.kind.name(),
        a.title
    )?;
    if matches!(t, Transition::Fired(_)) {
        for (k, v) in &a.evidence {
            writeln!(out, "    {k}: {v}")?;
        }
        if let Some(n) = &a.next_step {
            writeln!(out, "    next step: {n}")?;
        }
    }
    Ok(())
}

/// One autostop event.
pub fn autostop(e: &AutostopEvent, cfg: &AutostopConfig, now: i64) -> String {
    let command = cfg.command.join(" ");
    match e {
        AutostopEvent::Armed { .. } => format!(
            "{}  autostop: armed (stops after {} idle)",
            at(now),
            crate::units::duration(cfg.after_ms, crate::units::DurationStyle::Words)
        ),
        AutostopEvent::Warning {
            remaining_ms,
            idle_ms,
            tolerated,
            ..
        } => format!(
            "{}  autostop: idle for {}{}, running `{command}` in {}",
            at(now),
            crate::units::duration(*idle_ms, crate::units::DurationStyle::Words),
            ignored_note(tolerated.as_deref()),
            crate::units::duration(*remaining_ms, crate::units::DurationStyle::Words)
        ),
        AutostopEvent::Cancelled { .. } => format!("{}  autostop: cancelled", at(now)),
        AutostopEvent::Stop {
            idle_ms, tolerated, ..
        } => format!(
            "{}  autostop: idle for {}{}: running `{command}`",
            at(now),
            crate::units::duration(*idle_ms, crate::units::DurationStyle::Words),
            ignored_note(tolerated.as_deref())
        ),
    }
}

/// The run's total. The cost per busy GPU-hour counts the watched time's spend only (see
/// [`crate::billing::per_busy_gpu_hour`]); where the clock ran before gpumeter looked, the line
/// says how much of it was watched, so the figures add up on the page.
pub fn total(v: &BillingView) -> String {
    let hours = |ms: i64| ms as f64 / 3_600_000.0;
    let watched = if v.watched_ms < v.paid_ms {
        format!(" ({:.2} watched)", hours(v.watched_ms))
    } else {
        String::new()
    };
    format!(
        "total: spent {} over {:.2} paid hours{watched}, {:.2} busy GPU-hours, {} per busy \
         GPU-hour{}",
        v.currency.format(v.spent),
        hours(v.paid_ms),
        v.busy_gpu_hours,
        v.cost_per_busy_gpu_hour
            .map_or(crate::units::NA.into(), |m| v.currency.format(m)),
        if watched.is_empty() { "" } else { " watched" },
    )
}

/// Prints a step: the closed minute, budget crossings, alert transitions (a budget alert's
/// crossing already has its line) and autostop events to `out`, notes to `err`. The minute
/// comes first: it ended before this tick's events, so a log reads in time order even when an
/// alert fires on the tick that closes a minute. When the step asks
/// for the stop command it runs, its output following ours, and its result is returned (an
/// error is also said on `err`).
pub fn print_step(
    session: &Session,
    step: &Step,
    now: i64,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> std::io::Result<Option<Result<(), String>>> {
    if let (Some(m), Some(view)) = (&step.flushed, session.engine().billing()) {
        writeln!(out, "{}", minute(m, view))?;
    }
    for e in &step.budget {
        writeln!(out, "{}", budget(e, session.currency()))?;
    }
    for t in step
        .transitions
        .iter()
        .filter(|t| t.alert().kind != AlertKind::Budget)
    {
        transition(out, t, now)?;
    }
    let cfg = session.autostop_config();
    for e in &step.autostop {
        writeln!(out, "{}", autostop(e, cfg, now))?;
    }
    for n in &step.notes {
        writeln!(err, "gpumeter: {n}")?;
    }
    let Some(argv) = &step.stop else {
        return Ok(None);
    };
    // The stop command's output follows ours (the journal, under systemd).
    out.flush()?;
    let result = super::run_stop(argv, true);
    if let Err(e) = &result {
        writeln!(err, "gpumeter: autostop: {e}")?;
    }
    Ok(Some(result))
}
