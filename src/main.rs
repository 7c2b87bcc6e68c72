//! The `gpumeter` binary: argument parsing, exit codes and error printing at the edge;
//! everything else lives in the library.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::{CommandFactory, Parser};
use gpumeter::cli::{
    self, Cli, Command, ReportArgs, ServeArgs, SnapshotArgs, SourceArgs, WatchArgs,
};
use gpumeter::clock::{Clock, FakeClock, SharedClock, SystemClock};
use gpumeter::launch::{self, LaunchError};
use gpumeter::source::collector;
use gpumeter::watch::{self, WatchClock, WatchOptions};
use gpumeter::{config, export, report, ui};

fn main() -> ExitCode {
    // First, while this is the only thread (see the function).
    launch::reserve_descriptor_table();
    let cli = Cli::parse();
    if let Some((flag, command)) = cli.misplaced_option() {
        Cli::command()
            .error(
                clap::error::ErrorKind::ArgumentConflict,
                format!("{flag} does not apply to `gpumeter {command}`"),
            )
            .exit();
    }
    // `check` has its own exit codes (0 ok, 4 warnings, 5 failures).
    if let Some(Command::Check(args)) = &cli.command {
        let now = SystemClock.now_unix_ms();
        if cli.source.list {
            print!("{}", launch::scenario_list());
            return ExitCode::SUCCESS;
        }
        return match gpumeter::check::run::run(&cli, args, now, &mut std::io::stdout().lock()) {
            Ok(code) => ExitCode::from(code),
            Err(err) => {
                eprintln!("gpumeter: {err}");
                let code = match &err {
                    gpumeter::check::run::CheckError::Launch(e) => e.exit_code(),
                    _ => 1,
                };
                ExitCode::from(code)
            }
        };
    }
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            let code = err
                .downcast_ref::<LaunchError>()
                .map(LaunchError::exit_code)
                .unwrap_or(1);
            eprintln!("gpumeter: {err:#}");
            ExitCode::from(code)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let list = match &cli.command {
        Some(Command::Snapshot(a)) => a.source.or(&cli.source).list,
        Some(Command::Watch(a)) => a.source.or(&cli.source).list,
        Some(Command::Serve(a)) => a.source.or(&cli.source).list,
        Some(Command::Record(a)) => a.source.or(&cli.source).list,
        _ => cli.source.list,
    };
    if list {
        print!("{}", launch::scenario_list());
        return Ok(());
    }
    match &cli.command {
        Some(Command::Completions { shell }) => {
            let mut cmd = Cli::command();
            clap_complete::generate(*shell, &mut cmd, "gpumeter", &mut std::io::stdout());
            Ok(())
        }
        Some(Command::Man) => {
            clap_mangen::Man::new(Cli::command())
                .render(&mut std::io::stdout())
                .context("writing the man page")?;
            Ok(())
        }
        Some(Command::Snapshot(args)) => snapshot(&cli, args),
        Some(Command::Watch(args)) => watch_cmd(&cli, args),
        Some(Command::Report(args)) => report_cmd(&cli, args),
        // Handled in `main`, with its own exit codes.
        Some(Command::Check(_)) => Ok(()),
        Some(Command::Serve(args)) => serve_cmd(&cli, args),
        Some(Command::Record(args)) => record_cmd(&cli, args),
        Some(Command::Fleet(args)) => fleet_cmd(&cli, args),
        Some(Command::Config(args)) => config_cmd(&args.action),
        Some(Command::Eval(args)) => eval_cmd(&cli, args),
        None => dashboard(&cli),
    }
}

fn snapshot(cli: &Cli, args: &SnapshotArgs) -> anyhow::Result<()> {
    let g = &args.source.or(&cli.source);
    // With --json the readings run through a session (no ledger, no channels) so the document
    // carries the bill and the standing alerts; the table stays a plain reading.
    let cfg = if args.json {
        let settings = config::load(&cli::load_options(
            &args.files.or(&cli.files),
            &args.pricing.or(&cli.pricing),
            None,
            demo_pricing(g)?,
        ))?;
        let mut alerts = settings.alerts;
        // A one-shot reading notifies no one and stops nothing: webhooks, hooks and autostop off.
        alerts.notify.webhook = None;
        alerts.notify.hooks.clear();
        alerts.autostop.enabled = false;
        gpumeter::session::SessionConfig {
            pricing: settings.pricing,
            interval_ms: millis(g.interval()),
            alerts,
            ..Default::default()
        }
    } else {
        gpumeter::session::SessionConfig::default()
    };
    let mut session = gpumeter::session::Session::new(cfg)?;
    if let Some(path) = &g.replay {
        // Every recorded reading up to `--at` after the first, through the session.
        let mut source = launch::open_replay(path)?;
        let first = source.sample()?;
        let until = first.taken_at_unix_ms.saturating_add(millis(args.at));
        session.ingest(first);
        loop {
            match source.sample() {
                Ok(s) if s.taken_at_unix_ms <= until => {
                    session.ingest(s);
                }
                Ok(_) => break,
                Err(e) if e.is_final() => {
                    // Shorter than `--at`: the last reading, and why it is the last.
                    eprintln!("gpumeter: {e}");
                    break;
                }
                Err(e) => return Err(e.into()),
            }
        }
    } else if let Some(demo) = g.demo.as_deref() {
        // Play the scenario up to `--at` on a private clock: no waiting, at most ~10 000
        // readings however long `--at` is (the table needs only the last).
        let clock = FakeClock::new(SystemClock.now_unix_ms());
        let mut source = launch::open_source(Some(demo), None, Arc::new(clock.clone()))?;
        let at = millis(args.at);
        let step = if args.json {
            millis(g.interval()).max(at / 10_000).max(1)
        } else {
            at.max(1)
        };
        let mut t = 0;
        while t < at {
            session.ingest(source.sample()?);
            let dt = step.min(at - t);
            clock.advance_ms(dt);
            t += dt;
        }
        session.ingest(source.sample()?);
    } else {
        let clock: SharedClock = Arc::new(SystemClock);
        let mut source = launch::open_source(None, g.nvml_lib.as_deref(), clock)?;
        // Rates (CPU %, disk, PCIe) need two readings; one short interval apart, like top -n 1.
        session.ingest(source.sample()?);
        std::thread::sleep(g.interval().min(Duration::from_secs(1)));
        session.ingest(source.sample()?);
    }
    let engine = session.engine();
    let snap = engine.latest().context("no reading")?;
    let text = if args.json {
        let doc = export::json::document(snap, engine.billing(), engine.alerts());
        export::json::to_json_document(&doc)?
    } else {
        export::table::to_table(snap)
    };
    let mut out = std::io::stdout().lock();
    // A closed pipe (`| head`) is not an error worth a message.
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("writing the snapshot"),
    }
}

fn dashboard(cli: &Cli) -> anyhow::Result<()> {
    let g = &cli.source;
    let settings = load_settings(&cli::load_options(
        &cli.files,
        &cli.pricing,
        Some(&cli.ui),
        demo_pricing(g)?,
    ))?;
    // A bad theme is an error even under NO_COLOR: it would bite the next run.
    let themes = config::Env::from_process().user_themes_dir();
    let theme = ui::theme::file::load(
        &settings.theme.name,
        &settings.theme.origin,
        themes.as_deref(),
    )?;
    let clock: SharedClock = Arc::new(SystemClock);
    let billing = settings.pricing.map(|pricing| ui::BillingSetup {
        pricing,
        ledger_path: ledger_path(&settings.ledger),
        interval_ms: millis(g.interval()),
    });
    let keys = ui::keys::KeyMap::from_settings(&settings.keys)?;
    let mut options = ui::UiOptions {
        no_color: cli.ui.no_color || std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
        source_label: String::new(),
        billing,
        theme,
        alerts: settings.alerts,
        keys,
        acting: if settings.readonly {
            ui::process_action::Acting::ReadOnly
        } else if g.demo.is_some() || g.replay.is_some() {
            ui::process_action::Acting::NotLocal
        } else {
            ui::process_action::Acting::Allowed
        },
        colour_depth: ui::fallback::ColourDepth::from_env(),
        ascii: settings.ascii,
    };
    // Open the source before touching the terminal, so a missing driver is a plain message. A
    // replay (not recorded again) is played by the dashboard itself: paused, sped up, sought.
    if cli.ui.start.is_some() && g.replay.is_none() {
        anyhow::bail!("--start needs --replay FILE: it says where in the recording to begin");
    }
    let feed = match (&g.replay, &cli.recording.record) {
        (Some(path), None) => {
            let setup = ui::replay::ReplaySetup {
                path: path.clone(),
                start: cli.ui.start,
            };
            let player = ui::replay::Player::open(setup, ui::session_config(&options))?;
            options.source_label = format!("replay:{}", path.display());
            ui::Feed::Replay(Box::new(player))
        }
        _ => {
            // Opened on the collector thread: a driver slow to initialise must not keep the
            // screen blank. A failure within OPEN_WAIT is still a plain message before the
            // terminal is touched; a later one ends the dashboard with the same message.
            let (tx, rx) = tokio::sync::mpsc::channel(16);
            let (args, rec, at) = (g.clone(), cli.recording.clone(), clock.clone());
            let open = move || source_for(&args, at, &rec);
            let opening = collector::spawn_opening(open, g.interval(), tx.clone())
                .context("starting the collector thread")?;
            options.source_label = match opening.wait(OPEN_WAIT) {
                collector::Opened::Ready(label) => label,
                collector::Opened::Failed(e) => return Err(e),
                collector::Opened::Gone => anyhow::bail!("the collector thread ended at start"),
                collector::Opened::Pending => {
                    let what = match (&g.demo, &g.replay) {
                        (None, None) => "NVML to start (the driver has not answered yet)",
                        _ => "the source to open",
                    };
                    let _ = tx.try_send(collector::CollectorEvent::Waiting(what.to_string()));
                    // The label the source would give (the first reading names it anyway).
                    match (&g.demo, &g.replay) {
                        (Some(d), _) => format!("demo:{d}"),
                        (None, Some(p)) => format!("replay:{}", p.display()),
                        (None, None) => gpumeter::source::local::LOCAL_LABEL.to_string(),
                    }
                }
            };
            ui::Feed::Live(rx)
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.spawn(gpumeter::residency::after_startup());
    let notes = match runtime.block_on(ui::run(feed, clock, options)) {
        // Said as it would have been before the screen came up (and with its exit code).
        Err(ui::UiError::SourceUnavailable(m)) => {
            return Err(LaunchError::NvmlUnavailable(m).into());
        }
        other => other?,
    };
    for n in notes {
        eprintln!("gpumeter: {n}");
    }
    Ok(())
}

/// How long the dashboard waits for its source to open before it paints and says it waits.
const OPEN_WAIT: Duration = Duration::from_millis(100);

/// The ledger to write, when it is enabled and has a location.
fn ledger_path(ledger: &config::LedgerSettings) -> Option<std::path::PathBuf> {
    ledger.path.clone().filter(|_| ledger.enabled)
}

/// The demo scenario's own price, so `--demo` shows money moving without a config file.
fn demo_pricing(g: &SourceArgs) -> anyhow::Result<Option<config::DemoPricing>> {
    if let Some(path) = &g.replay {
        // A replayed demo is priced as the demo was.
        return Ok(launch::replayed_scenario(path).and_then(|s| launch::demo_pricing(&s)));
    }
    let Some(name) = g.demo.as_deref() else {
        return Ok(None);
    };
    Ok(launch::demo_pricing(&launch::load_scenario(name)?))
}

/// The source the options name (a replay, a demo or this machine), recorded when asked.
fn source_for(
    g: &SourceArgs,
    clock: SharedClock,
    rec: &cli::RecordArgs,
) -> anyhow::Result<Box<dyn gpumeter::source::Source>> {
    let source = match &g.replay {
        Some(path) => launch::open_replay(path)?,
        None => launch::open_source(g.demo.as_deref(), g.nvml_lib.as_deref(), clock)?,
    };
    Ok(match &rec.record {
        Some(path) => launch::record_to(source, path, record_options(&rec.caps, g))?,
        None => source,
    })
}

fn record_options(caps: &cli::RecordCaps, g: &SourceArgs) -> gpumeter::recording::RecordOptions {
    gpumeter::recording::RecordOptions {
        max_size: caps.max_size,
        max_files: caps.max_files,
        interval_ms: millis(g.interval()),
    }
}

/// `--record` given with the subcommand, else before it.
fn recording_of<'a>(cli: &'a Cli, own: &'a cli::RecordArgs) -> &'a cli::RecordArgs {
    if own.record.is_some() {
        own
    } else {
        &cli.recording
    }
}

/// `gpumeter eval CORPUS`: the tables (or JSON) on stdout, the failures on stderr, exit 1 when
/// any timeline fails its labels.
fn eval_cmd(cli: &Cli, args: &cli::EvalArgs) -> anyhow::Result<()> {
    use gpumeter::eval;
    let rules = match args.config.as_ref().or(cli.files.config.as_ref()) {
        Some(path) => {
            let opts = config::LoadOptions {
                config_path: Some(path.clone()),
                env: config::Env::from_process(),
                demo: None,
                cli: Default::default(),
            };
            config::load(&opts)?.alerts.rules
        }
        None => Default::default(),
    };
    let outcomes = eval::run_corpus_with(&args.corpus, &rules)?;
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{:#}", eval::report::json(&outcomes))?;
    } else {
        write!(out, "{}", eval::report::markdown(&outcomes))?;
    }
    out.flush()?;
    if let Some(p) = eval::report::problems(&outcomes) {
        eprintln!("{p}");
        let failed = outcomes.iter().filter(|o| !o.passed()).count();
        anyhow::bail!(
            "{failed} of {} timelines fail their labels (a false alarm, a miss, a wrong verdict, a late fire or a flap)",
            outcomes.len()
        );
    }
    Ok(())
}

fn record_cmd(cli: &Cli, args: &cli::RecordCmdArgs) -> anyhow::Result<()> {
    let g = &args.source.or(&cli.source);
    watch::check_fast(args.fast, g.demo.is_some() || g.replay.is_some())?;
    let (fake, clock): (Option<FakeClock>, SharedClock) = if args.fast {
        let f = FakeClock::new(SystemClock.now_unix_ms());
        (Some(f.clone()), Arc::new(f))
    } else {
        (None, Arc::new(SystemClock))
    };
    let source = match &g.replay {
        Some(path) => launch::open_replay(path)?,
        None => launch::open_source(g.demo.as_deref(), g.nvml_lib.as_deref(), clock.clone())?,
    };
    let writer = gpumeter::recording::Writer::create(&args.file, record_options(&args.caps, g))?;
    let mut tee = gpumeter::source::tee::Tee::new(source, writer);
    let interval = g.interval();
    let end = args
        .for_
        .map(|d| clock.now_unix_ms().saturating_add(millis(d)));
    eprintln!("gpumeter: recording to {}", args.file.display());
    loop {
        let started = std::time::Instant::now();
        if end.is_some_and(|e| clock.now_unix_ms() > e) {
            break;
        }
        match gpumeter::source::Source::sample(&mut tee) {
            Ok(snap) => {
                for w in snap.warnings.iter().filter(|w| w.starts_with("recording:")) {
                    eprintln!("gpumeter: {w}");
                }
            }
            Err(e) if e.is_final() => {
                eprintln!("gpumeter: {e}");
                break;
            }
            Err(e) => eprintln!("gpumeter: {e}"),
        }
        match &fake {
            Some(f) => f.advance_ms(millis(interval)),
            None => std::thread::sleep(interval.saturating_sub(started.elapsed())),
        }
    }
    let n = tee.recorded();
    tee.finish()?;
    eprintln!("gpumeter: recorded {n} readings to {}", args.file.display());
    Ok(())
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

fn watch_cmd(cli: &Cli, args: &WatchArgs) -> anyhow::Result<()> {
    let g = &args.source.or(&cli.source);
    watch::check_fast(args.fast, g.demo.is_some() || g.replay.is_some())?;
    let settings = load_settings(&cli::load_options(
        &args.files.or(&cli.files),
        &args.pricing.or(&cli.pricing),
        None,
        demo_pricing(g)?,
    ))?;
    let (clock, shared): (WatchClock, SharedClock) = if args.fast {
        let fake = FakeClock::new(SystemClock.now_unix_ms());
        (WatchClock::Fast(fake.clone()), Arc::new(fake))
    } else {
        let real: SharedClock = Arc::new(SystemClock);
        (WatchClock::Real(real.clone()), real)
    };
    let mut source = source_for(g, shared, recording_of(cli, &args.recording))?;
    let ledger = ledger_path(&settings.ledger);
    let opts = WatchOptions {
        for_ms: args.for_.map(millis),
        interval_ms: millis(g.interval()),
    };
    let session = gpumeter::session::SessionConfig {
        pricing: settings.pricing,
        ledger_path: ledger,
        alerts: settings.alerts,
        autostop_flags: gpumeter::session::AutostopFlags {
            after_ms: args.autostop.map(millis),
            command: args.stop_cmd.as_ref().map(|c| c.0.clone()),
        },
        ..Default::default()
    };
    watch::run_watch_with(
        source.as_mut(),
        &clock,
        session,
        opts,
        &mut std::io::stdout().lock(),
        &mut std::io::stderr(),
    )?;
    Ok(())
}

fn report_cmd(cli: &Cli, args: &ReportArgs) -> anyhow::Result<()> {
    let files = args.files.or(&cli.files);
    let settings = config::load(&cli::load_options(&files, &Default::default(), None, None))?;
    let path = settings
        .ledger
        .path
        .context("no ledger location: pass --ledger PATH (or set HOME / XDG_STATE_HOME)")?;
    let format = if args.json {
        report::ReportFormat::Json
    } else if args.csv {
        report::ReportFormat::Csv
    } else {
        report::ReportFormat::Table
    };
    let opts = report::ReportOptions {
        since: args.since,
        format,
    };
    report::run_report(
        &opts,
        &path,
        SystemClock.now_unix_ms(),
        &mut std::io::stdout().lock(),
    )?;
    Ok(())
}

fn serve_cmd(cli: &Cli, args: &ServeArgs) -> anyhow::Result<()> {
    use gpumeter::serve::{self, auth, metrics::MetricsOptions, sampler::SamplerSetup};
    let g = &args.source.or(&cli.source);
    let token = auth::load_token(
        args.token_file.as_deref(),
        std::env::var(auth::TOKEN_ENV).ok(),
        &mut |w| eprintln!("gpumeter: {w}"),
    )?;
    // Refuse a bad address before opening anything.
    auth::check_listen(args.listen, token.as_ref())?;
    let settings = load_settings(&cli::load_options(
        &args.files.or(&cli.files),
        &args.pricing.or(&cli.pricing),
        None,
        demo_pricing(g)?,
    ))?;
    if settings.pricing.is_none() {
        eprintln!("gpumeter: no pricing configured (pricing.rate or --rate): no spend to export");
    }
    let clock: SharedClock = Arc::new(SystemClock);
    let source = source_for(g, clock.clone(), recording_of(cli, &args.recording))?;
    let session = gpumeter::session::Session::new(gpumeter::session::SessionConfig {
        pricing: settings.pricing,
        ledger_path: ledger_path(&settings.ledger),
        interval_ms: millis(g.interval()),
        alerts: settings.alerts,
        autostop_flags: gpumeter::session::AutostopFlags {
            after_ms: args.autostop.map(millis),
            command: args.stop_cmd.as_ref().map(|c| c.0.clone()),
        },
        ..Default::default()
    })?;
    let setup = SamplerSetup {
        source,
        clock,
        interval: g.interval(),
        session,
        metrics: MetricsOptions {
            process_limit: args.process_metrics.then_some(args.process_limit),
            dcgm: args.compat == Some(cli::Compat::Dcgm),
        },
    };
    serve::run(args.listen, token, setup, &mut |addr| {
        eprintln!("gpumeter: serving on http://{addr}/metrics");
    })?;
    Ok(())
}

fn config_cmd(action: &cli::ConfigAction) -> anyhow::Result<()> {
    let mut opts = cli::load_options(&Default::default(), &Default::default(), None, None);
    let text = match action {
        cli::ConfigAction::Default => config::DEFAULT_CONFIG.to_string(),
        cli::ConfigAction::Path => config::show::files_text(&opts),
        cli::ConfigAction::Check { path } => {
            opts.config_path.clone_from(path);
            config::show::check_text(&opts)?
        }
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("writing the configuration"),
    }
}

/// The settings for `options`, their notes (a config file not found, a layer applied) said on
/// stderr: every metering command starts this way.
fn load_settings(options: &config::LoadOptions) -> anyhow::Result<config::Settings> {
    let settings = config::load(options)?;
    for n in &settings.notes {
        eprintln!("gpumeter: {n}");
    }
    Ok(settings)
}

fn fleet_cmd(cli: &Cli, args: &cli::FleetArgs) -> anyhow::Result<()> {
    use gpumeter::fleet::{self, hosts, poll::PollConfig};
    let warn = &mut |w: String| eprintln!("gpumeter: {w}");
    let default_token = match &args.token_file {
        Some(p) => Some(hosts::read_token(p, warn)?),
        None => None,
    };
    let text = match &args.hosts {
        Some(p) => Some(
            std::fs::read_to_string(p).map_err(|e| hosts::HostsError::Unreadable {
                path: p.clone(),
                reason: e.to_string(),
            })?,
        ),
        None => None,
    };
    let file = args.hosts.as_deref().zip(text.as_deref());
    let hosts = hosts::collect(&args.urls, file, default_token.as_ref(), warn)?;
    let cfg = PollConfig {
        interval: args.interval,
        timeout: args.timeout,
        concurrency: usize::from(args.concurrency),
    };
    let clock: SharedClock = Arc::new(SystemClock);
    if args.once {
        let mut out = std::io::stdout().lock();
        return match fleet::run_once(&hosts, &cfg, &clock, args.json, &mut out) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            other => other.context("writing the fleet table"),
        };
    }
    let theme_name = args.ui.theme.clone().or_else(|| cli.ui.theme.clone());
    let theme = match &theme_name {
        Some(name) => ui::theme::file::load(
            name,
            &config::error::Origin::Flag("--theme"),
            config::Env::from_process().user_themes_dir().as_deref(),
        )?,
        None => ui::theme::Theme::default(),
    };
    let no_color = args.ui.no_color
        || cli.ui.no_color
        || std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    fleet::poll::spawn(hosts.clone(), cfg, clock.clone(), tx).context("starting the poller")?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let options = ui::fleet::FleetOptions {
        hosts,
        no_color,
        theme,
        interval_ms: millis(args.interval),
        colour_depth: ui::fallback::ColourDepth::from_env(),
        ascii: args.ui.ascii || cli.ui.ascii,
    };
    runtime.block_on(ui::fleet::run(rx, clock, options))?;
    Ok(())
}
