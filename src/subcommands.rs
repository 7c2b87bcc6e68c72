//! The subcommands other than the dashboard (`snapshot`, `watch`, `serve`, `record`, `report`,
//! `fleet`, `config`, `eval`): each reads its arguments and settings and hands over to the
//! library. Part of the binary, like `main.rs`, whose shared helpers it uses.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use gpumeter::cli::{self, Cli, ReportArgs, ServeArgs, SnapshotArgs, WatchArgs};
use gpumeter::launch;
use gpumeter::watch::{self, WatchClock, WatchOptions};
use gpumeter::{report, ui};
use gpumeter_core::clock::{Clock, FakeClock, SharedClock, SystemClock};
use gpumeter_core::{config, export};

use crate::{
    demo_pricing, ledger_path, load_settings, millis, record_options, recording_of, source_for,
};

pub(crate) fn snapshot(cli: &Cli, args: &SnapshotArgs) -> anyhow::Result<()> {
    let g = &args.source.or(&cli.source);
    // The readings run through a session (no ledger, no channels) so the JSON document carries
    // the bill and the standing alerts. The config is loaded either way: a missing or broken
    // --config is an error for the table as much as for the JSON.
    let cfg = {
        let settings = crate::load_settings(&cli::load_options(
            &args.files.or(&cli.files),
            &args.pricing.or(&cli.pricing),
            None,
            demo_pricing(g)?,
            g.simulated(),
        ))?;
        let mut alerts = settings.alerts;
        // A one-shot reading notifies no one and stops nothing: webhooks, hooks and autostop off.
        alerts.notify.webhook = None;
        alerts.notify.hooks.clear();
        alerts.autostop.enabled = false;
        gpumeter_core::session::SessionConfig {
            pricing: settings.pricing,
            interval_ms: millis(g.interval()),
            alerts,
            ..Default::default()
        }
    };
    let mut session = gpumeter_core::session::Session::new(cfg)?;
    // Pods for a demo or this machine (a replay keeps those it was recorded with).
    let socket = crate::pods_socket(&args.kube.or(&cli.kube));
    let pods = socket.as_deref();
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
        // readings however long `--at` is; the table and the JSON alike carry the alerts and
        // the bill of that moment, so both play every reading up to it.
        let clock = FakeClock::new(SystemClock.now_unix_ms());
        let mut source = launch::with_pods_answered(
            launch::open_source(Some(demo), None, Arc::new(clock.clone()))?,
            pods,
        );
        let at = millis(args.at);
        let step = millis(g.interval()).max(at / 10_000).max(1);
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
        let mut source = launch::with_pods_answered(
            launch::open_source(None, g.nvml_lib.as_deref(), clock)?,
            pods,
        );
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
        export::table::to_table(snap, engine.billing(), engine.alerts())
    };
    let mut out = std::io::stdout().lock();
    // A closed pipe (`| head`) is not an error worth a message.
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("writing the snapshot"),
    }
}

/// `gpumeter eval CORPUS`: the tables (or JSON) on stdout, the failures on stderr, exit 1 when
/// any timeline fails its labels.
pub(crate) fn eval_cmd(cli: &Cli, args: &cli::EvalArgs) -> anyhow::Result<()> {
    use gpumeter::eval;
    let rules = match args.config.as_ref().or(cli.files.config.as_ref()) {
        Some(path) => {
            let opts = config::LoadOptions {
                config_path: Some(path.clone()),
                env: config::Env::from_process(),
                demo: None,
                cli: Default::default(),
                probe: None,
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

pub(crate) fn record_cmd(cli: &Cli, args: &cli::RecordCmdArgs) -> anyhow::Result<()> {
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
    let writer =
        gpumeter_core::recording::Writer::create(&args.file, record_options(&args.caps, g))?;
    let mut tee = gpumeter_core::source::tee::Tee::new(source, writer);
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
        match gpumeter_core::source::Source::sample(&mut tee) {
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

pub(crate) fn watch_cmd(cli: &Cli, args: &WatchArgs) -> anyhow::Result<()> {
    let g = &args.source.or(&cli.source);
    watch::check_fast(args.fast, g.demo.is_some() || g.replay.is_some())?;
    let settings = load_settings(&cli::load_options(
        &args.files.or(&cli.files),
        &args.pricing.or(&cli.pricing),
        None,
        demo_pricing(g)?,
        g.simulated(),
    ))?;
    let (clock, shared): (WatchClock, SharedClock) = if args.fast {
        let fake = FakeClock::new(SystemClock.now_unix_ms());
        (WatchClock::Fast(fake.clone()), Arc::new(fake))
    } else {
        let real: SharedClock = Arc::new(SystemClock);
        (WatchClock::Real(real.clone()), real)
    };
    let notice = launch::spot_watch(&settings, g.simulated());
    let socket = crate::pods_socket(&args.kube.or(&cli.kube));
    let rec = recording_of(cli, &args.recording);
    let mut source = source_for(g, shared, rec, notice, socket.as_deref())?;
    let ledger = ledger_path(&settings.ledger);
    let opts = WatchOptions {
        for_ms: args.for_.map(millis),
        interval_ms: millis(g.interval()),
    };
    let session = gpumeter_core::session::SessionConfig {
        pricing: settings.pricing,
        ledger_path: ledger,
        alerts: settings.alerts,
        autostop_flags: args.autostop.flags(),
        ..Default::default()
    };
    let run = watch::run_watch_with(
        source.as_mut(),
        &clock,
        session,
        opts,
        &mut std::io::stdout().lock(),
        &mut std::io::stderr(),
    );
    match run {
        // A reader that stopped reading (`| head`) ends the run, as it ends `cat`'s.
        Err(watch::WatchError::Write(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.map(|_| ()).map_err(Into::into),
    }
}

pub(crate) fn report_cmd(cli: &Cli, args: &ReportArgs) -> anyhow::Result<()> {
    let files = args.files.or(&cli.files);
    let settings = config::load(&cli::load_options(
        &files,
        &Default::default(),
        None,
        None,
        false,
    ))?;
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

pub(crate) fn serve_cmd(cli: &Cli, args: &ServeArgs) -> anyhow::Result<()> {
    use gpumeter::serve::{self, metrics::MetricsOptions, sampler::SamplerSetup};
    use gpumeter_core::endpoint::auth;
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
        g.simulated(),
    ))?;
    if settings.pricing.is_none() {
        eprintln!("gpumeter: no pricing configured (pricing.rate or --rate): no spend to export");
    }
    let clock: SharedClock = Arc::new(SystemClock);
    let notice = launch::spot_watch(&settings, g.simulated());
    let socket = crate::pods_socket(&args.kube.or(&cli.kube));
    let pods = socket.is_some();
    let rec = recording_of(cli, &args.recording);
    let source = source_for(g, clock.clone(), rec, notice, socket.as_deref())?;
    let session = gpumeter_core::session::Session::new(gpumeter_core::session::SessionConfig {
        pricing: settings.pricing,
        ledger_path: ledger_path(&settings.ledger),
        interval_ms: millis(g.interval()),
        alerts: settings.alerts,
        autostop_flags: args.autostop.flags(),
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
            pods,
        },
    };
    serve::run(args.listen, token, setup, &mut |addr| {
        eprintln!("gpumeter: serving on http://{addr}/metrics");
    })?;
    Ok(())
}

pub(crate) fn config_cmd(action: &cli::ConfigAction) -> anyhow::Result<()> {
    let mut opts = cli::load_options(&Default::default(), &Default::default(), None, None, false);
    let text = match action {
        cli::ConfigAction::Default => config::DEFAULT_CONFIG.to_string(),
        cli::ConfigAction::Path => config::show::files_text(&opts),
        cli::ConfigAction::Check { path } => {
            opts.config_path.clone_from(path);
            let text = config::show::check_text(&opts)?;
            // What the front-ends refuse on start, refused here too.
            crate::dashboard_looks(&config::load(&opts)?)?;
            text
        }
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("writing the configuration"),
    }
}

pub(crate) fn fleet_cmd(cli: &Cli, args: &cli::FleetArgs) -> anyhow::Result<()> {
    use gpumeter::fleet;
    use gpumeter_core::fleet::hosts;
    use gpumeter_core::fleet::poll::{self, PollConfig};
    let warn = &mut |w: String| eprintln!("gpumeter: {w}");
    let default_token = match &args.token_file {
        Some(p) => Some(hosts::read_token(p, warn)?),
        None => None,
    };
    let text = match &args.hosts {
        Some(p) => Some(
            gpumeter_core::textfile::read_text(p, gpumeter_core::textfile::MAX_TEXT_FILE).map_err(
                |e| hosts::HostsError::Unreadable {
                    path: p.clone(),
                    reason: e.to_string(),
                },
            )?,
        ),
        None => None,
    };
    let file = args.hosts.as_deref().zip(text.as_deref());
    // A bad address on the command line, or none at all, is a bad argument (exit 2); a bad
    // line of a hosts file stays a bad file.
    let hosts =
        hosts::collect(&args.urls, file, default_token.as_ref(), warn).map_err(|e| match e {
            hosts::HostsError::Url(m) => anyhow::Error::new(launch::LaunchError::Usage(m)),
            hosts::HostsError::NoHosts => {
                anyhow::Error::new(launch::LaunchError::Usage(e.to_string()))
            }
            other => other.into(),
        })?;
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
    let theme_name = args.ui.theme.clone().or_else(|| cli.ui.look.theme.clone());
    let theme = match &theme_name {
        Some(name) => ui::theme::file::load(
            name,
            &config::error::Origin::Flag("--theme"),
            config::Env::from_process().user_themes_dir().as_deref(),
        )?,
        None => ui::theme::Theme::default(),
    };
    let no_color = args.ui.no_color
        || cli.ui.look.no_color
        || std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    poll::spawn(hosts.clone(), cfg, clock.clone(), tx).context("starting the poller")?;
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
        ascii: args.ui.ascii || cli.ui.look.ascii,
    };
    runtime.block_on(ui::fleet::run(rx, clock, options))?;
    Ok(())
}
