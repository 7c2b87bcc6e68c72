//! TEMPORARY binary of the billing branch: it runs `watch` and `report` so their CLI tests can
//! spawn the real binary, until the real `main.rs` (with launch, the simulator and the dashboard)
//! lands. Replace this file wholesale with the real one plus the `Watch`/`Report` match arms
//! described in the billing issue note. `--demo NAME` here is a stand-in machine (4 GPUs, idle
//! for `idle`, busy otherwise), not the simulator.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::Parser;
use gpumeter::cli::{Cli, Command, ReportArgs, WatchArgs};
use gpumeter::clock::{Clock, FakeClock, SharedClock, SystemClock};
use gpumeter::model::{GpuReading, Snapshot};
use gpumeter::source::{Source, SourceError};
use gpumeter::watch::{self, WatchClock, WatchOptions};
use gpumeter::{config, report};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Some(Command::Watch(args)) => run_watch(&cli, args),
        Some(Command::Report(args)) => run_report(&cli, args),
        _ => {
            println!("gpumeter: under construction (this branch runs `watch` and `report`)");
            Ok(())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("gpumeter: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// Stand-in for the simulator while it is not merged.
struct StandIn {
    clock: SharedClock,
    name: String,
    start_ms: i64,
}

impl Source for StandIn {
    fn sample(&mut self) -> Result<Snapshot, SourceError> {
        let now = self.clock.now_unix_ms();
        let mut s = Snapshot::empty(format!("demo:{}", self.name), now);
        s.system.hostname = Some("demo".into());
        let util = if self.name == "idle" { 0 } else { 90 };
        let elapsed = u64::try_from(now - self.start_ms).unwrap_or(0);
        for index in 0..4 {
            s.gpus.push(GpuReading {
                index,
                util_gpu_pct: Some(util),
                util_memory_pct: Some(util / 2),
                power_watts: Some(300.0),
                energy_millijoules: Some(elapsed * 300),
                ..GpuReading::default()
            });
        }
        Ok(s)
    }

    fn label(&self) -> String {
        format!("demo:{}", self.name)
    }
}

fn run_watch(cli: &Cli, args: &WatchArgs) -> anyhow::Result<()> {
    let g = &cli.global;
    watch::check_fast(args.fast, g.demo.is_some())?;
    let settings = config::load_for(g, None)?;
    for note in &settings.notes {
        eprintln!("gpumeter: {note}");
    }
    let (clock, shared): (WatchClock, SharedClock) = if args.fast {
        let fake = FakeClock::new(SystemClock.now_unix_ms());
        (WatchClock::Fast(fake.clone()), Arc::new(fake))
    } else {
        let real: SharedClock = Arc::new(SystemClock);
        (WatchClock::Real(real.clone()), real)
    };
    let name = g
        .demo
        .clone()
        .context("this branch's binary needs --demo (no NVML source yet)")?;
    let mut source = StandIn {
        start_ms: shared.now_unix_ms(),
        clock: shared,
        name,
    };
    let ledger = if settings.ledger.enabled {
        settings.ledger.path.as_deref()
    } else {
        None
    };
    let opts = WatchOptions {
        for_ms: args
            .for_
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX)),
        interval_ms: i64::try_from(g.interval.as_millis()).unwrap_or(1_000),
    };
    let mut out = std::io::stdout().lock();
    let mut err = std::io::stderr();
    watch::run_watch(
        &mut source,
        &clock,
        settings.pricing.as_ref(),
        ledger,
        opts,
        &mut out,
        &mut err,
    )?;
    out.flush()?;
    Ok(())
}

fn run_report(cli: &Cli, args: &ReportArgs) -> anyhow::Result<()> {
    let settings = config::load_for(&cli.global, None)?;
    let path = settings
        .ledger
        .path
        .context("no ledger location: pass --ledger PATH (or set HOME / XDG_STATE_HOME)")?;
    let mut out = std::io::stdout().lock();
    report::run_report(args, &path, SystemClock.now_unix_ms(), &mut out)?;
    Ok(())
}
